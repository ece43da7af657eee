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
//! The activated gates, c, tc, the starting and the resulting hidden state
//! are stored. The cell update of a step, forward and backward, is the
//! engine's (`kernels::rnn::cell`, with z the input projection plus b and
//! rec the recurrent product); what is the recognizer's own is around it:
//! the dot16 products, the one bias and the ragged batches.
//!
//! The recurrences run over several lines at once (`recur_forward`,
//! `recur_backward`): each step's product over h (forward) or dz (backward)
//! takes the rows of every line still running, longest lines first; each
//! output is still the dot16 over one line's own vector, so the bits are
//! those of one line at a time.

use super::dot16::gemm_nt;
use super::dot16_nn::{gemm_nn, gemm_nn_add};
use crate::kernels::rnn::cell::{CellBackward, CellForward};
use crate::simd::Token;

/// Stored forward state of one direction of one line.
#[derive(Default)]
pub struct DirState {
    /// Time steps of the line.
    pub t: usize,
    /// `[T][4H]`: the input projection plus bias, then (after the
    /// recurrence) the activated gates i, f, g, o.
    pub gates: Vec<f32>,
    /// `[T][H]`: cell state after step t.
    pub c: Vec<f32>,
    /// `[T][H]`: tanh of the cell state.
    pub tc: Vec<f32>,
    /// `[T][H]`: the hidden state step t started from.
    pub hprev: Vec<f32>,
    /// `[T][H]`: the hidden state step t ends with (the direction's output).
    pub h: Vec<f32>,
    /// `[T][4H]`: the gate gradients dz of the backward recurrence.
    pub dz: Vec<f32>,
}

/// Parameters of one direction, borrowed (the forward pass reads these;
/// the backward recurrence reads W_hh transposed, `[H][4H]`, instead).
#[derive(Clone, Copy)]
pub struct DirParams<'a> {
    pub w_ih: &'a [f32],
    pub w_hh: &'a [f32],
    pub b: &'a [f32],
}

/// The input projection of one line: `gates[t][g] = dot16(x[t], W_ih[g]) +
/// b[g]`, and every per-step buffer sized for `t_len` steps.
pub fn input_projection(
    token: Token,
    t_len: usize,
    inp: usize,
    h: usize,
    x: &[f32],
    p: DirParams<'_>,
    st: &mut DirState,
) {
    let g4 = 4 * h;
    st.t = t_len;
    super::reuse(&mut st.gates, t_len * g4, 0.0);
    gemm_nt(
        token,
        t_len,
        g4,
        inp,
        x,
        inp,
        p.w_ih,
        inp,
        &mut st.gates,
        g4,
    );
    for row in st.gates.chunks_exact_mut(g4) {
        for (v, bias) in row.iter_mut().zip(p.b) {
            *v += *bias;
        }
    }
    for v in [&mut st.c, &mut st.tc, &mut st.hprev, &mut st.h] {
        super::reuse(v, t_len * h, 0.0);
    }
}

/// Workspace of a recurrence over several lines: their states as rows.
#[derive(Default)]
pub struct RecScratch {
    order: Vec<usize>,
    hm: Vec<f32>,
    cm: Vec<f32>,
    zm: Vec<f32>,
}

impl RecScratch {
    /// The lines by decreasing length (ties in line order) and zeroed
    /// state rows: at step s the lines still running (T > s) are the first
    /// rows, so one product per step serves all of them.
    fn start(&mut self, lines: &[&mut DirState], h: usize) -> usize {
        self.order.clear();
        self.order.extend(0..lines.len());
        self.order.sort_by_key(|&i| std::cmp::Reverse(lines[i].t));
        let n = lines.len();
        for v in [&mut self.hm, &mut self.cm] {
            v.clear();
            super::reuse(v, n * h, 0.0);
        }
        super::reuse(&mut self.zm, n * 4 * h, 0.0);
        self.order.first().map_or(0, |&i| lines[i].t)
    }
    fn running(&self, lines: &[&mut DirState], step: usize) -> usize {
        self.order
            .iter()
            .take_while(|&&i| lines[i].t > step)
            .count()
    }
}

/// Running lines from which a step's product takes W_hh transposed (the
/// outputs on the lanes, [`gemm_nn`]): measured faster from three rows
/// on (`dot16_bench` at 1–8 × 512 × 128, docs/performance.md), slower for
/// one or two.
const NN_FROM_ROWS: usize = 3;

