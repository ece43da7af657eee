//! Packing: copy a block of A or B into the contiguous panel layout the
//! microkernel streams through, reading the operand through its strides (so
//! transposed and strided views cost no extra copy).
//!
//! Both operands are packed the same way, as panels of a fixed width `W`
//! across and `kc` steps along k:
//!
//! * A block (rows × kc) → panels of W = MR rows: `dst[p*MR + i] = A[i, p]`;
//! * B block (kc × cols) → slivers of W = NR columns: `dst[p*NR + j] = B[p, j]`.
//!
//! A last panel narrower than W is padded with +0. The padded lanes only
//! feed accumulators of outputs that do not exist, which are discarded.

use crate::ptr::Ptr;
use crate::simd::Lanes;

/// Steps of a column-major A packed side by side (see [`pack`]). Measured
/// on the AVX2 Zen 3 at 2048³ with A transposed (`AT=1 gemm_bench`, perf):
/// the packing's share of the product fell from 8.3 % (step by step) to
/// 3.3 % with 8; 4 and 16 measured no better than 8 in timings too noisy
/// to tell them apart.
const A_STEPS: usize = 8;

/// A strided block of an operand, seen from the packing: `len` steps along k
/// (stride `along`) and `width` elements across (stride `across`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Block {
    pub ptr: *const f32,
    pub width: usize,
    pub along: isize,
    pub across: isize,
}

/// Pack `block` (all its `width` elements across, `kc` along) into panels of
/// width `w = V·L::N` (A: `L = f32`, `V = MR`; B: the path's lanes, `V =
/// NR/N`); panel `t` starts at `dst + t*w*kc`.
///
/// # Safety
/// `block` must be valid for every element it spans; `dst` must be valid for
/// `width.div_ceil(w) * w * kc` writes (its extent, asserted in debug
/// builds); `L`'s CPU features must be enabled.
#[inline(always)]
pub(super) unsafe fn pack<L: Lanes, const V: usize>(dst: Ptr<*mut f32>, block: Block, kc: usize) {
    let w = V * L::N;
    let full = block.width / w;
    if block.across == 1 && full > 0 && L::N == 1 {
        // Contiguous across, scalar lanes (column-major A, as in the weight
        // gradient xᵀ·g, w = MR; and B on the scalar path): A_STEPS steps
        // at a time, panel by panel. The steps lie far apart in memory (a
        // page or more each for a large A), so reading a few of them side
        // by side keeps that many misses in flight where a walk step by
        // step waited on one at a time; and each panel then receives
        // A_STEPS·w contiguous floats at once rather than w scattered ones.
        for p0 in (0..kc).step_by(A_STEPS) {
            for t in 0..full {
                for p in p0..(p0 + A_STEPS).min(kc) {
                    // SAFETY: step p < kc; elements t·w..(t+1)·w < width of
                    // it; the panel t holds step p at t·w·kc + p·w. One
                    // copy of a constant size, which the compiler does with
                    // vector moves.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            block.ptr.offset(p as isize * block.along).add(t * w),
                            dst.range(t * w * kc + p * w, w),
                            w,
                        );
                    }
                }
            }
        }
    } else if block.across == 1 && full > 0 {
        // Contiguous across, the path's lanes (row-major B, packed once per
        // call): walk the source line by line (one contiguous read per
        // step, whatever the stride between steps) and deal each line out
        // to the full panels.
        for p in 0..kc {
            // SAFETY: step p < kc; elements t·w..(t+1)·w < width of it; the
            // panel t holds step p at t·w·kc + p·w.
            unsafe {
                let src = block.ptr.offset(p as isize * block.along);
                for t in 0..full {
                    for v in 0..V {
                        L::load(src.add(t * w + v * L::N))
                            .store(dst.range(t * w * kc + p * w + v * L::N, L::N));
                    }
                }
            }
        }
    } else if block.along == 1 && full > 0 {
        // Contiguous along k (row-major A, column-major B): a transpose.
        for t in 0..full {
            // SAFETY: lines t·w..(t+1)·w of the block, steps p < kc; panel t
            // of dst.
            unsafe {
                let src = block.ptr.offset((t * w) as isize * block.across);
                transpose(dst.offset(t * w * kc), src, w, w, kc, block.across);
            }
        }
    } else {
        for t in 0..full {
            // SAFETY: panel t is inside the block and inside dst.
            unsafe {
                let src = block.ptr.offset((t * w) as isize * block.across);
                panel(
                    dst.offset(t * w * kc),
                    src,
                    w,
                    w,
                    kc,
                    block.along,
                    block.across,
                );
            }
        }
    }
    let t0 = full * w;
    if t0 < block.width {
        // The last, partial panel (zero padded).
        // SAFETY: as above, for the panel starting at element t0.
        unsafe {
            let src = block.ptr.offset(t0 as isize * block.across);
            panel(
                dst.offset(full * w * kc),
                src,
                block.width - t0,
                w,
                kc,
                block.along,
                block.across,
            );
        }
    }
}

