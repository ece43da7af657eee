//! The 6 × 16 register tile's inner step in an L1-resident loop, exact mode
//! (a rounded multiply, then a rounded add) against fast mode (one fma), on
//! AVX2: how much of the gap between the modes is the microkernel's own.
//! `cargo run --release --example tile_ops` (x86-64 with AVX2 and FMA).
//!
//! `BROADCASTS=all` also runs the tile with only 1 … 5 distinct A
//! broadcasts per step (the later rows reuse the last one: the same
//! arithmetic with fewer loads; a probe, not a product), which shows how
//! much of exact mode's rate the loads cost on a core whose adds share a
//! resource with them (docs/performance.md, "2026-12-07, later").

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
    unsafe fn run<const BROADCASTS: usize>(
        fast: bool,
        a: *const f32,
        b: *const f32,
        steps: usize,
    ) -> f32 {
        // SAFETY: every offset stays inside the panels (p < 256).
        unsafe {
            let mut acc = [_mm256_setzero_ps(); 12];
            for it in 0..steps {
                let p = it % 256;
                let b0 = _mm256_loadu_ps(b.add(p * 16));
                let b1 = _mm256_loadu_ps(b.add(p * 16 + 8));
                let mut ai = _mm256_setzero_ps();
                for i in 0..6 {
                    if i < BROADCASTS {
                        ai = _mm256_broadcast_ss(&*a.add(p * 6 + i));
                    }
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
        let counts: &[usize] = match std::env::var("BROADCASTS").as_deref() {
            Ok("all") => &[6, 5, 4, 3, 2, 1],
            _ => &[6],
        };
        for round in 0..3 {
            for &n in counts {
                for (fast, name) in [(false, "exact (mul, add)"), (true, "fast (fma)")] {
                    let t = Instant::now();
                    // SAFETY: features checked above; the vectors have the
                    // sizes `run` needs.
                    let r = unsafe {
                        let (a, b) = (a.as_ptr(), b.as_ptr());
                        match n {
                            1 => run::<1>(fast, a, b, steps),
                            2 => run::<2>(fast, a, b, steps),
                            3 => run::<3>(fast, a, b, steps),
                            4 => run::<4>(fast, a, b, steps),
                            5 => run::<5>(fast, a, b, steps),
                            _ => run::<6>(fast, a, b, steps),
                        }
                    };
                    let s = t.elapsed().as_secs_f64();
                    let gflops = steps as f64 * 12.0 * 16.0 / s / 1e9;
                    println!(
                        "round {round} {name}, {n} broadcasts: {gflops:.1} GFLOP/s (checksum {r})"
                    );
                }
            }
        }
    }
}

fn main() {
    #[cfg(target_arch = "x86_64")]
    bench::main();
}
