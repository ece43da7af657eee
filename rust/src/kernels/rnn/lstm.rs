//! The LSTM layer (one direction), forward and backward: see the module
//! docs of `kernels::rnn` for the order of every operation.

use super::cell::{CellBackward, CellForward};
use super::*;

/// What the LSTM forward keeps for backward, each [T, B, ·] by time index.
pub struct LstmSaved {
    pub gates: Dst,  // [T, B, 4H] activated i, f, g, o
    pub cells: Dst,  // [T, B, H] c_t
    pub tanh_c: Dst, // [T, B, H] tanh(c_t)
    pub h_prev: Dst, // [T, B, H] the hidden state each step started from
}

/// LSTM forward. Writes every step's hidden state to rows `0..T` of `out`
/// and the final cell state (of the last visited step) to row `T` (`out` is
/// [T + 1, B, ·] with H columns from `out` on, rows `ld_out` elements
/// apart: H for one direction alone, D·H for a direction's columns inside
/// the concatenated output of D). `saved` is None on the inference path.
///
/// # Safety
/// Every pointer must be valid for its layout (see [`ForwardInputs`]);
/// `out` and the saved buffers must not overlap the inputs, and no other
/// thread may touch this direction's elements of them.
pub unsafe fn lstm_forward(
    token: Token,
    mode: Mode,
    d: Dims,
    inp: &ForwardInputs,
    out: Dst,
    ld_out: usize,
    saved: Option<&LstmSaved>,
) {
    let (t_len, b, h) = (d.t, d.b, d.h);
    let g4 = 4 * h;
    let bh = b * h;
    // SAFETY: x, W_ih, W_hh and h0 have the layouts documented above.
    let mut work = unsafe { prologue(token, mode, d, g4, inp) };
    let (xp, hp) = (work.xp.f32_ptr(), work.hp.f32_ptr());
    // SAFETY: c0 is [B, H].
    let mut c_buf = unsafe { initial_state(inp.c0, bh) };
    let (hcur, ccur, act) = (
        f32s(&mut work.h, bh),
        f32s(&mut c_buf, bh),
        f32s(&mut work.act, b * g4),
    );
    // SAFETY: the biases are [4H].
    let (b_ih, b_hh) = unsafe { (bias(inp.b_ih, g4), bias(inp.b_hh, g4)) };
    for k in 0..t_len {
        let t = step_index(inp.reverse, t_len, k);
        // SAFETY: h_prev is [T, B, H]; hp is [B, 4H].
        unsafe {
            let h_prev = saved.map(|s| s.h_prev.offset(t * bh));
            recurrent_product(token, mode, d, hcur, &work.w_hh_t, g4, hp, h_prev)
        };
        for (bi, (act_row, (crow, hrow))) in act
            .chunks_exact_mut(g4)
            .zip(ccur.chunks_exact_mut(h).zip(hcur.chunks_exact_mut(h)))
            .enumerate()
        {
            let row = t * b + bi;
            // SAFETY: row (t, bi) of xp [T·B, 4H], of the saved buffers
            // ([T, B, ·]) and of `out` (rows `ld_out` apart), and row bi of
            // hp [B, 4H], are this step's and this batch element's alone.
            unsafe {
                // The activated gates go straight to the saved buffer.
                let z = match saved {
                    Some(s) => s.gates.slice_mut(row * g4, g4),
                    None => act_row,
                };
                with_bias(z, xp.slice(row * g4, g4), b_ih);
                let rec = hp.slice_mut(bi * g4, g4);
                if let Some(bias) = b_hh {
                    for (v, bv) in rec.iter_mut().zip(bias) {
                        *v += *bv;
                    }
                }
                CellForward {
                    z,
                    rec,
                    c: crow,
                    h: hrow,
                    c_out: saved.map(|s| s.cells.slice_mut(row * h, h)),
                    tc_out: saved.map(|s| s.tanh_c.slice_mut(row * h, h)),
                    h_out: Some(out.slice_mut(row * ld_out, h)),
                    exact: mode == Mode::Exact,
                }
                .run_here(token);
            }
        }
    }
    // SAFETY: out's block T holds the final cell state.
    unsafe { store_rows(ccur, h, out, t_len * b, ld_out) };
}