/// One panel: `dst[p*w + t] = src[p*along + t*across]` for t < cols, +0 for
/// cols ≤ t < w.
///
/// # Safety
/// As [`pack`], for one panel.
#[inline(never)]
unsafe fn panel(
    dst: Ptr<*mut f32>,
    src: *const f32,
    cols: usize,
    w: usize,
    kc: usize,
    along: isize,
    across: isize,
) {
    // SAFETY (whole body): every read is (p, t) with p < kc, t < cols, inside
    // the block; every write is below kc*w.
    unsafe {
        if across == 1 {
            for p in 0..kc {
                std::ptr::copy_nonoverlapping(
                    src.offset(p as isize * along),
                    dst.range(p * w, cols),
                    cols,
                );
            }
        } else if along == 1 {
            transpose(dst, src, cols, w, kc, across);
        } else {
            for p in 0..kc {
                let s = src.offset(p as isize * along);
                for t in 0..cols {
                    dst.write(p * w + t, *s.offset(t as isize * across));
                }
            }
        }
        if cols < w {
            // A few zeros per step (w − cols < w ≤ 64): stored one by one,
            // not through a memset call per step (the 2-row last panel of
            // an M = 8 product spent as long in those calls as in packing).
            for p in 0..kc {
                for t in cols..w {
                    dst.write(p * w + t, 0.0);
                }
            }
        }
    }
}

/// `dst[p*w + t] = src[t*across + p]` for t < cols, p < kc: the lines of a
/// block contiguous along k, transposed into a panel.
///
/// # Safety
/// `src` valid for `cols` lines of `kc` elements at stride `across`; `dst`
/// valid for `kc·w` writes; cols ≤ w.
#[inline(always)]
unsafe fn transpose(
    dst: Ptr<*mut f32>,
    src: *const f32,
    cols: usize,
    w: usize,
    kc: usize,
    across: isize,
) {
    // SAFETY: line t is at src + t·across, as the caller promised.
    unsafe { transpose_lines(dst, |t| src.offset(t as isize * across), cols, w, kc) }
}

/// `dst[p*w + t] = line(t)[p]` for t < cols, p < kc: lines contiguous
/// along k, wherever each starts, transposed into a panel. On x86-64, 4 × 4
/// blocks go through SSE shuffles (baseline, pure data movement: the bits
/// are copied, never computed); the rest element by element.
///
/// # Safety
/// `line(t)` valid for `kc` reads for every t < cols; `dst` valid for
/// `kc·w` writes; cols ≤ w.
#[inline(always)]
pub(super) unsafe fn transpose_lines(
    dst: Ptr<*mut f32>,
    line: impl Fn(usize) -> *const f32,
    cols: usize,
    w: usize,
    kc: usize,
) {
    #[cfg(target_arch = "x86_64")]
    let (t0, p0) = (cols / 4 * 4, kc / 4 * 4);
    #[cfg(not(target_arch = "x86_64"))]
    let (t0, p0) = (0, 0);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        for t in (0..t0).step_by(4) {
            let starts = [line(t), line(t + 1), line(t + 2), line(t + 3)];
            for p in (0..p0).step_by(4) {
                // SAFETY: lines t..t+4 < cols, steps p..p+4 < kc of them;
                // rows p..p+4, columns t..t+4 < w of dst; SSE is baseline.
                unsafe {
                    let (r0, r1, r2, r3) = (
                        _mm_loadu_ps(starts[0].add(p)),
                        _mm_loadu_ps(starts[1].add(p)),
                        _mm_loadu_ps(starts[2].add(p)),
                        _mm_loadu_ps(starts[3].add(p)),
                    );
                    let lo01 = _mm_unpacklo_ps(r0, r1); // r0[0] r1[0] r0[1] r1[1]
                    let hi01 = _mm_unpackhi_ps(r0, r1); // r0[2] r1[2] r0[3] r1[3]
                    let lo23 = _mm_unpacklo_ps(r2, r3);
                    let hi23 = _mm_unpackhi_ps(r2, r3);
                    _mm_storeu_ps(dst.range(p * w + t, 4), _mm_movelh_ps(lo01, lo23));
                    _mm_storeu_ps(dst.range((p + 1) * w + t, 4), _mm_movehl_ps(lo23, lo01));
                    _mm_storeu_ps(dst.range((p + 2) * w + t, 4), _mm_movelh_ps(hi01, hi23));
                    _mm_storeu_ps(dst.range((p + 3) * w + t, 4), _mm_movehl_ps(hi23, hi01));
                }
            }
        }
    }
    // The remainder: steps p0.. of the first t0 lines, then the lines t0...
    for t in 0..cols {
        let from = if t < t0 { p0 } else { 0 };
        let s = line(t);
        // SAFETY: line t < cols, steps < kc; dst below kc·w.
        unsafe {
            for p in from..kc {
                dst.write(p * w + t, *s.add(p));
            }
        }
    }
}

