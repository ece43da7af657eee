//! The geometry of a convolution: shapes, sizes and the choice of path.

use crate::error::{Error, Result};
use crate::gemm::MatRef;

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

    pub(super) fn cg(&self) -> usize {
        self.c_in / self.groups
    }
    pub(super) fn og(&self) -> usize {
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
    /// Multiply-adds of the forward (and of each gradient): every output
    /// is a sum over k. What the kernels' thread thresholds compare.
    pub fn macs(&self) -> usize {
        self.output_len().saturating_mul(self.k())
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
    pub(super) fn forward_block_rows(&self) -> usize {
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
    pub(super) fn reads_padded_input(&self) -> bool {
        const MIN_K: usize = 32;
        self.stride == (1, 1) && !self.pointwise() && self.p() > 0 && self.k() >= MIN_K
    }

    /// The zero-padded planes' extent: (h + 2ph, w + 2pw).
    pub(super) fn padded_hw(&self) -> (usize, usize) {
        (self.h + 2 * self.padding.0, self.w + 2 * self.padding.1)
    }

    /// 1×1, stride 1, no padding: the im2col matrix is the input itself.
    pub(super) fn pointwise(&self) -> bool {
        self.kh == 1
            && self.kw == 1
            && self.stride == (1, 1)
            && self.padding == (0, 0)
            && self.oh == self.h
            && self.ow == self.w
    }

    /// The output columns `ox` whose input column `ox·sw + kx·dw − pw` lies
    /// inside `[0, w)`: a half-open range (empty when none does).
    pub(super) fn inside_x(&self, kx: usize) -> (usize, usize) {
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

    pub(super) fn weight(&self, wt: *const f32, g: usize) -> MatRef {
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
