//! LSTM and GRU layers (one direction), forward and backward through time.
//!
//! Layouts (all contiguous, row-major): x [T, B, I]; weights W_ih [G·H, I],
//! W_hh [G·H, H] with G = 4 (gates i, f, g, o) or 3 (r, z, n); biases [G·H].
//! The hidden states go to H columns of rows `ld` apart, so that the two
//! directions of a bidirectional layer (run at once by the bindings) write
//! straight into their halves of the concatenated [T, B, 2H] output.
//!
//! Arithmetic, per seed 000 §8:
//! * the input projection of all steps is one canonical-order GEMM
//!   ([T·B, I] × W_ihᵀ), each step's recurrent product one [B, H] × W_hhᵀ
//!   GEMM, so every sum has one accumulator in increasing k;
//! * gate sums and cell updates are plain f32 operations in the order written
//!   below; activations are the fixed sigmoid and tanh of `crate::math`
//!   (the same functions in both modes);
//! * backward: per step in reverse visiting order the element-wise rules
//!   below, the recurrent gradient one GEMM; after the loop the weight
//!   gradients are one GEMM each over all (t, b) rows in increasing time
//!   index, the bias gradients f64 column sums in the same row order, and the
//!   input gradient one GEMM.
//!
//! Visiting order: t = 0..T for a forward layer, T-1..0 for a reverse one.

use crate::dispatch::Mode;
use crate::kernels::elementwise::{unary, UnaryOp};
use crate::kernels::matmul::{gemm, MatRef};
use crate::storage::Buffer;

/// Apply a fixed activation in place to a contiguous run, on the lane loops
/// of the current kernel path (the same bits as the scalar definition).
fn activate(op: UnaryOp, mode: Mode, v: &mut [f32]) {
    let n = v.len();
    let p = v.as_mut_ptr();
    // SAFETY: `p` is valid for `n` reads and writes; the loop reads and writes
    // each element at the same index (element-for-element aliasing).
    unsafe { unary(op, mode == Mode::Exact, &[n], p, &[1], p, &[1]) };
}

/// Sizes of one layer call.
#[derive(Clone, Copy, Debug)]
pub struct Dims {
    pub t: usize,
    pub b: usize,
    pub i: usize,
    pub h: usize,
}

fn row_major(ptr: *const f32, rows: usize, cols: usize) -> MatRef {
    MatRef {
        ptr,
        rows,
        cols,
        rs: cols as isize,
        cs: 1,
    }
}

/// Wᵀ of a row-major [rows, cols] matrix, as a [cols, rows] view.
fn transposed(ptr: *const f32, rows: usize, cols: usize) -> MatRef {
    row_major(ptr, rows, cols).t()
}

/// Wᵀ of a row-major [rows, cols] matrix, copied into a contiguous
/// [cols, rows] buffer. The recurrent product runs once per step with the
/// same W_hh: as a contiguous row-major B the GEMM reads it in place instead
/// of packing a transposed view again at every step (the canonical order,
/// and so the bits, do not depend on B's layout).
///
/// # Safety
/// `ptr` must be valid for `rows·cols` reads.
unsafe fn contiguous_t(ptr: *const f32, rows: usize, cols: usize) -> Buffer {
    let mut buf = Buffer::new(rows * cols * 4);
    // SAFETY: the caller passes a row-major [rows, cols] matrix at `ptr`.
    let w = unsafe { std::slice::from_raw_parts(ptr, rows * cols) };
    crate::kernels::transpose::transpose(w, rows, cols, buf.as_f32_mut());
    buf
}

/// What both forward passes do before the recurrence: the input projection
/// of every step, `xp = x · W_ihᵀ` ([T·B, G·H], one canonical-order GEMM),
/// and W_hhᵀ as a contiguous [H, G·H] buffer for the per-step products.
///
/// # Safety
/// x is [T·B, I], W_ih [G·H, I], W_hh [G·H, H] (`gh` = G·H).
unsafe fn prologue(
    mode: Mode,
    d: Dims,
    gh: usize,
    x: *const f32,
    w_ih: *const f32,
    w_hh: *const f32,
) -> (Buffer, Buffer) {
    let xp = overwritten(d.t * d.b * gh);
    // SAFETY: the caller's layouts; xp has T·B·G·H elements.
    unsafe {
        gemm(
            mode,
            row_major(x, d.t * d.b, d.i),
            transposed(w_ih, gh, d.i),
            xp.as_ptr() as *mut f32,
            gh,
        );
        (xp, contiguous_t(w_hh, gh, d.h))
    }
}

