//! One bidirectional LSTM layer (gates i, f, g, o; one bias b = b_ih + b_hh
//! per direction) with the trainer's backward recurrence
//! (docs/recognizer.md, "The arithmetic contract").
//!
//! Forward, per direction, for each visited step t (forward direction
//! t = 0..T, reverse T−1..0), with h and c of the previously visited step
//! (zeros first):
//!   z[g] = (dot16(x[t], W_ih[g]) + b[g]) + dot16(h, W_hh[g])
//!   i = σ(z_i), f = σ(z_f), g = tanh(z_g), o = σ(z_o)
//!   c = f·cPrev + i·g      tc = tanh(c)      h = o·tc
//! (every operation rounded separately; σ and tanh are the fixed ones).
//! The activated gates, c, tc and the starting hidden state are stored.

use super::dot16::{gemm_nt, rowsum16};
use crate::kernels::transpose::{transpose, transpose_ld};
use crate::math::{sigmoid, tanh};

/// Stored forward state of one direction.
#[derive(Default)]
pub struct DirState {
    /// `[T][4H]`: activated gates i, f, g, o.
    pub gates: Vec<f32>,
    /// `[T][H]`: cell state after step t.
    pub c: Vec<f32>,
    /// `[T][H]`: tanh of the cell state.
    pub tc: Vec<f32>,
    /// `[T][H]`: the hidden state step t started from.
    pub hprev: Vec<f32>,
}

/// Parameters of one direction, borrowed (the forward pass reads these;
/// the backward recurrence reads W_hh transposed, `[H][4H]`, instead).
#[derive(Clone, Copy)]
pub struct DirParams<'a> {
    pub w_ih: &'a [f32],
    pub w_hh: &'a [f32],
    pub b: &'a [f32],
}

/// Forward of one direction; writes h into `out[t][col..col + H]` (row
/// length `ldo`).
#[allow(clippy::too_many_arguments)]
pub fn forward_dir(
    t_len: usize,
    inp: usize,
    h: usize,
    reverse: bool,
    x: &[f32],
    p: DirParams<'_>,
    st: &mut DirState,
    xp: &mut Vec<f32>,
    out: &mut [f32],
    ldo: usize,
    col: usize,
) {
    let g4 = 4 * h;
    super::reuse(xp, t_len * g4, 0.0);
    gemm_nt(t_len, g4, inp, x, inp, p.w_ih, inp, xp, g4);
    for row in xp.chunks_exact_mut(g4) {
        for (v, bias) in row.iter_mut().zip(p.b) {
            *v += *bias;
        }
    }
    super::reuse(&mut st.gates, t_len * g4, 0.0);
    for v in [&mut st.c, &mut st.tc, &mut st.hprev] {
        super::reuse(v, t_len * h, 0.0);
    }
    let mut hcur = vec![0f32; h];
    let mut ccur = vec![0f32; h];
    let mut rec = vec![0f32; g4];
    for step in 0..t_len {
        let t = if reverse { t_len - 1 - step } else { step };
        st.hprev[t * h..][..h].copy_from_slice(&hcur);
        gemm_nt(1, g4, h, &hcur, h, p.w_hh, h, &mut rec, g4);
        let z = &mut st.gates[t * g4..][..g4];
        let xpt = &xp[t * g4..][..g4];
        for k in 0..g4 {
            z[k] = xpt[k] + rec[k];
        }
        for j in 0..h {
            let i = sigmoid(z[j]);
            let f = sigmoid(z[h + j]);
            let g = tanh(z[2 * h + j]);
            let o = sigmoid(z[3 * h + j]);
            z[j] = i;
            z[h + j] = f;
            z[2 * h + j] = g;
            z[3 * h + j] = o;
            let c = f * ccur[j] + i * g;
            let tc = tanh(c);
            let hv = o * tc;
            ccur[j] = c;
            hcur[j] = hv;
            st.c[t * h + j] = c;
            st.tc[t * h + j] = tc;
            out[t * ldo + col + j] = hv;
        }
    }
}

