//! The loop nest of one chunk (one mc × nc tile of C, the whole k range),
//! after BLIS (Van Zee & van de Geijn) as laid out in matrixmultiply's
//! `gemm.rs`. BLIS's loops 5 (columns of C by NC) and 3 (rows of C by MC)
//! are the chunk grid of [`super::plan::Plan`], which threads share out;
//! loops 4, 2 and 1 run here, inside one chunk, on one thread.

use super::kernel::{tile, Edge};
use super::pack::{pack, Block};
use super::plan::Plan;
use super::MatRef;
use crate::dispatch::{KernelPath, Mode};
use crate::simd::{LaneFn, Lanes};
use crate::storage::Buffer;

/// Everything one chunk needs to read and write.
pub(super) struct Job {
    pub mode: Mode,
    pub plan: Plan,
    pub a: MatRef,
    /// Batch strides in elements (0 broadcasts).
    pub a_bs: isize,
    pub b: MatRef,
    pub b_bs: isize,
    /// C's address (as usize, to cross threads), row stride, batch stride.
    pub c: usize,
    pub ldc: usize,
    pub c_bs: usize,
}

/// One chunk of a [`Job`], run with the lane type of a kernel path.
pub(super) struct Chunk<'a> {
    pub job: &'a Job,
    pub index: usize,
}

impl LaneFn for Chunk<'_> {
    type Output = ();

    #[inline(always)]
    fn run<L: Lanes>(self) {
        // The register tile per path: the same table as plan::blocking.
        match (L::PATH, self.job.mode) {
            (KernelPath::Avx512, Mode::Exact) => self.go::<L, 8, 3, true>(),
            (KernelPath::Avx512, Mode::Fast) => self.go::<L, 8, 3, false>(),
            (KernelPath::Scalar, Mode::Exact) => self.go::<L, 4, 4, true>(),
            (KernelPath::Scalar, Mode::Fast) => self.go::<L, 4, 4, false>(),
            (_, Mode::Exact) => self.go::<L, 6, 2, true>(),
            (_, Mode::Fast) => self.go::<L, 6, 2, false>(),
        }
    }
}

impl Chunk<'_> {
    #[inline(always)]
    fn go<L: Lanes, const MR: usize, const NV: usize, const EXACT: bool>(self) {
        let job = self.job;
        let plan = &job.plan;
        let (mr, nr, kcb) = (MR, NV * L::N, plan.blk.kc);
        assert!(plan.blk.mr == mr && plan.blk.nr == nr, "gemm: tile table out of step");
        let (item, r0, rows, c0, cols) = plan.chunk(self.index);

        // Packed B block (kc × cols in NR slivers, shared by every row
        // block of the chunk) and A block (mc × kc in MR panels), from the
        // pool: the same sizes every call, so after the first product they
        // are reused, not allocated.
        let mcb = plan.mc_block.min(rows);
        let b_pack = Buffer::new(cols.next_multiple_of(nr) * kcb * 4);
        let a_pack = Buffer::new(mcb.next_multiple_of(mr) * kcb * 4);
        let (ap, bp) = (a_pack.as_ptr() as *mut f32, b_pack.as_ptr() as *mut f32);

        let (a, b) = (job.a, job.b);
        // SAFETY: the caller of gemm guarantees every batch item of A, B and
        // C is valid; item < batch, r0 + rows ≤ m, c0 + cols ≤ n.
        let (a0, b0, c0) = unsafe {
            (
                a.ptr.offset(item as isize * job.a_bs + r0 as isize * a.rs),
                b.ptr.offset(item as isize * job.b_bs + c0 as isize * b.cs),
                (job.c as *mut f32).add(item * job.c_bs + r0 * job.ldc + c0),
            )
        };

        // Loop 4: k blocks. Each output's accumulator is stored to C at the
        // end of a block and reloaded at the start of the next, which keeps
        // its terms in increasing k.
        let mut pc = 0;
        while pc < plan.k {
            let kc = kcb.min(plan.k - pc);
            let first = pc == 0;
            let canonicalize = EXACT && pc + kc == plan.k;
            // SAFETY: the block kc × cols of B at row pc lies inside B; the
            // buffer holds its padded slivers.
            unsafe { pack::<L, NV>(bp, Block { ptr: b0.offset(pc as isize * b.rs), width: cols, along: b.rs, across: b.cs }, kc) };
            // Loop 3: row blocks of the chunk; the packed A block stays in
            // L2 while every sliver of the packed B passes over it.
            let mut ic = 0;
            while ic < rows {
                let mc = mcb.min(rows - ic);
                // SAFETY: the block mc × kc of A at (ic, pc) lies inside A.
                unsafe {
                    let blk = Block { ptr: a0.offset(ic as isize * a.rs + pc as isize * a.cs), width: mc, along: a.cs, across: a.rs };
                    pack::<f32, MR>(ap, blk, kc);
                }
                // SAFETY: row ic < rows of this chunk's part of C.
                let c = unsafe { c0.add(ic * job.ldc) };
                self.block::<L, MR, NV, EXACT>(kc, ap, bp, c, mc, cols, first, canonicalize);
                ic += mc;
            }
            pc += kc;
        }
    }

    /// Loops 2 and 1 over one packed A block (`rows` × kc) and the packed B
    /// block (kc × `cols`), writing the tile of C at `c`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn block<L: Lanes, const MR: usize, const NV: usize, const EXACT: bool>(
        &self,
        kc: usize,
        ap: *const f32,
        bp: *const f32,
        c: *mut f32,
        rows: usize,
        cols: usize,
        first: bool,
        canonicalize: bool,
    ) {
        let (mr, nr, ldc) = (MR, NV * L::N, self.job.ldc);
        {
            // Loop 2: NR-wide slivers of the packed B (one stays in L1).
            let mut jr = 0;
            while jr < cols {
                // Loop 1: MR-high panels of the packed A (streamed from L2).
                let mut ir = 0;
                while ir < rows {
                    let edge = Edge { rows: mr.min(rows - ir), cols: nr.min(cols - jr), first, canonicalize };
                    // SAFETY: running inside run_on's trampoline for L; the
                    // panel and sliver are inside the packed buffers; the
                    // tile (ir, jr) with its edge extents is inside this
                    // chunk's part of C.
                    unsafe {
                        tile::<L, MR, NV, EXACT>(kc, ap.add(ir * kc), bp.add(jr * kc), c.add(ir * ldc + jr), ldc, edge);
                    }
                    ir += mr;
                }
                jr += nr;
            }
        }
    }
}
