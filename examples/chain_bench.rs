//! Time of the double chain (docs/engine.md, "Arithmetic rules") over 1M terms: written out, and
//! blocked (`add_terms`), for a mean-free and a positive term distribution.
//!
//!     cargo run --release --example chain_bench
use onemodel::kernels::double_chain::add_terms;
use onemodel::simd::Token;
use std::time::Instant;

fn main() {
    let mut st = 88172645463325252u64;
    let mut next = || {
        st ^= st << 13;
        st ^= st >> 7;
        st ^= st << 17;
        (st >> 11) as f64 / (1u64 << 53) as f64
    };
    let uniform: Vec<f32> = (0..1 << 20).map(|_| next() as f32).collect();
    let centred: Vec<f32> = (0..1 << 20).map(|_| (next() as f32 - 0.5) * 3.4).collect();
    for (name, x) in [
        ("uniform [0,1)", &uniform),
        ("uniform [-1.7,1.7)", &centred),
    ] {
        let mut ts = [Vec::new(), Vec::new()];
        let mut r = [0f64; 2];
        for _ in 0..21 {
            let t = Instant::now();
            r[0] = std::hint::black_box(x)
                .iter()
                .fold(0.0, |a, &v| a + v as f64);
            ts[0].push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            r[1] = add_terms(Token::current(), 0.0, std::hint::black_box(x));
            ts[1].push(t.elapsed().as_secs_f64());
        }
        assert_eq!(r[0].to_bits(), r[1].to_bits());
        for t in &mut ts {
            t.sort_by(f64::total_cmp);
        }
        println!(
            "{name}: written out {:.3} ms, blocked {:.3} ms (medians of 21)",
            ts[0][10] * 1e3,
            ts[1][10] * 1e3
        );
    }
}
