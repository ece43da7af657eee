//! 2-D convolution (NCHW, contiguous operands) on the canonical GEMM.
//!
//! One description, [`Conv2d`], serves the three kernels and both
//! convolution operators: `conv2d` runs [`forward`], its backward runs
//! [`input_grad`] and [`weight_grad`]; `conv_transpose2d` is the adjoint, so
//! its forward is [`input_grad`] (with the transposed convolution's output as
//! the convolution's "input") and its backward is [`forward`] and
//! [`weight_grad`] with the roles swapped.
//!
//! Orders (the bits depend on them, never on threads or paths):
//! * forward: per batch item and group, `out = W_g · cols` with cols the
//!   im2col matrix `[(c, ky, kx), (oy, ox)]`; each output is one GEMM
//!   accumulator over k = (c, ky, kx) increasing. The bias is one IEEE add
//!   afterwards.
//! * input gradient: `dcols = W_gᵀ · dY_g` (one accumulator over the
//!   group's output channels, increasing), then col2im: each input element
//!   starts at +0 and adds the taps that read it in (ky, kx) increasing
//!   order, one f32 add each.
//! * weight gradient: per batch item `T_n = dY_n · cols_nᵀ` (one accumulator
//!   over the output positions (oy, ox), increasing; `cols_nᵀ` is a
//!   transposed view of the im2col matrix, which the GEMM packs); then
//!   `dW = ((+0 + T_0) + T_1) + …` in batch-item order, one f32 add per item.
//!
//! Where cols comes from changes speed, never bits: for stride 1 and k ≥ 32
//! (`Conv2d::reads_padded_input`) the forward and the weight gradient read
//! it from a zero-padded copy of the input (`gemm_offset_rows`,
//! `gemm_offset_cols`: the same entries, the padding's +0 included); else
//! im2col writes it, a block of output rows at a time.
//!
//! Threads take whole (item, group) pairs, or fixed-size element chunks of
//! the item-order sum: the chunking is a function of the shape only.

use crate::dispatch::{par_chunks, Mode};
use crate::error::{Error, Result};
use crate::gemm::{gemm_offset_cols, gemm_offset_rows, OffsetCols, OffsetRows, PackedA};
use crate::kernels::matmul::{gemm, gemm_continued, MatRef};
use crate::ptr::Ptr;
use crate::simd::Token;
use crate::storage::Buffer;

/// The geometry of one convolution: input `[n, c_in, h, w]`, weight
/// `[c_out, c_in / groups, kh, kw]`, output `[n, c_out, oh, ow]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv2d {
    pub n: usize,
    pub c_in: usize,
    pub h: usize,
    pub w: usize,
    pub c_out: usize,
    pub kh: usize,
    pub kw: usize,
    pub stride: (usize, usize),
    pub padding: (usize, usize),
    pub dilation: (usize, usize),
    pub groups: usize,
    pub oh: usize,
    pub ow: usize,
}

/// The output extent of a convolution along one axis (0 if the kernel does
/// not fit the padded input).
pub fn out_size(input: usize, kernel: usize, stride: usize, pad: usize, dil: usize) -> usize {
    let span = dil * (kernel - 1) + 1;
    let padded = input + 2 * pad;
    if padded < span {
        0
    } else {
        (padded - span) / stride + 1
    }
}

impl Conv2d {
    /// The convolution whose input is `x`, weight `w` and output `y` (all
    /// NCHW / OIHW); the output may be smaller than the full size (the
    /// transposed convolution's backward), never larger.
    #[allow(clippy::too_many_arguments)]
    pub fn from_shapes(
        op: &str,
        x: [usize; 4],
        w: [usize; 4],
        y: [usize; 4],
        stride: (usize, usize),
        padding: (usize, usize),
        dilation: (usize, usize),
        groups: usize,
    ) -> Result<Conv2d> {
        let [n, c_in, h, wd] = x;
        let [c_out, cg, kh, kw] = w;
        let ok = groups >= 1
            && stride.0 >= 1
            && stride.1 >= 1
            && dilation.0 >= 1
            && dilation.1 >= 1
            && kh >= 1
            && kw >= 1
            && c_in == cg * groups
            && c_out % groups == 0
            && y[0] == n
            && y[1] == c_out
            && y[2] <= out_size(h, kh, stride.0, padding.0, dilation.0)
            && y[3] <= out_size(wd, kw, stride.1, padding.1, dilation.1);
        if !ok {
            return Err(Error::Value(format!(
                "{op} kernel: inconsistent shapes input {x:?}, weight {w:?}, output {y:?} for groups {groups}"
            )));
        }
        Ok(Conv2d {
            n,
            c_in,
            h,
            w: wd,
            c_out,
            kh,
            kw,
            stride,
            padding,
            dilation,
            groups,
            oh: y[2],
            ow: y[3],
        })
    }

