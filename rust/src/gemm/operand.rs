//! The operands of a product: where A and B are read from, where C is
//! written, and how each output's accumulator starts.
//!
//! A product is one [`Product`]: an A source ([`A`]: a strided view, or
//! packed once), a B source ([`B`]: a strided view, rows at listed offsets,
//! or columns at listed offsets in runs), C with its strides, a batch, and
//! [`Start`] (BLAS's β: 0, or continue from C). A new in-place layout is a
//! new source here, not a new entry point; none of them changes a term of a
//! sum or its place (docs/kernels.md).

use super::pack;
use super::tile::{blocking, with_tile, TileFn};
use crate::ptr::Ptr;
use crate::simd::{Lanes, Token};
use crate::storage::Buffer;

/// A read-only strided matrix: element (i, j) is at `ptr + i*rs + j*cs`.
/// Strides are in elements and may be any value, negative or zero included.
#[derive(Clone, Copy, Debug)]
pub struct MatRef {
    pub ptr: *const f32,
    pub rows: usize,
    pub cols: usize,
    pub rs: isize,
    pub cs: isize,
}

// SAFETY: a MatRef is a read-only view; the callers of `gemm` guarantee the
// memory stays valid and unmodified for the duration of the call.
unsafe impl Send for MatRef {}
// SAFETY: see Send.
unsafe impl Sync for MatRef {}

impl MatRef {
    /// The row-major `rows × cols` matrix at `ptr` with row stride `ld`.
    pub fn row_major(ptr: *const f32, rows: usize, cols: usize, ld: usize) -> MatRef {
        MatRef {
            ptr,
            rows,
            cols,
            rs: ld as isize,
            cs: 1,
        }
    }

    /// # Safety
    /// (i, j) must lie inside the view.
    #[inline(always)]
    pub unsafe fn at(&self, i: usize, j: usize) -> f32 {
        // SAFETY: guaranteed by the caller.
        unsafe { *self.ptr.offset(i as isize * self.rs + j as isize * self.cs) }
    }

    /// The transposed view (no copy).
    pub fn t(self) -> MatRef {
        MatRef {
            ptr: self.ptr,
            rows: self.cols,
            cols: self.rows,
            rs: self.cs,
            cs: self.rs,
        }
    }
}

/// An A operand packed once into the microkernel's panels, for products
/// that share it (a convolution's weight against every output row of every
/// item): the packing a product would otherwise repeat in each chunk.
/// Packed for one kernel path; valid only for products on that path.
pub struct PackedA {
    pub(super) buf: Buffer,
    pub(super) token: Token,
    pub(super) m: usize,
    pub(super) k: usize,
}

/// Packing A block by block into MR-row panels (scalar lanes: no CPU
/// feature needed), for the MR of the path's tile.
struct PackA {
    a: MatRef,
    dst: Ptr<*mut f32>,
    kc: usize,
}

impl TileFn for PackA {
    type Output = ();
    #[inline(always)]
    fn call<L: Lanes, const MR: usize, const NV: usize, const EXACT: bool>(self) {
        let (a, m, k) = (self.a, self.a.rows, self.a.cols);
        let m_pad = m.next_multiple_of(MR);
        let mut pc = 0;
        while pc < k {
            let kc = self.kc.min(k - pc);
            let block = pack::Block {
                // SAFETY: column pc of A lies inside it (pc < k).
                ptr: unsafe { a.ptr.offset(pc as isize * a.cs) },
                width: m,
                along: a.cs,
                across: a.rs,
            };
            // SAFETY: the block is inside A; k block pc occupies m_pad·kc
            // floats at pc·m_pad of the buffer, which holds m_pad·k.
            unsafe { pack::pack::<f32, MR>(self.dst.offset(pc * m_pad), block, kc) };
            pc += kc;
        }
    }
}

impl PackedA {
    /// Pack `a` (m × k) for products on `token`'s path: k block by k block
    /// (the path's kc), each block's rows in MR-row panels, zero padded to
    /// whole panels — the layout each chunk would build for itself.
    ///
    /// # Safety
    /// `a` must be valid for its view.
    pub unsafe fn new(token: Token, a: MatRef) -> PackedA {
        let blk = blocking(token.path());
        let (m, k) = (a.rows, a.cols);
        let buf = Buffer::new(m.next_multiple_of(blk.mr) * k * 4);
        let dst = buf.f32_ptr();
        // The mode does not matter to packing.
        let mode = crate::dispatch::Mode::Exact;
        with_tile::<f32, _>(token.path(), mode, PackA { a, dst, kc: blk.kc });
        PackedA { buf, token, m, k }
    }

    /// Elements of the packed panels: m rounded up to whole panels, × k.
    pub(super) fn panels_len(&self) -> usize {
        self.m.next_multiple_of(blocking(self.token.path()).mr) * self.k
    }
}

