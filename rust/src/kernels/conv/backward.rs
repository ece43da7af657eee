//! The convolution's input gradient (a product, then col2im, per block of
//! output rows) and weight gradient (per item, in item order).

use super::im2col::col2im_rows;
use super::Conv2d;
use crate::dispatch::{par_chunks_macs, par_chunks_sized, Mode};
use crate::gemm::{gemm, MatRef, OffsetCols, PackedA, Product, Start, A, B};
use crate::ptr::Ptr;
use crate::simd::Token;
use crate::storage::{scratch_elems, Buffer};

/// `dx = ∂/∂x` of conv2d given `dy` (shape of the output): per block of
/// output rows, the product `dcols = Wᵀ · dy` over the block's columns,
/// then col2im of those columns. Every element of `dx` is written.
///
/// Each dcols entry is the same sum over the output channels whatever
/// columns its product holds, and the blocks run from the last output rows
/// to the first, so each input element still sees +0 then its taps in
/// (ky, kx) order ([`col2im_rows`]): the bits of one product over all
/// columns and one col2im. The block bounds the scratch (k × rows·ow
/// floats, at most 1 MiB unless one output row needs more) where the
/// whole dcols took k·p floats per item and thread (2.25 MiB for a
/// 32-channel 16 × 128 input, 576 MiB for a 64-channel 512 × 512 one),
/// and keeps it in the caches between the product and col2im
/// (docs/performance.md, "2026-12-07, 19:00 UTC").
///
/// With fewer (item, group) pairs than [`MIN_CHANNEL_SPLIT_CHUNKS`] a
/// group's input channels may be split too ([`channels_per_chunk`]): a
/// chunk owns its channels' planes of dx and their rows of Wᵀ and dcols,
/// and runs the whole block loop for them, so one large image runs its
/// products and its col2im on more than one thread without a wait between
/// blocks. An entry's sum and an element's taps do not depend on which
/// rows share a product, so neither split changes a bit.
///
/// # Safety
/// As [`forward`], with `dy` n·c_out·oh·ow and `dx` n·c_in·h·w.
pub unsafe fn input_grad(
    token: Token,
    mode: Mode,
    s: &Conv2d,
    dy: *const f32,
    wt: *const f32,
    dx: *mut f32,
) {
    let channels = channels_per_chunk(s);
    let rows = dcols_block_rows(s, channels);
    // SAFETY: forwarded.
    unsafe { input_grad_in_pieces(token, mode, s, dy, wt, dx, rows, channels) }
}

/// Floats of dcols per block of [`input_grad`] at most (1 MiB), unless
/// one output row needs more.
const DCOLS_BLOCK_FLOATS: usize = 256 * 1024;

/// Chunks [`input_grad`] and [`weight_grad`] want (for the threads) before
/// they split a group's input channels: the GEMM's own count (`gemm::plan`).
const MIN_CHANNEL_SPLIT_CHUNKS: usize = 8;

/// Rows of Wᵀ (taps of a group's input channels) per further chunk of
/// [`channels_per_chunk`]. Each chunk packs every block's dy again
/// (og × cols floats for its rows' og·cols multiply-adds per row); at one
/// thread a second chunk of the input gradient cost 0 % at k = 576 and 4 %
/// at k = 288, four chunks 5.5 % at k = 576, and a second chunk of the
/// weight gradient 1–2 % at k = 576 (docs/performance.md, "2026-12-07,
/// 21:00 UTC"), so a group gets one more chunk per 512 rows: about 2 % at
/// one thread at most.
const ROWS_PER_EXTRA_CHUNK: usize = 512;

