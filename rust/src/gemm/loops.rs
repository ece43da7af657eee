//! The loop nest, after BLIS (Van Zee & van de Geijn) as laid out in
//! matrixmultiply's `gemm.rs`, in two parallel phases:
//!
//! 1. [`PackB`]: B is packed once per call into NR-wide slivers, k block by
//!    k block (BLIS's loop 4 packing, hoisted out of the chunks so that no
//!    chunk repacks what another packed). Skipped when B is read in place.
//! 2. [`Chunk`]: BLIS's loops 5 and 3 (column and row blocks of C) are the
//!    chunk grid of [`Plan`], which threads share out; loops 4, 2 and 1 run
//!    inside one chunk, on one thread, packing the chunk's rows of A.

use super::kernel::{short_panel, short_slivers, tile, Edge};
use super::operand::{Product, Start, A, B};
use super::pack::{pack, pack_offset_cols, Block, OffsetColsBlock};
use super::plan::Plan;
use super::tile::{with_tile, TileFn};
use super::MatRef;
use crate::dispatch::Mode;
use crate::ptr::Ptr;
use crate::simd::{LaneFn, Lanes};
use crate::storage::Buffer;

/// Where the phases read A.
#[derive(Clone, Copy)]
pub(super) enum ASrc {
    /// Through a view; each chunk packs its rows of A.
    View(MatRef),
    /// A [`super::PackedA`]'s panels (the same A for every batch item).
    Packed(Ptr<*const f32>),
}

/// Where the phases read B.
#[derive(Clone, Copy)]
pub(super) enum BSrc {
    /// Through a view (packed by phase 1, or read in place).
    View(MatRef),
    /// Rows by offset (`k` of them): row p of B's item starts at `ptr +
    /// item·b_bs + offsets[p]`, its columns contiguous; read in place.
    Rows {
        ptr: *const f32,
        offsets: Ptr<*const isize>,
    },
    /// Columns by offset, in runs (`n` of them; see [`OffsetColsBlock`]):
    /// phase 1 packs B from them.
    Cols {
        ptr: *const f32,
        offsets: Ptr<*const isize>,
        run: usize,
        run_stride: isize,
    },
}

// SAFETY: a BSrc is a read-only description of memory, like a MatRef; the
// caller of `gemm` guarantees every element it reaches stays valid and
// unmodified for the call.
unsafe impl Send for BSrc {}
// SAFETY: see Send.
unsafe impl Sync for BSrc {}

/// Everything the phases read and write.
pub(super) struct Job {
    pub mode: Mode,
    pub plan: Plan,
    pub a: ASrc,
    /// Batch strides in elements (0 broadcasts).
    pub a_bs: isize,
    pub b: BSrc,
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
}

impl Job {
    /// The job of product `p` under `plan`; phase 1's buffer is set by the
    /// caller when B is packed.
    pub fn new(mode: Mode, plan: Plan, p: &Product) -> Job {
        let a = match p.a {
            A::View(a) => ASrc::View(a),
            A::Packed(a) => ASrc::Packed(Ptr::new(a.buf.as_ptr() as *const f32, a.panels_len())),
        };
        let b = match p.b {
            B::View(b) => BSrc::View(b),
            B::OffsetRows(b) => BSrc::Rows {
                ptr: b.ptr,
                offsets: Ptr::new(b.offsets.as_ptr(), b.offsets.len()),
            },
            B::OffsetCols(b) => BSrc::Cols {
                ptr: b.ptr,
                offsets: Ptr::new(b.offsets.as_ptr(), b.offsets.len()),
                run: b.run,
                run_stride: b.run_stride,
            },
        };
        Job {
            mode,
            plan,
            a,
            a_bs: p.a_bs,
            b,
            b_bs: p.b_bs,
            b_packed: None,
            c: Ptr::new(p.c, batch_extent(plan.batch, p.c_bs, plan.m, p.ldc)),
            ldc: p.ldc,
            c_bs: p.c_bs,
            continued: p.start == Start::Continue,
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

/// Phase 1: one chunk of the packing of B.
pub(super) struct PackB<'a> {
    pub job: &'a Job,
    pub index: usize,
}

impl LaneFn for PackB<'_> {
    type Output = ();

    #[inline(always)]
    fn run<L: Lanes>(self) {
        with_tile::<L, _>(L::PATH, self.job.mode, self)
    }
}

impl TileFn for PackB<'_> {
    type Output = ();

