//! The blocked SIMD GEMM under every product of the engine: matmul, linear,
//! and the backward products.
//!
//! # The order (docs/kernels.md, "The order it keeps")
//! Each output C[i, j] has one f32 accumulator that starts at +0 and adds
//! its terms A[i, p]·B[p, j] for p = 0, 1, …, k−1 in that order. Exact mode:
//! each term is a rounded multiply then a rounded add (no fma anywhere), and
//! a NaN result is written as the canonical quiet NaN 0x7FC00000. Fast mode:
//! each term is one fma. Everything else in this module — packing, register
//! tiles, k blocks, chunks, threads, the vector width — moves data around
//! that order and never changes it, so exact mode gives the same bits on
//! every path and thread count, and fast mode the same bits on every thread
//! count (and, since an fma is correctly rounded wherever it is done, on
//! every path too, up to NaN payloads).
//!
//! # Structure
//! * `plan`: blocking constants and the chunk grid (shape only);
//! * `loops`: the BLIS loop nest in two parallel phases: B packed once
//!   (or read in place for short products), then the chunks of C, each
//!   packing its rows of A (k blocks, slivers, panels);
//! * `pack`: strided operands → contiguous panels (transposes are free);
//! * `kernel`: the MR × NR register tile, written once over [`Lanes`]
//!   (B's rows at a fixed stride, or at listed offsets for
//!   [`gemm_offset_rows`], whose A comes packed once as a [`PackedA`]);
//! * `peak`: the measured arithmetic peak the benchmark compares against.
//!
//! Threads take whole chunks (output tiles with their whole k range) through
//! [`par_chunks`], which also clears the MXCSR flush-to-zero bits on every
//! thread that computes, the caller's included. There is no reduction
//! across threads. See docs/kernels.md for the design and its limits.
//!
//! [`Lanes`]: crate::simd::Lanes

mod kernel;
mod loops;
mod pack;
mod peak;
mod plan;
#[cfg(test)]
mod tests;

use crate::dispatch::{par_chunks, Mode};
use crate::ptr::Ptr;
use crate::simd::{run_on, Token};
use crate::storage::Buffer;
pub use peak::peak_gflops;

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

/// `C = A · B` on the current kernel path: A m×k, B k×n, C m×n written
/// row-major with row stride `ldc` (C is overwritten, never read).
///
/// # Safety
/// A and B must be valid for their views; C valid for m rows of n writes at
/// row stride `ldc`, not overlapping A or B.
pub unsafe fn gemm(mode: Mode, a: MatRef, b: MatRef, c: *mut f32, ldc: usize) {
    // SAFETY: forwarded from the caller (one batch item).
    unsafe { gemm_on(Token::current(), mode, 1, a, 0, b, 0, c, ldc) }
}

/// `C = A · B` where each output's accumulator starts from its value in C
/// rather than +0: the terms of this call's k follow those of the call that
/// wrote C. A product split into consecutive k ranges, the first by [`gemm`]
/// and the rest by this, gives the bits of one [`gemm`] over the whole k (an
/// f32 store and load of the accumulator are exact; the GEMM stores and
/// reloads it between its own k blocks in the same way).
///
/// # Safety
/// As [`gemm`]; C is read as well as written.
pub unsafe fn gemm_continued(mode: Mode, a: MatRef, b: MatRef, c: *mut f32, ldc: usize) {
    // SAFETY: forwarded from the caller (one batch item).
    unsafe { gemm_with(Token::current(), mode, 1, a, 0, b, 0, c, ldc, true) }
}

/// `C[i] = A[i] · B[i]` for `batch` products on the current kernel path. The
/// batch strides (elements) may be 0 to broadcast one operand; C's batch
/// stride is `m * ldc`.
///
/// # Safety
/// As [`gemm`] for every batch item.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm_batched(
    mode: Mode,
    batch: usize,
    a: MatRef,
    a_bs: isize,
    b: MatRef,
    b_bs: isize,
    c: *mut f32,
    ldc: usize,
) {
    // SAFETY: forwarded from the caller.
    unsafe { gemm_on(Token::current(), mode, batch, a, a_bs, b, b_bs, c, ldc) }
}

/// [`gemm_batched`] on the kernel path of `token`.
///
/// # Safety
/// As [`gemm_batched`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm_on(
    token: Token,
    mode: Mode,
    batch: usize,
    a: MatRef,
    a_bs: isize,
    b: MatRef,
    b_bs: isize,
    c: *mut f32,
    ldc: usize,
) {
    // SAFETY: forwarded from the caller.
    unsafe { gemm_with(token, mode, batch, a, a_bs, b, b_bs, c, ldc, false) }
}

