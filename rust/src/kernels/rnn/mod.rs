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
//!   below (the LSTM's in [`cell`], which the recognizer's LSTM runs too);
//!   activations are the fixed sigmoid and tanh of `crate::math` (the same
//!   functions in both modes);
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
use crate::ptr::Ptr;
use crate::simd::Token;
use crate::storage::Buffer;

pub mod cell;
mod gru;
pub mod layout;
mod lstm;
pub use gru::{gru_backward, gru_forward, GruSaved};
pub use layout::{Cell, Layout};
pub use lstm::{lstm_backward, lstm_forward, LstmSaved};

/// A read-only f32 buffer with its extent (checked in debug builds).
pub type Src = Ptr<*const f32>;
/// A written f32 buffer with its extent (checked in debug builds).
pub type Dst = Ptr<*mut f32>;

/// One direction's inputs to a forward pass: x [T, B, I], W_ih [G·H, I],
/// W_hh [G·H, H], the optional biases [G·H] and initial states [B, H]
/// (`c0` only for an LSTM).
pub struct ForwardInputs {
    pub x: Src,
    pub w_ih: Src,
    pub w_hh: Src,
    pub b_ih: Option<Src>,
    pub b_hh: Option<Src>,
    pub h0: Option<Src>,
    pub c0: Option<Src>,
    pub reverse: bool,
}

/// One direction's inputs to a backward pass: the forward's x, W_ih,
/// W_hh and `c0`, and the gradient `g_out` of its output (H columns, rows
/// `ld_g` apart, as the forward's `out`).
pub struct BackwardInputs {
    pub x: Src,
    pub w_ih: Src,
    pub w_hh: Src,
    pub c0: Option<Src>,
    pub reverse: bool,
    pub g_out: Src,
    pub ld_g: usize,
}

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

/// A row-major [rows, cols] matrix at `p` (its extent checked in debug
/// builds).
fn row_major(p: Src, rows: usize, cols: usize) -> MatRef {
    MatRef {
        ptr: p.range(0, rows * cols),
        rows,
        cols,
        rs: cols as isize,
        cs: 1,
    }
}

/// Wᵀ of a row-major [rows, cols] matrix, as a [cols, rows] view.
fn transposed(p: Src, rows: usize, cols: usize) -> MatRef {
    row_major(p, rows, cols).t()
}

/// Wᵀ of a row-major [rows, cols] matrix, copied into a contiguous
/// [cols, rows] buffer. The recurrent product runs once per step with the
/// same W_hh: as a contiguous row-major B the GEMM reads it in place instead
/// of packing a transposed view again at every step (the canonical order,
/// and so the bits, do not depend on B's layout).
///
/// # Safety
/// `p` must be valid for `rows·cols` reads.
unsafe fn contiguous_t(token: Token, p: Src, rows: usize, cols: usize) -> Buffer {
    let mut buf = overwritten(rows * cols);
    // SAFETY: the caller passes a row-major [rows, cols] matrix at `p`.
    let w = unsafe { p.slice(0, rows * cols) };
    crate::kernels::transpose::transpose(token, w, rows, cols, buf.as_f32_mut());
    buf
}

/// The work buffers of a forward pass: the input projection `xp`
/// [T·B, G·H], W_hhᵀ [H, G·H], one step's recurrent product `hp` [B, G·H],
/// the hidden state [B, H] and one step's gate activations [B, G·H].
struct ForwardWork {
    xp: Buffer,
    w_hh_t: Buffer,
    hp: Buffer,
    h: Buffer,
    act: Buffer,
}

/// What both forward passes do before the recurrence: the input projection
/// of every step, `xp = x · W_ihᵀ` (one canonical-order GEMM), W_hhᵀ as a
/// contiguous buffer for the per-step products, and the initial hidden
/// state (h0 or zeros).
///
/// # Safety
/// x is [T·B, I], W_ih [G·H, I], W_hh [G·H, H] (`gh` = G·H), h0 [B, H].
unsafe fn prologue(token: Token, mode: Mode, d: Dims, gh: usize, f: &ForwardInputs) -> ForwardWork {
    let xp = overwritten(d.t * d.b * gh);
    // SAFETY: the caller's layouts; xp has T·B·G·H elements.
    unsafe {
        gemm(
            token,
            mode,
            &Product::views(
                row_major(f.x, d.t * d.b, d.i),
                transposed(f.w_ih, gh, d.i),
                xp.f32_ptr().range(0, d.t * d.b * gh),
                gh,
            ),
        );
        ForwardWork {
            xp,
            w_hh_t: contiguous_t(token, f.w_hh, gh, d.h),
            hp: scratch(d.b * gh),
            h: initial_state(f.h0, d.b * d.h),
            act: scratch(d.b * gh),
        }
    }
}

