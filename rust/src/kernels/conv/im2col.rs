//! The im2col matrix (written, or read in place from a zero-padded copy of
//! the input) and its adjoint, col2im.

use super::Conv2d;
use crate::gemm::MatRef;
use crate::ptr::Ptr;

impl Conv2d {
    /// For each im2col row r = (c, ky, kx), where its output (0, 0) reads
    /// in the group's padded planes: `c·hp·wp + ky·dh·wp + kx·dw` (output
    /// (oy, ox) reads `oy·wp + ox` further on, stride 1).
    pub(super) fn padded_offsets(&self) -> Vec<isize> {
        let (hp, wp) = self.padded_hw();
        let (dh, dw) = self.dilation;
        let taps = self.kh * self.kw;
        let mut offsets = crate::storage::scratch_vec(self.k(), 0isize);
        for (r, o) in offsets.iter_mut().enumerate() {
            let (c, t) = (r / taps, r % taps);
            let (ky, kx) = (t / self.kw, t % self.kw);
            *o = (c * hp * wp + ky * dh * wp + kx * dw) as isize;
        }
        offsets
    }

    /// Copy the group's input planes of item `ni` into `dst` with their
    /// zero border (`padded_hw`).
    ///
    /// # Safety
    /// `x` holds the whole input; `dst` is valid for cg·hp·wp writes (both
    /// extents are asserted in debug builds).
    pub(super) unsafe fn pad_group(
        &self,
        x: Ptr<*const f32>,
        ni: usize,
        g: usize,
        dst: Ptr<*mut f32>,
    ) {
        // SAFETY: forwarded; the group's channels 0..cg.
        unsafe { self.pad_channels(x, ni, g, 0..self.cg(), dst) }
    }

    /// Copy the input planes `channels` (of the group's cg) of item `ni`,
    /// group `g`, into `dst` with their zero border (`padded_hw`).
    ///
    /// # Safety
    /// `x` holds the whole input; `channels` lies inside 0..cg; `dst` is
    /// valid for channels.len()·hp·wp writes (both extents are asserted in
    /// debug builds).
    pub(super) unsafe fn pad_channels(
        &self,
        x: Ptr<*const f32>,
        ni: usize,
        g: usize,
        channels: std::ops::Range<usize>,
        dst: Ptr<*mut f32>,
    ) {
        let planes = (ni * self.c_in + g * self.cg() + channels.start) * self.h * self.w;
        // SAFETY: the planes lie inside x (Ptr::offset asserts it in debug
        // builds); dst as the caller promised.
        unsafe {
            pad_planes(
                x.offset(planes),
                channels.len(),
                self.h,
                self.w,
                self.padding.0,
                self.padding.1,
                dst,
            );
        }
    }

    /// Fill the columns of output rows `oys` of the im2col matrix of item
    /// `ni`, group `g`, as a `[k, oys.len()·ow]` row-major block: row
    /// (c, ky, kx), column (oy, ox) holds the input element the tap reads,
    /// or 0 in the padding. Written row segment by row segment: the part of
    /// an output row that reads inside the input is one copy (a strided
    /// gather when the stride is not 1), the rest zeros.
    ///
    /// # Safety
    /// `x` must hold the whole input; `cols` must be valid for
    /// k·oys.len()·ow writes; `oys` must lie inside `0..oh` (debug builds
    /// assert each access against the extents of `x` and `cols`).
    pub(super) unsafe fn im2col(
        &self,
        x: Ptr<*const f32>,
        ni: usize,
        g: usize,
        oys: std::ops::Range<usize>,
        cols: Ptr<*mut f32>,
    ) {
        let (h, w, ow) = (self.h, self.w, self.ow);
        let p = oys.len() * ow;
        let (sh, sw) = self.stride;
        let (ph, pw) = self.padding;
        let (dh, dw) = self.dilation;
        debug_assert!(oys.end <= self.oh, "im2col: rows {oys:?} past {}", self.oh);
        for c in 0..self.cg() {
            // Channel g·cg + c of item ni lies inside the input.
            let plane = x.offset((ni * self.c_in + g * self.cg() + c) * h * w);
            for ky in 0..self.kh {
                for kx in 0..self.kw {
                    let r = (c * self.kh + ky) * self.kw + kx;
                    let (lo, hi) = self.inside_x(kx);
                    for (row_in_block, oy) in oys.clone().enumerate() {
                        // SAFETY: row r, that output row's ow columns of the
                        // block: below k·p, the extent the caller promised.
                        let out = unsafe { cols.slice_mut(r * p + row_in_block * ow, ow) };
                        let iy = (oy * sh + ky * dh) as isize - ph as isize;
                        if iy < 0 || iy >= h as isize || lo == hi {
                            out.fill(0.0);
                            continue;
                        }
                        out[..lo].fill(0.0);
                        out[hi..].fill(0.0);
                        // For ox in lo..hi the column ox·sw + kx·dw − pw lies
                        // in [0, w) (`inside_x`), so the row's reads stay in
                        // the plane.
                        let row = plane.offset(iy as usize * w + lo * sw + kx * dw - pw);
                        if sw == 1 {
                            // SAFETY: hi − lo elements of the input row, in bounds (above).
                            out[lo..hi].copy_from_slice(unsafe { row.slice(0, hi - lo) });
                        } else {
                            for (j, o) in out[lo..hi].iter_mut().enumerate() {
                                // SAFETY: in bounds (above).
                                *o = unsafe { row.read(j * sw) };
                            }
                        }
                    }
                }
            }
        }
    }

