//! Blocking constants and the division of C into thread chunks.
//!
//! Everything here is a function of the kernel path and the shape only —
//! never of the thread count — and none of it can change a bit of the
//! result: blocking moves where an output's accumulator lives between k
//! blocks (a register or its f32 slot in C), never the order of its terms.

use crate::dispatch::KernelPath;

/// Register tile and k block of one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Blocking {
    /// Rows of the register tile (A panel width).
    pub mr: usize,
    /// Columns of the register tile (B sliver width), a multiple of the
    /// path's lanes.
    pub nr: usize,
    /// k block: a B sliver (kc × nr) stays in L1 while the A panels of a
    /// chunk stream past it.
    pub kc: usize,
}

/// The register tiles. The accumulators take MR·NR/N registers of the 16
/// (32 with AVX-512), leaving room for NR/N B registers, the broadcast A
/// value and the product of exact mode:
///
/// | path   | lanes | MR × NR | accumulators | kc  | B sliver in L1   |
/// |--------|-------|---------|--------------|-----|------------------|
/// | scalar | 1     | 4 × 4   | 16           | 256 | 4 KiB            |
/// | v128   | 4     | 4 × 12  | 12           | 256 | 12 KiB           |
/// | avx2   | 8     | 4 × 24  | 12           | 256 | 24 KiB           |
/// | avx512 | 16    | 8 × 48  | 24           | 128 | 24 KiB           |
///
/// MR = 4 or 8 makes the recurrent-step shape (M = 8) a whole number of
/// tiles. `loops::Chunk::run` instantiates the kernel with the same MR and
/// NR/N (checked there).
pub(super) const fn blocking(path: KernelPath) -> Blocking {
    match path {
        KernelPath::Scalar => Blocking { mr: 4, nr: 4, kc: 256 },
        KernelPath::V128 => Blocking { mr: 6, nr: 8, kc: 256 },
        KernelPath::Avx2 => Blocking { mr: 6, nr: 16, kc: 256 },
        KernelPath::Avx512 => Blocking { mr: 8, nr: 48, kc: 128 },
    }
}

/// Rows of a packed A block (a multiple of every MR): the block (MC × kc,
/// 120 KiB at kc = 256) stays in L2 while every B sliver of the chunk
/// passes over it.
pub(super) const MC: usize = 120;
/// Rows of C per chunk at most: several A blocks share one packed B block,
/// which is packed once per chunk and k block.
pub(super) const MC_CHUNK: usize = MC_CHUNK_BLOCKS * MC;
const MC_CHUNK_BLOCKS: usize = 4;
/// Columns of C per chunk at most (a multiple of every NR): the packed B
/// block (kc × NC, 384 KiB at kc = 256) is reused by each A panel.
pub(super) const NC: usize = 384;
/// Chunks wanted before tiles are cut smaller, so that a few threads have
/// work on a small product.
const MIN_CHUNKS: usize = 8;
/// A chunk is not cut below this many flops (2·rows·cols·k): smaller pieces
/// cost more in scheduling and repacking than they save.
const MIN_CHUNK_FLOPS: usize = 1 << 17;

/// One product (or batch of products) cut into chunks: each chunk is one
/// tile of `mc` × `nc` outputs of one batch item, and owns those outputs for
/// the whole k range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Plan {
    pub blk: Blocking,
    pub batch: usize,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// Chunk tile: rows (multiple of mr) and columns (multiple of nr).
    pub mc: usize,
    /// Rows of one packed A block inside a chunk.
    pub mc_block: usize,
    pub nc: usize,
    pub row_tiles: usize,
    pub col_tiles: usize,
}

impl Plan {
    pub fn new(path: KernelPath, batch: usize, m: usize, n: usize, k: usize) -> Plan {
        let blk = blocking(path);
        let mut mc = MC_CHUNK.min(m.next_multiple_of(blk.mr)).max(blk.mr);
        let mut nc = NC.min(n.next_multiple_of(blk.nr)).max(blk.nr);
        let chunks = |mc: usize, nc: usize| batch * m.div_ceil(mc) * n.div_ceil(nc);
        // Cut the longer side of the tile in two while there are few chunks
        // and the halves still carry enough work.
        while chunks(mc, nc) < MIN_CHUNKS {
            let (mc2, nc2) = if nc >= mc && nc > blk.nr {
                (mc, (nc / 2).next_multiple_of(blk.nr))
            } else if mc > blk.mr {
                ((mc / 2).next_multiple_of(blk.mr), nc)
            } else {
                break;
            };
            if 2 * mc2.min(m) * nc2.min(n) * k < MIN_CHUNK_FLOPS {
                break;
            }
            (mc, nc) = (mc2, nc2);
        }
        Plan { blk, batch, m, n, k, mc, mc_block: MC.min(mc), nc, row_tiles: m.div_ceil(mc), col_tiles: n.div_ceil(nc) }
    }

    pub fn chunks(&self) -> usize {
        self.batch * self.row_tiles * self.col_tiles
    }

    /// Chunk `i` → (batch item, first row, rows, first column, columns).
    pub fn chunk(&self, i: usize) -> (usize, usize, usize, usize, usize) {
        let per_item = self.row_tiles * self.col_tiles;
        let (item, t) = (i / per_item, i % per_item);
        let (ti, tj) = (t / self.col_tiles, t % self.col_tiles);
        let (r0, c0) = (ti * self.mc, tj * self.nc);
        (item, r0, self.mc.min(self.m - r0), c0, self.nc.min(self.n - c0))
    }
}