    #[inline(always)]
    fn call<L: Lanes, const MR: usize, const NV: usize, const EXACT: bool>(self) {
        let (job, p) = (self.job, &self.job.plan);
        let (nr, kcb) = (NV * L::N, p.blk.kc);
        let groups = p.n.div_ceil(nr * PACK_SLIVERS);
        let k_blocks = p.k.div_ceil(kcb);
        let (item, rest) = (
            self.index / (k_blocks * groups),
            self.index % (k_blocks * groups),
        );
        let (pc, c0) = ((rest / groups) * kcb, (rest % groups) * nr * PACK_SLIVERS);
        let (kc, cols) = (kcb.min(p.k - pc), (nr * PACK_SLIVERS).min(p.n - c0));
        // SAFETY: item < b_items, pc + kc ≤ k, c0 + cols ≤ n: the block is
        // inside B (for B by column offsets: the caller of gemm guarantees
        // every element is readable); its slivers land inside the packed
        // buffer of b_items · k · n_pad elements at (item, block pc, column
        // c0).
        unsafe {
            let packed = job
                .b_packed
                .expect("gemm: phase 1 runs only with a packed B");
            let dst = packed.offset(item * p.k * p.n_pad() + p.b_block(pc) + c0 * kc);
            match job.b {
                BSrc::View(b) => {
                    debug_assert!(
                        pc + kc <= b.rows && c0 + cols <= b.cols,
                        "gemm: B block {pc}+{kc} × {c0}+{cols} outside a {}×{} view",
                        b.rows,
                        b.cols
                    );
                    let src = b
                        .ptr
                        .offset(item as isize * job.b_bs + pc as isize * b.rs + c0 as isize * b.cs);
                    let block = Block {
                        ptr: src,
                        width: cols,
                        along: b.rs,
                        across: b.cs,
                    };
                    pack::<L, NV>(dst, block, kc);
                }
                BSrc::Cols {
                    ptr,
                    offsets,
                    run,
                    run_stride,
                } => {
                    let blk = OffsetColsBlock {
                        ptr: ptr.offset(item as isize * job.b_bs),
                        col_off: offsets.offset(c0).get(),
                        width: cols,
                        run,
                        run_stride,
                        k0: pc,
                    };
                    pack_offset_cols(dst, blk, kc, nr);
                }
                BSrc::Rows { .. } => unreachable!("gemm: B by row offsets is read in place"),
            }
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
        with_tile::<L, _>(L::PATH, self.job.mode, self)
    }
}

impl TileFn for Chunk<'_> {
    type Output = ();