/// One step's recurrent product `hp = h · W_hhᵀ` ([B, G·H], from the
/// contiguous W_hhᵀ of [`prologue`]); when training, the hidden state the
/// step started from is saved first to `h_prev` (B·H elements).
///
/// # Safety
/// `hp` valid for B·G·H writes, `h_prev` (if any) for B·H; `hcur` is
/// [B, H] and W_hhᵀ [H, G·H].
unsafe fn recurrent_product(
    mode: Mode,
    d: Dims,
    hcur: &[f32],
    w_hh_t: &Buffer,
    gh: usize,
    hp: *mut f32,
    h_prev: Option<*mut f32>,
) {
    let (b, h) = (d.b, d.h);
    debug_assert_eq!(hcur.len(), b * h);
    // SAFETY: the caller's extents.
    unsafe {
        if let Some(dst) = h_prev {
            std::ptr::copy_nonoverlapping(hcur.as_ptr(), dst, hcur.len());
        }
        gemm(
            mode,
            row_major(hcur.as_ptr(), b, h),
            row_major(w_hh_t.as_ptr() as *const f32, h, gh),
            hp,
            gh,
        )
    }
}

fn step_index(reverse: bool, t: usize, k: usize) -> usize {
    if reverse {
        t - 1 - k
    } else {
        k
    }
}

fn scratch(len: usize) -> Buffer {
    Buffer::zeroed(len * 4)
}

/// A buffer every element of which is written before it is read (the
/// input projection, the pre-activation gradients): pooled memory is always
/// initialized, so it needs no zero fill.
fn overwritten(len: usize) -> Buffer {
    Buffer::new(len * 4)
}

fn f32s(b: &mut Buffer, len: usize) -> &mut [f32] {
    &mut b.as_f32_mut()[..len]
}

/// Write a [B, H] block to rows `first_row..first_row + B` of a matrix
/// whose rows are `ld` elements apart (a direction's H columns inside a
/// [·, B, D·H] output of D directions).
///
/// # Safety
/// `dst` must be valid for writes of H elements at every such row.
unsafe fn store_rows(src: &[f32], h: usize, dst: *mut f32, first_row: usize, ld: usize) {
    for (bi, row) in src.chunks_exact(h).enumerate() {
        // SAFETY: the caller guarantees row first_row + bi holds H elements.
        unsafe { std::ptr::copy_nonoverlapping(row.as_ptr(), dst.add((first_row + bi) * ld), h) };
    }
}

/// Read rows `first_row..first_row + B` (H elements each, `ld` apart) into
/// a [B, H] block: the inverse of [`store_rows`].
///
/// # Safety
/// `src` must be valid for reads of H elements at every such row.
unsafe fn load_rows(src: *const f32, first_row: usize, ld: usize, h: usize, dst: &mut [f32]) {
    for (bi, row) in dst.chunks_exact_mut(h).enumerate() {
        // SAFETY: the caller guarantees row first_row + bi holds H elements.
        unsafe {
            std::ptr::copy_nonoverlapping(src.add((first_row + bi) * ld), row.as_mut_ptr(), h)
        };
    }
}

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
    let (xp_buf, w_hh_t) = unsafe { prologue(mode, d, g4, x, w_ih, w_hh) };
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
            recurrent_product(mode, d, hcur, &w_hh_t, g4, hp, h_prev)
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
            activate(UnaryOp::Sigmoid, mode, &mut row[..2 * h]);
            activate(UnaryOp::Tanh, mode, &mut row[2 * h..3 * h]);
            activate(UnaryOp::Sigmoid, mode, &mut row[3 * h..]);
            let crow = &mut ccur[bi * h..(bi + 1) * h];
            for j in 0..h {
                crow[j] = row[h + j] * crow[j] + row[j] * row[2 * h + j];
            }
            let trow = &mut tanh_row[..h];
            trow.copy_from_slice(crow);
            activate(UnaryOp::Tanh, mode, trow);
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

/// Gradients a recurrent backward produces.
pub struct RnnGrads {
    pub dx: *mut f32,    // [T, B, I]
    pub dw_ih: *mut f32, // [G·H, I]
    pub dw_hh: *mut f32, // [G·H, H]
    pub db_ih: *mut f32, // [G·H]
    pub db_hh: *mut f32, // [G·H]
    pub dh0: *mut f32,   // [B, H]
    pub dc0: *mut f32,   // [B, H] (LSTM only; may be null for GRU)
}

