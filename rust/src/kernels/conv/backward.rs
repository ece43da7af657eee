//! The convolution's input gradient (a product, then col2im, per block of
//! output rows) and weight gradient (per item, in item order).

use super::im2col::col2im_rows;
use super::Conv2d;
use crate::dispatch::{par_chunks_macs, par_chunks_sized, Mode};
use crate::gemm::{gemm, MatRef, OffsetCols, PackedA, Product, Start, A, B};
use crate::ptr::Ptr;
use crate::simd::Token;
use crate::storage::Buffer;

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
    // SAFETY: forwarded.
    unsafe { input_grad_in_blocks(token, mode, s, dy, wt, dx, dcols_block_rows(s)) }
}

/// Floats of dcols per block of [`input_grad`] at most (1 MiB), unless
/// one output row needs more.
const DCOLS_BLOCK_FLOATS: usize = 256 * 1024;

/// Output rows per block of [`input_grad`]: as many as keep the block's
/// dcols within [`DCOLS_BLOCK_FLOATS`], at least one.
fn dcols_block_rows(s: &Conv2d) -> usize {
    (DCOLS_BLOCK_FLOATS / (s.k() * s.ow).max(1)).clamp(1, s.oh.max(1))
}

/// [`input_grad`] with blocks of `rows` ≥ 1 output rows (the tests run
/// several block heights against the definition).
///
/// # Safety
/// As [`input_grad`].
pub(super) unsafe fn input_grad_in_blocks(
    token: Token,
    mode: Mode,
    s: &Conv2d,
    dy: *const f32,
    wt: *const f32,
    dx: *mut f32,
    rows: usize,
) {
    let (og, k, p, ow) = (s.og(), s.k(), s.p(), s.ow);
    let rows = rows.max(1);
    // SAFETY: each group's weight rows lie inside `wt`; packed once as Wᵀ
    // (k × og) for every block of every item.
    let packed: Vec<PackedA> = (0..s.groups)
        .map(|g| unsafe { PackedA::new(token, s.weight(wt, g).t()) })
        .collect();
    let (dy, dx) = (Ptr::new(dy, s.output_len()), Ptr::new(dx, s.input_len()));
    par_chunks_macs(s.n * s.groups, s.macs(), |idx| {
        let (ni, g) = (idx / s.groups, idx % s.groups);
        let dcols = Buffer::new(k * rows.min(s.oh) * ow * 4);
        let dc = dcols.f32_ptr();
        // SAFETY: the item's group of dy (og rows of p) and of dx (cg
        // planes of h·w); each block's dcols (k × oys.len()·ow) fits the
        // buffer; (item, group) chunks write disjoint parts of dx.
        unsafe {
            let dxg = dx.offset((ni * s.c_in + g * s.cg()) * s.h * s.w);
            dxg.slice_mut(0, s.cg() * s.h * s.w).fill(0.0);
            let dyg = dy.offset((ni * s.c_out + g * og) * p);
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
                let prod = Product::new(A::Packed(&packed[g]), B::View(b), dc.get(), cols);
                gemm(token, mode, &prod);
                col2im_rows(s, dc.as_const(), cols, oys, dxg);
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
    let (og, k, p, ow) = (s.og(), s.k(), s.p(), s.ow);
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
    let (hp, wp) = s.padded_hw();
    par_chunks_macs(s.n * s.groups, s.macs(), |idx| {
        let (ni, g) = (idx / s.groups, idx % s.groups);
        let scratch = Buffer::new(if in_place {
            s.cg() * hp * wp * 4
        } else if s.pointwise() {
            0
        } else {
            k * rows * ow * 4
        });
        let sp = scratch.f32_ptr();
        // SAFETY: as for `forward`; each (item, group) writes its own block
        // of `parts`. In place, the padded copy holds the group's planes and
        // every B element the offsets reach lies inside it (as in
        // `forward_padded`).
        unsafe {
            let part = parts_ptr.offset(idx * per).get();
            if in_place {
                s.pad_group(x, ni, g, sp);
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
                        offsets: &offsets,
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
