//! Wall time of the default crnn-v0 training step (batch of eight 256-px
//! lines) in Rust alone, for profiling: `THREADS=2 cargo run --release
//! --example recognizer_profile -- 10` (steps; `perf record` works on it).
//! `WIDTHS=130-340` gives the eight lines widths drawn from that range
//! instead (a real line set's spread; the same widths every run).
use onemodel::recognizer::model::{Config, Model, SplitMix};
use onemodel::recognizer::trainer::{Hyper, Line, Trainer};
use onemodel::simd::Token;
fn main() {
    let cfg = Config {
        height: 32,
        channels: vec![32, 64, 96],
        pools: vec![(2, 2), (2, 2), (2, 1)],
        hidden: 128,
        layers: 2,
        classes: 96,
    };
    let mut model = Model::new(cfg.clone(), 0).unwrap();
    let mut tr = Trainer::new(&model, Hyper::default()).unwrap();
    let mut rng = SplitMix::new(1);
    let widths: Vec<usize> = match std::env::var("WIDTHS") {
        Ok(r) => {
            let (lo, hi) = r.split_once('-').expect("WIDTHS=MIN-MAX");
            let (lo, hi): (usize, usize) = (lo.parse().unwrap(), hi.parse().unwrap());
            (0..8)
                .map(|_| lo + (rng.next_u64() % (hi - lo + 1) as u64) as usize)
                .collect()
        }
        Err(_) => vec![256; 8],
    };
    let imgs: Vec<Vec<f32>> = widths
        .iter()
        .map(|&w| (0..32 * w).map(|_| rng.uniform(0.5) + 0.5).collect())
        .collect();
    let labels: Vec<Vec<usize>> = (0..8)
        .map(|i| (0..10).map(|j| 1 + (i * 7 + j * 3) % 95).collect())
        .collect();
    let lines: Vec<Line> = (0..8)
        .map(|i| Line {
            pixels: &imgs[i],
            width: widths[i],
            labels: &labels[i],
        })
        .collect();
    let threads: usize = std::env::var("THREADS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    onemodel::dispatch::set_threads(threads).unwrap();
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(3);
    tr.train_step(Token::current(), &mut model, &lines).unwrap();
    let cpu = || {
        std::fs::read_to_string("/proc/thread-self/schedstat")
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse::<f64>()
            .unwrap()
            * 1e-9
    };
    // Per step: wall time of the whole step and of `compute` (lines,
    // line-order sum, norm); the rest is clipping and AdamW.
    let (mut steps, mut computes) = (Vec::new(), Vec::new());
    let t = cpu();
    for _ in 0..n {
        let w0 = std::time::Instant::now();
        tr.compute(Token::current(), &model, &lines).unwrap();
        let w1 = std::time::Instant::now();
        tr.train_step(Token::current(), &mut model, &lines).unwrap();
        computes.push((w1 - w0).as_secs_f64());
        steps.push(w1.elapsed().as_secs_f64());
    }
    let s = cpu() - t;
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2] * 1e3
    };
    println!(
        "{threads} threads: {:.1} lines per CPU-second of the main thread; median step {:.1} ms, of which compute {:.1} ms",
        (16 * n) as f64 / s,
        median(&mut steps),
        median(&mut computes)
    );
}
