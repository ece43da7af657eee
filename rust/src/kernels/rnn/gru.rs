//! The GRU layer (one direction), forward and backward: see the module
//! docs of `kernels::rnn` for the order of every operation.

use super::*;

/// What the GRU forward keeps for backward, each by time index.
pub struct GruSaved {
    pub gates: *mut f32,  // [T, B, 3H] r, z, n (activated)
    pub hp_n: *mut f32,   // [T, B, H] W_hn h + b_hn
    pub h_prev: *mut f32, // [T, B, H]
}

/// GRU forward (torch's equations): r = σ(x_r + h_r), z = σ(x_z + h_z),
/// n = tanh(x_n + r·h_n), h = (1 − z)·n + z·h_prev, where x_· = W_i· x + b_i·
/// and h_· = W_h· h_prev + b_h·. Writes every step's hidden state to `out`
/// ([T, B, ·], H columns, rows `ld_out` apart as in [`lstm_forward`]).
///
/// # Safety
/// As [`lstm_forward`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn gru_forward(
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
    out: *mut f32,
    ld_out: usize,
    saved: Option<&GruSaved>,
) {
    let (t_len, b, h) = (d.t, d.b, d.h);
    let g3 = 3 * h;
    let bh = b * h;
    // SAFETY: as in `lstm_forward`.
    let (xp_buf, w_hh_t) = unsafe { prologue(token, mode, d, g3, x, w_ih, w_hh) };
    let xp = xp_buf.as_ptr() as *mut f32;
    let hp_buf = scratch(b * g3);
    let hp = hp_buf.as_ptr() as *mut f32;
    let mut h_buf = scratch(bh);
    let mut act_buf = scratch(b * g3);
    let mut hn_buf = scratch(h);
    let (hcur, act) = (f32s(&mut h_buf, bh), f32s(&mut act_buf, b * g3));
    let hn_buf_v = f32s(&mut hn_buf, h);
    if let Some(p) = h0 {
        // SAFETY: h0 is [B, H].
        hcur.copy_from_slice(unsafe { std::slice::from_raw_parts(p, bh) });
    }
    for k in 0..t_len {
        let t = step_index(reverse, t_len, k);
        // SAFETY: h_prev is [T, B, H]; hp is [B, 3H].
        unsafe {
            let h_prev = saved.map(|s| s.h_prev.add(t * bh));
            recurrent_product(token, mode, d, hcur, &w_hh_t, g3, hp, h_prev)
        };
        for bi in 0..b {
            let row = &mut act[bi * g3..(bi + 1) * g3];
            let hn_row = &mut hn_buf_v[..h];
            // SAFETY: indices inside xp [T·B, 3H], hp [B, 3H], biases [3H].
            unsafe {
                let xrow = xp.add((t * b + bi) * g3);
                let hrow = hp.add(bi * g3);
                let with_bias = |v: f32, p: Option<*const f32>, k: usize| match p {
                    Some(p) => v + *p.add(k),
                    None => v,
                };
                for j in 0..2 * h {
                    row[j] = with_bias(*xrow.add(j), b_ih, j) + with_bias(*hrow.add(j), b_hh, j);
                }
                for j in 0..h {
                    hn_row[j] = with_bias(*hrow.add(2 * h + j), b_hh, 2 * h + j);
                }
                activate(token, UnaryOp::Sigmoid, mode, &mut row[..2 * h]);
                for j in 0..h {
                    row[2 * h + j] =
                        with_bias(*xrow.add(2 * h + j), b_ih, 2 * h + j) + row[j] * hn_row[j];
                }
            }
            activate(token, UnaryOp::Tanh, mode, &mut row[2 * h..]);
            for j in 0..h {
                let (z, n) = (row[h + j], row[2 * h + j]);
                let e = bi * h + j;
                hcur[e] = (1.0 - z) * n + z * hcur[e];
            }
            if let Some(s) = saved {
                // SAFETY: hp_n is [T, B, H]; row (t, bi) holds H elements.
                unsafe {
                    std::ptr::copy_nonoverlapping(hn_row.as_ptr(), s.hp_n.add(t * bh + bi * h), h)
                };
            }
        }
        if let Some(s) = saved {
            // SAFETY: gates is [T, B, 3H].
            unsafe { std::ptr::copy_nonoverlapping(act.as_ptr(), s.gates.add(t * b * g3), b * g3) };
        }
        // SAFETY: out has T blocks of B rows, H elements each.
        unsafe { store_rows(hcur, h, out, t * b, ld_out) };
    }
}

