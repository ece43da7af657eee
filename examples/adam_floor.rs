//! How far one AdamW step over 1M parameters (one tensor) is from the
//! memory traffic it cannot avoid, at 1 thread: the step (reads p, g, m, v;
//! writes p, m, v) next to a loop with the same seven streams and one add
//! per stream, and to the step's arithmetic alone on an L1-resident slice.
//!
//!     cargo run --release --example adam_floor
use onemodel::dispatch::set_threads;
use onemodel::kernels::optim::{adamw_step, AdamScalars};
use onemodel::simd::Token;
use std::time::Instant;

fn median(mut t: Vec<f64>) -> f64 {
    t.sort_by(f64::total_cmp);
    t[t.len() / 2] * 1e3
}

fn main() {
    set_threads(1).unwrap();
    let n = 1 << 20;
    let g: Vec<f32> = (0..n).map(|i| ((i as f32) * 0.37).sin() * 1e-2).collect();
    let (mut p, mut m, mut v) = (vec![0.5f32; n], vec![0f32; n], vec![0f32; n]);
    let s = AdamScalars::new(1e-3, 0.9, 0.999, 1e-8, 1e-2, 3, true);
    let (mut step, mut stream, mut l1) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..101 {
        let t = Instant::now();
        adamw_step(Token::current(), &mut p, &g, &mut m, &mut v, &s);
        step.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for (((p, m), v), g) in p.iter_mut().zip(&mut m).zip(&mut v).zip(&g) {
            *p += g;
            *m += g;
            *v += g;
        }
        std::hint::black_box((&p, &m, &v));
        stream.push(t.elapsed().as_secs_f64());
        // The arithmetic alone: 1024 floats (16 KiB over four arrays, in
        // L1) stepped 1024 times.
        let t = Instant::now();
        for _ in 0..1024 {
            adamw_step(
                Token::current(),
                &mut p[..1024],
                &g[..1024],
                &mut m[..1024],
                &mut v[..1024],
                &s,
            );
        }
        l1.push(t.elapsed().as_secs_f64());
    }
    println!(
        "1M parameters, 1 thread, medians of 101: AdamW step {:.3} ms; same 7 streams, one add each {:.3} ms; the step's arithmetic on L1-resident data {:.3} ms per 1M",
        median(step),
        median(stream),
        median(l1)
    );
}