/// Forward recurrence of one direction over several lines at once (each
/// line's `gates` holding its input projection, see [`input_projection`]):
/// each step is one product `[running lines][H] × W_hhᵀ`, each output still
/// the dot16 over the line's own h, so which lines share it moves no bit.
/// `w_hh_t` (`[H][4H]`, when the caller has it) serves the steps with at
/// least [`NN_FROM_ROWS`] lines running: the same sums, another kernel.
pub fn recur_forward(
    token: Token,
    h: usize,
    reverse: bool,
    w_hh: &[f32],
    w_hh_t: Option<&[f32]>,
    lines: &mut [&mut DirState],
    s: &mut RecScratch,
) {
    let g4 = 4 * h;
    let steps = s.start(lines, h);
    for step in 0..steps {
        let n = s.running(lines, step);
        match w_hh_t {
            Some(wt) if n >= NN_FROM_ROWS => {
                gemm_nn(token, n, g4, h, &s.hm, h, 1, wt, g4, &mut s.zm, g4)
            }
            _ => gemm_nt(token, n, g4, h, &s.hm, h, w_hh, h, &mut s.zm, g4),
        }
        for r in 0..n {
            let st = &mut *lines[s.order[r]];
            let t = if reverse { st.t - 1 - step } else { step };
            let hcur = &mut s.hm[r * h..][..h];
            let ccur = &mut s.cm[r * h..][..h];
            st.hprev[t * h..][..h].copy_from_slice(hcur);
            let z = &mut st.gates[t * g4..][..g4];
            let (c_out, tc_out, h_out) = (
                &mut st.c[t * h..][..h],
                &mut st.tc[t * h..][..h],
                &mut st.h[t * h..][..h],
            );
            CellForward {
                z,
                rec: &s.zm[r * g4..][..g4],
                c: ccur,
                h: hcur,
                c_out: Some(c_out),
                tc_out: Some(tc_out),
                h_out: Some(h_out),
                exact: false,
            }
            .run_here(token);
        }
    }
}

/// Forward of one direction of one line; writes h into
/// `out[t][col..col + H]` (row length `ldo`).
#[allow(clippy::too_many_arguments)]
pub fn forward_dir(
    token: Token,
    t_len: usize,
    inp: usize,
    h: usize,
    reverse: bool,
    x: &[f32],
    p: DirParams<'_>,
    st: &mut DirState,
    out: &mut [f32],
    ldo: usize,
    col: usize,
) {
    input_projection(token, t_len, inp, h, x, p, st);
    recur_forward(
        token,
        h,
        reverse,
        p.w_hh,
        None,
        &mut [&mut *st],
        &mut RecScratch::default(),
    );
    for t in 0..t_len {
        out[t * ldo + col..][..h].copy_from_slice(&st.h[t * h..][..h]);
    }
}

/// Backward recurrence of one direction over several lines at once: fills
/// each line's `dz` (`[T][4H]`) from its `douts[line][t][col..col + H]`
/// (row length `ldo`). The steps run in the reverse of the forward order;
/// a line joins when the step reaches its last (dh_rec and dc_next zero),
/// and each step's dh_rec of the running lines is one product
/// `[lines][4H] × W_hh` (`w_hh_t` is `[H][4H]`), each output the dot16 over
/// the line's own dz.
#[allow(clippy::too_many_arguments)]
pub fn recur_backward(
    token: Token,
    h: usize,
    reverse: bool,
    w_hh_t: &[f32],
    douts: &[&[f32]],
    ldo: usize,
    col: usize,
    lines: &mut [&mut DirState],
    s: &mut RecScratch,
) {
    let g4 = 4 * h;
    let steps = s.start(lines, h);
    for st in lines.iter_mut() {
        super::reuse(&mut st.dz, st.t * g4, 0.0);
    }
    // hm holds dh_rec, cm dc_next, zm the step's dz rows.
    for step in (0..steps).rev() {
        let n = s.running(lines, step);
        for r in 0..n {
            let li = s.order[r];
            let st = &mut *lines[li];
            let t = if reverse { st.t - 1 - step } else { step };
            let dout = &douts[li][t * ldo + col..][..h];
            let c_prev: Option<&[f32]> = if step == 0 {
                None
            } else {
                let tp = if reverse { t + 1 } else { t - 1 };
                Some(&st.c[tp * h..][..h])
            };
            let dzt = &mut s.zm[r * g4..][..g4];
            CellBackward {
                gates: &st.gates[t * g4..][..g4],
                tc: &st.tc[t * h..][..h],
                c_prev,
                dh_out: dout,
                dh_rec: &s.hm[r * h..][..h],
                dc: &mut s.cm[r * h..][..h],
                dz: &mut *dzt,
            }
            .run_here(token);
            st.dz[t * g4..][..g4].copy_from_slice(dzt);
        }
        if step > 0 {
            gemm_nt(token, n, h, g4, &s.zm, g4, w_hh_t, g4, &mut s.hm, h);
        }
    }
}

