//! The loop nest, after BLIS (Van Zee & van de Geijn) as laid out in
//! matrixmultiply's `gemm.rs`, in two parallel phases:
//!
//! 1. [`PackB`]: B is packed once per call into NR-wide slivers, k block by
//!    k block (BLIS's loop 4 packing, hoisted out of the chunks so that no
//!    chunk repacks what another packed). Skipped when B is read in place.
//! 2. [`Chunk`]: BLIS's loops 5 and 3 (column and row blocks of C) are the
//!    chunk grid of [`Plan`], which threads share out; loops 4, 2 and 1 run
//!    inside one chunk, on one thread, packing the chunk's rows of A.

use super::kernel::{tile, Edge};
use super::pack::{pack, pack_offset_cols, Block, OffsetColsBlock};
use super::plan::Plan;
use super::MatRef;
use crate::dispatch::{KernelPath, Mode};
use crate::ptr::Ptr;
use crate::simd::{LaneFn, Lanes};
use crate::storage::Buffer;

/// Everything the phases read and write.
pub(super) struct Job {
    pub mode: Mode,
    pub plan: Plan,
    pub a: MatRef,
    /// Batch strides in elements (0 broadcasts).
    pub a_bs: isize,
    pub b: MatRef,
    pub b_bs: isize,
    /// The packed B: one item of `k · n_pad` elements per distinct batch
    /// item of B. None when `plan.direct_b`.
    pub b_packed: Option<Ptr<*mut f32>>,
    /// C, its row stride and batch stride.
    pub c: Ptr<*mut f32>,
    pub ldc: usize,
    pub c_bs: usize,
    /// Each output's accumulator starts from its value in C (a product over
    /// the k that follows an earlier call's) instead of +0.
    pub continued: bool,
    /// A packed once for the whole call (a [`super::PackedA`]'s panels; A
    /// is then the same for every batch item), or None: each chunk packs
    /// its rows of A.
    pub a_packed: Option<Ptr<*const f32>>,
    /// B's rows by offset (`k` of them): row p of B's item starts at
    /// `b.ptr + item·b_bs + b_off[p]`, its columns contiguous; B is read in
    /// place. None: B's rows are at stride `b.rs`.
    pub b_off: Option<Ptr<*const isize>>,
    /// B's columns by offset, in runs (`n` of them; see
    /// [`OffsetColsBlock`]): phase 1 packs B from them. None: B is a MatRef.
    pub b_cols: Option<Ptr<*const isize>>,
    pub b_run: usize,
    pub b_run_stride: isize,
}

impl Job {
    /// A plain product's job: A and B read through their views (with their
    /// batch strides), accumulators starting at +0; the entries that need
    /// more set the other fields over it.
    pub fn new(
        mode: Mode,
        plan: Plan,
        (a, a_bs): (MatRef, isize),
        (b, b_bs): (MatRef, isize),
        c: *mut f32,
        ldc: usize,
        c_bs: usize,
    ) -> Job {
        Job {
            mode,
            plan,
            a,
            a_bs,
            b,
            b_bs,
            b_packed: None,
            c: Ptr::new(c, batch_extent(plan.batch, c_bs, plan.m, ldc)),
            ldc,
            c_bs,
            continued: false,
            a_packed: None,
            b_off: None,
            b_cols: None,
            b_run: 0,
            b_run_stride: 0,
        }
    }
}

/// Elements of C a batch of products reaches: the last item's last row
/// ends at (batch − 1)·c_bs + (m − 1)·ldc + n ≤ batch·c_bs when c_bs ≥
/// m·ldc; the bound used for C's extent.
fn batch_extent(batch: usize, c_bs: usize, m: usize, ldc: usize) -> usize {
    batch.saturating_sub(1) * c_bs + m * ldc
}

/// Slivers per packing chunk of phase 1.
pub(super) const PACK_SLIVERS: usize = 16;

impl Job {
    /// Distinct batch items of B (1 when B is broadcast).
    pub fn b_items(&self) -> usize {
        if self.b_bs == 0 {
            1
        } else {
            self.plan.batch
        }
    }

    /// Phase 1 chunks: (item, k block, group of PACK_SLIVERS slivers).
    pub fn pack_chunks(&self) -> usize {
        let p = &self.plan;
        self.b_items() * p.k.div_ceil(p.blk.kc) * p.n.div_ceil(p.blk.nr * PACK_SLIVERS)
    }
}

/// The register tile per path and mode: the same table as
/// `plan::blocking` (checked in `Chunk::go`).
macro_rules! per_tile {
    ($self:ident, $path:expr, $mode:expr, $go:ident) => {
        match ($path, $mode) {
            (KernelPath::Avx512, Mode::Exact) => $self.$go::<L, 8, 3, true>(),
            (KernelPath::Avx512, Mode::Fast) => $self.$go::<L, 8, 3, false>(),
            (KernelPath::Scalar, Mode::Exact) => $self.$go::<L, 4, 4, true>(),
            (KernelPath::Scalar, Mode::Fast) => $self.$go::<L, 4, 4, false>(),
            (_, Mode::Exact) => $self.$go::<L, 6, 2, true>(),
            (_, Mode::Fast) => $self.$go::<L, 6, 2, false>(),
        }
    };
}

