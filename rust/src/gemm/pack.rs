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
/// width `w`; panel `t` starts at `dst + t*w*kc`.
///
/// # Safety
/// `block` must be valid for every element it spans; `dst` must be valid for
/// `width.div_ceil(w) * w * kc` writes.
#[inline]
pub(super) unsafe fn pack(dst: *mut f32, block: Block, kc: usize, w: usize) {
    let mut t0 = 0;
    let mut out = dst;
    while t0 < block.width {
        let cols = w.min(block.width - t0);
        // SAFETY: element t0 across is inside the block; the panel at `out`
        // is inside dst (w*kc per panel, div_ceil(width, w) panels).
        unsafe {
            let src = block.ptr.offset(t0 as isize * block.across);
            panel(out, src, cols, w, kc, block.along, block.across);
            out = out.add(w * kc);
        }
        t0 += w;
    }
}

/// One panel: `dst[p*w + t] = src[p*along + t*across]` for t < cols, +0 for
/// cols ≤ t < w.
///
/// # Safety
/// As [`pack`], for one panel.
#[inline]
unsafe fn panel(dst: *mut f32, src: *const f32, cols: usize, w: usize, kc: usize, along: isize, across: isize) {
    // SAFETY (whole body): every read is (p, t) with p < kc, t < cols, inside
    // the block; every write is below kc*w.
    unsafe {
        if across == 1 {
            // Contiguous across (row-major B, column-major A): a copy per step.
            for p in 0..kc {
                let d = dst.add(p * w);
                std::ptr::copy_nonoverlapping(src.offset(p as isize * along), d, cols);
                std::ptr::write_bytes(d.add(cols), 0, w - cols);
            }
        } else if along == 1 {
            // Contiguous along k (row-major A, column-major B): read each
            // source line once, scatter it into the panel.
            for t in 0..cols {
                let s = src.offset(t as isize * across);
                for p in 0..kc {
                    *dst.add(p * w + t) = *s.add(p);
                }
            }
            for p in 0..kc {
                std::ptr::write_bytes(dst.add(p * w + cols), 0, w - cols);
            }
        } else {
            for p in 0..kc {
                let s = src.offset(p as isize * along);
                let d = dst.add(p * w);
                for t in 0..cols {
                    *d.add(t) = *s.offset(t as isize * across);
                }
                std::ptr::write_bytes(d.add(cols), 0, w - cols);
            }
        }
    }
}
