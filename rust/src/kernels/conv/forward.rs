//! The convolution's forward: through im2col blocks, or reading a
//! zero-padded copy of the input in place.

use super::Conv2d;
use crate::dispatch::{par_chunks_macs, Mode};
use crate::gemm::{gemm, tile_cols, OffsetRows, PackedA, Product, A, B};
use crate::ptr::Ptr;
use crate::simd::Token;
use crate::storage::Buffer;

/// `out = conv2d(x, wt) (+ bias)`.
///
/// # Safety
/// `x` holds n·c_in·h·w, `wt` c_out·k, `bias` (if any) c_out, `out`
/// n·c_out·oh·ow elements; `out` overlaps nothing else.
pub unsafe fn forward(
    token: Token,
    mode: Mode,
    s: &Conv2d,
    x: *const f32,
    wt: *const f32,
    bias: Option<*const f32>,
    out: *mut f32,
) {
    if s.reads_padded_input() {
        // SAFETY: forwarded from the caller.
        unsafe { forward_padded(token, mode, s, x, wt, bias, out) }
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { forward_im2col(token, mode, s, x, wt, bias, out) }
    }
}

/// Add each output channel's bias to its `pc` outputs at row stride `p`
/// (one IEEE add per output, after its sum).
///
/// # Safety
/// `c` valid for og rows of pc at stride p; `bias` for og values.
unsafe fn add_bias(c: *mut f32, bias: *const f32, og: usize, p: usize, pc: usize) {
    for o in 0..og {
        // SAFETY: as the caller promised.
        unsafe {
            let bv = *bias.add(o);
            for v in std::slice::from_raw_parts_mut(c.add(o * p), pc) {
                *v += bv;
            }
        }
    }
}

/// The forward of a stride-1 convolution without an im2col matrix: the
/// input is copied once, zero padded, per (item, group), and the product
/// reads its im2col rows in place (`B::OffsetRows`): row (c, ky, kx) of
/// output row oy is the padded row oy + ky·dh of channel c from column
/// kx·dw on. The weight is packed once per call. The terms (the padding's
/// +0 included) and their order are those of the im2col product, so the
/// bits are too.
///
/// Two shapes of the same product, chosen by how many columns of C each
/// computes for nothing:
/// * per output row (a batch of oh products of ow columns), writing the
///   output in place: ow rounded up to the register tile's width NR, so a
///   third of the work is wasted at ow = 64 with NR = 48;
/// * all rows at once over the padded row width (one product of
///   (oh − 1)·wp + ow columns, position q = oy·wp + ox reading the padded
///   input at q + offset): the wp − ow columns between rows read across the
///   row's end and are dropped when the result is copied out (with the
///   bias). Each real output reads the same elements in the same order as
///   in the first shape.
///
/// # Safety
/// As [`forward`], with stride (1, 1).
pub(super) unsafe fn forward_padded(
    token: Token,
    mode: Mode,
    s: &Conv2d,
    x: *const f32,
    wt: *const f32,
    bias: Option<*const f32>,
    out: *mut f32,
) {
    let (og, cg, p, ow, oh) = (s.og(), s.cg(), s.p(), s.ow, s.oh);
    let (hp, wp) = s.padded_hw();
    let offsets = s.padded_offsets();
    let wide = wide_product(s, token.path());
    // Columns of the one wide product: the last row's wrap-around columns
    // are not computed, so no read passes the end of the padded planes.
    let n_wide = (oh - 1) * wp + ow;
    // SAFETY: each group's weight rows lie inside `wt`.
    let packed: Vec<PackedA> = (0..s.groups)
        .map(|g| unsafe { PackedA::new(token, s.weight(wt, g)) })
        .collect();
    let (x, out) = (Ptr::new(x, s.input_len()), Ptr::new(out, s.output_len()));
    let bias = bias.map(|b| Ptr::new(b, s.c_out));
    par_chunks_macs(s.n * s.groups, s.macs(), |idx| {
        let (ni, g) = (idx / s.groups, idx % s.groups);
        let padded = Buffer::new(cg * hp * wp * 4);
        let xp = padded.f32_ptr();
        // SAFETY: the padded copy holds cg planes of hp × wp; each (item,
        // group) writes its own og × p block of `out`. The offsets keep
        // every read of the product inside the padded planes: output
        // (oy, ox) of tap (c, ky, kx) reads row oy + ky·dh < hp, column
        // ox + kx·dw < wp, and in the wide product column q < n_wide reads
        // at most q + offset ≤ (oh − 1)·wp + ow − 1 + (cg − 1)·hp·wp +
        // (kh − 1)·dh·wp + (kw − 1)·dw = cg·hp·wp − 1.
        unsafe {
            s.pad_group(x, ni, g, xp);
            let c = out.offset((ni * s.c_out + g * og) * p);
            let bias = bias.map(|b| b.offset(g * og).get());
            if wide {
                let b = OffsetRows {
                    ptr: xp.get(),
                    offsets: &offsets,
                    cols: n_wide,
                };
                let tmp = Buffer::new(og * n_wide * 4);
                let t = tmp.f32_ptr();
                let prod = Product::new(A::Packed(&packed[g]), B::OffsetRows(b), t.get(), n_wide);
                gemm(token, mode, &prod);
                copy_rows_out(t.as_const(), n_wide, wp, c, og, oh, ow, bias);
            } else {
                let b = OffsetRows {
                    ptr: xp.get(),
                    offsets: &offsets,
                    cols: ow,
                };
                // Output row oy is item oy: B's rows wp further on, C's ow.
                let prod = Product::new(A::Packed(&packed[g]), B::OffsetRows(b), c.get(), p);
                gemm(token, mode, &prod.batched(oh, 0, wp as isize).c_stride(ow));
                if let Some(b) = bias {
                    add_bias(c.get(), b, og, p, p);
                }
            }
        }
    });
}