/// The initial state of a forward pass: `init` ([B, H]) or zeros.
///
/// # Safety
/// `init`, if any, must be valid for B·H reads.
unsafe fn initial_state(init: Option<Src>, bh: usize) -> Buffer {
    let mut buf = scratch(bh);
    if let Some(p) = init {
        // SAFETY: the caller's extent.
        f32s(&mut buf, bh).copy_from_slice(unsafe { p.slice(0, bh) });
    }
    buf
}

/// One step's recurrent product `hp = h · W_hhᵀ` ([B, G·H], from the
/// contiguous W_hhᵀ of [`prologue`]); when training, the hidden state the
/// step started from is saved first to `h_prev` (B·H elements).
///
/// # Safety
/// `hp` valid for B·G·H writes, `h_prev` (if any) for B·H; `hcur` is
/// [B, H] and W_hhᵀ [H, G·H].
#[allow(clippy::too_many_arguments)]
unsafe fn recurrent_product(
    token: Token,
    mode: Mode,
    d: Dims,
    hcur: &[f32],
    w_hh_t: &Buffer,
    gh: usize,
    hp: Dst,
    h_prev: Option<Dst>,
) {
    let (b, h) = (d.b, d.h);
    debug_assert_eq!(hcur.len(), b * h);
    // SAFETY: the caller's extents.
    unsafe {
        if let Some(dst) = h_prev {
            dst.slice_mut(0, hcur.len()).copy_from_slice(hcur);
        }
        gemm(
            token,
            mode,
            &Product::views(
                row_major(Ptr::new(hcur.as_ptr(), hcur.len()), b, h),
                row_major(w_hh_t.f32_ptr().as_const(), h, gh),
                hp.range(0, b * gh),
                gh,
            ),
        )
    }
}