/// A B operand whose rows are read in place at listed offsets: `B[p, j] =
/// ptr[offsets[p] + j]` for p < k = offsets.len(), j < cols. A stride-1
/// convolution's im2col matrix over a zero-padded input is one such operand
/// per output row (row p = the tap (c, ky, kx), column j = the output
/// column), so the product reads the input itself: no im2col copy and no
/// packing.
#[derive(Clone, Copy)]
pub struct OffsetRows<'a> {
    pub ptr: *const f32,
    pub offsets: &'a [isize],
    pub cols: usize,
}

/// A B operand whose columns are read at listed offsets, each column in
/// runs: `B[q, j] = ptr[offsets[j] + (q / run)·run_stride + q % run]` for
/// q < rows, j < offsets.len(). A stride-1 convolution's im2col matrix,
/// transposed, over a zero-padded input is one (column j the tap (c, ky,
/// kx), row q the output position, a run one output row): the weight
/// gradient packs it straight from the input, without writing the im2col
/// matrix first.
#[derive(Clone, Copy)]
pub struct OffsetCols<'a> {
    pub ptr: *const f32,
    pub offsets: &'a [isize],
    pub rows: usize,
    pub run: usize,
    pub run_stride: isize,
}

/// Where a product reads A.
#[derive(Clone, Copy)]
pub enum A<'a> {
    /// A strided view; each chunk packs its rows.
    View(MatRef),
    /// Packed once for the path it was packed for (the product must run on
    /// that path); the same A for every batch item.
    Packed(&'a PackedA),
}

/// Where a product reads B.
#[derive(Clone, Copy)]
pub enum B<'a> {
    /// A strided view: packed once per call, or read in place when its rows
    /// are contiguous and the product has few rows.
    View(MatRef),
    /// Rows at listed offsets, read in place.
    OffsetRows(OffsetRows<'a>),
    /// Columns at listed offsets in runs, packed from them.
    OffsetCols(OffsetCols<'a>),
}

/// How each output's accumulator starts (BLAS's β ∈ {0, 1}, with the
/// difference that matters for the bits: β = 1 does not add a separately
/// rounded `A·B` to C, it continues C's sum term by term).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// At +0 (C is written, never read).
    Zero,
    /// At its value in C: the terms of this call's k follow those of the
    /// call that wrote C. A product split into consecutive k ranges, the
    /// first with `Zero` and the rest with `Continue`, gives the bits of one
    /// product over the whole k (an f32 store and load of an accumulator are
    /// exact; the GEMM stores and reloads it between its own k blocks in
    /// the same way).
    Continue,
}

/// One call of [`super::gemm`]: `C[i] = A[i] · B[i]` for `batch` items.
///
/// Item i reads A at `a_bs·i` elements from its source (0 broadcasts; must
/// be 0 for a packed A), B at `b_bs·i`, and writes C at `c + c_bs·i`, row
/// stride `ldc`.
#[derive(Clone, Copy)]
pub struct Product<'a> {
    pub a: A<'a>,
    pub b: B<'a>,
    pub c: *mut f32,
    pub ldc: usize,
    pub batch: usize,
    pub a_bs: isize,
    pub b_bs: isize,
    pub c_bs: usize,
    pub start: Start,
}

impl<'a> Product<'a> {
    /// `C = A · B`, one item, accumulators from +0.
    pub fn new(a: A<'a>, b: B<'a>, c: *mut f32, ldc: usize) -> Product<'a> {
        Product {
            a,
            b,
            c,
            ldc,
            batch: 1,
            a_bs: 0,
            b_bs: 0,
            c_bs: 0,
            start: Start::Zero,
        }
    }

    /// The plain product of two strided views.
    pub fn views(a: MatRef, b: MatRef, c: *mut f32, ldc: usize) -> Product<'static> {
        Product::new(A::View(a), B::View(b), c, ldc)
    }

    /// `batch` items with A and B at the given batch strides and C's items
    /// one after the other (`c_bs = m·ldc`; see [`Product::c_stride`]).
    pub fn batched(self, batch: usize, a_bs: isize, b_bs: isize) -> Product<'a> {
        Product {
            batch,
            a_bs,
            b_bs,
            c_bs: self.m() * self.ldc,
            ..self
        }
    }

    /// C's items `c_bs` elements apart.
    pub fn c_stride(self, c_bs: usize) -> Product<'a> {
        Product { c_bs, ..self }
    }

    /// With the accumulators starting as `start` says.
    pub fn start(self, start: Start) -> Product<'a> {
        Product { start, ..self }
    }

    /// (m, k, n) as A's source gives m and k and B's gives n, and B's k.
    pub(super) fn m(&self) -> usize {
        match self.a {
            A::View(a) => a.rows,
            A::Packed(p) => p.m,
        }
    }
    pub(super) fn a_k(&self) -> usize {
        match self.a {
            A::View(a) => a.cols,
            A::Packed(p) => p.k,
        }
    }
    pub(super) fn b_k(&self) -> usize {
        match self.b {
            B::View(b) => b.rows,
            B::OffsetRows(b) => b.offsets.len(),
            B::OffsetCols(b) => b.rows,
        }
    }
    pub(super) fn n(&self) -> usize {
        match self.b {
            B::View(b) => b.cols,
            B::OffsetRows(b) => b.cols,
            B::OffsetCols(b) => b.offsets.len(),
        }
    }
}