/// Input channels per chunk of [`input_grad`] and [`weight_grad`]: all of
/// a group's while the (item, group) pairs give
/// [`MIN_CHANNEL_SPLIT_CHUNKS`] chunks; else as few as make up that many,
/// at most one more per [`ROWS_PER_EXTRA_CHUNK`] rows of Wᵀ, each keeping
/// at least `INLINE_MACS` multiply-adds (below that its products would run
/// on the calling thread anyway). A function of the shape only, like every
/// chunk size (docs/ops.md), and no split changes a bit.
pub(super) fn channels_per_chunk(s: &Conv2d) -> usize {
    let (pairs, cg) = (s.n * s.groups, s.cg().max(1));
    if pairs == 0 || pairs >= MIN_CHANNEL_SPLIT_CHUNKS {
        return cg;
    }
    let by_work = s.macs() / pairs / crate::dispatch::INLINE_MACS;
    let by_rows = 1 + s.k() / ROWS_PER_EXTRA_CHUNK;
    let parts = MIN_CHANNEL_SPLIT_CHUNKS
        .div_ceil(pairs)
        .min(by_rows)
        .min(by_work)
        .clamp(1, cg);
    cg.div_ceil(parts)
}

/// A group's input channels in chunks of `channels` (the last may hold
/// fewer; none when the group has no channels), and the index of
/// [`input_grad`]'s and [`weight_grad`]'s parallel loops over (item, group,
/// chunk), the chunks of one (item, group) adjacent.
#[derive(Clone, Copy)]
struct ChannelChunks {
    cg: usize,
    channels: usize,
    per_group: usize,
}

/// One chunk of [`ChannelChunks`]: item `ni`, group `g`, its index `part`
/// within the group, and its input channels `c0..c0 + cs` of the group.
struct Chunk {
    ni: usize,
    g: usize,
    part: usize,
    c0: usize,
    cs: usize,
}

impl ChannelChunks {
    /// Chunks of `channels` (clamped to 1..=cg) of `s`'s cg channels.
    fn new(s: &Conv2d, channels: usize) -> ChannelChunks {
        let cg = s.cg();
        let channels = channels.clamp(1, cg.max(1));
        ChannelChunks {
            cg,
            channels,
            per_group: cg.div_ceil(channels),
        }
    }

    /// Chunks of the parallel loop over `s.n` items and `s.groups` groups.
    fn count(&self, s: &Conv2d) -> usize {
        s.n * s.groups * self.per_group
    }

    /// Chunk `idx` of the parallel loop.
    fn chunk(&self, s: &Conv2d, idx: usize) -> Chunk {
        let (pair, part) = (idx / self.per_group, idx % self.per_group);
        let c0 = part * self.channels;
        Chunk {
            ni: pair / s.groups,
            g: pair % s.groups,
            part,
            c0,
            cs: self.cg.saturating_sub(c0).min(self.channels),
        }
    }
}

/// Output rows per block of [`input_grad`] for chunks of `channels` input
/// channels: as many as keep the block's dcols within
/// [`DCOLS_BLOCK_FLOATS`], at least one.
fn dcols_block_rows(s: &Conv2d, channels: usize) -> usize {
    // Saturating: a row too large for a usize gets one-row blocks, whose
    // scratch size `scratch_elems` then refuses.
    let per_row = channels.saturating_mul(s.kh * s.kw).saturating_mul(s.ow);
    (DCOLS_BLOCK_FLOATS / per_row.max(1)).clamp(1, s.oh.max(1))
}

