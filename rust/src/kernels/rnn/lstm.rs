//! The LSTM layer (one direction), forward and backward: see the module
//! docs of `kernels::rnn` for the order of every operation.

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
    let mut tanh_buf = scratch(h);
    let (hcur, ccur, act) = (
        f32s(&mut work.h, bh),
        f32s(&mut c_buf, bh),
        f32s(&mut work.act, b * g4),
    );
    let tanh_row = f32s(&mut tanh_buf, h);
    for k in 0..t_len {
        let t = step_index(inp.reverse, t_len, k);
        // SAFETY: h_prev is [T, B, H]; hp is [B, 4H].
        unsafe {
            let h_prev = saved.map(|s| s.h_prev.offset(t * bh));
            recurrent_product(token, mode, d, hcur, &work.w_hh_t, g4, hp, h_prev)
        };
        for bi in 0..b {
            let row = &mut act[bi * g4..(bi + 1) * g4];
            for (j, slot) in row.iter_mut().enumerate() {
                // SAFETY: indices lie inside xp [T·B, 4H], hp [B, 4H], biases [4H].
                *slot = unsafe {
                    let xv = xp.read((t * b + bi) * g4 + j);
                    let hv = hp.read(bi * g4 + j);
                    let xb = match inp.b_ih {
                        Some(p) => xv + p.read(j),
                        None => xv,
                    };
                    let hb = match inp.b_hh {
                        Some(p) => hv + p.read(j),
                        None => hv,
                    };
                    xb + hb
                };
            }
            activate(token, UnaryOp::Sigmoid, mode, &mut row[..2 * h]);
            activate(token, UnaryOp::Tanh, mode, &mut row[2 * h..3 * h]);
            activate(token, UnaryOp::Sigmoid, mode, &mut row[3 * h..]);
            let crow = &mut ccur[bi * h..(bi + 1) * h];
            for j in 0..h {
                crow[j] = row[h + j] * crow[j] + row[j] * row[2 * h + j];
            }
            let trow = &mut tanh_row[..h];
            trow.copy_from_slice(crow);
            activate(token, UnaryOp::Tanh, mode, trow);
            for j in 0..h {
                hcur[bi * h + j] = row[3 * h + j] * trow[j];
            }
            if let Some(s) = saved {
                // SAFETY: cells and tanh_c are [T, B, H]; row (t, bi) holds H elements.
                unsafe {
                    s.cells.slice_mut(t * bh + bi * h, h).copy_from_slice(crow);
                    s.tanh_c.slice_mut(t * bh + bi * h, h).copy_from_slice(trow);
                }
            }
        }
        if let Some(s) = saved {
            // SAFETY: gates is [T, B, 4H].
            unsafe { s.gates.slice_mut(t * b * g4, b * g4).copy_from_slice(act) };
        }
        // SAFETY: out has T + 1 blocks of B rows, H elements each.
        unsafe { store_rows(hcur, h, out, t * b, ld_out) };
    }
    // SAFETY: out's block T holds the final cell state.
    unsafe { store_rows(ccur, h, out, t_len * b, ld_out) };
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
            let gate = saved.gates.offset(t * b * g4 + bi * g4);
            let row = dz.offset(t * b * g4 + bi * g4);
            for j in 0..h {
                let e = bi * h + j;
                // SAFETY: all indices lie inside their [T, B, ·] buffers.
                unsafe {
                    let (i, f, gg, o) = (
                        gate.read(j),
                        gate.read(h + j),
                        gate.read(2 * h + j),
                        gate.read(3 * h + j),
                    );
                    let tc = saved.tanh_c.read(t * bh + e);
                    let cp = match c_prev {
                        Some(p) => p.read(e),
                        None => 0.0,
                    };
                    let dh = g_out.read((t * b + bi) * ld_g + j) + dh_rec[e];
                    let dtc = dh * o;
                    let d_o = dh * tc;
                    let dc = dc_next[e] + dtc * (1.0 - tc * tc);
                    let di = dc * gg;
                    let dg = dc * i;
                    let df = dc * cp;
                    dc_next[e] = dc * f;
                    row.write(j, di * (i * (1.0 - i)));
                    row.write(h + j, df * (f * (1.0 - f)));
                    row.write(2 * h + j, dg * (1.0 - gg * gg));
                    row.write(3 * h + j, d_o * (o * (1.0 - o)));
                }
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