    #[inline(always)]
    fn call<L: Lanes, const MR: usize, const NV: usize, const EXACT: bool>(self) {
        let job = self.job;
        let plan = &job.plan;
        let (mr, nr, kcb) = (MR, NV * L::N, plan.blk.kc);
        let (item, r0, rows, c0, cols) = plan.chunk(self.index);

        // The chunk's packed A block (rows × kc in MR panels; none when A
        // came packed) and, when B is read in place, one zero-padded sliver
        // for its last partial columns; from the pool, so after the first
        // product of a shape they are reused, not allocated.
        let a_pack = Buffer::new(match job.a {
            ASrc::View(_) => rows.next_multiple_of(mr) * kcb * 4,
            ASrc::Packed(_) => 0,
        });
        let edge_pack = Buffer::new(if plan.direct_b { nr * kcb * 4 } else { 0 });
        let ep = edge_pack.f32_ptr();

        let b_item = if job.b_bs == 0 { 0 } else { item };
        // SAFETY: the caller of gemm guarantees every batch item of A, B and
        // C is valid; item < batch, r0 + rows ≤ m, c0 + cols ≤ n.
        let (a0, c0p) = unsafe {
            (
                match job.a {
                    ASrc::View(a) => a.ptr.offset(item as isize * job.a_bs + r0 as isize * a.rs),
                    ASrc::Packed(_) => std::ptr::null(),
                },
                job.c.offset(item * job.c_bs + r0 * job.ldc + c0),
            )
        };

        // A short last panel of A (rows % MR rows) runs over several full
        // slivers at once (`kernel::short_panel`) where B is packed or read
        // in place through a view: over the chunk's full slivers when there
        // are two or more (up to `wide_end`), in a pass of its own after
        // loop 2; loop 1 leaves it out there.
        let (short, wide_end) = {
            let short = rows % mr;
            let b_plain = job.b_packed.is_some() || matches!(job.b, BSrc::View(_));
            let most = short_slivers(short, mr);
            // Groups of 2..=most slivers cover any count ≥ 2 when most ≥ 3,
            // only even counts when most = 2 (the odd one goes to loop 1).
            let full = if most == 2 {
                cols / nr / 2 * 2
            } else {
                cols / nr
            };
            if short > 0 && most > 1 && b_plain && full >= 2 {
                (short, full * nr)
            } else {
                (short, 0)
            }
        };
        let short_ir = rows - short;

        // Whether the next packed B sliver is prefetched (see the panel
        // loop below): only a packed B too large to stay in the caches.
        let large_b = plan.k * plan.n_pad() * 4 >= PREFETCH_B_BYTES;

        // Loop 4: k blocks. Each output's accumulator is stored to C at the
        // end of a block and reloaded at the start of the next, which keeps
        // its terms in increasing k.
        let mut pc = 0;
        while pc < plan.k {
            let kc = kcb.min(plan.k - pc);
            let first = pc == 0 && !job.continued;
            let canonicalize = EXACT && pc + kc == plan.k;
            let ap = match job.a {
                // A PackedA of this path holds k block pc at pc·m_pad, its
                // panel of row r0 (a multiple of MR) at r0·kc.
                ASrc::Packed(packed) => packed.offset(pc * plan.m.next_multiple_of(mr) + r0 * kc),
                ASrc::View(a) => {
                    let ap = a_pack.f32_ptr();
                    debug_assert!(
                        r0 + rows <= a.rows && pc + kc <= a.cols,
                        "gemm: A block {r0}+{rows} × {pc}+{kc} outside a {}×{} view",
                        a.rows,
                        a.cols
                    );
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
                    ap.as_const()
                }
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
                        packed.offset(sliver).range(0, kc * nr) as *const f32,
                        nr,
                        std::ptr::null(),
                    )
                } else if let BSrc::Rows { ptr, offsets } = job.b {
                    // SAFETY: the caller's offsets give B's rows; column
                    // c0 + jr of each lies inside it, as do the next w.
                    let (src, offs) = unsafe {
                        (
                            ptr.offset(b_item as isize * job.b_bs + (c0 + jr) as isize),
                            offsets.offset(pc).get(),
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
                                    ep.range(p * nr, w),
                                    w,
                                );
                                std::ptr::write_bytes(ep.range(p * nr + w, nr - w), 0, nr - w);
                            }
                        }
                        (ep.range(0, kc * nr) as *const f32, nr, std::ptr::null())
                    }
                } else {
                    let BSrc::View(b) = job.b else {
                        unreachable!("gemm: B by column offsets is packed")
                    };
                    debug_assert!(
                        pc + kc <= b.rows && c0 + jr + w <= b.cols,
                        "gemm: B sliver {pc}+{kc} × {}+{w} outside a {}×{} view",
                        c0 + jr,
                        b.rows,
                        b.cols
                    );
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
                        (ep.range(0, kc * nr) as *const f32, nr, std::ptr::null())
                    }
                };
                // The packed B sliver that follows this one in the chunk
                // (the next columns of this k block, else the first
                // columns of the next k block): when the packed B is too
                // large to stay in the caches, its lines are asked for a
                // few per panel while this sliver computes, so that its
                // first panel does not wait on memory for them.
                let next_sliver = job.b_packed.filter(|_| large_b).and_then(|packed| {
                    let (npc, njr) = if jr + nr < cols {
                        (pc, jr + nr)
                    } else if pc + kc < plan.k {
                        (pc + kc, 0)
                    } else {
                        return None;
                    };
                    let nkc = kcb.min(plan.k - npc);
                    let at = b_item * plan.k * plan.n_pad() + plan.b_block(npc) + (c0 + njr) * nkc;
                    Some((packed.get().wrapping_add(at) as *const f32, nkc * nr))
                });
                let panels = rows.div_ceil(mr);
                let lines_per_panel = next_sliver.map_or(0, |(_, len)| {
                    (len * 4).div_ceil(CACHE_LINE).div_ceil(panels)
                });
                // Loop 1: MR-high panels of the packed A (streamed from L2).
                let mut ir = 0;
                let panel_end = if jr < wide_end { short_ir } else { rows };
                while ir < panel_end {
                    if let Some((next, len)) = next_sliver {
                        let first_line = (ir / mr) * lines_per_panel;
                        prefetch_lines(next, len, first_line, lines_per_panel);
                    }
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
                                    c0p.get().wrapping_add(ni * job.ldc + nj),
                                    mr.min(rows - ni),
                                    job.ldc,
                                );
                            }
                        }
                        // (Debug builds: the A panel and the C tile checked
                        // against the packed A's and C's extents; a packed
                        // B sliver was checked where it was chosen.)
                        tile::<L, MR, NV, EXACT>(
                            kc,
                            ap.range(ir * kc, kc * mr),
                            bp,
                            ldb,
                            offs,
                            c0p.range(ir * job.ldc + jr, (edge.rows - 1) * job.ldc + edge.cols),
                            job.ldc,
                            edge,
                        )
                    };
                    ir += mr;
                }
                jr += nr;
            }
            // The short panel's pass over the slivers before wide_end, in
            // groups of 2 to short_slivers (where one sliver would be left
            // alone, the group before it takes one fewer).
            let most = short_slivers(short, mr);
            let mut jr = 0;
            while jr < wide_end {
                let left = (wide_end - jr) / nr;
                let s = if left <= most {
                    left
                } else if left - most == 1 {
                    most - 1
                } else {
                    most
                };
                let edge = Edge {
                    rows: short,
                    cols: s * nr,
                    first,
                    canonicalize,
                };
                let (bp, ldb, sliver_stride) = match (job.b_packed, job.b) {
                    (Some(packed), _) => {
                        let at = b_item * plan.k * plan.n_pad() + plan.b_block(pc) + (c0 + jr) * kc;
                        (
                            packed.offset(at).range(0, s * kc * nr) as *const f32,
                            nr,
                            kc * nr,
                        )
                    }
                    // SAFETY: row pc, column c0 + jr of B's item lie inside
                    // B, and the s·nr columns from there (jr + s·nr ≤ cols).
                    (None, BSrc::View(b)) => unsafe {
                        let at =
                            b_item as isize * job.b_bs + pc as isize * b.rs + (c0 + jr) as isize;
                        (b.ptr.offset(at), b.rs as usize, nr)
                    },
                    _ => unreachable!("gemm: wide_end is 0 unless B is packed or a view"),
                };
                // SAFETY: inside run_on's trampoline for L; the panel at
                // short_ir is inside the packed A; the s slivers are full
                // (jr + s·nr ≤ wide_end ≤ cols); the tile's rows × s·nr of C
                // are inside this chunk's part of C.
                unsafe {
                    short_panel::<L, MR, NV, EXACT>(
                        short,
                        s,
                        kc,
                        ap.range(short_ir * kc, kc * mr),
                        bp,
                        ldb,
                        sliver_stride,
                        c0p.range(short_ir * job.ldc + jr, (short - 1) * job.ldc + s * nr),
                        job.ldc,
                        edge,
                    )
                };
                jr += s * nr;
            }
            pc += kc;
        }
    }
}