/// Phase 1: one chunk of the packing of B.
pub(super) struct PackB<'a> {
    pub job: &'a Job,
    pub index: usize,
}

impl LaneFn for PackB<'_> {
    type Output = ();

    #[inline(always)]
    fn run<L: Lanes>(self) {
        per_tile!(self, L::PATH, self.job.mode, go)
    }
}

impl PackB<'_> {
    #[inline(always)]
    fn go<L: Lanes, const MR: usize, const NV: usize, const EXACT: bool>(self) {
        let (job, p) = (self.job, &self.job.plan);
        let (nr, kcb) = (NV * L::N, p.blk.kc);
        assert!(p.blk.nr == nr, "gemm: tile table out of step");
        let groups = p.n.div_ceil(nr * PACK_SLIVERS);
        let k_blocks = p.k.div_ceil(kcb);
        let (item, rest) = (
            self.index / (k_blocks * groups),
            self.index % (k_blocks * groups),
        );
        let (pc, c0) = ((rest / groups) * kcb, (rest % groups) * nr * PACK_SLIVERS);
        let (kc, cols) = (kcb.min(p.k - pc), (nr * PACK_SLIVERS).min(p.n - c0));
        let b = job.b;
        // SAFETY: item < b_items, pc + kc ≤ k, c0 + cols ≤ n: the block is
        // inside B (for B by column offsets: the caller of
        // gemm_offset_cols guarantees every element is readable); its
        // slivers land inside the packed buffer of b_items · k · n_pad
        // elements at (item, block pc, column c0).
        unsafe {
            let src = b
                .ptr
                .offset(item as isize * job.b_bs + pc as isize * b.rs + c0 as isize * b.cs);
            let packed = job
                .b_packed
                .expect("gemm: phase 1 runs only with a packed B");
            let dst = packed
                .offset(item * p.k * p.n_pad() + p.b_block(pc) + c0 * kc)
                .get();
            if let Some(b_cols) = job.b_cols {
                let blk = OffsetColsBlock {
                    ptr: b.ptr.offset(item as isize * job.b_bs),
                    col_off: b_cols.offset(c0).get(),
                    width: cols,
                    run: job.b_run,
                    run_stride: job.b_run_stride,
                    k0: pc,
                };
                pack_offset_cols(dst, blk, kc, nr);
                return;
            }
            pack::<L, NV>(
                dst,
                Block {
                    ptr: src,
                    width: cols,
                    along: b.rs,
                    across: b.cs,
                },
                kc,
            );
        }
    }
}

/// Phase 2: one chunk of C (one mc × nc tile, the whole k range).
pub(super) struct Chunk<'a> {
    pub job: &'a Job,
    pub index: usize,
}

impl LaneFn for Chunk<'_> {
    type Output = ();

    #[inline(always)]
    fn run<L: Lanes>(self) {
        per_tile!(self, L::PATH, self.job.mode, go)
    }
}

