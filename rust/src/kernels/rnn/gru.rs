//! The GRU layer (one direction), forward and backward: see the module
//! docs of `kernels::rnn` for the order of every operation.

use super::*;

/// What the GRU forward keeps for backward, each by time index.
pub struct GruSaved {
    pub gates: Dst,  // [T, B, 3H] r, z, n (activated)
    pub hp_n: Dst,   // [T, B, H] W_hn h + b_hn
    pub h_prev: Dst, // [T, B, H]
}

/// `v` plus element `k` of the bias, if any.
///
/// # Safety
/// `bias` (if any) must be valid for reading element `k`.
#[inline(always)]
unsafe fn with_bias(v: f32, bias: Option<Src>, k: usize) -> f32 {
    match bias {
        // SAFETY: the caller's extent.
        Some(p) => v + unsafe { p.read(k) },
        None => v,
    }
}

/// GRU forward (torch's equations): r = σ(x_r + h_r), z = σ(x_z + h_z),
/// n = tanh(x_n + r·h_n), h = (1 − z)·n + z·h_prev, where x_· = W_i· x + b_i·
/// and h_· = W_h· h_prev + b_h·. Writes every step's hidden state to `out`
/// ([T, B, ·], H columns, rows `ld_out` apart as in [`lstm_forward`]);
/// `inp.c0` is not read.
///
/// # Safety
/// As [`lstm_forward`].
pub unsafe fn gru_forward(
    token: Token,
    mode: Mode,
    d: Dims,
    inp: &ForwardInputs,
    out: Dst,
    ld_out: usize,
    saved: Option<&GruSaved>,
) {
    let (t_len, b, h) = (d.t, d.b, d.h);
    let g3 = 3 * h;
    let bh = b * h;
    // SAFETY: as in `lstm_forward`.
    let mut work = unsafe { prologue(token, mode, d, g3, inp) };
    let (xp, hp) = (work.xp.f32_ptr(), work.hp.f32_ptr());
    let mut hn_buf = scratch(h);
    let (hcur, act) = (f32s(&mut work.h, bh), f32s(&mut work.act, b * g3));
    let hn_buf_v = f32s(&mut hn_buf, h);
    let (b_ih, b_hh) = (inp.b_ih, inp.b_hh);
    for k in 0..t_len {
        let t = step_index(inp.reverse, t_len, k);
        // SAFETY: h_prev is [T, B, H]; hp is [B, 3H].
        unsafe {
            let h_prev = saved.map(|s| s.h_prev.offset(t * bh));
            recurrent_product(token, mode, d, hcur, &work.w_hh_t, g3, hp, h_prev)
        };
        for bi in 0..b {
            let row = &mut act[bi * g3..(bi + 1) * g3];
            let hn_row = &mut hn_buf_v[..h];
            let xrow = xp.offset((t * b + bi) * g3);
            let hrow = hp.offset(bi * g3);
            // SAFETY: indices inside xp [T·B, 3H], hp [B, 3H], biases [3H].
            unsafe {
                for j in 0..2 * h {
                    row[j] = with_bias(xrow.read(j), b_ih, j) + with_bias(hrow.read(j), b_hh, j);
                }
                for j in 0..h {
                    hn_row[j] = with_bias(hrow.read(2 * h + j), b_hh, 2 * h + j);
                }
                activate(token, UnaryOp::Sigmoid, mode, &mut row[..2 * h]);
                for j in 0..h {
                    row[2 * h + j] =
                        with_bias(xrow.read(2 * h + j), b_ih, 2 * h + j) + row[j] * hn_row[j];
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
                unsafe { s.hp_n.slice_mut(t * bh + bi * h, h).copy_from_slice(hn_row) };
            }
        }
        if let Some(s) = saved {
            // SAFETY: gates is [T, B, 3H].
            unsafe { s.gates.slice_mut(t * b * g3, b * g3).copy_from_slice(act) };
        }
        // SAFETY: out has T blocks of B rows, H elements each.
        unsafe { store_rows(hcur, h, out, t * b, ld_out) };
    }
}

/// GRU backward through time; `inp.g_out` is the gradient of `out`
/// ([T, B, ·], H columns, rows `ld_g` apart).
///
/// # Safety
/// As [`lstm_backward`].
pub unsafe fn gru_backward(
    token: Token,
    mode: Mode,
    d: Dims,
    inp: &BackwardInputs,
    saved: &GruSaved,
    grads: &RnnGrads,
) {
    let (t_len, b, h) = (d.t, d.b, d.h);
    let (g_out, ld_g) = (inp.g_out, inp.ld_g);
    let g3 = 3 * h;
    let bh = b * h;
    let dzx_buf = overwritten(t_len * b * g3);
    let dzh_buf = overwritten(t_len * b * g3);
    let (dzx, dzh) = (dzx_buf.f32_ptr(), dzh_buf.f32_ptr());
    let mut dh_buf = scratch(bh);
    let mut direct_buf = scratch(bh);
    let (dh_rec, direct) = (f32s(&mut dh_buf, bh), f32s(&mut direct_buf, bh));
    for k in (0..t_len).rev() {
        let t = step_index(inp.reverse, t_len, k);
        for bi in 0..b {
            let gate = saved.gates.offset(t * b * g3 + bi * g3);
            let xrow = dzx.offset(t * b * g3 + bi * g3);
            let hrow = dzh.offset(t * b * g3 + bi * g3);
            for j in 0..h {
                let e = bi * h + j;
                // SAFETY: indices inside their [T, B, ·] buffers.
                unsafe {
                    let (r, z, n) = (gate.read(j), gate.read(h + j), gate.read(2 * h + j));
                    let hn = saved.hp_n.read(t * bh + e);
                    let hprev = saved.h_prev.read(t * bh + e);
                    let dh = g_out.read((t * b + bi) * ld_g + j) + dh_rec[e];
                    let dn = dh * (1.0 - z);
                    let dzg = dh * (hprev - n);
                    direct[e] = dh * z;
                    let dan = dn * (1.0 - n * n);
                    let dr = dan * hn;
                    let dhn = dan * r;
                    let dar = dr * (r * (1.0 - r));
                    let daz = dzg * (z * (1.0 - z));
                    xrow.write(j, dar);
                    xrow.write(h + j, daz);
                    xrow.write(2 * h + j, dan);
                    hrow.write(j, dar);
                    hrow.write(h + j, daz);
                    hrow.write(2 * h + j, dhn);
                }
            }
        }
        // dh_prev = dh·z + dzh_t · W_hh.
        // SAFETY: dzh is [T, B, 3H]; W_hh is [3H, H]; dh_rec is [B, H].
        unsafe { recurrent_gradient(token, mode, d, g3, dzh, t, inp.w_hh, dh_rec) };
        for e in 0..bh {
            dh_rec[e] = direct[e] + dh_rec[e];
        }
    }
    // SAFETY: dh0 is [B, H]; shapes as documented.
    unsafe {
        let states = (&dh_rec[..], None);
        parameter_gradients(
            token,
            mode,
            d,
            g3,
            inp,
            saved.h_prev,
            dzx,
            dzh,
            states,
            grads,
        );
    }
}
