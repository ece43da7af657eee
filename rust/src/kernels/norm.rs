//! Batch and layer normalization, forward and backward.
//!
//! Statistics are f64: the mean is the f64 sum of the values in increasing
//! element order divided by the count; the (biased) variance is the f64 sum
//! of squared deviations from that mean, in the same order, divided by the
//! count. `invstd = 1/sqrt(var + eps)` in f64. Mean and invstd are rounded
//! once to f32 and the forward is f32: `x̂ = (x − mean)·invstd`,
//! `y = x̂·w + b` (weight and bias optional).
//!
//! Backward: the parameter gradients `dw = Σ g·x̂`, `db = Σ g` and the row or
//! channel sums of the input gradient are f64 sums in increasing element
//! order (x̂ recomputed in f32 exactly as the forward computed it); each
//! input-gradient element is evaluated in f64 and rounded once.
//!
//! Threads: batch norm takes one channel per chunk; layer norm takes fixed
//! chunks of rows (input gradient) or of columns (parameter gradients).

use super::double_chain::{add_terms, chain, chain2};
use crate::dispatch::par_chunks_sized;
use crate::error::{Error, Result};
use crate::ptr::Ptr;
use crate::simd::Token;

// Every read and write below is at an index inside its buffer (the
// functions' safety contracts give the extents, which each `Ptr` carries
// and debug builds assert), and the chunks write disjoint elements: one
// channel (batch norm), one block of rows or of columns (layer norm).

type In = Ptr<*const f32>;
type Out = Ptr<*mut f32>;

#[inline(always)]
fn at(p: In, i: usize) -> f32 {
    // SAFETY: see above.
    unsafe { p.read(i) }
}

#[inline(always)]
fn put(p: Out, i: usize, v: f32) {
    // SAFETY: see above.
    unsafe { p.write(i, v) }
}

/// `(mean, biased variance)`, in f64, of the values of `runs` runs of `len`
/// consecutive elements of `x` (run j from element `start(j)` on), in
/// element order: the sum is the double chain of docs/engine.md, "Arithmetic
/// rules" through the blocked chain (`double_chain::add_terms`, the same bits
/// faster), the squared deviations the plain chain (`double_chain::chain`: the blocked chain's
/// checks cost more than they save on these terms: docs/kernels.md, "The
/// double chain").
fn stats(
    token: Token,
    x: In,
    runs: usize,
    len: usize,
    start: impl Fn(usize) -> usize,
) -> (f64, f64) {
    let count = runs * len;
    // SAFETY: the callers' runs lie inside x (see the note above `at`).
    let run = |j: usize| unsafe { x.slice(start(j), len) };
    let s = (0..runs).fold(0f64, |s, j| add_terms(token, s, run(j)));
    let mean = s / count as f64;
    let q = (0..runs).fold(0f64, |q, j| {
        chain(
            q,
            run(j).iter().map(|&v| {
                let d = v as f64 - mean;
                d * d
            }),
        )
    });
    (mean, q / count as f64)
}

/// Batch norm forward over `x [n, c, s]`. Training: batch statistics; the
/// unbiased variance (count/(count−1)) is written to `var_unbiased` for the
/// running-stat update. Eval: `running = Some((mean, var))`.
/// `save_mean`/`save_invstd` receive the f32 mean and invstd used.
///
/// # Safety
/// `x`, `y` hold n·c·s; weight, bias, running, save_*, var_unbiased c.
#[allow(clippy::too_many_arguments)]
pub unsafe fn batch_norm_forward(
    token: Token,
    (n, c, s): (usize, usize, usize),
    x: *const f32,
    weight: Option<*const f32>,
    bias: Option<*const f32>,
    running: Option<(*const f32, *const f32)>,
    eps: f64,
    y: *mut f32,
    save_mean: *mut f32,
    save_invstd: *mut f32,
    var_unbiased: *mut f32,
) {
    let len = n * c * s;
    let (xa, ya) = (In::new(x, len), Out::new(y, len));
    let (wa, ba) = (weight.map(|p| In::new(p, c)), bias.map(|p| In::new(p, c)));
    let (ma, ia, va) = (
        Out::new(save_mean, c),
        Out::new(save_invstd, c),
        Out::new(var_unbiased, c),
    );
    let run = running.map(|(m, v)| (In::new(m, c), In::new(v, c)));
    let count = n * s;
    par_chunks_sized(c, c * count, |ch| {
        let idx = |i: usize| ((i / s) * c + ch) * s + i % s;
        let (mean, var) = match run {
            Some((rm, rv)) => (at(rm, ch) as f64, at(rv, ch) as f64),
            None => {
                // Channel ch of item j is s consecutive elements.
                let (m, v) = stats(token, xa, n, s, |j| (j * c + ch) * s);
                put(
                    va,
                    ch,
                    if count > 1 {
                        (v * count as f64 / (count - 1) as f64) as f32
                    } else {
                        f32::NAN
                    },
                );
                (m, v)
            }
        };
        let mean32 = mean as f32;
        let inv32 = (1.0 / (var + eps).sqrt()) as f32;
        put(ma, ch, mean32);
        put(ia, ch, inv32);
        for i in 0..count {
            let j = idx(i);
            let mut v = (at(xa, j) - mean32) * inv32;
            if let Some(w) = wa {
                v *= at(w, ch);
            }
            if let Some(b) = ba {
                v += at(b, ch);
            }
            put(ya, j, v);
        }
    });
}

