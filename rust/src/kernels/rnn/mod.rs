//! LSTM and GRU layers (one direction), forward and backward through time.
//!
//! Layouts (all contiguous, row-major): x [T, B, I]; weights W_ih [G·H, I],
//! W_hh [G·H, H] with G = 4 (gates i, f, g, o) or 3 (r, z, n); biases [G·H].
//! The hidden states go to H columns of rows `ld` apart, so that the two
//! directions of a bidirectional layer (run at once by the bindings) write
//! straight into their halves of the concatenated [T, B, 2H] output.
//!
//! Arithmetic (docs/recurrent.md, "lstm_layer and gru_layer"):
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
use crate::gemm::{gemm, MatRef, Product};
use crate::kernels::double_chain::column_sums;
use crate::kernels::elementwise::{unary, UnaryOp};
use crate::simd::Token;
use crate::storage::Buffer;

mod gru;
pub mod layout;
mod lstm;
pub use gru::{gru_backward, gru_forward, GruSaved};
pub use layout::{Cell, Layout};
pub use lstm::{lstm_backward, lstm_forward, LstmSaved};

/// Apply a fixed activation in place to a contiguous run, on the lane loops
/// of `token`'s kernel path (the same bits as the scalar definition).
fn activate(token: Token, op: UnaryOp, mode: Mode, v: &mut [f32]) {
    let n = v.len();
    let p = v.as_mut_ptr();
    // SAFETY: `p` is valid for `n` reads and writes; the loop reads and writes
    // each element at the same index (element-for-element aliasing).
    unsafe { unary(token, op, mode == Mode::Exact, &[n], p, &[1], p, &[1]) };
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
unsafe fn contiguous_t(token: Token, ptr: *const f32, rows: usize, cols: usize) -> Buffer {
    let mut buf = Buffer::new(rows * cols * 4);
    // SAFETY: the caller passes a row-major [rows, cols] matrix at `ptr`.
    let w = unsafe { std::slice::from_raw_parts(ptr, rows * cols) };
    crate::kernels::transpose::transpose(token, w, rows, cols, buf.as_f32_mut());
    buf
}

/// What both forward passes do before the recurrence: the input projection
/// of every step, `xp = x · W_ihᵀ` ([T·B, G·H], one canonical-order GEMM),
/// and W_hhᵀ as a contiguous [H, G·H] buffer for the per-step products.
///
/// # Safety
/// x is [T·B, I], W_ih [G·H, I], W_hh [G·H, H] (`gh` = G·H).
unsafe fn prologue(
    token: Token,
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
            token,
            mode,
            &Product::views(
                row_major(x, d.t * d.b, d.i),
                transposed(w_ih, gh, d.i),
                xp.as_ptr() as *mut f32,
                gh,
            ),
        );
        (xp, contiguous_t(token, w_hh, gh, d.h))
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
    token: Token,
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
            token,
            mode,
            &Product::views(
                row_major(hcur.as_ptr(), b, h),
                row_major(w_hh_t.as_ptr() as *const f32, h, gh),
                hp,
                gh,
            ),
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

/// Gradients a recurrent backward produces.
pub struct RnnGrads {
    pub dx: *mut f32,          // [T, B, I]
    pub dw_ih: *mut f32,       // [G·H, I]
    pub dw_hh: *mut f32,       // [G·H, H]
    pub db_ih: *mut f32,       // [G·H]
    pub db_hh: *mut f32,       // [G·H]
    pub dh0: *mut f32,         // [B, H]
    pub dc0: Option<*mut f32>, // [B, H] (LSTM only)
}

/// Shared tail of both backward passes: weight, bias and input gradients
/// from the pre-activation gradients `dzx` (input side) and `dzh`
/// (recurrent side), both [T, B, G·H] by time index.
///
/// # Safety
/// As the callers'.
#[allow(clippy::too_many_arguments)]
unsafe fn parameter_gradients(
    token: Token,
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
            token,
            mode,
            &Product::views(
                row_major(dzx, rows, gh).t(),
                row_major(x, rows, d.i),
                g.dw_ih,
                d.i,
            ),
        );
        // dW_hh = dzhᵀ · h_prev.
        gemm(
            token,
            mode,
            &Product::views(
                row_major(dzh, rows, gh).t(),
                row_major(h_prev, rows, d.h),
                g.dw_hh,
                d.h,
            ),
        );
        column_sums(dzx, rows, gh, std::slice::from_raw_parts_mut(g.db_ih, gh));
        column_sums(dzh, rows, gh, std::slice::from_raw_parts_mut(g.db_hh, gh));
        // dx = dzx · W_ih: [T·B, G·H] × [G·H, I].
        gemm(
            token,
            mode,
            &Product::views(
                row_major(dzx, rows, gh),
                row_major(w_ih, gh, d.i),
                g.dx,
                d.i,
            ),
        );
    }
}
