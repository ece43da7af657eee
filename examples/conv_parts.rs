//! Where a convolution forward's time goes, at 1 thread: the whole
//! `conv::forward` next to the GEMMs alone on one warm im2col block.
//! `cargo run --release --example conv_parts -- [c_in c_out h w]`
use onemodel::dispatch::{set_mode, set_threads, Mode};
use onemodel::gemm::{gemm_on, MatRef};
use onemodel::kernels::conv::{forward, Conv2d};
use onemodel::simd::Token;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let a: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse().unwrap())
        .collect();
    let (ci, co, h, w) = if a.len() == 4 {
        (a[0], a[1], a[2], a[3])
    } else {
        (32, 64, 16, 128)
    };
    let n = 8;
    set_threads(1).unwrap();
    let s = Conv2d {
        n,
        c_in: ci,
        h,
        w,
        c_out: co,
        kh: 3,
        kw: 3,
        stride: (1, 1),
        padding: (1, 1),
        dilation: (1, 1),
        groups: 1,
        oh: h,
        ow: w,
    };
    let x: Vec<f32> = (0..n * ci * h * w)
        .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
        .collect();
    let wt: Vec<f32> = (0..co * ci * 9)
        .map(|i| ((i * 104729) % 1000) as f32 / 500.0 - 1.0)
        .collect();
    let mut out = vec![0f32; n * co * h * w];
    let k = ci * 9;
    let cols_n = 256;
    let blocks = n * h * w / cols_n;
    let cols: Vec<f32> = (0..k * cols_n)
        .map(|i| ((i * 31) % 1000) as f32 / 500.0 - 1.0)
        .collect();
    let mut c = vec![0f32; co * cols_n];
    let flops = 2.0 * (n * co * h * w * k) as f64;
    for mode in [Mode::Exact, Mode::Fast] {
        set_mode(mode);
        let (mut tf, mut tg) = (vec![], vec![]);
        for _ in 0..15 {
            let t = Instant::now();
            unsafe { forward(mode, &s, x.as_ptr(), wt.as_ptr(), None, out.as_mut_ptr()) };
            tf.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            for _ in 0..blocks {
                let am = MatRef {
                    ptr: wt.as_ptr(),
                    rows: co,
                    cols: k,
                    rs: k as isize,
                    cs: 1,
                };
                let bm = MatRef {
                    ptr: cols.as_ptr(),
                    rows: k,
                    cols: cols_n,
                    rs: cols_n as isize,
                    cs: 1,
                };
                unsafe {
                    gemm_on(
                        Token::current(),
                        mode,
                        1,
                        am,
                        0,
                        bm,
                        0,
                        c.as_mut_ptr(),
                        cols_n,
                    )
                };
            }
            tg.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let (f, g) = (median(tf), median(tg));
        println!(
            "{ci}->{co} {h}x{w} {mode:?}: forward {f:.2} ms ({:.1} GFLOP/s), {blocks} GEMMs {co}x{k}x{cols_n} on a warm block {g:.2} ms ({:.1} GFLOP/s)",
            flops / f / 1e6, flops / g / 1e6
        );
    }
}