/// Batch norm backward. `dx`, `dw`, `db` are written when given.
///
/// # Safety
/// As [`batch_norm_forward`]; `g` holds n·c·s.
#[allow(clippy::too_many_arguments)]
pub unsafe fn batch_norm_backward(
    (n, c, s): (usize, usize, usize),
    x: *const f32,
    g: *const f32,
    weight: Option<*const f32>,
    mean: *const f32,
    invstd: *const f32,
    training: bool,
    dx: Option<*mut f32>,
    dw: Option<*mut f32>,
    db: Option<*mut f32>,
) {
    let len = n * c * s;
    let (xa, ga, wa) = (
        In::new(x, len),
        In::new(g, len),
        weight.map(|p| In::new(p, c)),
    );
    let (ma, ia) = (In::new(mean, c), In::new(invstd, c));
    let dxa = dx.map(|p| Out::new(p, len));
    let (dwa, dba) = (dw.map(|p| Out::new(p, c)), db.map(|p| Out::new(p, c)));
    let count = n * s;
    par_chunks_sized(c, c * count, |ch| {
        let idx = |i: usize| ((i / s) * c + ch) * s + i % s;
        let (m, inv) = (at(ma, ch), at(ia, ch));
        let (sg, sgx) = chain2(
            (0.0, 0.0),
            (0..count).map(|i| {
                let j = idx(i);
                let gv = at(ga, j) as f64;
                (gv, gv * ((at(xa, j) - m) * inv) as f64)
            }),
        );
        if let Some(dw) = dwa {
            put(dw, ch, sgx as f32);
        }
        if let Some(db) = dba {
            put(db, ch, sg as f32);
        }
        if let Some(dx) = dxa {
            let w = wa.map_or(1.0, |w| at(w, ch) as f64);
            let cnt = count as f64;
            let k = w * inv as f64;
            for i in 0..count {
                let j = idx(i);
                let gv = at(ga, j) as f64;
                let v = if training {
                    let xh = ((at(xa, j) - m) * inv) as f64;
                    k / cnt * (cnt * gv - sg - xh * sgx)
                } else {
                    gv * k
                };
                put(dx, j, v as f32);
            }
        }
    });
}

/// (n, c, s) of a batch norm input [n, c, *] (s the product of the rest).
pub fn batch_dims(op: &str, shape: &[usize]) -> Result<(usize, usize, usize)> {
    match shape {
        [n, c, rest @ ..] => Ok((*n, *c, rest.iter().product())),
        _ => Err(Error::Value(format!(
            "{op}: expected an input [N, C, *], got shape {shape:?}"
        ))),
    }
}

/// Rows of a layer norm input whose last `d` elements form one row.
pub fn layer_rows(op: &str, shape: &[usize], d: usize) -> Result<usize> {
    let numel: usize = shape.iter().product();
    if d == 0 || !numel.is_multiple_of(d) {
        return Err(Error::Value(format!(
            "{op}: input of shape {shape:?} is not rows of {d} elements"
        )));
    }
    Ok(numel / d)
}

const ROWS_PER_CHUNK: usize = 16;
const COLS_PER_CHUNK: usize = 64;