/// [`input_grad`] with blocks of `rows` ≥ 1 output rows and chunks of
/// `channels` ≥ 1 input channels of a group (the tests run several of
/// each against the definition).
///
/// # Safety
/// As [`input_grad`].
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn input_grad_in_pieces(
    token: Token,
    mode: Mode,
    s: &Conv2d,
    dy: *const f32,
    wt: *const f32,
    dx: *mut f32,
    rows: usize,
    channels: usize,
) {
    let (og, p, ow, taps) = (s.og(), s.p(), s.ow, s.kh * s.kw);
    let (rows, cg) = (rows.max(1), s.cg());
    let chunks = ChannelChunks::new(s, channels);
    // Wᵀ's rows of each (group, channel chunk), packed once for every block
    // of every item: the loop's chunks of its first item.
    let packed: Vec<PackedA> = (0..s.groups * chunks.per_group)
        .map(|idx| {
            let Chunk { g, c0, cs, .. } = chunks.chunk(s, idx);
            let mut wt_c = s.weight(wt, g).t();
            wt_c.ptr = wt_c.ptr.wrapping_add(c0 * taps);
            wt_c.rows = cs * taps;
            // SAFETY: the group's weight rows lie inside `wt`, and the
            // chunk's rows of Wᵀ (its taps' columns of W) inside the group's.
            unsafe { PackedA::new(token, wt_c) }
        })
        .collect();
    let (dy, dx) = (Ptr::new(dy, s.output_len()), Ptr::new(dx, s.input_len()));
    par_chunks_macs(chunks.count(s), s.macs(), |idx| {
        let Chunk {
            ni,
            g,
            part,
            c0,
            cs,
        } = chunks.chunk(s, idx);
        // Checked: a block of one output row can be k·ow floats.
        let dcols = Buffer::new(scratch_elems(&[cs, taps, rows.min(s.oh), ow, 4]));
        let dc = dcols.f32_ptr();
        // SAFETY: the item's group of dy (og rows of p) and the chunk's
        // channels of dx (cs planes of h·w); each block's dcols (cs·taps ×
        // oys.len()·ow) fits the buffer; chunks write disjoint planes of dx.
        unsafe {
            let dxc = dx.offset((ni * s.c_in + g * cg + c0) * s.h * s.w);
            dxc.slice_mut(0, cs * s.h * s.w).fill(0.0);
            let dyg = dy.offset((ni * s.c_out + g * og) * p);
            let a = &packed[g * chunks.per_group + part];
            for blk in (0..s.oh.div_ceil(rows)).rev() {
                let oys = blk * rows..((blk + 1) * rows).min(s.oh);
                let cols = oys.len() * ow;
                let b = MatRef {
                    ptr: dyg.offset(oys.start * ow).get(),
                    rows: og,
                    cols,
                    rs: p as isize,
                    cs: 1,
                };
                let prod = Product::new(A::Packed(a), B::View(b), dc.get(), cols);
                gemm(token, mode, &prod);
                col2im_rows(s, cs, dc.as_const(), cols, oys, dxc);
            }
        }
    });
}

/// Element chunk of the item-order sum (a constant).
const SUM_CHUNK: usize = 4096;

/// `dw = ∂/∂W` of conv2d: per item `dY_n · cols_nᵀ`, added in item order.
///
/// Each item's product runs over its output positions (the GEMM's k) a
/// block of output rows at a time — the block's im2col columns stay in L2
/// instead of a whole item's going out to memory and back — the first block
/// starting at +0, the others continuing its accumulators (`Start`): the
/// same terms in the same increasing order as one product over all of them.
///
/// A stride-1 convolution read from a zero-padded copy of its input may
/// split a group's input channels like [`input_grad`]
/// ([`channels_per_chunk`]): a chunk pads its channels' planes and owns
/// their taps' columns of the item's part for every block, so one large
/// image runs on more than one thread without a wait between blocks. Each
/// entry's sum is the same whichever columns share its product.
///
/// # Safety
/// As [`forward`], with `dy` n·c_out·oh·ow and `dw` c_out·k.
pub unsafe fn weight_grad(
    token: Token,
    mode: Mode,
    s: &Conv2d,
    x: *const f32,
    dy: *const f32,
    dw: *mut f32,
) {
    let channels = if s.reads_padded_input() {
        channels_per_chunk(s)
    } else {
        s.cg()
    };
    // SAFETY: forwarded.
    unsafe { weight_grad_in_pieces(token, mode, s, x, dy, dw, channels) }
}

