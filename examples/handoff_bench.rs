//! What a parallel call costs when its work is small, without Python:
//! `cargo run --release --example handoff_bench -- [threads ...]`.
//!
//! Per call, the median of 9 timings (wall clock) of: an empty
//! `par_chunks(2)` and `join`, `par_chunks(8)` over ≈ 2 µs of work per
//! chunk, and three GEMMs of the small benchmarks (docs/performance.md,
//! "Threads never hurt"). Not a test: nothing asserts on time.
use onemodel::dispatch::{join, par_chunks, set_threads, Mode};
use onemodel::gemm::{gemm, MatRef, Product};
use onemodel::simd::Token;
use std::hint::black_box;
use std::time::Instant;

fn per_call_us(mut f: impl FnMut()) -> f64 {
    for _ in 0..50 {
        f();
    }
    let mut t = Vec::new();
    for _ in 0..9 {
        let (start, mut calls) = (Instant::now(), 0u32);
        while start.elapsed().as_secs_f64() < 0.05 {
            f();
            calls += 1;
        }
        t.push(start.elapsed().as_secs_f64() * 1e6 / calls as f64);
    }
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    t[4]
}

/// `steps` dependent multiply-adds (2000: about 3 µs).
fn spin(steps: usize) -> f32 {
    let mut x = black_box(1.0f32);
    for _ in 0..steps {
        x = x * 0.999_9 + 1e-4;
    }
    x
}

fn product(m: usize, k: usize, n: usize) -> impl FnMut() {
    let a: Vec<f32> = (0..m * k).map(|i| (i % 97) as f32 * 1e-2).collect();
    let b: Vec<f32> = (0..k * n).map(|i| (i % 89) as f32 * 1e-2).collect();
    let mut c = vec![0f32; m * n];
    let tok = Token::current();
    move || {
        let ar = MatRef::row_major(a.as_ptr(), m, k, k);
        let br = MatRef::row_major(b.as_ptr(), k, n, n);
        // SAFETY: the views lie inside a and b; c holds m × n.
        unsafe { gemm(tok, Mode::Fast, &Product::views(ar, br, c.as_mut_ptr(), n)) };
    }
}

fn main() {
    let threads: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a thread count"))
        .collect();
    for &th in if threads.is_empty() {
        &[1, 2][..]
    } else {
        &threads[..]
    } {
        set_threads(th).unwrap();
        let rows: Vec<(&str, f64)> = vec![
            (
                "par_chunks(2), empty",
                per_call_us(|| {
                    par_chunks(2, |i| {
                        black_box(i);
                    })
                }),
            ),
            (
                "join, empty",
                per_call_us(|| {
                    black_box(join(|| 1, || 2));
                }),
            ),
            (
                "par_chunks(8), 3 µs each",
                per_call_us(|| {
                    par_chunks(8, |_| {
                        black_box(spin(2000));
                    })
                }),
            ),
            (
                "par_chunks(8), 30 µs each",
                per_call_us(|| {
                    par_chunks(8, |_| {
                        black_box(spin(20000));
                    })
                }),
            ),
            (
                "par_chunks(2), 30 µs each",
                per_call_us(|| {
                    par_chunks(2, |_| {
                        black_box(spin(20000));
                    })
                }),
            ),
            (
                "join, 30 µs each",
                per_call_us(|| {
                    black_box(join(|| spin(20000), || spin(20000)));
                }),
            ),
            ("gemm 64×784×256", per_call_us(product(64, 784, 256))),
            ("gemm 784×64×256", per_call_us(product(784, 64, 256))),
            ("gemm 512×384×1024", per_call_us(product(512, 384, 1024))),
        ];
        for (name, us) in rows {
            println!("threads {th}  {name:<28} {us:9.2} µs");
        }
    }
}
