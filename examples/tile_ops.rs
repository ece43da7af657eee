//! The 6 × 16 register tile's inner step in an L1-resident loop, exact mode
//! (a rounded multiply, then a rounded add) against fast mode (one fma), on
//! AVX2: how much of the gap between the modes is the microkernel's own.
//! `cargo run --release --example tile_ops` (x86-64 with AVX2 and FMA).

#[cfg(target_arch = "x86_64")]
mod bench {
    use std::arch::x86_64::*;
    use std::time::Instant;

    /// `steps` steps of the tile over a 256-step A panel and B sliver.
    ///
    /// # Safety
    /// AVX2 and FMA must be available; `a` holds 256·6 + 16 values, `b`
    /// 256·16.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run(fast: bool, a: *const f32, b: *const f32, steps: usize) -> f32 {
        // SAFETY: every offset stays inside the panels (p < 256).
        unsafe {
            let mut acc = [_mm256_setzero_ps(); 12];
            for it in 0..steps {
                let p = it % 256;
                let b0 = _mm256_loadu_ps(b.add(p * 16));
                let b1 = _mm256_loadu_ps(b.add(p * 16 + 8));
                for i in 0..6 {
                    let ai = _mm256_broadcast_ss(&*a.add(p * 6 + i));
                    if fast {
                        acc[2 * i] = _mm256_fmadd_ps(ai, b0, acc[2 * i]);
                        acc[2 * i + 1] = _mm256_fmadd_ps(ai, b1, acc[2 * i + 1]);
                    } else {
                        acc[2 * i] = _mm256_add_ps(acc[2 * i], _mm256_mul_ps(ai, b0));
                        acc[2 * i + 1] = _mm256_add_ps(acc[2 * i + 1], _mm256_mul_ps(ai, b1));
                    }
                }
            }
            let mut s = _mm256_setzero_ps();
            for x in acc {
                s = _mm256_add_ps(s, x);
            }
            let mut o = [0f32; 8];
            _mm256_storeu_ps(o.as_mut_ptr(), s);
            o.iter().sum()
        }
    }

    pub fn main() {
        if !(is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")) {
            println!("needs AVX2 and FMA");
            return;
        }
        let a = vec![1e-3f32; 256 * 6 + 16];
        let b = vec![1e-3f32; 256 * 16];
        let steps = 20_000_000;
        for round in 0..3 {
            for (fast, name) in [(false, "exact (mul, add)"), (true, "fast (fma)")] {
                let t = Instant::now();
                // SAFETY: features checked above; the vectors have the sizes `run` needs.
                let r = unsafe { run(fast, a.as_ptr(), b.as_ptr(), steps) };
                let s = t.elapsed().as_secs_f64();
                let gflops = steps as f64 * 12.0 * 16.0 / s / 1e9;
                println!("round {round} {name}: {gflops:.1} GFLOP/s (checksum {r})");
            }
        }
    }
}

fn main() {
    #[cfg(target_arch = "x86_64")]
    bench::main();
}