/// An optional bias of `len` elements as a slice.
///
/// # Safety
/// `p`, if any, must be valid for `len` reads, written by nothing meanwhile.
unsafe fn bias<'a>(p: Option<Src>, len: usize) -> Option<&'a [f32]> {
    // SAFETY: the caller's extent.
    p.map(|p| unsafe { p.slice(0, len) })
}

/// `z = x + bias` element by element, or `z = x` without a bias (the input
/// side of the pre-activations, `xp + b_ih`).
#[inline(always)]
fn with_bias(z: &mut [f32], x: &[f32], bias: Option<&[f32]>) {
    match bias {
        Some(bias) => {
            for ((zv, xv), bv) in z.iter_mut().zip(x).zip(bias) {
                *zv = *xv + *bv;
            }
        }
        None => z.copy_from_slice(x),
    }
}

/// LSTM backward through time. `inp.g_out` is the gradient of the
/// forward's `out` ([T + 1, B, ·]: every step's hidden state, then the
/// final cell; H columns, rows `ld_g` apart, as `out` in [`lstm_forward`]).
///
/// # Safety
/// Pointers valid for their layouts; outputs must not overlap inputs.
pub unsafe fn lstm_backward(
    token: Token,
    mode: Mode,
    d: Dims,
    inp: &BackwardInputs,
    saved: &LstmSaved,
    grads: &RnnGrads,
) {
    let (t_len, b, h) = (d.t, d.b, d.h);
    let (reverse, g_out, ld_g) = (inp.reverse, inp.g_out, inp.ld_g);
    let g4 = 4 * h;
    let bh = b * h;
    let dz_buf = overwritten(t_len * b * g4);
    let dz = dz_buf.f32_ptr();
    let mut dh_buf = scratch(bh);
    let mut dc_buf = scratch(bh);
    let (dh_rec, dc_next) = (f32s(&mut dh_buf, bh), f32s(&mut dc_buf, bh));
    // The final cell's gradient starts the cell recurrence.
    // SAFETY: g_out's block T is B rows of H.
    unsafe { load_rows(g_out, t_len * b, ld_g, h, dc_next) };
    for k in (0..t_len).rev() {
        let t = step_index(reverse, t_len, k);
        let c_prev: Option<Src> = if k == 0 {
            inp.c0
        } else {
            Some(
                saved
                    .cells
                    .as_const()
                    .offset(step_index(reverse, t_len, k - 1) * bh),
            )
        };
        for bi in 0..b {
            let (row, e) = (t * b + bi, bi * h);
            // SAFETY: row (t, bi) of the saved buffers and of dz ([T, B, ·]),
            // of g_out (rows `ld_g` apart), and row bi of c_prev ([B, H]).
            unsafe {
                CellBackward {
                    gates: saved.gates.slice(row * g4, g4),
                    tc: saved.tanh_c.slice(row * h, h),
                    c_prev: c_prev.map(|p| p.slice(e, h)),
                    dh_out: g_out.slice(row * ld_g, h),
                    dh_rec: &dh_rec[e..e + h],
                    dc: &mut dc_next[e..e + h],
                    dz: dz.slice_mut(row * g4, g4),
                }
                .run_here(token);
            }
        }
        // dh for the previous step: dz_t · W_hh.
        // SAFETY: dz is [T, B, 4H]; W_hh is [4H, H]; dh_rec is [B, H].
        unsafe { recurrent_gradient(token, mode, d, g4, dz, t, inp.w_hh, dh_rec) };
    }
    // SAFETY: dh0/dc0 are [B, H]; shapes as documented.
    unsafe {
        let states = (&dh_rec[..], Some(&dc_next[..]));
        parameter_gradients(token, mode, d, g4, inp, saved.h_prev, dz, dz, states, grads);
    }
}