impl Chunk<'_> {
    #[inline(always)]
    fn go<L: Lanes, const MR: usize, const NV: usize, const EXACT: bool>(self) {
        let job = self.job;
        let plan = &job.plan;
        let (mr, nr, kcb) = (MR, NV * L::N, plan.blk.kc);
        assert!(
            plan.blk.mr == mr && plan.blk.nr == nr,
            "gemm: tile table out of step"
        );
        let (item, r0, rows, c0, cols) = plan.chunk(self.index);

        // The chunk's packed A block (rows × kc in MR panels; none when A
        // came packed) and, when B is read in place, one zero-padded sliver
        // for its last partial columns; from the pool, so after the first
        // product of a shape they are reused, not allocated.
        let a_pack = Buffer::new(if job.a_packed.is_none() {
            rows.next_multiple_of(mr) * kcb * 4
        } else {
            0
        });
        let edge_pack = Buffer::new(if plan.direct_b { nr * kcb * 4 } else { 0 });
        let ep = edge_pack.as_ptr() as *mut f32;

        let (a, b) = (job.a, job.b);
        let b_item = if job.b_bs == 0 { 0 } else { item };
        // SAFETY: the caller of gemm guarantees every batch item of A, B and
        // C is valid; item < batch, r0 + rows ≤ m, c0 + cols ≤ n.
        let (a0, c0p) = unsafe {
            (
                a.ptr.offset(item as isize * job.a_bs + r0 as isize * a.rs),
                job.c.offset(item * job.c_bs + r0 * job.ldc + c0).get(),
            )
        };

        // Loop 4: k blocks. Each output's accumulator is stored to C at the
        // end of a block and reloaded at the start of the next, which keeps
        // its terms in increasing k.
        let mut pc = 0;
        while pc < plan.k {
            let kc = kcb.min(plan.k - pc);
            let first = pc == 0 && !job.continued;
            let canonicalize = EXACT && pc + kc == plan.k;
            let ap = if let Some(packed) = job.a_packed {
                // A PackedA of this path holds k block pc at pc·m_pad, its
                // panel of row r0 (a multiple of MR) at r0·kc.
                packed
                    .offset(pc * plan.m.next_multiple_of(mr) + r0 * kc)
                    .get()
            } else {
                let ap = a_pack.as_ptr() as *mut f32;
                // SAFETY: the block rows × kc of A at (r0, pc) lies inside A.
                unsafe {
                    let blk = Block {
                        ptr: a0.offset(pc as isize * a.cs),
                        width: rows,
                        along: a.cs,
                        across: a.rs,
                    };
                    pack::<f32, MR>(ap, blk, kc);
                }
                ap as *const f32
            };
            // Loop 2: NR-wide slivers of B (one stays in L1).
            let mut jr = 0;
            while jr < cols {
                let w = nr.min(cols - jr);
                let (bp, ldb, offs) = if let Some(packed) = job.b_packed {
                    // The packed B holds item b_item, block pc, sliver
                    // (c0 + jr) / nr.
                    let sliver = b_item * plan.k * plan.n_pad() + plan.b_block(pc) + (c0 + jr) * kc;
                    (
                        packed.offset(sliver).get() as *const f32,
                        nr,
                        std::ptr::null(),
                    )
                } else if let Some(b_off) = job.b_off {
                    // SAFETY: the caller's offsets give B's rows; column
                    // c0 + jr of each lies inside it, as do the next w.
                    let (src, offs) = unsafe {
                        (
                            b.ptr
                                .offset(b_item as isize * job.b_bs + (c0 + jr) as isize),
                            b_off.offset(pc).get(),
                        )
                    };
                    if w == nr {
                        (src, 0, offs)
                    } else {
                        // SAFETY: w valid columns of each of the kc rows;
                        // the edge buffer holds kc × nr.
                        unsafe {
                            for p in 0..kc {
                                std::ptr::copy_nonoverlapping(
                                    src.offset(*offs.add(p)),
                                    ep.add(p * nr),
                                    w,
                                );
                                std::ptr::write_bytes(ep.add(p * nr + w), 0, nr - w);
                            }
                        }
                        (ep as *const f32, nr, std::ptr::null())
                    }
                } else {
                    // SAFETY: row pc, column c0 + jr of B's item lie inside B.
                    let src = unsafe {
                        b.ptr.offset(
                            b_item as isize * job.b_bs + pc as isize * b.rs + (c0 + jr) as isize,
                        )
                    };
                    if w == nr {
                        (src, b.rs as usize, std::ptr::null())
                    } else {
                        // SAFETY: kc × w of B at src; the edge buffer holds kc × nr.
                        unsafe {
                            pack::<L, NV>(
                                ep,
                                Block {
                                    ptr: src,
                                    width: w,
                                    along: b.rs,
                                    across: 1,
                                },
                                kc,
                            )
                        };
                        (ep as *const f32, nr, std::ptr::null())
                    }
                };
                // Loop 1: MR-high panels of the packed A (streamed from L2).
                let mut ir = 0;
                while ir < rows {
                    let edge = Edge {
                        rows: mr.min(rows - ir),
                        cols: w,
                        first,
                        canonicalize,
                    };
                    // SAFETY: running inside run_on's trampoline for L; the
                    // panel is inside the packed A, the sliver holds kc steps
                    // of NR at stride ldb; the tile (ir, jr) with its edge
                    // extents is inside this chunk's part of C.
                    unsafe {
                        if !first {
                            // The next tile's stored accumulators, while
                            // this one computes.
                            let (ni, nj) = if ir + mr < rows {
                                (ir + mr, jr)
                            } else {
                                (0, jr + nr)
                            };
                            if nj < cols {
                                prefetch_tile(
                                    c0p.add(ni * job.ldc + nj),
                                    mr.min(rows - ni),
                                    job.ldc,
                                );
                            }
                        }
                        tile::<L, MR, NV, EXACT>(
                            kc,
                            ap.add(ir * kc),
                            bp,
                            ldb,
                            offs,
                            c0p.add(ir * job.ldc + jr),
                            job.ldc,
                            edge,
                        )
                    };
                    ir += mr;
                }
                jr += nr;
            }
            pc += kc;
        }
    }
}

/// Ask for the rows of a tile of C to be brought into L1 (a hint: no
/// architectural effect, on any path).
#[inline(always)]
fn prefetch_tile(c: *const f32, rows: usize, ldc: usize) {
    #[cfg(target_arch = "x86_64")]
    for i in 0..rows {
        // SAFETY: prefetch never faults and has no architectural effect;
        // SSE is baseline on x86-64. The address is computed with
        // wrapping arithmetic, so even a far address is not UB.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(c.wrapping_add(i * ldc) as *const i8);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (c, rows, ldc);
}