/// The recurrent gradient `dh = dz_t · W_hh` ([B, G·H] × [G·H, H]) of one
/// backward step, `dz_t` being row block t of `dz` [T, B, G·H].
///
/// # Safety
/// `dz` valid for [T, B, G·H] reads, `w_hh` for [G·H, H].
#[allow(clippy::too_many_arguments)]
unsafe fn recurrent_gradient(
    token: Token,
    mode: Mode,
    d: Dims,
    gh: usize,
    dz: Dst,
    t: usize,
    w_hh: Src,
    dh: &mut [f32],
) {
    let (b, h) = (d.b, d.h);
    debug_assert_eq!(dh.len(), b * h);
    // SAFETY: the caller's extents; dh is [B, H].
    unsafe {
        gemm(
            token,
            mode,
            &Product::views(
                row_major(dz.as_const().offset(t * b * gh), b, gh),
                row_major(w_hh, gh, h),
                dh.as_mut_ptr(),
                h,
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

// Sizes below are products of the layout's dimensions, whose byte sizes
// `Layout::new` checked; the scratch sizes are checked again here.
fn bytes(len: usize) -> usize {
    len.checked_mul(4)
        .expect("recurrent scratch: size overflows")
}

fn scratch(len: usize) -> Buffer {
    Buffer::zeroed(bytes(len))
}

/// A buffer every element of which is written before it is read (the
/// input projection, the pre-activation gradients): pooled memory is always
/// initialized, so it needs no zero fill.
fn overwritten(len: usize) -> Buffer {
    Buffer::new(bytes(len))
}

fn f32s(b: &mut Buffer, len: usize) -> &mut [f32] {
    &mut b.as_f32_mut()[..len]
}

/// Write a [B, H] block to rows `first_row..first_row + B` of a matrix
/// whose rows are `ld` elements apart (a direction's H columns inside a
/// [·, B, D·H] output of D directions).
///
/// # Safety
/// `dst` must be valid for writes of H elements at every such row, and no
/// other thread may touch those elements meanwhile.
unsafe fn store_rows(src: &[f32], h: usize, dst: Dst, first_row: usize, ld: usize) {
    for (bi, row) in src.chunks_exact(h).enumerate() {
        // SAFETY: the caller guarantees row first_row + bi holds H elements.
        unsafe { dst.slice_mut((first_row + bi) * ld, h).copy_from_slice(row) };
    }
}

/// Read rows `first_row..first_row + B` (H elements each, `ld` apart) into
/// a [B, H] block: the inverse of [`store_rows`].
///
/// # Safety
/// `src` must be valid for reads of H elements at every such row.
unsafe fn load_rows(src: Src, first_row: usize, ld: usize, h: usize, dst: &mut [f32]) {
    for (bi, row) in dst.chunks_exact_mut(h).enumerate() {
        // SAFETY: the caller guarantees row first_row + bi holds H elements.
        row.copy_from_slice(unsafe { src.slice((first_row + bi) * ld, h) });
    }
}

/// Gradients a recurrent backward produces.
pub struct RnnGrads {
    pub dx: Dst,          // [T, B, I]
    pub dw_ih: Dst,       // [G·H, I]
    pub dw_hh: Dst,       // [G·H, H]
    pub db_ih: Dst,       // [G·H]
    pub db_hh: Dst,       // [G·H]
    pub dh0: Dst,         // [B, H]
    pub dc0: Option<Dst>, // [B, H] (LSTM only)
}

/// Shared tail of both backward passes: dh0 (and dc0) from the final
/// recurrent gradients, then the weight, bias and input gradients from the
/// pre-activation gradients `dzx` (input side) and `dzh` (recurrent side),
/// both [T, B, G·H] by time index.
///
/// # Safety
/// As the callers'.
#[allow(clippy::too_many_arguments)]
unsafe fn parameter_gradients(
    token: Token,
    mode: Mode,
    d: Dims,
    gh: usize,
    inp: &BackwardInputs,
    h_prev: Dst,
    dzx: Dst,
    dzh: Dst,
    states: (&[f32], Option<&[f32]>),
    g: &RnnGrads,
) {
    let rows = d.t * d.b;
    let (dzx, dzh, h_prev) = (dzx.as_const(), dzh.as_const(), h_prev.as_const());
    // SAFETY: shapes as documented on RnnGrads; dz is [T·B, G·H].
    unsafe {
        let (dh, dc) = states;
        g.dh0.slice_mut(0, dh.len()).copy_from_slice(dh);
        if let (Some(dst), Some(dc)) = (g.dc0, dc) {
            dst.slice_mut(0, dc.len()).copy_from_slice(dc);
        }
        // dW_ih = dzxᵀ · x: [G·H, T·B] × [T·B, I], k = (t, b) rows ascending.
        gemm(
            token,
            mode,
            &Product::views(
                row_major(dzx, rows, gh).t(),
                row_major(inp.x, rows, d.i),
                g.dw_ih.range(0, gh * d.i),
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
                g.dw_hh.range(0, gh * d.h),
                d.h,
            ),
        );
        column_sums(dzx.range(0, rows * gh), rows, gh, g.db_ih.slice_mut(0, gh));
        column_sums(dzh.range(0, rows * gh), rows, gh, g.db_hh.slice_mut(0, gh));
        // dx = dzx · W_ih: [T·B, G·H] × [G·H, I].
        gemm(
            token,
            mode,
            &Product::views(
                row_major(dzx, rows, gh),
                row_major(inp.w_ih, gh, d.i),
                g.dx.range(0, rows * d.i),
                d.i,
            ),
        );
    }
}

#[cfg(all(test, debug_assertions))]
mod tests {
    use super::*;
    use crate::dispatch::KernelPath;

    /// An input one element shorter than [T, B, I] is caught by the debug
    /// extent of the input projection's operand, before anything is read.
    #[test]
    #[should_panic(expected = "outside an extent of 5")]
    fn a_short_input_trips_the_debug_extent() {
        let d = Dims {
            t: 2,
            b: 1,
            i: 3,
            h: 2,
        };
        let x = [0f32; 5];
        let (w_ih, w_hh) = ([0f32; 8 * 3], [0f32; 8 * 2]);
        let mut out = [0f32; 3 * 2];
        let src = |v: &[f32]| Ptr::new(v.as_ptr(), v.len());
        let inp = ForwardInputs {
            x: src(&x),
            w_ih: src(&w_ih),
            w_hh: src(&w_hh),
            b_ih: None,
            b_hh: None,
            h0: None,
            c0: None,
            reverse: false,
        };
        let token = Token::new(KernelPath::Scalar).unwrap();
        let out = Ptr::new(out.as_mut_ptr(), out.len());
        // SAFETY: every buffer but x has its layout's extent; x's short
        // extent is what the debug check must refuse before any access.
        unsafe { lstm_forward(token, Mode::Exact, d, &inp, out, d.h, None) };
    }
}