/// [`gemm_on`], or with `continued` [`gemm_continued`]'s accumulators.
///
/// # Safety
/// As [`gemm_batched`].
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_with(
    token: Token,
    mode: Mode,
    batch: usize,
    a: MatRef,
    a_bs: isize,
    b: MatRef,
    b_bs: isize,
    c: *mut f32,
    ldc: usize,
    continued: bool,
) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    assert_eq!(b.rows, k, "gemm: A is {m}×{k} but B has {} rows", b.rows);
    assert!(ldc >= n, "gemm: ldc {ldc} < n {n}");
    if batch == 0 || m == 0 || n == 0 {
        return;
    }
    let c_bs = m * ldc;
    if k == 0 && continued {
        // No terms: every accumulator keeps its value.
        return;
    }
    if k == 0 {
        // SAFETY: forwarded from the caller.
        unsafe { empty_sums(c, batch, m, n, ldc, c_bs) };
        return;
    }
    // B is read in place only when its rows are contiguous (a non-negative
    // row stride, as the kernel's step is a usize).
    let plan = plan::Plan::new(token.path(), batch, m, n, k, b.cs == 1 && b.rs >= 0);
    let job = loops::Job {
        continued,
        ..loops::Job::new(mode, plan, (a, a_bs), (b, b_bs), c, ldc, c_bs)
    };
    // SAFETY: forwarded from the caller.
    unsafe { run_job(token, job) }
}

/// A product over k = 0: every output is the empty sum, +0.
///
/// # Safety
/// C valid for n writes on each of the m rows (stride ldc) of each of the
/// batch items (stride c_bs).
unsafe fn empty_sums(c: *mut f32, batch: usize, m: usize, n: usize, ldc: usize, c_bs: usize) {
    for item in 0..batch {
        for i in 0..m {
            // SAFETY: as the caller promised.
            unsafe { std::ptr::write_bytes(c.add(item * c_bs + i * ldc), 0, n) };
        }
    }
}

/// Phase 1 (B packed, unless read in place) then phase 2 (the chunks of C),
/// on the pool or, for a small product, on the calling thread.
///
/// # Safety
/// The job's operands must be valid as [`gemm_batched`] requires.
unsafe fn run_job(token: Token, mut job: loops::Job) {
    let plan = job.plan;
    let b_pack = Buffer::new(if plan.direct_b {
        0
    } else {
        job.b_items() * plan.k * plan.n_pad() * 4
    });
    if !plan.direct_b {
        job.b_packed = Some(Ptr::new(
            b_pack.as_ptr() as *mut f32,
            job.b_items() * plan.k * plan.n_pad(),
        ));
    }
    let job = &job;
    let run = || {
        if !plan.direct_b {
            par_chunks(job.pack_chunks(), |index| {
                run_on(token, loops::PackB { job, index })
            });
        }
        par_chunks(plan.chunks(), |index| {
            run_on(token, loops::Chunk { job, index })
        });
    };
    // A small product runs its chunks on the calling thread: waking the
    // pool costs about what it would save (measured on the recurrent
    // layers' per-step [8, 128] × [128, 512] products, where the 2-thread
    // LSTM was slower than the 1-thread one). Same chunks, same bits.
    let (b, m, n, k) = (
        plan.batch as u128,
        plan.m as u128,
        plan.n as u128,
        plan.k as u128,
    );
    if b * m * n * k < INLINE_BELOW {
        crate::dispatch::serial(run)
    } else {
        run()
    }
}

/// Multiply-adds below which a product does not use the thread pool: 30–50
/// µs of one AVX2 core at the 20–35 G multiply-adds per second the GEMM
/// reaches on this project's development VM (docs/performance.md).
const INLINE_BELOW: u128 = 1 << 20;

/// An A operand packed once into the microkernel's panels, for products
/// that share it (a convolution's weight against every output row of every
/// item): the packing a product would otherwise repeat in each chunk.
/// Packed for one kernel path; valid only for products on that path.
pub struct PackedA {
    buf: Buffer,
    token: Token,
    m: usize,
    k: usize,
}

impl PackedA {
    /// Pack `a` (m × k) for products on `token`'s path: k block by k block
    /// (the path's kc), each block's rows in MR-row panels, zero padded to
    /// whole panels — the layout each chunk would build for itself.
    ///
    /// # Safety
    /// `a` must be valid for its view.
    pub unsafe fn new(token: Token, a: MatRef) -> PackedA {
        let blk = plan::blocking(token.path());
        let (m, k) = (a.rows, a.cols);
        let m_pad = m.next_multiple_of(blk.mr);
        let buf = Buffer::new(m_pad * k * 4);
        let dst = buf.as_ptr() as *mut f32;
        let mut pc = 0;
        while pc < k {
            let kc = blk.kc.min(k - pc);
            let block = pack::Block {
                // SAFETY: column pc of A lies inside it (pc < k).
                ptr: unsafe { a.ptr.offset(pc as isize * a.cs) },
                width: m,
                along: a.cs,
                across: a.rs,
            };
            // SAFETY: the block is inside A; k block pc occupies m_pad·kc
            // floats at pc·m_pad of the buffer. Packing A uses scalar lanes
            // (f32), which need no CPU feature.
            unsafe {
                let d = dst.add(pc * m_pad);
                match blk.mr {
                    4 => pack::pack::<f32, 4>(d, block, kc),
                    6 => pack::pack::<f32, 6>(d, block, kc),
                    8 => pack::pack::<f32, 8>(d, block, kc),
                    mr => unreachable!("gemm: no A packing for MR = {mr}"),
                }
            }
            pc += kc;
        }
        PackedA { buf, token, m, k }
    }

