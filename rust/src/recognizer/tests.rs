//! Whole-trainer tests: the same bits on every kernel path and thread
//! count; a save-free resume gives the same bits as never stopping.

use super::model::{Config, Model, SplitMix};
use super::trainer::{Hyper, Line, Trainer};
use crate::dispatch::{available_paths, set_kernel_path, set_threads};
use crate::simd::Token;

/// Kernel path and thread count are process-wide: serialize these tests.

fn small() -> Config {
    Config {
        height: 8,
        channels: vec![4, 6],
        pools: vec![(2, 2), (2, 1)],
        hidden: 5,
        layers: 2,
        classes: 6,
    }
}

fn batch(cfg: &Config, seed: u64) -> (Vec<Vec<f32>>, Vec<usize>, Vec<Vec<usize>>) {
    let mut rng = SplitMix::new(seed);
    let widths = [19usize, 32, 7, 24];
    let mut imgs = vec![];
    let mut labels = vec![];
    for (i, &w) in widths.iter().enumerate() {
        imgs.push(
            (0..cfg.height * w)
                .map(|_| rng.uniform(0.5) + 0.5)
                .collect(),
        );
        let n = 1 + i % 3;
        labels.push(
            (0..n)
                .map(|j| 1 + (i + 2 * j) % (cfg.classes - 1))
                .collect(),
        );
    }
    (imgs, widths.to_vec(), labels)
}

/// The first `n` lines of a `batch`.
fn first_lines<'a>(
    n: usize,
    imgs: &'a [Vec<f32>],
    widths: &[usize],
    labels: &'a [Vec<usize>],
) -> Vec<Line<'a>> {
    (0..n)
        .map(|i| Line {
            pixels: &imgs[i],
            width: widths[i],
            labels: &labels[i],
        })
        .collect()
}

fn run_steps(steps: usize) -> Vec<u32> {
    let cfg = small();
    let mut model = Model::new(cfg.clone(), 3).unwrap();
    let mut tr = Trainer::new(
        &model,
        Hyper {
            lr: 0.01,
            ..Hyper::default()
        },
    )
    .unwrap();
    let (imgs, widths, labels) = batch(&cfg, 11);
    let lines = first_lines(4, &imgs, &widths, &labels);
    for _ in 0..steps {
        tr.train_step(Token::current(), &mut model, &lines).unwrap();
    }
    let mut bits: Vec<u32> = model.params.iter().flatten().map(|x| x.to_bits()).collect();
    bits.extend(tr.grads.iter().flatten().map(|x| x.to_bits()));
    bits
}

#[test]
fn every_path_and_thread_count_gives_the_same_bits() {
    let _g = crate::dispatch::settings_lock();
    let mut want: Option<Vec<u32>> = None;
    for path in available_paths() {
        for threads in [1, 3, 8] {
            set_kernel_path(Some(path)).unwrap();
            set_threads(threads).unwrap();
            let got = run_steps(3);
            match &want {
                None => want = Some(got),
                Some(w) => assert!(*w == got, "{path:?} × {threads} threads differ"),
            }
        }
    }
    set_kernel_path(None).unwrap();
}

#[test]
fn gradient_matches_finite_differences_roughly() {
    let _g = crate::dispatch::settings_lock();
    // A loose sanity check in f32 (the float64 reference lives in tests/).
    let cfg = small();
    let model = Model::new(cfg.clone(), 5).unwrap();
    let (imgs, widths, labels) = batch(&cfg, 2);
    let lines = first_lines(2, &imgs, &widths, &labels);
    let mut tr = Trainer::new(&model, Hyper::default()).unwrap();
    tr.compute(Token::current(), &model, &lines).unwrap();
    let grads = tr.grads.clone();
    for pi in 0..model.params.len() {
        let idx = model.params[pi].iter().position(|&v| v != 0.0).unwrap();
        let eps = 1e-2f32;
        let mut mp = model.clone();
        mp.params[pi][idx] += eps;
        let lp = tr.compute(Token::current(), &mp, &lines).unwrap().loss;
        let mut mm = model.clone();
        mm.params[pi][idx] -= eps;
        let lm = tr.compute(Token::current(), &mm, &lines).unwrap().loss;
        let fd = (lp - lm) / (2.0 * eps as f64);
        let g = grads[pi][idx] as f64;
        assert!(
            (fd - g).abs() < 2e-2 * (1.0 + g.abs()),
            "param {pi} [{idx}]: fd {fd} vs {g}"
        );
    }
}

/// `compute` sums the LSTM weights' gradients over the lines as they are
/// made; the data-parallel path keeps each line's and chains them
/// afterwards (`compute_lines`, `chain_lines`), here split over two
/// "workers" of two lines each. Both are g₀ + g₁ + … in line order: the
/// same bits, on every path. Hidden 25 gives 100 gate rows, so the
/// chained products run in two row blocks (96 and 4 rows).
#[test]
fn chained_lstm_gradients_equal_the_per_line_chain() {
    let _g = crate::dispatch::settings_lock();
    let cfg = Config {
        hidden: 25,
        ..small()
    };
    let model = Model::new(cfg.clone(), 7).unwrap();
    let (imgs, widths, labels) = batch(&cfg, 5);
    let lines = first_lines(4, &imgs, &widths, &labels);
    for path in available_paths() {
        set_kernel_path(Some(path)).unwrap();
        let token = Token::current();
        let mut whole = Trainer::new(&model, Hyper::default()).unwrap();
        whole.compute(token, &model, &lines).unwrap();
        let want: Vec<u32> = whole.grads.iter().flatten().map(|x| x.to_bits()).collect();
        let mut parts = Trainer::new(&model, Hyper::default()).unwrap();
        let mut acc = vec![0f32; parts.flat_len()];
        for (w, pair) in lines.chunks(2).enumerate() {
            parts.compute_lines(token, &model, pair, 4).unwrap();
            parts.chain_lines(0, &mut acc, w == 0).unwrap();
        }
        let got: Vec<u32> = acc.iter().map(|x| x.to_bits()).collect();
        assert!(
            want == got,
            "{path:?}: compute and the chained lines differ"
        );
        // After `compute` no lines are kept for `chain_lines`.
        assert!(whole.chain_lines(0, &mut acc, true).is_err());
    }
    set_kernel_path(None).unwrap();
}