/// [`weight_grad`] with chunks of `channels` ≥ 1 input channels of a group
/// when it reads a padded copy of the input (all of them otherwise; the
/// tests run several against the definition).
///
/// # Safety
/// As [`weight_grad`].
pub(super) unsafe fn weight_grad_in_pieces(
    token: Token,
    mode: Mode,
    s: &Conv2d,
    x: *const f32,
    dy: *const f32,
    dw: *mut f32,
    channels: usize,
) {
    let (og, k, p, ow, cg) = (s.og(), s.k(), s.p(), s.ow, s.cg());
    let taps = s.kh * s.kw;
    let per = og * k;
    // From the pool (no allocation or page faults per call); every block is
    // written by its item's first product, or is the empty sum when the
    // output has no positions.
    let parts = if s.oh * s.ow == 0 {
        Buffer::zeroed(s.n * s.groups * per * 4)
    } else {
        Buffer::new(s.n * s.groups * per * 4)
    };
    let (x, dy) = (Ptr::new(x, s.input_len()), Ptr::new(dy, s.output_len()));
    let parts_ptr = Ptr::new(parts.as_ptr() as *mut f32, s.n * s.groups * per);
    let rows = s.forward_block_rows();
    // A stride-1 convolution packs the GEMM's B (the im2col block,
    // transposed) straight from a zero-padded copy of the input; the others
    // write the im2col block first.
    let in_place = s.reads_padded_input();
    let offsets = if in_place {
        s.padded_offsets()
    } else {
        Vec::new()
    };
    let chunks = ChannelChunks::new(s, if in_place { channels } else { cg });
    let (hp, wp) = s.padded_hw();
    par_chunks_macs(chunks.count(s), s.macs(), |idx| {
        let Chunk { ni, g, c0, cs, .. } = chunks.chunk(s, idx);
        let pair = ni * s.groups + g;
        let scratch = Buffer::new(if in_place {
            scratch_elems(&[cs, hp, wp, 4])
        } else if s.pointwise() {
            0
        } else {
            scratch_elems(&[k, rows, ow, 4])
        });
        let sp = scratch.f32_ptr();
        // SAFETY: as for `forward`; each (item, group) writes its own block
        // of `parts`, each chunk of it its channels' taps' columns. In
        // place, the padded copy holds the chunk's planes and every B
        // element its offsets reach (the first cs·taps of the group's, which
        // start at the copy's first plane) lies inside it (as in
        // `forward_padded`).
        unsafe {
            let part = parts_ptr.offset(pair * per + c0 * taps).get();
            if in_place {
                s.pad_channels(x, ni, g, c0..c0 + cs, sp);
            }
            for (blk, y0) in (0..s.oh).step_by(rows.max(1)).enumerate() {
                // The first block starts the item's sums, the others continue them.
                let start = if blk == 0 {
                    Start::Zero
                } else {
                    Start::Continue
                };
                let oys = y0..(y0 + rows).min(s.oh);
                let (q0, pc) = (oys.start * ow, oys.len() * ow);
                let a = MatRef {
                    ptr: dy.offset((ni * s.c_out + g * og) * p + q0).get(),
                    rows: og,
                    cols: pc,
                    rs: p as isize,
                    cs: 1,
                };
                if in_place {
                    let b = OffsetCols {
                        ptr: sp.offset(y0 * wp).get(),
                        offsets: &offsets[..cs * taps],
                        rows: pc,
                        run: ow,
                        run_stride: wp as isize,
                    };
                    let prod = Product::new(A::View(a), B::OffsetCols(b), part, k);
                    gemm(token, mode, &prod.start(start));
                    continue;
                }
                let cols = s.block_cols(x, ni, g, oys, sp);
                gemm(
                    token,
                    mode,
                    &Product::views(a, cols.t(), part, k).start(start),
                );
            }
        }
    });
    let total = s.groups * per;
    let (parts_in, dw, n, groups) = (parts_ptr.as_const(), Ptr::new(dw, total), s.n, s.groups);
    // n terms per element of dw.
    let work = total.saturating_mul(n);
    par_chunks_sized(total.div_ceil(SUM_CHUNK), work, |chunk| {
        for e in chunk * SUM_CHUNK..((chunk + 1) * SUM_CHUNK).min(total) {
            let (g, r) = (e / per, e % per);
            let mut acc = 0f32;
            for ni in 0..n {
                // SAFETY: inside `parts`.
                acc += unsafe { parts_in.read((ni * groups + g) * per + r) };
            }
            // SAFETY: e < c_out·k.
            unsafe { dw.write(e, acc) };
        }
    });
}