    /// Elements of the packed panels: m rounded up to whole panels, × k.
    fn panels_len(&self) -> usize {
        self.m
            .next_multiple_of(plan::blocking(self.token.path()).mr)
            * self.k
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

/// `C[i] = A · B[i]` for `batch` products with A packed once and B given by
/// row offsets, item i's B at `b.ptr + i·b_bs` and its C at `c + i·c_bs`
/// (row stride `ldc`). Every output keeps the canonical order: this changes
/// where A and B are read from, not a term or its place.
///
/// # Safety
/// A's source must not have changed since it was packed; every `B[i][p,
/// j]` must be valid to read; C valid for `a.m` rows of `b.cols` writes at
/// row stride `ldc` for each item, the items' C disjoint and not
/// overlapping B.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm_offset_rows(
    mode: Mode,
    a: &PackedA,
    b: OffsetRows,
    batch: usize,
    b_bs: isize,
    c: *mut f32,
    ldc: usize,
    c_bs: usize,
) {
    // The product runs on the path A was packed for.
    let token = a.token;
    let (m, k, n) = (a.m, a.k, b.cols);
    assert_eq!(
        b.offsets.len(),
        k,
        "gemm: A is {m}×{k} but B has {} rows",
        b.offsets.len()
    );
    assert!(ldc >= n, "gemm: ldc {ldc} < n {n}");
    if batch == 0 || m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        // SAFETY: forwarded from the caller.
        unsafe { empty_sums(c, batch, m, n, ldc, c_bs) };
        return;
    }
    let mut plan = plan::Plan::new(token.path(), batch, m, n, k, true);
    plan.direct_b = true;
    // A is never read through (it comes packed), nor B's strides.
    let a_view = MatRef {
        ptr: a.buf.as_ptr() as *const f32,
        rows: m,
        cols: k,
        rs: 0,
        cs: 0,
    };
    let b_view = MatRef {
        ptr: b.ptr,
        rows: k,
        cols: n,
        rs: 0,
        cs: 1,
    };
    let job = loops::Job {
        a_packed: Some(Ptr::new(a.buf.as_ptr() as *const f32, a.panels_len())),
        b_off: Some(Ptr::new(b.offsets.as_ptr(), k)),
        ..loops::Job::new(mode, plan, (a_view, 0), (b_view, b_bs), c, ldc, c_bs)
    };
    // SAFETY: forwarded from the caller.
    unsafe { run_job(token, job) }
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

/// `C = A · B` (or with `continued`, as [`gemm_continued`]) on the current
/// kernel path, B given by column offsets and packed from them. The same
/// terms in the same order as the product of the written-out B.
///
/// # Safety
/// A valid for its view; every `B[q, j]` valid to read; C valid for m rows
/// of n reads and writes at row stride `ldc`, not overlapping A or B.
pub unsafe fn gemm_offset_cols(
    mode: Mode,
    a: MatRef,
    b: OffsetCols,
    c: *mut f32,
    ldc: usize,
    continued: bool,
) {
    // SAFETY: forwarded from the caller.
    unsafe { gemm_offset_cols_on(Token::current(), mode, a, b, c, ldc, continued) }
}

/// [`gemm_offset_cols`] on the kernel path of `token`.
///
/// # Safety
/// As [`gemm_offset_cols`].
unsafe fn gemm_offset_cols_on(
    token: Token,
    mode: Mode,
    a: MatRef,
    b: OffsetCols,
    c: *mut f32,
    ldc: usize,
    continued: bool,
) {
    let (m, k, n) = (a.rows, a.cols, b.offsets.len());
    assert_eq!(b.rows, k, "gemm: A is {m}×{k} but B has {} rows", b.rows);
    assert!(ldc >= n, "gemm: ldc {ldc} < n {n}");
    assert!(b.run > 0 || k == 0, "gemm: B's runs are empty");
    if m == 0 || n == 0 || (k == 0 && continued) {
        return;
    }
    if k == 0 {
        // SAFETY: forwarded from the caller.
        unsafe { empty_sums(c, 1, m, n, ldc, m * ldc) };
        return;
    }
    let plan = plan::Plan::new(token.path(), 1, m, n, k, false);
    // Never read through: phase 1 packs B from the offsets.
    let b_view = MatRef {
        ptr: b.ptr,
        rows: k,
        cols: n,
        rs: 0,
        cs: 0,
    };
    let job = loops::Job {
        continued,
        b_cols: Some(Ptr::new(b.offsets.as_ptr(), n)),
        b_run: b.run,
        b_run_stride: b.run_stride,
        ..loops::Job::new(mode, plan, (a, 0), (b_view, 0), c, ldc, m * ldc)
    };
    // SAFETY: forwarded from the caller.
    unsafe { run_job(token, job) }
}
