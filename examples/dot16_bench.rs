//! GFMA per second of `gemm_nt` on the recognizer's shapes, one thread:
//! the median of 15 timings of about 0.4 GFMA each (a median, because a
//! shared machine stalls some of them), in this thread's CPU time
//! (/proc/thread-self/schedstat), so that time spent waiting for a core on
//! a loaded machine is not counted.
//! `cargo run --release --example dot16_bench`
use onemodel::recognizer::dot16::gemm_nt;
use onemodel::simd::Token;
fn cpu_s() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse::<f64>()
        .unwrap()
        * 1e-9
}
fn main() {
    // (m, n, k): conv forward blocks 2 and 3, conv weight gradient (block 2),
    // conv input gradient (block 2), LSTM input projection, LSTM weight
    // gradient, one recurrent step, the first convolution, one recurrent step
    // of eight lines, an LSTM weight gradient with a tail (67 time steps).
    for (m, n, k) in [
        (2048usize, 64usize, 288usize),
        (512, 96, 576),
        (64, 288, 2048),
        (2048, 288, 64),
        (64, 512, 384),
        (512, 384, 64),
        (1, 512, 128),
        (8192, 32, 16),
        (8, 512, 128),
        (512, 384, 67),
    ] {
        let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 * 0.25).collect();
        let b: Vec<f32> = (0..n * k).map(|i| (i % 5) as f32 * 0.5).collect();
        let mut c = vec![0f32; m * n];
        let reps = (4e8 / (m * n * k) as f64).max(1.0) as usize;
        let mut rates: Vec<f64> = (0..15)
            .map(|_| {
                let t = cpu_s();
                for _ in 0..reps {
                    gemm_nt(Token::current(), m, n, k, &a, k, &b, k, &mut c, n);
                }
                (m * n * k * reps) as f64 / 1e9 / (cpu_s() - t)
            })
            .collect();
        rates.sort_by(|x, y| x.partial_cmp(y).unwrap());
        println!(
            "{m}x{n}x{k}: {:.1} GFMA/s (median; min {:.1}, max {:.1})",
            rates[7], rates[0], rates[14]
        );
    }
}