    fn cg(&self) -> usize {
        self.c_in / self.groups
    }
    fn og(&self) -> usize {
        self.c_out / self.groups
    }
    /// Rows of the im2col matrix (= columns of a weight row).
    pub fn k(&self) -> usize {
        self.cg() * self.kh * self.kw
    }
    /// Output positions per item.
    pub fn p(&self) -> usize {
        self.oh * self.ow
    }
    /// Elements of the input, the weight and the output.
    pub fn input_len(&self) -> usize {
        self.n * self.c_in * self.h * self.w
    }
    pub fn weight_len(&self) -> usize {
        self.c_out * self.k()
    }
    pub fn output_len(&self) -> usize {
        self.n * self.c_out * self.p()
    }
    /// Output rows per forward block: the block's im2col columns (k × rows·ow
    /// floats) should stay in a core's L2 between being written and being
    /// packed by the GEMM, and be wide enough (≥ MIN_BLOCK_COLUMNS) that
    /// packing the weight once per block stays cheap. A function of the
    /// shape only; the bits do not depend on it (every output is one GEMM
    /// accumulator over the whole of k).
    fn forward_block_rows(&self) -> usize {
        const BLOCK_FLOATS: usize = 64 * 1024;
        const MIN_BLOCK_COLUMNS: usize = 256;
        let ow = self.ow.max(1);
        let by_cache = BLOCK_FLOATS / (self.k() * ow).max(1);
        by_cache
            .max(MIN_BLOCK_COLUMNS.div_ceil(ow))
            .clamp(1, self.oh.max(1))
    }

    /// The forward reads a zero-padded copy of the input in place instead
    /// of an im2col matrix (`forward_padded`): stride 1, and a k of at
    /// least MIN_K — below it each output's few terms leave the packing
    /// the padded path saves a small part of the time, and the im2col path
    /// measured faster (1→32 3×3, fast, 1 thread: 1.79 against 2.47 ms,
    /// docs/kernels.md). A function of the shape only; both paths give the
    /// same bits.
    fn reads_padded_input(&self) -> bool {
        const MIN_K: usize = 32;
        self.stride == (1, 1) && !self.pointwise() && self.p() > 0 && self.k() >= MIN_K
    }

    /// The zero-padded planes' extent: (h + 2ph, w + 2pw).
    fn padded_hw(&self) -> (usize, usize) {
        (self.h + 2 * self.padding.0, self.w + 2 * self.padding.1)
    }

    /// For each im2col row r = (c, ky, kx), where its output (0, 0) reads
    /// in the group's padded planes: `c·hp·wp + ky·dh·wp + kx·dw` (output
    /// (oy, ox) reads `oy·wp + ox` further on, stride 1).
    fn padded_offsets(&self) -> Vec<isize> {
        let (hp, wp) = self.padded_hw();
        let (dh, dw) = self.dilation;
        let taps = self.kh * self.kw;
        (0..self.k())
            .map(|r| {
                let (c, t) = (r / taps, r % taps);
                let (ky, kx) = (t / self.kw, t % self.kw);
                (c * hp * wp + ky * dh * wp + kx * dw) as isize
            })
            .collect()
    }

    /// Copy the group's input planes of item `ni` into `dst` with their
    /// zero border (`padded_hw`).
    ///
    /// # Safety
    /// `x` holds the whole input; `dst` is valid for cg·hp·wp writes.
    unsafe fn pad_group(&self, x: *const f32, ni: usize, g: usize, dst: *mut f32) {
        // SAFETY: the group's cg planes of item ni lie inside x.
        unsafe {
            let planes = x.add((ni * self.c_in + g * self.cg()) * self.h * self.w);
            pad_planes(
                planes,
                self.cg(),
                self.h,
                self.w,
                self.padding.0,
                self.padding.1,
                dst,
            );
        }
    }

    /// 1×1, stride 1, no padding: the im2col matrix is the input itself.
    fn pointwise(&self) -> bool {
        self.kh == 1
            && self.kw == 1
            && self.stride == (1, 1)
            && self.padding == (0, 0)
            && self.oh == self.h
            && self.ow == self.w
    }