/// The packed B (of one batch item) from which on the next sliver is
/// prefetched. Measured on an AVX2 Zen 3 (512 KiB L2, 32 MiB L3;
/// `gemm_bench`, docs/performance.md): at 2048³ (16 MiB) the prefetch
/// gained about 5 %, at 1024³ (4 MiB) 1–6 %, while at 512³ (1 MiB) and
/// 256³, whose B stays in L2 or near L3, it cost 2–13 % (about 6 %).
const PREFETCH_B_BYTES: usize = 4 << 20;

/// Bytes per cache line (64 on every x86-64 and most arm64 cores; a
/// wrong guess only makes the prefetches below less useful).
const CACHE_LINE: usize = 64;

/// Ask for lines `first .. first + count` of the `len` floats at `p` to be
/// brought into the cache. The T1 hint asks for L2 where the core tells the
/// levels apart, so the sliver in use is not pushed out of L1 (on the Zen 3
/// it measured level with T0 or slightly ahead).
#[inline(always)]
fn prefetch_lines(p: *const f32, len: usize, first: usize, count: usize) {
    let floats_per_line = CACHE_LINE / 4;
    let end = (first + count).min(len.div_ceil(floats_per_line));
    for line in first..end {
        prefetch::<HINT_L2>(p.wrapping_add(line * floats_per_line));
    }
}

/// Ask for the rows of a tile of C to be brought into L1.
#[inline(always)]
fn prefetch_tile(c: *const f32, rows: usize, ldc: usize) {
    for i in 0..rows {
        prefetch::<HINT_L1>(c.wrapping_add(i * ldc));
    }
}

/// The prefetch hints (`_MM_HINT_T0`, `_MM_HINT_T1`); their values on other
/// targets are unused.
#[cfg(target_arch = "x86_64")]
const HINT_L1: i32 = std::arch::x86_64::_MM_HINT_T0;
#[cfg(target_arch = "x86_64")]
const HINT_L2: i32 = std::arch::x86_64::_MM_HINT_T1;
#[cfg(not(target_arch = "x86_64"))]
const HINT_L1: i32 = 0;
#[cfg(not(target_arch = "x86_64"))]
const HINT_L2: i32 = 0;

/// Ask for the line holding `p` to be brought into the cache level `HINT`
/// names: a hint only, with no architectural effect on any path (nothing
/// on targets other than x86-64).
#[inline(always)]
fn prefetch<const HINT: i32>(p: *const f32) {
    // SAFETY: prefetch never faults and has no architectural effect; SSE is
    // baseline on x86-64. Callers compute `p` with wrapping arithmetic, so
    // even a far address is not UB.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<HINT>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