/// GRU backward through time; `g_out` is the gradient of `out` ([T, B, ·],
/// H columns, rows `ld_g` apart).
///
/// # Safety
/// As [`lstm_backward`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn gru_backward(
    token: Token,
    mode: Mode,
    d: Dims,
    reverse: bool,
    x: *const f32,
    w_ih: *const f32,
    w_hh: *const f32,
    saved: &GruSaved,
    g_out: *const f32,
    ld_g: usize,
    grads: &RnnGrads,
) {
    let (t_len, b, h) = (d.t, d.b, d.h);
    let g3 = 3 * h;
    let bh = b * h;
    let dzx_buf = overwritten(t_len * b * g3);
    let dzh_buf = overwritten(t_len * b * g3);
    let (dzx, dzh) = (dzx_buf.as_ptr() as *mut f32, dzh_buf.as_ptr() as *mut f32);
    let mut dh_buf = scratch(bh);
    let mut direct_buf = scratch(bh);
    let (dh_rec, direct) = (f32s(&mut dh_buf, bh), f32s(&mut direct_buf, bh));
    for k in (0..t_len).rev() {
        let t = step_index(reverse, t_len, k);
        for bi in 0..b {
            for j in 0..h {
                let e = bi * h + j;
                // SAFETY: indices inside their [T, B, ·] buffers.
                unsafe {
                    let gate = saved.gates.add(t * b * g3 + bi * g3);
                    let (r, z, n) = (*gate.add(j), *gate.add(h + j), *gate.add(2 * h + j));
                    let hn = *saved.hp_n.add(t * bh + e);
                    let hprev = *saved.h_prev.add(t * bh + e);
                    let dh = *g_out.add((t * b + bi) * ld_g + j) + dh_rec[e];
                    let dn = dh * (1.0 - z);
                    let dzg = dh * (hprev - n);
                    direct[e] = dh * z;
                    let dan = dn * (1.0 - n * n);
                    let dr = dan * hn;
                    let dhn = dan * r;
                    let dar = dr * (r * (1.0 - r));
                    let daz = dzg * (z * (1.0 - z));
                    let xrow = dzx.add(t * b * g3 + bi * g3);
                    let hrow = dzh.add(t * b * g3 + bi * g3);
                    *xrow.add(j) = dar;
                    *xrow.add(h + j) = daz;
                    *xrow.add(2 * h + j) = dan;
                    *hrow.add(j) = dar;
                    *hrow.add(h + j) = daz;
                    *hrow.add(2 * h + j) = dhn;
                }
            }
        }
        // dh_prev = dh·z + dzh_t · W_hh.
        // SAFETY: dzh row t is [B, 3H]; W_hh is [3H, H]; dh_rec is [B, H].
        unsafe {
            gemm(
                token,
                mode,
                &Product::views(
                    row_major(dzh.add(t * b * g3), b, g3),
                    row_major(w_hh, g3, h),
                    dh_rec.as_mut_ptr(),
                    h,
                ),
            )
        };
        for e in 0..bh {
            dh_rec[e] = direct[e] + dh_rec[e];
        }
    }
    // SAFETY: dh0 is [B, H]; shapes as documented.
    unsafe {
        std::ptr::copy_nonoverlapping(dh_rec.as_ptr(), grads.dh0, bh);
        parameter_gradients(token, mode, d, g3, x, w_ih, saved.h_prev, dzx, dzh, grads);
    }
}