/// Whether [`forward_padded`] runs one product over the padded row width
/// on `path`: when that computes fewer columns for nothing (wp − ow per
/// row) than rounding each row's ow columns up to the tile width would.
/// (A row's last partial tile runs on the fewest whole registers, so it
/// wastes less than that, but is slower per column than a full tile; the
/// rule is the one measured on 2026-12-05, docs/performance.md.)
pub(super) fn wide_product(s: &Conv2d, path: crate::dispatch::KernelPath) -> bool {
    let (_, wp) = s.padded_hw();
    wp - s.ow < s.ow.next_multiple_of(tile_cols(path)) - s.ow
}

/// `c[o][oy·ow + ox] = t[o][oy·wp + ox] (+ bias[o])`: the wide product's
/// real columns, each output's bias one IEEE add after its sum.
///
/// # Safety
/// `t` holds og rows of `ld` ≥ (oh − 1)·wp + ow; `c` og·oh·ow elements;
/// `bias` (if any) og values.
#[allow(clippy::too_many_arguments)]
unsafe fn copy_rows_out(
    t: Ptr<*const f32>,
    ld: usize,
    wp: usize,
    c: Ptr<*mut f32>,
    og: usize,
    oh: usize,
    ow: usize,
    bias: Option<*const f32>,
) {
    for o in 0..og {
        // SAFETY: as the caller promised.
        let bv = bias.map(|b| unsafe { *b.add(o) });
        for oy in 0..oh {
            // SAFETY: row o of t from column oy·wp, and row oy of channel o
            // of c, each ow elements, lie inside the caller's extents.
            let (src, dst) = unsafe {
                (
                    t.slice(o * ld + oy * wp, ow),
                    c.slice_mut((o * oh + oy) * ow, ow),
                )
            };
            match bv {
                Some(b) => {
                    for (d, v) in dst.iter_mut().zip(src) {
                        *d = *v + b;
                    }
                }
                None => dst.copy_from_slice(src),
            }
        }
    }
}

/// The forward through an im2col matrix, a block of output rows at a time.
///
/// # Safety
/// As [`forward`].
unsafe fn forward_im2col(
    token: Token,
    mode: Mode,
    s: &Conv2d,
    x: *const f32,
    wt: *const f32,
    bias: Option<*const f32>,
    out: *mut f32,
) {
    let (og, p, k, ow) = (s.og(), s.p(), s.k(), s.ow);
    let rows = s.forward_block_rows();
    let blocks = s.oh.div_ceil(rows).max(1);
    let (x, wt) = (Ptr::new(x, s.input_len()), Ptr::new(wt, s.weight_len()));
    let out = Ptr::new(out, s.output_len());
    let bias = bias.map(|b| Ptr::new(b, s.c_out));
    par_chunks_macs(s.n * s.groups * blocks, s.macs(), |idx| {
        let (ni, g, blk) = (
            idx / (s.groups * blocks),
            idx / blocks % s.groups,
            idx % blocks,
        );
        let oys = blk * rows..((blk + 1) * rows).min(s.oh);
        let (q0, pc) = (oys.start * ow, oys.len() * ow);
        // SAFETY: the pointers are valid for the sizes the caller promised;
        // each (item, group, block) writes its own og × pc block of `out`.
        unsafe {
            let c = out.offset((ni * s.c_out + g * og) * p + q0).get();
            let scratch = Buffer::new(if s.pointwise() { 0 } else { k * pc * 4 });
            let cols = s.block_cols(x, ni, g, oys, scratch.f32_ptr());
            gemm(
                token,
                mode,
                &Product::views(s.weight(wt.get(), g), cols, c, p),
            );
            if let Some(b) = bias {
                add_bias(c, b.offset(g * og).get(), og, p, pc);
            }
        }
    });
}