/// Layer norm forward over `x [rows, d]` (the normalized shape flattened).
///
/// # Safety
/// `x`, `y` hold rows·d; weight, bias d; save_mean, save_invstd rows.
#[allow(clippy::too_many_arguments)]
pub unsafe fn layer_norm_forward(
    token: Token,
    rows: usize,
    d: usize,
    x: *const f32,
    weight: Option<*const f32>,
    bias: Option<*const f32>,
    eps: f64,
    y: *mut f32,
    save_mean: *mut f32,
    save_invstd: *mut f32,
) {
    let (xa, ya) = (In::new(x, rows * d), Out::new(y, rows * d));
    let (wa, ba) = (weight.map(|p| In::new(p, d)), bias.map(|p| In::new(p, d)));
    let (ma, ia) = (Out::new(save_mean, rows), Out::new(save_invstd, rows));
    par_chunks_sized(rows.div_ceil(ROWS_PER_CHUNK), rows * d, |chunk| {
        for r in chunk * ROWS_PER_CHUNK..((chunk + 1) * ROWS_PER_CHUNK).min(rows) {
            let (mean, var) = stats(token, xa, 1, d, |_| r * d);
            let (m, inv) = (mean as f32, (1.0 / (var + eps).sqrt()) as f32);
            put(ma, r, m);
            put(ia, r, inv);
            for i in 0..d {
                let mut v = (at(xa, r * d + i) - m) * inv;
                if let Some(w) = wa {
                    v *= at(w, i);
                }
                if let Some(b) = ba {
                    v += at(b, i);
                }
                put(ya, r * d + i, v);
            }
        }
    });
}