    /// The output columns `ox` whose input column `ox·sw + kx·dw − pw` lies
    /// inside `[0, w)`: a half-open range (empty when none does).
    fn inside_x(&self, kx: usize) -> (usize, usize) {
        let (sw, pw, dw) = (self.stride.1, self.padding.1, self.dilation.1);
        let shift = kx * dw; // ix = ox·sw + shift − pw
        let lo = pw.saturating_sub(shift).div_ceil(sw);
        // ix ≤ w − 1  ⇔  ox·sw ≤ w − 1 + pw − shift
        let hi = if self.w + pw > shift {
            ((self.w - 1 + pw - shift) / sw + 1).min(self.ow)
        } else {
            0
        };
        (lo.min(hi), hi)
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
    /// k·oys.len()·ow writes; `oys` must lie inside `0..oh`.
    unsafe fn im2col(
        &self,
        x: *const f32,
        ni: usize,
        g: usize,
        oys: std::ops::Range<usize>,
        cols: *mut f32,
    ) {
        let (h, w, ow) = (self.h, self.w, self.ow);
        let p = oys.len() * ow;
        let (sh, sw) = self.stride;
        let (ph, pw) = self.padding;
        let (dh, dw) = self.dilation;
        for c in 0..self.cg() {
            // SAFETY: channel g·cg + c of item ni lies inside the input.
            let plane = unsafe { x.add((ni * self.c_in + g * self.cg() + c) * h * w) };
            for ky in 0..self.kh {
                for kx in 0..self.kw {
                    let r = (c * self.kh + ky) * self.kw + kx;
                    let (lo, hi) = self.inside_x(kx);
                    for (row_in_block, oy) in oys.clone().enumerate() {
                        // SAFETY: row r, that output row's ow columns of the block.
                        let out = unsafe {
                            std::slice::from_raw_parts_mut(cols.add(r * p + row_in_block * ow), ow)
                        };
                        let iy = (oy * sh + ky * dh) as isize - ph as isize;
                        if iy < 0 || iy >= h as isize || lo == hi {
                            out.fill(0.0);
                            continue;
                        }
                        out[..lo].fill(0.0);
                        out[hi..].fill(0.0);
                        // SAFETY: for ox in lo..hi the column ox·sw + kx·dw − pw lies in [0, w).
                        let row = unsafe { plane.add(iy as usize * w + lo * sw + kx * dw - pw) };
                        if sw == 1 {
                            // SAFETY: hi − lo elements of the input row, in bounds (above).
                            out[lo..hi].copy_from_slice(unsafe {
                                std::slice::from_raw_parts(row, hi - lo)
                            });
                        } else {
                            for (j, o) in out[lo..hi].iter_mut().enumerate() {
                                // SAFETY: in bounds (above).
                                *o = unsafe { *row.add(j * sw) };
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
    unsafe fn block_cols(
        &self,
        x: *const f32,
        ni: usize,
        g: usize,
        oys: std::ops::Range<usize>,
        scratch: *mut f32,
    ) -> MatRef {
        let (k, p, q0, pc) = (self.k(), self.p(), oys.start * self.ow, oys.len() * self.ow);
        if self.pointwise() {
            MatRef {
                // SAFETY: the group's channels of item ni are k planes of p,
                // of which columns q0..q0 + pc are read.
                ptr: unsafe { x.add((ni * self.c_in + g * self.cg()) * p + q0) },
                rows: k,
                cols: pc,
                rs: p as isize,
                cs: 1,
            }
        } else {
            // SAFETY: forwarded from the caller.
            unsafe { self.im2col(x, ni, g, oys, scratch) };
            MatRef {
                ptr: scratch,
                rows: k,
                cols: pc,
                rs: pc as isize,
                cs: 1,
            }
        }
    }

    fn weight(&self, wt: *const f32, g: usize) -> MatRef {
        let k = self.k();
        // SAFETY (of later reads): rows g·og .. (g+1)·og of the weight.
        MatRef {
            ptr: wt.wrapping_add(g * self.og() * k),
            rows: self.og(),
            cols: k,
            rs: k as isize,
            cs: 1,
        }
    }
}

/// `out = conv2d(x, wt) (+ bias)`.
///
/// # Safety
/// `x` holds n·c_in·h·w, `wt` c_out·k, `bias` (if any) c_out, `out`
/// n·c_out·oh·ow elements; `out` overlaps nothing else.
pub unsafe fn forward(
    mode: Mode,
    s: &Conv2d,
    x: *const f32,
    wt: *const f32,
    bias: Option<*const f32>,
    out: *mut f32,
) {
    if s.reads_padded_input() {
        // SAFETY: forwarded from the caller.
        unsafe { forward_padded(Token::current(), mode, s, x, wt, bias, out) }
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { forward_im2col(mode, s, x, wt, bias, out) }
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
/// reads its im2col rows in place (`gemm_offset_rows`): row (c, ky, kx) of
/// output row oy is the padded row oy + ky·dh of channel c from column
/// kx·dw on. The weight is packed once per call. The terms (the padding's
/// +0 included) and their order are those of the im2col product, so the
/// bits are too.
///
/// # Safety
/// As [`forward`], with stride (1, 1).
unsafe fn forward_padded(
    token: Token,
    mode: Mode,
    s: &Conv2d,
    x: *const f32,
    wt: *const f32,
    bias: Option<*const f32>,
    out: *mut f32,
) {
    let (og, cg, p, ow) = (s.og(), s.cg(), s.p(), s.ow);
    let (hp, wp) = s.padded_hw();
    let offsets = s.padded_offsets();
    // SAFETY: each group's weight rows lie inside `wt`.
    let packed: Vec<PackedA> = (0..s.groups)
        .map(|g| unsafe { PackedA::new(token, s.weight(wt, g)) })
        .collect();
    let (x, out) = (Ptr::new(x, s.input_len()), Ptr::new(out, s.output_len()));
    let bias = bias.map(|b| Ptr::new(b, s.c_out));
    par_chunks(s.n * s.groups, |idx| {
        let (ni, g) = (idx / s.groups, idx % s.groups);
        let padded = Buffer::new(cg * hp * wp * 4);
        let xp = padded.as_ptr() as *mut f32;
        // SAFETY: the padded copy holds cg planes of hp × wp; each (item,
        // group) writes its own og × p block of `out`. The offsets keep
        // every read of the product inside the padded planes: output
        // (oy, ox) of tap (c, ky, kx) reads row oy + ky·dh < hp, column
        // ox + kx·dw < wp.
        unsafe {
            s.pad_group(x.get(), ni, g, xp);
            let c = out.offset((ni * s.c_out + g * og) * p).get();
            let b = OffsetRows {
                ptr: xp,
                offsets: &offsets,
                cols: ow,
            };
            gemm_offset_rows(mode, &packed[g], b, s.oh, wp as isize, c, p, ow);
            if let Some(b) = bias {
                add_bias(c, b.offset(g * og).get(), og, p, p);
            }
        }
    });
}

/// Copy `planes` planes of h × w into `dst` as planes of (h + 2ph) × (w +
/// 2pw) with +0 in the border.
///
/// # Safety
/// `src` valid for planes·h·w reads, `dst` for planes·(h+2ph)·(w+2pw) writes.
unsafe fn pad_planes(
    src: *const f32,
    planes: usize,
    h: usize,
    w: usize,
    ph: usize,
    pw: usize,
    dst: *mut f32,
) {
    let (hp, wp) = (h + 2 * ph, w + 2 * pw);
    // SAFETY: every write is below planes·hp·wp, every read below planes·h·w.
    unsafe {
        for c in 0..planes {
            let d = dst.add(c * hp * wp);
            std::ptr::write_bytes(d, 0, ph * wp);
            for y in 0..h {
                let row = d.add((ph + y) * wp);
                std::ptr::write_bytes(row, 0, pw);
                std::ptr::copy_nonoverlapping(src.add((c * h + y) * w), row.add(pw), w);
                std::ptr::write_bytes(row.add(pw + w), 0, pw);
            }
            std::ptr::write_bytes(d.add((ph + h) * wp), 0, ph * wp);
        }
    }
}

/// The forward through an im2col matrix, a block of output rows at a time.
///
/// # Safety
/// As [`forward`].
unsafe fn forward_im2col(
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
    par_chunks(s.n * s.groups * blocks, |idx| {
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
            let cols = s.block_cols(x.get(), ni, g, oys, scratch.as_ptr() as *mut f32);
            gemm(mode, s.weight(wt.get(), g), cols, c, p);
            if let Some(b) = bias {
                add_bias(c, b.offset(g * og).get(), og, p, pc);
            }
        }
    });
}

/// `dx = ∂/∂x` of conv2d given `dy` (shape of the output): GEMM, then
/// col2im. Every element of `dx` is written.
///
/// # Safety
/// As [`forward`], with `dy` n·c_out·oh·ow and `dx` n·c_in·h·w.
pub unsafe fn input_grad(mode: Mode, s: &Conv2d, dy: *const f32, wt: *const f32, dx: *mut f32) {
    let (og, k, p) = (s.og(), s.k(), s.p());
    let (dy, wt) = (Ptr::new(dy, s.output_len()), Ptr::new(wt, s.weight_len()));
    let dx = Ptr::new(dx, s.input_len());
    par_chunks(s.n * s.groups, |idx| {
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
            let dc = dcols.as_ptr() as *mut f32;
            gemm(mode, s.weight(wt.get(), g).t(), b, dc, p);
            col2im(
                s,
                dc,
                dx.offset((ni * s.c_in + g * s.cg()) * s.h * s.w).get(),
            );
        }
    });
}

/// Each input element of one group's channels (`dx` points at the first)
/// sums the `dcols` entries of the taps that read it, (ky, kx) increasing,
/// starting at +0. Written as a scatter: the planes are zeroed, then the
/// taps are added in (ky, kx) order, each an output row segment at a time —
/// every element still sees +0 then its own taps in that order, one f32 add
/// each (so the bits are those of the gather), and a stride-1 segment is a
/// plain slice add the compiler vectorizes.
unsafe fn col2im(s: &Conv2d, dcols: *const f32, dx: *mut f32) {
    let (h, w, p, ow) = (s.h, s.w, s.p(), s.ow);
    let (sh, sw) = s.stride;
    let (ph, pw) = s.padding;
    let (dh, dw) = s.dilation;
    // SAFETY: the group's cg planes of h·w elements.
    unsafe { std::ptr::write_bytes(dx, 0, s.cg() * h * w) };
    for c in 0..s.cg() {
        for ky in 0..s.kh {
            for kx in 0..s.kw {
                let r = (c * s.kh + ky) * s.kw + kx;
                let (lo, hi) = s.inside_x(kx);
                if lo == hi {
                    continue;
                }
                for oy in 0..s.oh {
                    let iy = (oy * sh + ky * dh) as isize - ph as isize;
                    if iy < 0 || iy >= h as isize {
                        continue;
                    }
                    // SAFETY: row r of dcols, columns (oy, lo..hi); plane c,
                    // row iy, columns lo·sw + kx·dw − pw onwards (inside, see
                    // `inside_x`). dcols and dx do not overlap.
                    unsafe {
                        let src =
                            std::slice::from_raw_parts(dcols.add(r * p + oy * ow + lo), hi - lo);
                        let dst = dx.add((c * h + iy as usize) * w + lo * sw + kx * dw - pw);
                        if sw == 1 {
                            let dst = std::slice::from_raw_parts_mut(dst, hi - lo);
                            for (d, v) in dst.iter_mut().zip(src) {
                                *d += *v;
                            }
                        } else {
                            for (j, v) in src.iter().enumerate() {
                                *dst.add(j * sw) += *v;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Element chunk of the item-order sum (a constant).
const SUM_CHUNK: usize = 4096;

/// `dw = ∂/∂W` of conv2d: per item `dY_n · cols_nᵀ`, added in item order.
///
/// Each item's product runs over its output positions (the GEMM's k) a
/// block of output rows at a time — the block's im2col columns stay in L2
/// instead of a whole item's going out to memory and back — the first block
/// by `gemm`, the others continuing its accumulators (`gemm_continued`): the
/// same terms in the same increasing order as one product over all of them.
///
/// # Safety
/// As [`forward`], with `dy` n·c_out·oh·ow and `dw` c_out·k.
pub unsafe fn weight_grad(mode: Mode, s: &Conv2d, x: *const f32, dy: *const f32, dw: *mut f32) {
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
    par_chunks(s.n * s.groups, |idx| {
        let (ni, g) = (idx / s.groups, idx % s.groups);
        let scratch = Buffer::new(if in_place {
            s.cg() * hp * wp * 4
        } else if s.pointwise() {
            0
        } else {
            k * rows * ow * 4
        });
        let sp = scratch.as_ptr() as *mut f32;
        // SAFETY: as for `forward`; each (item, group) writes its own block
        // of `parts`. In place, the padded copy holds the group's planes and
        // every B element the offsets reach lies inside it (as in
        // `forward_padded`).
        unsafe {
            let part = parts_ptr.offset(idx * per).get();
            if in_place {
                s.pad_group(x.get(), ni, g, sp);
            }
            for (blk, y0) in (0..s.oh).step_by(rows.max(1)).enumerate() {
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
                        ptr: sp.add(y0 * wp),
                        offsets: &offsets,
                        rows: pc,
                        run: ow,
                        run_stride: wp as isize,
                    };
                    gemm_offset_cols(mode, a, b, part, k, blk > 0);
                    continue;
                }
                let cols = s.block_cols(x.get(), ni, g, oys, sp);
                if blk == 0 {
                    gemm(mode, a, cols.t(), part, k);
                } else {
                    gemm_continued(mode, a, cols.t(), part, k);
                }
            }
        }
    });
    let total = s.groups * per;
    let (parts_in, dw, n, groups) = (parts_ptr.as_const(), Ptr::new(dw, total), s.n, s.groups);
    par_chunks(total.div_ceil(SUM_CHUNK), |chunk| {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn direct(s: &Conv2d, x: &[f32], wt: &[f32]) -> Vec<f64> {
        let (cg, og) = (s.c_in / s.groups, s.c_out / s.groups);
        let mut out = vec![0f64; s.n * s.c_out * s.p()];
        for ni in 0..s.n {
            for o in 0..s.c_out {
                let g = o / og;
                for oy in 0..s.oh {
                    for ox in 0..s.ow {
                        let mut acc = 0f64;
                        for c in 0..cg {
                            for ky in 0..s.kh {
                                for kx in 0..s.kw {
                                    let iy = (oy * s.stride.0 + ky * s.dilation.0) as isize
                                        - s.padding.0 as isize;
                                    let ix = (ox * s.stride.1 + kx * s.dilation.1) as isize
                                        - s.padding.1 as isize;
                                    if iy < 0 || ix < 0 || iy >= s.h as isize || ix >= s.w as isize
                                    {
                                        continue;
                                    }
                                    let xv = x[((ni * s.c_in + g * cg + c) * s.h + iy as usize)
                                        * s.w
                                        + ix as usize];
                                    acc += xv as f64
                                        * wt[((o * cg + c) * s.kh + ky) * s.kw + kx] as f64;
                                }
                            }
                        }
                        out[((ni * s.c_out + o) * s.oh + oy) * s.ow + ox] = acc;
                    }
                }
            }
        }
        out
    }

    fn geometry(
        n: usize,
        c_in: usize,
        h: usize,
        w: usize,
        c_out: usize,
        k: usize,
        st: usize,
        pad: usize,
        dil: usize,
        groups: usize,
    ) -> Conv2d {
        Conv2d {
            n,
            c_in,
            h,
            w,
            c_out,
            kh: k,
            kw: k,
            stride: (st, st),
            padding: (pad, pad),
            dilation: (dil, dil),
            groups,
            oh: out_size(h, k, st, pad, dil),
            ow: out_size(w, k, st, pad, dil),
        }
    }

    fn values(n: usize, seed: f32) -> Vec<f32> {
        (0..n)
            .map(|i| ((i as f32 * 0.7 + seed).sin() * 3.0).fract())
            .collect()
    }

    /// Groups, depthwise, stride with dilation, 1×1, no padding with
    /// dilation, stride 3.
    fn geometries() -> [Conv2d; 6] {
        [
            geometry(2, 4, 7, 6, 6, 3, 1, 1, 1, 2),
            geometry(1, 3, 9, 8, 4, 3, 2, 2, 2, 1),
            geometry(2, 5, 5, 5, 5, 3, 1, 1, 1, 5),
            geometry(3, 4, 4, 4, 8, 1, 1, 0, 1, 1),
            geometry(1, 2, 11, 5, 3, 3, 1, 0, 2, 1),
            geometry(1, 2, 10, 7, 2, 3, 3, 2, 1, 1),
        ]
    }

    #[test]
    fn forward_matches_direct_sum_and_adjoints_agree() {
        for s in geometries() {
            let x = values(s.n * s.c_in * s.h * s.w, 0.3);
            let wt = values(s.c_out * s.k(), 1.1);
            let dy = values(s.n * s.c_out * s.p(), 2.7);
            for mode in [Mode::Exact, Mode::Fast] {
                let mut out = vec![0f32; dy.len()];
                unsafe { forward(mode, &s, x.as_ptr(), wt.as_ptr(), None, out.as_mut_ptr()) };
                let want = direct(&s, &x, &wt);
                for (a, b) in out.iter().zip(&want) {
                    assert!((*a as f64 - b).abs() < 1e-4, "{s:?}");
                }
                // <dy, conv(x)> = <input_grad(dy), x> = <weight_grad(x, dy), w>.
                let mut dx = vec![f32::NAN; x.len()];
                let mut dw = vec![f32::NAN; wt.len()];
                unsafe {
                    input_grad(mode, &s, dy.as_ptr(), wt.as_ptr(), dx.as_mut_ptr());
                    weight_grad(mode, &s, x.as_ptr(), dy.as_ptr(), dw.as_mut_ptr());
                }
                let lhs: f64 = dy.iter().zip(&want).map(|(a, b)| *a as f64 * b).sum();
                let via_x: f64 = dx.iter().zip(&x).map(|(a, b)| *a as f64 * *b as f64).sum();
                let via_w: f64 = dw.iter().zip(&wt).map(|(a, b)| *a as f64 * *b as f64).sum();
                assert!(
                    (lhs - via_x).abs() < 1e-3 * (1.0 + lhs.abs()),
                    "{s:?} {lhs} {via_x}"
                );
                assert!(
                    (lhs - via_w).abs() < 1e-3 * (1.0 + lhs.abs()),
                    "{s:?} {lhs} {via_w}"
                );
            }
        }
    }

    /// The input gradient's definition in exact mode: each dcols entry the
    /// canonical sum over the group's output channels (+0, then a rounded
    /// multiply and a rounded add per channel, increasing), each input
    /// element +0 plus its taps in (ky, kx) order.
    fn input_grad_definition(s: &Conv2d, dy: &[f32], wt: &[f32]) -> Vec<f32> {
        let (og, cg, k) = (s.og(), s.cg(), s.k());
        let mut dx = vec![0f32; s.n * s.c_in * s.h * s.w];
        for ni in 0..s.n {
            for ci in 0..s.c_in {
                let (g, c) = (ci / cg, ci % cg);
                for iy in 0..s.h {
                    for ix in 0..s.w {
                        let mut acc = 0f32;
                        for ky in 0..s.kh {
                            for kx in 0..s.kw {
                                let ty = (iy + s.padding.0) as isize - (ky * s.dilation.0) as isize;
                                let tx = (ix + s.padding.1) as isize - (kx * s.dilation.1) as isize;
                                if ty < 0 || tx < 0 {
                                    continue;
                                }
                                let (ty, tx) = (ty as usize, tx as usize);
                                if ty % s.stride.0 != 0 || tx % s.stride.1 != 0 {
                                    continue;
                                }
                                let (oy, ox) = (ty / s.stride.0, tx / s.stride.1);
                                if oy >= s.oh || ox >= s.ow {
                                    continue;
                                }
                                let r = (c * s.kh + ky) * s.kw + kx;
                                let mut term = 0f32;
                                for o in 0..og {
                                    let oc = g * og + o;
                                    let prod = wt[oc * k + r]
                                        * dy[((ni * s.c_out + oc) * s.oh + oy) * s.ow + ox];
                                    term += prod;
                                }
                                acc += term;
                            }
                        }
                        dx[((ni * s.c_in + ci) * s.h + iy) * s.w + ix] = acc;
                    }
                }
            }
        }
        dx
    }

    #[test]
    fn input_grad_gives_the_definition_bits() {
        for s in geometries() {
            let wt = values(s.c_out * s.k(), 1.1);
            let dy = values(s.n * s.c_out * s.p(), 2.7);
            let want = input_grad_definition(&s, &dy, &wt);
            let mut dx = vec![f32::NAN; want.len()];
            unsafe { input_grad(Mode::Exact, &s, dy.as_ptr(), wt.as_ptr(), dx.as_mut_ptr()) };
            for (a, b) in dx.iter().zip(&want) {
                assert_eq!(a.to_bits(), b.to_bits(), "{s:?}");
            }
        }
    }

    /// The im2col entry of item `ni`, group `g`, row r = (c, ky, kx), output
    /// (oy, ox): the input element the tap reads, or +0 in the padding —
    /// from the geometry, independently of `im2col` and the padded copy.
    fn tap_value(
        s: &Conv2d,
        x: &[f32],
        ni: usize,
        g: usize,
        r: usize,
        oy: usize,
        ox: usize,
    ) -> f32 {
        let (c, ky, kx) = (r / (s.kh * s.kw), r / s.kw % s.kh, r % s.kw);
        let iy = (oy * s.stride.0 + ky * s.dilation.0) as isize - s.padding.0 as isize;
        let ix = (ox * s.stride.1 + kx * s.dilation.1) as isize - s.padding.1 as isize;
        if iy < 0 || ix < 0 || iy >= s.h as isize || ix >= s.w as isize {
            return 0.0;
        }
        x[((ni * s.c_in + g * s.cg() + c) * s.h + iy as usize) * s.w + ix as usize]
    }

    /// The weight gradient's definition in exact mode: per item, each entry
    /// the canonical sum over output positions (+0, then a rounded multiply
    /// and a rounded add per position, row-major increasing); the items'
    /// parts added to +0 in item order.
    fn weight_grad_definition(s: &Conv2d, mode: Mode, x: &[f32], dy: &[f32]) -> Vec<f32> {
        let (og, k) = (s.og(), s.k());
        let mut dw = vec![0f32; s.c_out * k];
        for (oc, r) in (0..s.c_out).flat_map(|o| (0..k).map(move |r| (o, r))) {
            let g = oc / og;
            let mut total = 0f32;
            for ni in 0..s.n {
                let mut acc = 0f32;
                for oy in 0..s.oh {
                    for ox in 0..s.ow {
                        let xv = tap_value(s, x, ni, g, r, oy, ox);
                        let dv = dy[((ni * s.c_out + oc) * s.oh + oy) * s.ow + ox];
                        acc = match mode {
                            Mode::Exact => acc + dv * xv,
                            Mode::Fast => dv.mul_add(xv, acc),
                        };
                    }
                }
                total += acc;
            }
            dw[oc * k + r] = total;
        }
        dw
    }

    /// Bit for bit in both modes, on the small geometries and on ones whose
    /// output rows make several blocks of the blocked product
    /// (`forward_block_rows`), through the im2col block and (stride 1, k ≥
    /// 32) packed straight from the padded input: dilation, groups, padding
    /// 0 and 2, odd output widths; an infinite input element.
    #[test]
    fn weight_grad_gives_the_definition_bits() {
        let mut cases = geometries().to_vec();
        cases.push(geometry(2, 8, 40, 64, 3, 3, 1, 1, 1, 1));
        cases.push(geometry(1, 6, 37, 70, 4, 3, 1, 1, 1, 2));
        cases.push(geometry(2, 16, 21, 66, 5, 1, 1, 0, 1, 1));
        cases.push(geometry(1, 8, 70, 33, 4, 3, 1, 2, 2, 2));
        cases.push(geometry(2, 4, 60, 45, 3, 3, 1, 0, 1, 1));
        let in_place = cases
            .iter()
            .filter(|s| s.reads_padded_input() && s.oh > 30)
            .count();
        assert!(in_place >= 3, "too few cases read the padded input");
        for s in cases {
            if s.oh > 30 {
                assert!(
                    s.forward_block_rows() < s.oh,
                    "{s:?}: one block tests no continuation"
                );
            }
            let mut x = values(s.n * s.c_in * s.h * s.w, 0.3);
            x[s.w + 1] = f32::INFINITY;
            let dy = values(s.n * s.c_out * s.p(), 2.7);
            for mode in [Mode::Exact, Mode::Fast] {
                let want = weight_grad_definition(&s, mode, &x, &dy);
                let mut dw = vec![f32::NAN; want.len()];
                unsafe { weight_grad(mode, &s, x.as_ptr(), dy.as_ptr(), dw.as_mut_ptr()) };
                for (i, (a, b)) in dw.iter().zip(&want).enumerate() {
                    let same = a.to_bits() == b.to_bits()
                        || (mode == Mode::Fast && a.is_nan() && b.is_nan());
                    assert!(same, "{s:?} {mode:?} entry {i}: {a:e} vs {b:e}");
                }
            }
        }
    }

    /// The im2col product written out: each output the canonical sum over
    /// k = (c, ky, kx) of weight × im2col entry (+0 in the padding), in the
    /// mode's arithmetic (exact: NaN canonical), then the bias.
    fn forward_definition(s: &Conv2d, mode: Mode, x: &[f32], wt: &[f32], bias: &[f32]) -> Vec<f32> {
        let (og, k) = (s.og(), s.k());
        let mut out = vec![0f32; s.n * s.c_out * s.p()];
        for (ni, oc) in (0..s.n).flat_map(|n| (0..s.c_out).map(move |o| (n, o))) {
            let g = oc / og;
            for (oy, ox) in (0..s.oh).flat_map(|y| (0..s.ow).map(move |x| (y, x))) {
                let mut acc = 0f32;
                for r in 0..k {
                    let xv = tap_value(s, x, ni, g, r, oy, ox);
                    let wv = wt[oc * k + r];
                    acc = match mode {
                        Mode::Exact => acc + wv * xv,
                        Mode::Fast => wv.mul_add(xv, acc),
                    };
                }
                if mode == Mode::Exact && acc.is_nan() {
                    acc = f32::from_bits(crate::kernels::CANONICAL_NAN);
                }
                out[((ni * s.c_out + oc) * s.oh + oy) * s.ow + ox] = acc + bias[oc];
            }
        }
        out
    }

    /// The forward over a padded input read in place gives the im2col
    /// product's bits on every available path, in both modes: stride 1
    /// with padding, dilation, groups, a 5×5 kernel, outputs narrower than
    /// a register tile, k over several k blocks; infinite weights make the
    /// padding's terms NaN (inf × +0), which the padded copy must reproduce.
    #[test]
    fn padded_forward_gives_the_im2col_products_bits() {
        let cases = [
            geometry(2, 8, 7, 20, 6, 3, 1, 1, 1, 1),
            geometry(1, 6, 9, 19, 5, 3, 1, 2, 2, 1),
            geometry(2, 8, 6, 33, 4, 3, 1, 1, 1, 2),
            geometry(1, 4, 8, 40, 7, 3, 1, 0, 1, 1),
            geometry(1, 2, 9, 17, 3, 5, 1, 2, 1, 1),
            geometry(2, 16, 5, 5, 9, 3, 1, 1, 1, 1),
            geometry(1, 32, 4, 20, 7, 3, 1, 1, 1, 1),
        ];
        for s in cases {
            assert!(s.reads_padded_input(), "{s:?} takes the im2col path");
            let x = values(s.n * s.c_in * s.h * s.w, 0.3);
            let mut wt = values(s.c_out * s.k(), 1.1);
            let bias = values(s.c_out, 0.9);
            // An infinite weight on a corner tap of the first output channel
            // and a negative zero elsewhere.
            wt[0] = f32::INFINITY;
            wt[s.k() + 1] = -0.0;
            for mode in [Mode::Exact, Mode::Fast] {
                let want = forward_definition(&s, mode, &x, &wt, &bias);
                for path in crate::dispatch::available_paths() {
                    let token = Token::new(path).unwrap();
                    let mut out = vec![f32::NAN; want.len()];
                    // SAFETY: the vectors hold the shapes `s` describes.
                    unsafe {
                        forward_padded(
                            token,
                            mode,
                            &s,
                            x.as_ptr(),
                            wt.as_ptr(),
                            Some(bias.as_ptr()),
                            out.as_mut_ptr(),
                        )
                    };
                    for (i, (a, b)) in out.iter().zip(&want).enumerate() {
                        let same = a.to_bits() == b.to_bits()
                            || (mode == Mode::Fast && a.is_nan() && b.is_nan());
                        assert!(same, "{s:?} {path:?} {mode:?} output {i}: {a:e} vs {b:e}");
                    }
                }
            }
        }
    }

    #[test]
    fn output_size_rule() {
        assert_eq!(out_size(5, 3, 1, 0, 1), 3);
        assert_eq!(out_size(5, 3, 2, 1, 1), 3);
        assert_eq!(out_size(2, 3, 1, 0, 1), 0);
        assert_eq!(out_size(7, 3, 1, 0, 3), 1);
    }
}
