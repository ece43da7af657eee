//! GFMA per second of `gemm_nt` on the recognizer's shapes, one thread:
//! the median of 15 timings of about 0.4 GFMA each (a median, because a
//! shared machine stalls some of them), in this thread's CPU time
//! (/proc/thread-self/schedstat), so that time spent waiting for a core on
//! a loaded machine is not counted.
//! `cargo run --release --example dot16_bench`
//!
//! The operands start on a 64-byte boundary (as the recognizer's buffers
//! do, `line_alloc`). Environment:
//! - `GFMA=g`: about g GFMA per timing (default 0.4; the CPU clock ticks in
//!   milliseconds, so take more on a fast core).
//! - `SHAPES=m,n,k;m,n,k…`: these shapes instead of the recognizer's.
//! - `NN=1`: `gemm_nn` (B stored `[k][n]`, the outputs on the lanes)
//!   instead of `gemm_nt`, on the same shapes.
//! - `ACOLS=1` (with `NN=1`): A read down its columns (strides 1 and m),
//!   as the LSTM weight gradients and the convolution input gradient read
//!   dZ and dCᵀ. `APAD=p`, `BPAD=p`: p floats added to A's and B's row
//!   length (a stride off a power of two).
//! - `TAPS=h,w,c,o;…`: the convolution forward of an h × w image of c
//!   channels (a multiple of 16) into o, its windows read in place from the
//!   padded input: `gemm_nt_taps` (W as it lies) against `gemm_nn_taps`
//!   (W transposed), alternated, both printed.
//! - `SHIFT=s`: each timing of operands on the boundary is paired with one
//!   of operands s floats past it (s = 4: 16 bytes, where the system
//!   allocator puts a large block), and the median of the pairs' time
//!   ratios (shifted / aligned) is printed too: a ratio within one process
//!   run, which a shared machine's changing speed moves much less than
//!   the rates.
use onemodel::recognizer::dot16::{gemm_nt, gemm_nt_taps, pad_input, Taps3x3};
use onemodel::recognizer::dot16_nn::{gemm_nn, gemm_nn_taps};
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

