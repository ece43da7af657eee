//! Linear layer `y = x Wᵀ + b` over T rows, with the trainer's backward
//! (docs/recognizer.md, "The arithmetic contract"):
//! dW[o][i] = dot16 over t of dY[t][o]·x[t][i]; db[o] = dot16 over t of
//! dY[t][o]·1; dx[t][i] = dot16 over o of dY[t][o]·W[o][i].

use super::dot16::{gemm_nt, rowsum16};
use crate::kernels::transpose::transpose;
use crate::simd::Token;

/// `y[t][o] = dot16(x[t], W[o]) + b[o]`.
pub fn forward(
    token: Token,
    t: usize,
    inp: usize,
    out: usize,
    x: &[f32],
    w: &[f32],
    b: &[f32],
    y: &mut Vec<f32>,
) {
    super::reuse(y, t * out, 0.0);
    gemm_nt(token, t, out, inp, x, inp, w, inp, y, out);
    for row in y.chunks_exact_mut(out) {
        for (v, bias) in row.iter_mut().zip(b) {
            *v += *bias;
        }
    }
}

/// Workspace of the backward pass.
#[derive(Default)]
pub struct BackScratch {
    dyt: Vec<f32>,
    xt: Vec<f32>,
}

/// Backward. `wt` is W transposed (`[In][Out]`). Overwrites dw, db, dx.
#[allow(clippy::too_many_arguments)]
pub fn backward(
    token: Token,
    t: usize,
    inp: usize,
    out: usize,
    x: &[f32],
    dy: &[f32],
    wt: &[f32],
    dw: &mut [f32],
    db: &mut [f32],
    dx: Option<&mut [f32]>,
    s: &mut BackScratch,
) {
    super::reuse(&mut s.dyt, out * t, 0.0);
    super::reuse(&mut s.xt, inp * t, 0.0);
    transpose(token, dy, t, out, &mut s.dyt);
    transpose(token, x, t, inp, &mut s.xt);
    gemm_nt(token, out, inp, t, &s.dyt, t, &s.xt, t, dw, inp);
    for o in 0..out {
        db[o] = rowsum16(&s.dyt[o * t..][..t]);
    }
    if let Some(dx) = dx {
        gemm_nt(token, t, inp, out, dy, out, wt, out, dx, inp);
    }
}
