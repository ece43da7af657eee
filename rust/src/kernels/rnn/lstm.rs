//! The LSTM layer (one direction), forward and backward: see the module
//! docs of `kernels::rnn` for the order of every operation.

use super::*;

/// What the LSTM forward keeps for backward, each [T, B, ·] by time index.
pub struct LstmSaved {
    pub gates: *mut f32,  // [T, B, 4H] activated i, f, g, o
    pub cells: *mut f32,  // [T, B, H] c_t
    pub tanh_c: *mut f32, // [T, B, H] tanh(c_t)
    pub h_prev: *mut f32, // [T, B, H] the hidden state each step started from
}

/// LSTM forward. Writes every step's hidden state to rows `0..T` of `out`
/// and the final cell state (of the last visited step) to row `T` (`out` is
/// [T + 1, B, ·] with H columns from `out` on, rows `ld_out` elements
/// apart: H for one direction alone, D·H for a direction's columns inside
/// the concatenated output of D). `saved` is None on the inference path.
///
/// # Safety
/// Every pointer must be valid for its layout above; `out` and the saved
/// buffers must not overlap the inputs.
#[allow(clippy::too_many_arguments)]
pub unsafe fn lstm_forward(
    token: Token,
    mode: Mode,
    d: Dims,
    reverse: bool,
    x: *const f32,
    w_ih: *const f32,
    w_hh: *const f32,
    b_ih: Option<*const f32>,
    b_hh: Option<*const f32>,
    h0: Option<*const f32>,
    c0: Option<*const f32>,
    out: *mut f32,
    ld_out: usize,
    saved: Option<&LstmSaved>,
) {
    let (t_len, b, h) = (d.t, d.b, d.h);
    let g4 = 4 * h;
    let bh = b * h;
    // SAFETY: x, W_ih and W_hh have the layouts documented above.
    let (xp_buf, w_hh_t) = unsafe { prologue(token, mode, d, g4, x, w_ih, w_hh) };
    let xp = xp_buf.as_ptr() as *mut f32;
    let hp_buf = scratch(b * g4);
    let hp = hp_buf.as_ptr() as *mut f32;
    let mut h_buf = scratch(bh);
    let mut c_buf = scratch(bh);
    let mut act_buf = scratch(b * g4);
    let mut tanh_buf = scratch(h);
    let (hcur, ccur, act) = (
        f32s(&mut h_buf, bh),
        f32s(&mut c_buf, bh),
        f32s(&mut act_buf, b * g4),
    );
    let tanh_row = f32s(&mut tanh_buf, h);
    if let Some(p) = h0 {
        // SAFETY: h0 is [B, H].
        hcur.copy_from_slice(unsafe { std::slice::from_raw_parts(p, bh) });
    }
    if let Some(p) = c0 {
        // SAFETY: c0 is [B, H].
        ccur.copy_from_slice(unsafe { std::slice::from_raw_parts(p, bh) });
    }
    for k in 0..t_len {
        let t = step_index(reverse, t_len, k);
        // SAFETY: h_prev is [T, B, H]; hp is [B, 4H].
        unsafe {
            let h_prev = saved.map(|s| s.h_prev.add(t * bh));
            recurrent_product(token, mode, d, hcur, &w_hh_t, g4, hp, h_prev)
        };
        for bi in 0..b {
            let row = &mut act[bi * g4..(bi + 1) * g4];
            for (j, slot) in row.iter_mut().enumerate() {
                // SAFETY: indices lie inside xp [T·B, 4H], hp [B, 4H], biases [4H].
                *slot = unsafe {
                    let xv = *xp.add((t * b + bi) * g4 + j);
                    let hv = *hp.add(bi * g4 + j);
                    let xb = match b_ih {
                        Some(p) => xv + *p.add(j),
                        None => xv,
                    };
                    let hb = match b_hh {
                        Some(p) => hv + *p.add(j),
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
                    std::ptr::copy_nonoverlapping(crow.as_ptr(), s.cells.add(t * bh + bi * h), h);
                    std::ptr::copy_nonoverlapping(trow.as_ptr(), s.tanh_c.add(t * bh + bi * h), h);
                }
            }
        }
        if let Some(s) = saved {
            // SAFETY: gates is [T, B, 4H].
            unsafe { std::ptr::copy_nonoverlapping(act.as_ptr(), s.gates.add(t * b * g4), b * g4) };
        }
        // SAFETY: out has T + 1 blocks of B rows, H elements each.
        unsafe { store_rows(hcur, h, out, t * b, ld_out) };
    }
    // SAFETY: out's block T holds the final cell state.
    unsafe { store_rows(ccur, h, out, t_len * b, ld_out) };
}

/// LSTM backward through time. `g_out` is the gradient of the forward's
/// `out` ([T + 1, B, ·]: every step's hidden state, then the final cell;
/// H columns, rows `ld_g` apart, as `out` in [`lstm_forward`]).
///
/// # Safety
/// Pointers valid for their layouts; outputs must not overlap inputs.
#[allow(clippy::too_many_arguments)]
pub unsafe fn lstm_backward(
    token: Token,
    mode: Mode,
    d: Dims,
    reverse: bool,
    x: *const f32,
    w_ih: *const f32,
    w_hh: *const f32,
    c0: Option<*const f32>,
    saved: &LstmSaved,
    g_out: *const f32,
    ld_g: usize,
    grads: &RnnGrads,
) {
    let (t_len, b, h) = (d.t, d.b, d.h);
    let g4 = 4 * h;
    let bh = b * h;
    let dz_buf = overwritten(t_len * b * g4);
    let dz = dz_buf.as_ptr() as *mut f32;
    let mut dh_buf = scratch(bh);
    let mut dc_buf = scratch(bh);
    let (dh_rec, dc_next) = (f32s(&mut dh_buf, bh), f32s(&mut dc_buf, bh));
    // The final cell's gradient starts the cell recurrence.
    // SAFETY: g_out's block T is B rows of H.
    unsafe { load_rows(g_out, t_len * b, ld_g, h, dc_next) };
    for k in (0..t_len).rev() {
        let t = step_index(reverse, t_len, k);
        let c_prev: Option<*const f32> = if k == 0 {
            c0
        } else {
            // SAFETY: cells is [T, B, H].
            Some(unsafe { saved.cells.add(step_index(reverse, t_len, k - 1) * bh) as *const f32 })
        };
        for bi in 0..b {
            for j in 0..h {
                let e = bi * h + j;
                // SAFETY: all indices lie inside their [T, B, ·] buffers.
                unsafe {
                    let gate = saved.gates.add(t * b * g4 + bi * g4);
                    let (i, f, gg, o) = (
                        *gate.add(j),
                        *gate.add(h + j),
                        *gate.add(2 * h + j),
                        *gate.add(3 * h + j),
                    );
                    let tc = *saved.tanh_c.add(t * bh + e);
                    let cp = match c_prev {
                        Some(p) => *p.add(e),
                        None => 0.0,
                    };
                    let dh = *g_out.add((t * b + bi) * ld_g + j) + dh_rec[e];
                    let dtc = dh * o;
                    let d_o = dh * tc;
                    let dc = dc_next[e] + dtc * (1.0 - tc * tc);
                    let di = dc * gg;
                    let dg = dc * i;
                    let df = dc * cp;
                    dc_next[e] = dc * f;
                    let row = dz.add(t * b * g4 + bi * g4);
                    *row.add(j) = di * (i * (1.0 - i));
                    *row.add(h + j) = df * (f * (1.0 - f));
                    *row.add(2 * h + j) = dg * (1.0 - gg * gg);
                    *row.add(3 * h + j) = d_o * (o * (1.0 - o));
                }
            }
        }
        // dh for the previous step: dz_t · W_hh, [B, 4H] × [4H, H].
        // SAFETY: dz row t is [B, 4H]; W_hh is [4H, H]; dh_rec is [B, H].
        unsafe {
            gemm(
                token,
                mode,
                &Product::views(
                    row_major(dz.add(t * b * g4), b, g4),
                    row_major(w_hh, g4, h),
                    dh_rec.as_mut_ptr(),
                    h,
                ),
            )
        };
    }
    // SAFETY: dh0/dc0 are [B, H].
    unsafe {
        std::ptr::copy_nonoverlapping(dh_rec.as_ptr(), grads.dh0, bh);
        if let Some(dc0) = grads.dc0 {
            std::ptr::copy_nonoverlapping(dc_next.as_ptr(), dc0, bh);
        }
        parameter_gradients(token, mode, d, g4, x, w_ih, saved.h_prev, dz, dz, grads);
    }
}