/// Layer norm backward. `dx`, `dw`, `db` are written when given.
///
/// # Safety
/// As [`layer_norm_forward`]; `g` holds rows·d.
#[allow(clippy::too_many_arguments)]
pub unsafe fn layer_norm_backward(
    rows: usize,
    d: usize,
    x: *const f32,
    g: *const f32,
    weight: Option<*const f32>,
    mean: *const f32,
    invstd: *const f32,
    dx: Option<*mut f32>,
    dw: Option<*mut f32>,
    db: Option<*mut f32>,
) {
    let (xa, ga) = (In::new(x, rows * d), In::new(g, rows * d));
    let wa = weight.map(|p| In::new(p, d));
    let (ma, ia) = (In::new(mean, rows), In::new(invstd, rows));
    let xhat = move |r: usize, i: usize| (at(xa, r * d + i) - at(ma, r)) * at(ia, r);
    if let Some(dx) = dx {
        let dxa = Out::new(dx, rows * d);
        par_chunks_sized(rows.div_ceil(ROWS_PER_CHUNK), rows * d, |chunk| {
            for r in chunk * ROWS_PER_CHUNK..((chunk + 1) * ROWS_PER_CHUNK).min(rows) {
                let dxh = |i: usize| at(ga, r * d + i) as f64 * wa.map_or(1.0, |w| at(w, i) as f64);
                let (s1, s2) =
                    chain2((0.0, 0.0), (0..d).map(|i| (dxh(i), dxh(i) * xhat(r, i) as f64)));
                let (dd, inv) = (d as f64, at(ia, r) as f64);
                for i in 0..d {
                    put(
                        dxa,
                        r * d + i,
                        (inv / dd * (dd * dxh(i) - s1 - xhat(r, i) as f64 * s2)) as f32,
                    );
                }
            }
        });
    }
    if dw.is_some() || db.is_some() {
        let (dwa, dba) = (dw.map(|p| Out::new(p, d)), db.map(|p| Out::new(p, d)));
        par_chunks_sized(d.div_ceil(COLS_PER_CHUNK), rows * d, |chunk| {
            for i in chunk * COLS_PER_CHUNK..((chunk + 1) * COLS_PER_CHUNK).min(d) {
                let (sb, sw) = chain2(
                    (0.0, 0.0),
                    (0..rows).map(|r| {
                        let gv = at(ga, r * d + i) as f64;
                        (gv, gv * xhat(r, i) as f64)
                    }),
                );
                if let Some(dw) = dwa {
                    put(dw, i, sw as f32);
                }
                if let Some(db) = dba {
                    put(db, i, sb as f32);
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_norm_normalizes_and_backward_sums_to_zero() {
        let x: Vec<f32> = (0..12).map(|i| (i as f32 * 1.3).sin()).collect();
        let g: Vec<f32> = (0..12).map(|i| (i as f32 * 0.7).cos()).collect();
        let (mut y, mut m, mut inv, mut dx) =
            (vec![0f32; 12], vec![0f32; 3], vec![0f32; 3], vec![0f32; 12]);
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe {
            layer_norm_forward(
                Token::current(),
                3,
                4,
                x.as_ptr(),
                None,
                None,
                1e-5,
                y.as_mut_ptr(),
                m.as_mut_ptr(),
                inv.as_mut_ptr(),
            );
            layer_norm_backward(
                3,
                4,
                x.as_ptr(),
                g.as_ptr(),
                None,
                m.as_ptr(),
                inv.as_ptr(),
                Some(dx.as_mut_ptr()),
                None,
                None,
            );
        }
        for r in 0..3 {
            let s: f32 = y[r * 4..r * 4 + 4].iter().sum();
            let q: f32 = y[r * 4..r * 4 + 4].iter().map(|v| v * v).sum();
            assert!(s.abs() < 1e-5 && (q - 4.0).abs() < 1e-3);
            let ds: f32 = dx[r * 4..r * 4 + 4].iter().sum();
            assert!(ds.abs() < 1e-5);
        }
    }

    #[test]
    fn batch_norm_uses_biased_variance_and_reports_unbiased() {
        let x = [1f32, 3.0, 5.0, 7.0]; // n=2, c=1, s=2: mean 4, var 5, unbiased 20/3
        let (mut y, mut m, mut inv, mut vu) = ([0f32; 4], [0f32], [0f32], [0f32]);
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe {
            batch_norm_forward(
                Token::current(),
                (2, 1, 2),
                x.as_ptr(),
                None,
                None,
                None,
                0.0,
                y.as_mut_ptr(),
                m.as_mut_ptr(),
                inv.as_mut_ptr(),
                vu.as_mut_ptr(),
            )
        };
        assert_eq!(m[0], 4.0);
        assert_eq!(inv[0], (1.0 / 5f64.sqrt()) as f32);
        assert_eq!(vu[0], (20.0f64 / 3.0) as f32);
    }

    /// The statistics' sums run through the blocked chain (runs of ≥ 64
    /// elements): the mean and invstd written are those of the element-order
    /// f64 chain written out, bit for bit (values of mixed magnitude, so a
    /// reordered sum would differ).
    #[test]
    fn statistics_are_the_element_order_chains() {
        let value =
            |i: usize| ((i as f32 * 0.618).sin() * 1e3 + 1e4) * if i % 7 == 0 { 1e-3 } else { 1.0 };
        let chain = |vals: &[f32], eps: f64| {
            let n = vals.len() as f64;
            let mean = vals.iter().fold(0f64, |a, &v| a + v as f64) / n;
            let var = vals.iter().fold(0f64, |a, &v| {
                let d = v as f64 - mean;
                a + d * d
            }) / n;
            (mean as f32, (1.0 / (var + eps).sqrt()) as f32)
        };
        let (n, c, s) = (3usize, 2usize, 150usize);
        let x: Vec<f32> = (0..n * c * s).map(value).collect();
        let mut y = vec![0f32; x.len()];
        let (mut m, mut inv, mut vu) = (vec![0f32; c], vec![0f32; c], vec![0f32; c]);
        // SAFETY: the buffers hold the sizes the call documents.
        unsafe {
            batch_norm_forward(
                Token::current(),
                (n, c, s),
                x.as_ptr(),
                None,
                None,
                None,
                1e-5,
                y.as_mut_ptr(),
                m.as_mut_ptr(),
                inv.as_mut_ptr(),
                vu.as_mut_ptr(),
            )
        };
        for ch in 0..c {
            let vals: Vec<f32> = (0..n)
                .flat_map(|j| x[(j * c + ch) * s..(j * c + ch + 1) * s].to_vec())
                .collect();
            let (wm, wi) = chain(&vals, 1e-5);
            assert_eq!(
                (m[ch].to_bits(), inv[ch].to_bits()),
                (wm.to_bits(), wi.to_bits())
            );
        }
        let (rows, d) = (3usize, 200usize);
        let (mut m2, mut inv2) = (vec![0f32; rows], vec![0f32; rows]);
        let mut y2 = vec![0f32; rows * d];
        // SAFETY: as above.
        unsafe {
            layer_norm_forward(
                Token::current(),
                rows,
                d,
                x.as_ptr(),
                None,
                None,
                1e-5,
                y2.as_mut_ptr(),
                m2.as_mut_ptr(),
                inv2.as_mut_ptr(),
            )
        };
        for r in 0..rows {
            let (wm, wi) = chain(&x[r * d..(r + 1) * d], 1e-5);
            assert_eq!(
                (m2[r].to_bits(), inv2[r].to_bits()),
                (wm.to_bits(), wi.to_bits())
            );
        }
    }
}