/// f64 column sums of a [rows, cols] matrix, rows in increasing order.
///
/// # Safety
/// `m` valid for rows·cols reads, `out` for cols writes.
unsafe fn column_sums(m: *const f32, rows: usize, cols: usize, out: *mut f32) {
    let mut acc = vec![0f64; cols];
    for r in 0..rows {
        for (c, a) in acc.iter_mut().enumerate() {
            // SAFETY: r < rows, c < cols.
            *a += unsafe { *m.add(r * cols + c) } as f64;
        }
    }
    for (c, a) in acc.iter().enumerate() {
        // SAFETY: c < cols.
        unsafe { *out.add(c) = *a as f32 };
    }
}

/// Shared tail of both backward passes: weight, bias and input gradients
/// from the pre-activation gradients `dzx` (input side) and `dzh`
/// (recurrent side), both [T, B, G·H] by time index.
///
/// # Safety
/// As the callers'.
#[allow(clippy::too_many_arguments)]
unsafe fn parameter_gradients(
    mode: Mode,
    d: Dims,
    gh: usize,
    x: *const f32,
    w_ih: *const f32,
    h_prev: *const f32,
    dzx: *const f32,
    dzh: *const f32,
    g: &RnnGrads,
) {
    let rows = d.t * d.b;
    // SAFETY: shapes as documented on RnnGrads; dz is [T·B, G·H].
    unsafe {
        // dW_ih = dzxᵀ · x: [G·H, T·B] × [T·B, I], k = (t, b) rows ascending.
        gemm(
            mode,
            row_major(dzx, rows, gh).t(),
            row_major(x, rows, d.i),
            g.dw_ih,
            d.i,
        );
        // dW_hh = dzhᵀ · h_prev.
        gemm(
            mode,
            row_major(dzh, rows, gh).t(),
            row_major(h_prev, rows, d.h),
            g.dw_hh,
            d.h,
        );
        column_sums(dzx, rows, gh, g.db_ih);
        column_sums(dzh, rows, gh, g.db_hh);
        // dx = dzx · W_ih: [T·B, G·H] × [G·H, I].
        gemm(
            mode,
            row_major(dzx, rows, gh),
            row_major(w_ih, gh, d.i),
            g.dx,
            d.i,
        );
    }
}

/// LSTM backward through time. `g_out` is the gradient of the forward's
/// `out` ([T + 1, B, ·]: every step's hidden state, then the final cell;
/// H columns, rows `ld_g` apart, as `out` in [`lstm_forward`]).
///
/// # Safety
/// Pointers valid for their layouts; outputs must not overlap inputs.
#[allow(clippy::too_many_arguments)]
pub unsafe fn lstm_backward(
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
                mode,
                row_major(dz.add(t * b * g4), b, g4),
                row_major(w_hh, g4, h),
                dh_rec.as_mut_ptr(),
                h,
            )
        };
    }
    // SAFETY: dh0/dc0 are [B, H].
    unsafe {
        std::ptr::copy_nonoverlapping(dh_rec.as_ptr(), grads.dh0, bh);
        if !grads.dc0.is_null() {
            std::ptr::copy_nonoverlapping(dc_next.as_ptr(), grads.dc0, bh);
        }
        parameter_gradients(mode, d, g4, x, w_ih, saved.h_prev, dz, dz, grads);
    }
}

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
    let (xp_buf, w_hh_t) = unsafe { prologue(mode, d, g3, x, w_ih, w_hh) };
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
            recurrent_product(mode, d, hcur, &w_hh_t, g3, hp, h_prev)
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
                activate(UnaryOp::Sigmoid, mode, &mut row[..2 * h]);
                for j in 0..h {
                    row[2 * h + j] =
                        with_bias(*xrow.add(2 * h + j), b_ih, 2 * h + j) + row[j] * hn_row[j];
                }
            }
            activate(UnaryOp::Tanh, mode, &mut row[2 * h..]);
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
                mode,
                row_major(dzh.add(t * b * g3), b, g3),
                row_major(w_hh, g3, h),
                dh_rec.as_mut_ptr(),
                h,
            )
        };
        for e in 0..bh {
            dh_rec[e] = direct[e] + dh_rec[e];
        }
    }
    // SAFETY: dh0 is [B, H]; shapes as documented.
    unsafe {
        std::ptr::copy_nonoverlapping(dh_rec.as_ptr(), grads.dh0, bh);
        parameter_gradients(mode, d, g3, x, w_ih, saved.h_prev, dzx, dzh, grads);
    }
}
