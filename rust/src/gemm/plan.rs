//! The division of C into thread chunks (the tiles, k blocks and chunk
//! sizes MC × NC are each path's constants in `tile.rs`).
//!
//! Everything here is a function of the kernel path and the shape only —
//! never of the thread count — and none of it can change a bit of the
//! result: blocking moves where an output's accumulator lives between k
//! blocks (a register or its f32 slot in C), never the order of its terms.

use super::tile::{blocking, Blocking};
use crate::dispatch::KernelPath;

/// Chunks wanted before small products are cut finer.
const MIN_CHUNKS: usize = 8;
/// A chunk is not cut below this many flops (2·rows·cols·k): smaller pieces
/// cost more in scheduling than they save.
const MIN_CHUNK_FLOPS: usize = 1 << 18;
/// At most this many rows of C (per batch item): B is read in place rather
/// than packed when its rows are contiguous, since each B element then
/// serves too few rows to repay a copy.
const DIRECT_B_ROWS: usize = 16;

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
    pub nc: usize,
    pub row_tiles: usize,
    pub col_tiles: usize,
    /// B is read in place (contiguous rows, few rows of C); else it is
    /// packed once, before the chunks run.
    pub direct_b: bool,
}

/// `len` cut into `parts` near-equal pieces, each a multiple of `unit`:
/// the piece size and the number of pieces that size gives.
fn split(len: usize, parts: usize, unit: usize) -> (usize, usize) {
    let units = len.div_ceil(unit).max(1);
    let per = units.div_ceil(parts.clamp(1, units)) * unit;
    (per, len.div_ceil(per).max(1))
}

/// Multiply-adds of a (batch of) product(s), saturating.
fn macs(batch: usize, m: usize, n: usize, k: usize) -> usize {
    [batch, m, n, k]
        .iter()
        .fold(1usize, |acc, &f| acc.saturating_mul(f))
}

impl Plan {
    /// Multiply-adds of the whole call (saturating).
    pub fn macs(&self) -> usize {
        macs(self.batch, self.m, self.n, self.k)
    }

    pub fn new(
        path: KernelPath,
        batch: usize,
        m: usize,
        n: usize,
        k: usize,
        b_contiguous_rows: bool,
    ) -> Plan {
        let blk = blocking(path);
        let (mut row_parts, mut col_parts) = (m.div_ceil(blk.mc), n.div_ceil(blk.nc));
        let flops = 2 * m * n * k;
        // Few chunks: cut rows (free: B is shared), then columns, while the
        // pieces keep enough work. Not a product that runs on the calling
        // thread anyway (`gemm::run_job`, below INLINE_MACS): there more
        // chunks only repack A (each chunk packs its rows) and narrow the
        // chunks (an 8 × 512 × 128 product in 4 chunks of 32 columns).
        let max_rows = m.div_ceil(blk.mr);
        let max_cols = n.div_ceil(blk.nr);
        let serial = macs(batch, m, n, k) < crate::dispatch::INLINE_MACS;
        while !serial && batch * row_parts * col_parts < MIN_CHUNKS {
            let next = batch * row_parts * col_parts * 2;
            if flops * batch / next < MIN_CHUNK_FLOPS {
                break;
            }
            if row_parts * 2 <= max_rows && m / (row_parts * 2) >= 2 * blk.mr {
                row_parts *= 2;
            } else if col_parts * 2 <= max_cols {
                col_parts *= 2;
            } else {
                break;
            }
        }
        let (mc, row_tiles) = split(m, row_parts, blk.mr);
        let (nc, col_tiles) = split(n, col_parts, blk.nr);
        let direct_b = b_contiguous_rows && m <= DIRECT_B_ROWS;
        Plan {
            blk,
            batch,
            m,
            n,
            k,
            mc,
            nc,
            row_tiles,
            col_tiles,
            direct_b,
        }
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
        (
            item,
            r0,
            self.mc.min(self.m - r0),
            c0,
            self.nc.min(self.n - c0),
        )
    }

    /// Columns of the packed B: n rounded up to whole slivers.
    pub fn n_pad(&self) -> usize {
        self.n.next_multiple_of(self.blk.nr)
    }

    /// Offset in the packed B of k block `pc` (its sliver of column c0 at
    /// `+ c0·kc`), within one batch item of `k · n_pad` elements.
    pub fn b_block(&self, pc: usize) -> usize {
        pc * self.n_pad()
    }
}
