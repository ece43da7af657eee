//! The convolution's input gradient (a product, then col2im) and weight
//! gradient (per item, in item order).

use super::im2col::col2im;
use super::Conv2d;
use crate::dispatch::{par_chunks_macs, par_chunks_sized, Mode};
use crate::gemm::{gemm, MatRef, OffsetCols, Product, Start, A, B};
use crate::ptr::Ptr;
use crate::simd::Token;
use crate::storage::Buffer;

/// `dx = ∂/∂x` of conv2d given `dy` (shape of the output): GEMM, then
/// col2im. Every element of `dx` is written.
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
    let (og, k, p) = (s.og(), s.k(), s.p());
    let (dy, wt) = (Ptr::new(dy, s.output_len()), Ptr::new(wt, s.weight_len()));
    let dx = Ptr::new(dx, s.input_len());
    par_chunks_macs(s.n * s.groups, s.macs(), |idx| {
        let (ni, g) = (idx / s.groups, idx % s.groups);
        let dcols = Buffer::new(k * p * 4);
        // SAFETY: as for `forward`; each (item, group) writes the planes of
        // its own group's input channels.
        unsafe {
            let b = MatRef {
                ptr: dy.offset((ni * s.c_out + g * og) * p).get(),
                rows: og,
                cols: p,
                rs: p as isize,
                cs: 1,
            };
            let dc = dcols.f32_ptr();
            gemm(
                token,
                mode,
                &Product::views(s.weight(wt.get(), g).t(), b, dc.get(), p),
            );
            col2im(
                s,
                dc.as_const(),
                dx.offset((ni * s.c_in + g * s.cg()) * s.h * s.w),
            );
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