/// `len` elements of `buf` starting `shift` floats past a 64-byte boundary,
/// filled with `value(i)`.
fn placed(buf: &mut [f32], len: usize, shift: usize, value: impl Fn(usize) -> f32) -> &[f32] {
    let skip = buf.as_ptr().align_offset(64) + shift;
    let s = &mut buf[skip..skip + len];
    for (i, x) in s.iter_mut().enumerate() {
        *x = value(i);
    }
    s
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let env = |name: &str| std::env::var(name).ok();
    let work = env("GFMA").map_or(0.4, |v| v.parse::<f64>().unwrap()) * 1e9;
    let shift: Option<usize> = env("SHIFT").map(|v| v.parse().unwrap());
    let nn = env("NN").is_some_and(|v| v == "1");
    let acols = env("ACOLS").is_some_and(|v| v == "1");
    let apad: usize = env("APAD").map_or(0, |v| v.parse().unwrap());
    let bpad: usize = env("BPAD").map_or(0, |v| v.parse().unwrap());
    if let Some(list) = env("TAPS") {
        for shape in list.split(';') {
            let v: Vec<usize> = shape
                .split(',')
                .map(|x| x.trim().parse().unwrap())
                .collect();
            taps(work, v[0], v[1], v[2], v[3]);
        }
        return;
    }
    // (m, n, k): conv forward blocks 2 and 3, conv weight gradient (block 2),
    // conv input gradient (block 2), LSTM input projection, LSTM weight
    // gradient, one recurrent step, the first convolution, one recurrent step
    // of eight lines, an LSTM weight gradient with a tail (67 time steps).
    let default = [
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
    ];
    let shapes: Vec<(usize, usize, usize)> = match env("SHAPES") {
        Some(list) => list
            .split(';')
            .map(|s| {
                let v: Vec<usize> = s.split(',').map(|x| x.trim().parse().unwrap()).collect();
                (v[0], v[1], v[2])
            })
            .collect(),
        None => default.to_vec(),
    };
    for (m, n, k) in shapes {
        // gemm_nt takes both operands by rows of k.
        let acols = acols && nn;
        let (lda, ldb) = (
            if acols { m } else { k } + apad,
            if nn { n } else { k } + bpad,
        );
        let (alen, blen) = (
            if acols { k } else { m } * lda,
            if nn { k } else { n } * ldb,
        );
        let (mut abuf, mut bbuf) = (vec![0f32; alen + 32], vec![0f32; blen + 32]);
        let (mut abuf2, mut bbuf2) = (abuf.clone(), bbuf.clone());
        let a = placed(&mut abuf, alen, 0, |i| (i % 7) as f32 * 0.25);
        let b = placed(&mut bbuf, blen, 0, |i| (i % 5) as f32 * 0.5);
        let s = shift.unwrap_or(0);
        let a2 = placed(&mut abuf2, alen, s, |i| (i % 7) as f32 * 0.25);
        let b2 = placed(&mut bbuf2, blen, s, |i| (i % 5) as f32 * 0.5);
        let mut c = vec![0f32; m * n];
        let reps = (work / (m * n * k) as f64).max(1.0) as usize;
        let mut time = |a: &[f32], b: &[f32]| {
            let t = cpu_s();
            for _ in 0..reps {
                if nn {
                    let (rs, ks) = if acols { (1, lda) } else { (lda, 1) };
                    gemm_nn(Token::current(), m, n, k, a, rs, ks, b, ldb, &mut c, n);
                } else {
                    gemm_nt(Token::current(), m, n, k, a, lda, b, ldb, &mut c, n);
                }
            }
            cpu_s() - t
        };
        let gfma = (m * n * k * reps) as f64 / 1e9;
        let (mut rates, mut ratios) = (Vec::new(), Vec::new());
        for _ in 0..15 {
            let t = time(a, b);
            rates.push(gfma / t);
            if shift.is_some() {
                ratios.push(time(a2, b2) / t);
            }
        }
        let (lo, hi) = (
            rates.iter().copied().fold(f64::INFINITY, f64::min),
            rates.iter().copied().fold(0.0, f64::max),
        );
        print!(
            "{m}x{n}x{k}: {:.1} GFMA/s (median; min {lo:.1}, max {hi:.1})",
            median(&mut rates)
        );
        if shift.is_some() {
            print!("; shifted {s} floats: time × {:.3}", median(&mut ratios));
        }
        println!();
    }
}

/// `TAPS=`: both forms of the in-place convolution forward, alternated.
fn taps(work: f64, h: usize, w: usize, c: usize, o: usize) {
    let (p, k) = (h * w, 9 * c);
    let x: Vec<f32> = (0..p * c).map(|i| (i % 7) as f32 * 0.25).collect();
    let wt: Vec<f32> = (0..o * k).map(|i| (i % 5) as f32 * 0.5).collect();
    let (mut xp, mut steps) = (Vec::new(), Vec::new());
    pad_input(&x, h, w, c, &mut xp);
    let mut out = vec![0f32; p * o];
    let reps = (work / (p * o * k) as f64).max(1.0) as usize;
    let gfma = (p * o * k * reps) as f64 / 1e9;
    let (mut nt, mut nn) = (Vec::new(), Vec::new());
    for _ in 0..15 {
        for (on_lanes, rates) in [(false, &mut nt), (true, &mut nn)] {
            let t = cpu_s();
            for _ in 0..reps {
                let taps = Taps3x3::new(h, w, c, &mut steps);
                if on_lanes {
                    gemm_nn_taps(Token::current(), taps, &xp, o, &wt, o, &mut out, o);
                } else {
                    gemm_nt_taps(Token::current(), taps, &xp, o, &wt, k, &mut out, o);
                }
            }
            rates.push(gfma / (cpu_s() - t));
        }
    }
    println!(
        "taps {h}x{w}x{c} -> {o}: gemm_nt_taps {:.1}, gemm_nn_taps {:.1} GFMA/s (medians)",
        median(&mut nt),
        median(&mut nn)
    );
}