/// Backward recurrence of one direction of one line: fills `st.dz` from
/// `dout[t][col..col + H]` (row length `ldo`).
pub fn backward_dir(
    token: Token,
    h: usize,
    reverse: bool,
    dout: &[f32],
    ldo: usize,
    col: usize,
    w_hh_t: &[f32],
    st: &mut DirState,
) {
    recur_backward(
        token,
        h,
        reverse,
        w_hh_t,
        &[dout],
        ldo,
        col,
        &mut [st],
        &mut RecScratch::default(),
    );
}

/// dW_ih, dW_hh, db of one direction of one line after the recurrence (t
/// ascending by time index, over `st.dz`):
/// `dW_ih[g][i] = dot16_t(dz[t][g], x[t][i])`,
/// `dW_hh[g][j] = dot16_t(dz[t][g], hPrev[t][j])`, `db[g] = dot16_t(dz[t][g], 1)`.
#[allow(clippy::too_many_arguments)]
pub fn weight_grads(
    token: Token,
    inp: usize,
    h: usize,
    x: &[f32],
    st: &DirState,
    dw_ih: &mut [f32],
    dw_hh: &mut [f32],
    db: &mut [f32],
) {
    chained_weight_grads(token, inp, h, 0..4 * h, &[(x, st)], dw_ih, dw_hh, db);
}

/// Rows `gates` of one direction's dW_ih, dW_hh and db summed over
/// `lines` (each line's layer input x and its state), in their order:
/// every element is `g₀ + g₁ + …` added left to right, each gᵢ the line's
/// own [`weight_grads`] — the batch gradient's chain
/// (docs/recognizer.md, "The arithmetic contract") — with each tile of gᵢ
/// added to the sum as it is made (`gemm_nn_add`) instead of stored per
/// line and summed afterwards. The outputs are the rows `gates` only:
/// `dw_ih` is `gates.len() × inp`, `dw_hh` `gates.len() × h`, `db`
/// `gates.len()`.
#[allow(clippy::too_many_arguments)]
pub fn chained_weight_grads(
    token: Token,
    inp: usize,
    h: usize,
    gates: std::ops::Range<usize>,
    lines: &[(&[f32], &DirState)],
    dw_ih: &mut [f32],
    dw_hh: &mut [f32],
    db: &mut [f32],
) {
    let (g4, m) = (4 * h, gates.len());
    assert!(!lines.is_empty(), "lstm weight gradients: no lines to sum");
    assert!(
        gates.end <= g4,
        "lstm weight gradients: gate rows {gates:?} past the layer's {g4}"
    );
    for (i, &(x, st)) in lines.iter().enumerate() {
        let product = if i == 0 { gemm_nn } else { gemm_nn_add };
        let (t_len, dz) = (st.t, &st.dz[gates.start..]);
        // Every product runs over t, with the gates of dz (`[T][4H]`, read
        // by column) as A and x or hPrev (`[T][In]`, `[T][H]`) as B as they
        // lie: the outputs on the lanes (`gemm_nn`), whose tree has no
        // shuffle — at these short k (the line's time steps) the fastest
        // form.
        product(token, m, inp, t_len, dz, 1, g4, x, inp, dw_ih, inp);
        product(token, m, h, t_len, dz, 1, g4, &st.hprev, h, dw_hh, h);
        // db: dot16 with a row of ones over t (the column sums of dz).
        product(token, 1, m, t_len, &[1.0], 0, 0, dz, g4, db, m);
    }
}

/// The layer's input gradient for one line: `dx[t][i]` = dot16 over the 8H
/// gates (forward direction's dz first, then the reverse's, side by side
/// in `dzcat`, `[T][8H]`) of `dz[t]` and `W_cat_t[i]`, where `w_cat_t` is
/// `[In][8H]` (both directions' W_ih transposed side by side).
pub fn input_grad(
    token: Token,
    inp: usize,
    h: usize,
    dirs: &[DirState; 2],
    w_cat_t: &[f32],
    dzcat: &mut Vec<f32>,
    dx: &mut [f32],
) {
    let (g4, g8, t_len) = (4 * h, 8 * h, dirs[0].t);
    super::reuse(dzcat, t_len * g8, 0.0);
    for (d, st) in dirs.iter().enumerate() {
        for (dst, src) in dzcat.chunks_exact_mut(g8).zip(st.dz.chunks_exact(g4)) {
            dst[d * g4..][..g4].copy_from_slice(src);
        }
    }
    gemm_nt(token, t_len, inp, g8, dzcat, g8, w_cat_t, g8, dx, inp);
}