    /// The im2col columns of output rows `oys` of item `ni`, group `g`, as a
    /// GEMM operand `[k, oys.len()·ow]`: for a pointwise convolution a view
    /// of the input itself, else written into `scratch`.
    ///
    /// # Safety
    /// `x` must hold the whole input; `scratch` must be valid for
    /// k·oys.len()·ow writes unless the convolution is pointwise; `oys` must
    /// lie inside `0..oh`.
    pub(super) unsafe fn block_cols(
        &self,
        x: Ptr<*const f32>,
        ni: usize,
        g: usize,
        oys: std::ops::Range<usize>,
        scratch: Ptr<*mut f32>,
    ) -> MatRef {
        let (k, p, q0, pc) = (self.k(), self.p(), oys.start * self.ow, oys.len() * self.ow);
        if self.pointwise() {
            MatRef {
                // The group's channels of item ni are k planes of p, of
                // which columns q0..q0 + pc are read.
                ptr: x.offset((ni * self.c_in + g * self.cg()) * p + q0).get(),
                rows: k,
                cols: pc,
                rs: p as isize,
                cs: 1,
            }
        } else {
            // SAFETY: forwarded from the caller.
            unsafe { self.im2col(x, ni, g, oys, scratch) };
            MatRef {
                ptr: scratch.get(),
                rows: k,
                cols: pc,
                rs: pc as isize,
                cs: 1,
            }
        }
    }
}

/// Copy `planes` planes of h × w into `dst` as planes of (h + 2ph) × (w +
/// 2pw) with +0 in the border.
///
/// # Safety
/// `src` valid for planes·h·w reads, `dst` for planes·(h+2ph)·(w+2pw)
/// writes (asserted against their extents in debug builds).
pub(super) unsafe fn pad_planes(
    src: Ptr<*const f32>,
    planes: usize,
    h: usize,
    w: usize,
    ph: usize,
    pw: usize,
    dst: Ptr<*mut f32>,
) {
    let (hp, wp) = (h + 2 * ph, w + 2 * pw);
    // SAFETY: plane c's writes are [c·hp·wp, (c+1)·hp·wp), below
    // planes·hp·wp; its reads [c·h·w, (c+1)·h·w), below planes·h·w; each
    // slice is checked against its Ptr's extent in debug builds.
    unsafe {
        for c in 0..planes {
            let d = dst.slice_mut(c * hp * wp, hp * wp);
            d[..ph * wp].fill(0.0);
            for y in 0..h {
                let row = &mut d[(ph + y) * wp..(ph + y + 1) * wp];
                row[..pw].fill(0.0);
                row[pw..pw + w].copy_from_slice(src.slice((c * h + y) * w, w));
                row[pw + w..].fill(0.0);
            }
            d[(ph + h) * wp..].fill(0.0);
        }
    }
}

/// Each element of `channels` input planes of one group (`dx` points at
/// the first plane, `dcols` at the first row of its taps) sums the `dcols`
/// entries of the taps that read it, (ky, kx) increasing, starting at +0.
/// Written as a scatter: the caller zeroes the planes, then the taps are
/// added in (ky, kx) order, each an output row segment at a time — every
/// element still sees +0 then its own taps in that order, one f32 add each
/// (so the bits are those of the gather), and a stride-1 segment is a plain
/// slice add the compiler vectorizes.
///
/// This adds the taps of the output rows `oys` only, to a `dx` already
/// zeroed (or holding the taps of later output rows): `dcols` holds those
/// rows' columns, row r of the taps at `r·ld`, output row oy at `(oy −
/// oys.start)·ow`. Within the call the taps go in (ky, kx) order; a caller
/// that runs blocks of output rows from the last to the first keeps that
/// order for every element too: a larger ky reaches an input row from an
/// earlier output row (iy = oy·sh + ky·dh − ph), and the kx of one ky from
/// the same output row.
///
/// # Safety
/// `dcols` valid for channels·kh·kw rows of `ld` ≥ oys.len()·ow reads,
/// `dx` for channels·h·w reads and writes, not overlapping (debug builds assert
/// every access against the extents); `oys` inside 0..oh.
pub(super) unsafe fn col2im_rows(
    s: &Conv2d,
    channels: usize,
    dcols: Ptr<*const f32>,
    ld: usize,
    oys: std::ops::Range<usize>,
    dx: Ptr<*mut f32>,
) {
    let (h, w, ow) = (s.h, s.w, s.ow);
    let (sh, sw) = s.stride;
    let (ph, pw) = s.padding;
    let (dh, dw) = s.dilation;
    for c in 0..channels {
        for ky in 0..s.kh {
            for kx in 0..s.kw {
                let r = (c * s.kh + ky) * s.kw + kx;
                let (lo, hi) = s.inside_x(kx);
                if lo == hi {
                    continue;
                }
                for oy in oys.clone() {
                    let iy = (oy * sh + ky * dh) as isize - ph as isize;
                    if iy < 0 || iy >= h as isize {
                        continue;
                    }
                    // SAFETY: row r of dcols, columns (oy, lo..hi); plane c,
                    // row iy, columns lo·sw + kx·dw − pw onwards (inside, see
                    // `inside_x`). dcols and dx do not overlap.
                    unsafe {
                        let src = dcols.slice(r * ld + (oy - oys.start) * ow + lo, hi - lo);
                        let dst = dx.offset((c * h + iy as usize) * w + lo * sw + kx * dw - pw);
                        if sw == 1 {
                            let dst = dst.slice_mut(0, hi - lo);
                            for (d, v) in dst.iter_mut().zip(src) {
                                *d += *v;
                            }
                        } else {
                            for (j, v) in src.iter().enumerate() {
                                dst.write(j * sw, dst.read(j * sw) + *v);
                            }
                        }
                    }
                }
            }
        }
    }
}