/// A block of a B operand whose columns are read at listed offsets, each
/// column laid out in runs:
/// `B[q, j] = ptr[col_off[j] + (q / run)·run_stride + q % run]`
/// (a convolution's im2col matrix transposed, over a padded input: column
/// j the tap, q the output position, a run one output row).
#[derive(Clone, Copy)]
pub(super) struct OffsetColsBlock {
    pub ptr: *const f32,
    /// The offsets of the block's first column onwards.
    pub col_off: *const isize,
    pub width: usize,
    pub run: usize,
    pub run_stride: isize,
    /// The block's first row (q).
    pub k0: usize,
}

/// Pack `kc` rows of `blk` into slivers of `w` columns (as [`pack`] packs
/// B), the last zero padded: each sliver is transposed run by run from its
/// columns' lines.
///
/// # Safety
/// Every `B[q, j]` of the block must be valid to read; `dst` valid for
/// `width.div_ceil(w)·w·kc` writes (its extent, asserted in debug builds).
pub(super) unsafe fn pack_offset_cols(
    dst: Ptr<*mut f32>,
    blk: OffsetColsBlock,
    kc: usize,
    w: usize,
) {
    for s in 0..blk.width.div_ceil(w) {
        let cols = w.min(blk.width - s * w);
        // SAFETY: sliver s of dst; its columns' offsets lie in col_off.
        unsafe {
            let (d, offs) = (dst.offset(s * w * kc), blk.col_off.add(s * w));
            let mut p = 0;
            while p < kc {
                let q = blk.k0 + p;
                let len = (blk.run - q % blk.run).min(kc - p);
                let base = blk
                    .ptr
                    .offset((q / blk.run) as isize * blk.run_stride + (q % blk.run) as isize);
                transpose_lines(d.offset(p * w), |t| base.offset(*offs.add(t)), cols, w, len);
                p += len;
            }
            if cols < w {
                for p in 0..kc {
                    std::ptr::write_bytes(d.range(p * w + cols, w - cols), 0, w - cols);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pack_5x3(dst_len: usize) -> Vec<f32> {
        // A 5-wide, 3-step block (row-major, along k contiguous) into panels
        // of 4: two panels of 4·3, the second zero padded.
        let src: Vec<f32> = (0..15).map(|v| v as f32).collect();
        let mut dst = vec![f32::NAN; 24];
        let block = Block {
            ptr: src.as_ptr(),
            width: 5,
            along: 1,
            across: 3,
        };
        // SAFETY: the block spans the 15 source elements; dst holds 24
        // (the extent given may be shorter: the debug check must refuse).
        unsafe { pack::<f32, 4>(Ptr::new(dst.as_mut_ptr(), dst_len), block, 3) };
        dst
    }

    #[test]
    fn packs_panels_with_zero_padding() {
        let d = pack_5x3(24);
        // dst[t·w·kc + p·w + i] = A[t·w + i, p] = src[(t·w + i)·3 + p].
        for p in 0..3 {
            for i in 0..8 {
                let want = if i < 5 { (i * 3 + p) as f32 } else { 0.0 };
                let t = i / 4;
                assert_eq!(d[t * 12 + p * 4 + i % 4], want, "row {i} step {p}");
            }
        }
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "outside an extent")]
    fn a_destination_one_short_is_caught_in_debug_builds() {
        pack_5x3(23);
    }
}
