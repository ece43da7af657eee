//! Linear layer `y = x Wᵀ + b` over T rows, with the trainer's backward
//! (docs/recognizer.md, "The arithmetic contract"):
//! dW[o][i] = dot16 over t of dY[t][o]·x[t][i]; db[o] = dot16 over t of
//! dY[t][o]·1; dx[t][i] = dot16 over o of dY[t][o]·W[o][i].

use super::dot16::gemm_nt;
use super::dot16_nn::gemm_nn;
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

/// Backward. `w` is the weight (`[Out][In]`). Overwrites dw, db and dx.
/// Each is a short sum (over the T steps, or over the classes), so all
/// three run with the outputs on the lanes (`gemm_nn`): dY read by column
/// for dW and db, W's rows as they lie for dx.
#[allow(clippy::too_many_arguments)]
pub fn backward(
    token: Token,
    t: usize,
    inp: usize,
    out: usize,
    x: &[f32],
    dy: &[f32],
    w: &[f32],
    dw: &mut [f32],
    db: &mut [f32],
    dx: Option<&mut [f32]>,
) {
    gemm_nn(token, out, inp, t, dy, 1, out, x, inp, dw, inp);
    // db: dot16 with a row of ones over t (the column sums of dY).
    gemm_nn(token, 1, out, t, &[1.0], 0, 0, dy, out, db, out);
    if let Some(dx) = dx {
        gemm_nn(token, t, inp, out, dy, out, 1, w, inp, dx, inp);
    }
}
