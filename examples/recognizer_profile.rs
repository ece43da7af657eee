use onemodel::recognizer::model::{Config, Model, SplitMix};
use onemodel::recognizer::trainer::{Hyper, Line, Trainer};
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
    let mut rng = SplitMix(1);
    let imgs: Vec<Vec<f32>> = (0..8)
        .map(|_| (0..32 * 256).map(|_| rng.uniform(0.5) + 0.5).collect())
        .collect();
    let labels: Vec<Vec<usize>> = (0..8)
        .map(|i| (0..10).map(|j| 1 + (i * 7 + j * 3) % 95).collect())
        .collect();
    let lines: Vec<Line> = (0..8)
        .map(|i| Line {
            pixels: &imgs[i],
            width: 256,
            labels: &labels[i],
        })
        .collect();
    onemodel::dispatch::set_threads(1).unwrap();
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(3);
    tr.train_step(&mut model, &lines).unwrap();
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
    let t = cpu();
    for _ in 0..n {
        tr.train_step(&mut model, &lines).unwrap();
    }
    let s = cpu() - t;
    println!("{:.1} lines/s", (8 * n) as f64 / s);
}