/// Backward recurrence of one direction: fills `dz[t][dzcol..dzcol + 4H]`
/// (row length `lddz`) from `dout[t][col..col + H]` (row length `ldo`).
#[allow(clippy::too_many_arguments)]
pub fn backward_dir(
    t_len: usize,
    h: usize,
    reverse: bool,
    dout: &[f32],
    ldo: usize,
    col: usize,
    w_hh_t: &[f32],
    st: &DirState,
    dz: &mut [f32],
    lddz: usize,
    dzcol: usize,
) {
    let g4 = 4 * h;
    let mut dh_rec = vec![0f32; h];
    let mut dc_next = vec![0f32; h];
    let zeros = vec![0f32; h];
    for back in 0..t_len {
        // Reverse of the forward visiting order.
        let step = t_len - 1 - back;
        let t = if reverse { t_len - 1 - step } else { step };
        let c_prev: &[f32] = if step == 0 {
            &zeros
        } else {
            let tp = if reverse { t + 1 } else { t - 1 };
            &st.c[tp * h..][..h]
        };
        let gates = &st.gates[t * g4..][..g4];
        let tcs = &st.tc[t * h..][..h];
        let dzt = &mut dz[t * lddz + dzcol..][..g4];
        for j in 0..h {
            let dh = dout[t * ldo + col + j] + dh_rec[j];
            let (i, f, g, o) = (gates[j], gates[h + j], gates[2 * h + j], gates[3 * h + j]);
            let tc = tcs[j];
            let dtc = dh * o;
            let d_o = dh * tc;
            let dc = dc_next[j] + dtc * (1.0 - tc * tc);
            let di = dc * g;
            let dg = dc * i;
            let df = dc * c_prev[j];
            dc_next[j] = dc * f;
            dzt[j] = di * (i * (1.0 - i));
            dzt[h + j] = df * (f * (1.0 - f));
            dzt[2 * h + j] = dg * (1.0 - g * g);
            dzt[3 * h + j] = d_o * (o * (1.0 - o));
        }
        if back + 1 < t_len {
            gemm_nt(1, h, g4, dzt, g4, w_hh_t, g4, &mut dh_rec, h);
        }
    }
}

/// Workspace for the weight gradients.
#[derive(Default)]
pub struct GradScratch {
    /// This direction's gate gradients as `[4H][T]` (one row per gate).
    dzt: Vec<f32>,
    /// The layer input as `[In][T]`.
    xt: Vec<f32>,
    /// The starting hidden states as `[H][T]`.
    ht: Vec<f32>,
}

/// dW_ih, dW_hh, db of one direction after the recurrence (t ascending by
/// time index): `dW_ih[g][i] = dot16_t(dz[t][g], x[t][i])`,
/// `dW_hh[g][j] = dot16_t(dz[t][g], hPrev[t][j])`, `db[g] = dot16_t(dz[t][g], 1)`.
#[allow(clippy::too_many_arguments)]
pub fn weight_grads(
    t_len: usize,
    inp: usize,
    h: usize,
    x: &[f32],
    st: &DirState,
    dz: &[f32],
    lddz: usize,
    dzcol: usize,
    dw_ih: &mut [f32],
    dw_hh: &mut [f32],
    db: &mut [f32],
    s: &mut GradScratch,
) {
    let g4 = 4 * h;
    let dzp = &dz[dzcol..];
    // Every product runs over t: with both operands transposed to rows
    // along t (`[4H][T]`, `[In][T]`, `[H][T]`: same values, same order,
    // same bits) each output is one contiguous dot16, the fastest form of
    // the kernel.
    super::reuse(&mut s.dzt, g4 * t_len, 0.0);
    transpose_ld(dzp, t_len, g4, lddz, &mut s.dzt);
    super::reuse(&mut s.xt, inp * t_len, 0.0);
    transpose(&x[..t_len * inp], t_len, inp, &mut s.xt);
    super::reuse(&mut s.ht, h * t_len, 0.0);
    transpose(&st.hprev[..t_len * h], t_len, h, &mut s.ht);
    gemm_nt(g4, inp, t_len, &s.dzt, t_len, &s.xt, t_len, dw_ih, inp);
    gemm_nt(g4, h, t_len, &s.dzt, t_len, &s.ht, t_len, dw_hh, h);
    for (g, b) in db[..g4].iter_mut().enumerate() {
        *b = rowsum16(&s.dzt[g * t_len..][..t_len]);
    }
}

/// The layer's input gradient: `dx[t][i]` = dot16 over the 8H gates
/// (forward direction first) of `dz[t]` and `W_cat_t[i]`, where `w_cat_t` is
/// `[In][8H]` (both directions' W_ih transposed side by side).
pub fn input_grad(t_len: usize, inp: usize, h: usize, dz: &[f32], w_cat_t: &[f32], dx: &mut [f32]) {
    let g8 = 8 * h;
    gemm_nt(t_len, inp, g8, dz, g8, w_cat_t, g8, dx, inp);
}
