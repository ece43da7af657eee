//! Convolution, transposed convolution, pooling, adaptive pooling and
//! resize over NCHW tensors: torch's output sizes and argument rules.
//!
//! Inputs may be batched `[N, C, H, W]` or unbatched `[C, H, W]` (torch's
//! rule: one dimension fewer); messages show the shape the user passed.
//! Every size is computed in checked arithmetic: a user's ints either give
//! a geometry whose output fits a tensor or an error naming the operator.

use super::{numel, py_float, tuple};
use crate::error::{Error, Result};

type Pair = (usize, usize);

/// The batched form of `input`, or an error naming the ranks accepted.
pub fn batched(op: &str, input: &[usize]) -> Result<[usize; 4]> {
    match *input {
        [c, h, w] => Ok([1, c, h, w]),
        [n, c, h, w] => Ok([n, c, h, w]),
        _ => Err(Error::Value(format!(
            "{op}: expected a 3-D or 4-D input, got shape {}",
            tuple(input)
        ))),
    }
}

/// `d · (k − 1) + 1`: the extent of a dilated kernel, checked.
fn span(op: &str, k: usize, d: usize) -> Result<usize> {
    d.checked_mul(k.saturating_sub(1))
        .and_then(|s| s.checked_add(1))
        .ok_or_else(|| Error::Value(format!("{op}: kernel {k} with dilation {d} overflows")))
}

/// `n + 2p`, checked.
fn padded(op: &str, n: usize, p: usize) -> Result<usize> {
    p.checked_mul(2)
        .and_then(|q| q.checked_add(n))
        .ok_or_else(|| Error::Value(format!("{op}: input size {n} with padding {p} overflows")))
}

fn output(op: &str, shape: [usize; 4]) -> Result<[usize; 4]> {
    numel(op, "output", &shape, 4)?;
    Ok(shape)
}

/// A 2-D convolution: input `[N, C_in, H, W]`, weight `[C_out, C_in/g, kh,
/// kw]`, output `[N, C_out, OH, OW]` with `OH = (H + 2p − d(k − 1) − 1)/s + 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvGeometry {
    pub input: [usize; 4],
    pub weight: [usize; 4],
    pub output: [usize; 4],
}

/// The options both convolutions take, as the user gave them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvOptions {
    pub stride: Pair,
    pub padding: Pair,
    pub dilation: Pair,
    pub groups: usize,
}

/// `count` divisible by `groups`, or an error naming the weight.
fn divisible(op: &str, what: &str, count: usize, weight: &[usize], groups: usize) -> Result<()> {
    if count % groups != 0 {
        return Err(Error::Value(format!(
            "{op}: {what} {count} (weight shape {}) is not divisible by groups={groups}",
            tuple(weight)
        )));
    }
    Ok(())
}

/// The input and weight shapes a message names: those checked, or the
/// ones the user gave where the caller reshaped them (conv1d's 3-D shapes,
/// checked as a height-1 plane).
#[derive(Clone, Copy, Debug)]
pub struct Shown<'a> {
    pub input: &'a [usize],
    pub weight: &'a [usize],
}

impl ConvGeometry {
    pub fn conv2d(op: &str, input: &[usize], weight: &[usize], bias: Option<&[usize]>, o: ConvOptions) -> Result<ConvGeometry> {
        Self::conv2d_shown(op, Shown { input, weight }, input, weight, bias, o)
    }

    /// [`Self::conv2d`] with messages naming `shown`.
    pub fn conv2d_shown(op: &str, shown: Shown<'_>, input: &[usize], weight: &[usize], bias: Option<&[usize]>, o: ConvOptions) -> Result<ConvGeometry> {
        let (x, w) = (batched(op, input)?, kernel_weight(op, weight, o.groups)?);
        let Shown { input, weight } = shown;
        let [c_out, cg, kh, kw] = w;
        let expected = cg.checked_mul(o.groups).unwrap_or(usize::MAX);
        if x[1] != expected {
            return Err(Error::Value(format!(
                "{op}: input of shape {} has {} channels, but weight of shape {} with groups={} expects {expected}",
                tuple(input),
                x[1],
                tuple(weight),
                o.groups
            )));
        }
        divisible(op, "out_channels", c_out, weight, o.groups)?;
        check_bias(op, bias, c_out)?;
        let lists = Axes::lists((kh, kw), o.stride, o.padding, o.dilation);
        let hw = conv_rule(op, ("input shape", input), &x[2..], Axes::of(&lists))?;
        let out = [x[0], c_out, hw[0], hw[1]];
        Ok(ConvGeometry {
            input: x,
            weight: w,
            output: output(op, out)?,
        })
    }

    /// The transposed convolution (weight `[C_in, C_out/g, kh, kw]`):
    /// `OH = (H − 1)s − 2p + d(k − 1) + output_padding + 1`.
    pub fn conv_transpose2d(
        op: &str,
        input: &[usize],
        weight: &[usize],
        bias: Option<&[usize]>,
        o: ConvOptions,
        output_padding: Pair,
    ) -> Result<ConvGeometry> {
        Self::conv_transpose2d_shown(op, Shown { input, weight }, input, weight, bias, o, output_padding)
    }

    /// [`Self::conv_transpose2d`] with messages naming `shown`.
    pub fn conv_transpose2d_shown(
        op: &str,
        shown: Shown<'_>,
        input: &[usize],
        weight: &[usize],
        bias: Option<&[usize]>,
        o: ConvOptions,
        output_padding: Pair,
    ) -> Result<ConvGeometry> {
        let (x, w) = (batched(op, input)?, kernel_weight(op, weight, o.groups)?);
        let Shown { input, weight } = shown;
        let [c_in, cog, kh, kw] = w;
        let ConvOptions { stride, padding, dilation, groups } = o;
        if x[1] != c_in {
            return Err(Error::Value(format!(
                "{op}: input of shape {} has {} channels, weight of shape {} expects {c_in}",
                tuple(input),
                x[1],
                tuple(weight)
            )));
        }
        divisible(op, "in_channels", c_in, weight, groups)?;
        let c_out = cog
            .checked_mul(groups)
            .ok_or_else(|| Error::Value(format!("{op}: out_channels overflow")))?;
        check_bias(op, bias, c_out)?;
        for (op_, s, d) in [
            (output_padding.0, stride.0, dilation.0),
            (output_padding.1, stride.1, dilation.1),
        ] {
            if op_ >= s.max(d) {
                return Err(Error::Value(format!(
                    "{op}: output_padding {output_padding:?} must be smaller than max(stride, dilation) = {} in each dimension (stride {stride:?}, dilation {dilation:?})",
                    s.max(d)
                )));
            }
        }
        let size = |n, k, s, p, op_, d| transposed_size(op, n, k, s, p, op_, d);
        let oh = size(x[2], kh, stride.0, padding.0, output_padding.0, dilation.0)?;
        let ow = size(x[3], kw, stride.1, padding.1, output_padding.1, dilation.1)?;
        if oh <= 0 || ow <= 0 {
            return Err(Error::Value(format!(
                "{op}: input of shape {} with weight {} and padding {padding:?} gives an empty output ({oh}, {ow})",
                tuple(input),
                tuple(weight)
            )));
        }
        let to = |v: i128| usize::try_from(v).map_err(|_| Error::Value(format!("{op}: the output size {v} overflows")));
        let out = [x[0], c_out, to(oh)?, to(ow)?];
        Ok(ConvGeometry {
            input: x,
            weight: w,
            output: output(op, out)?,
        })
    }
}

/// One axis of a transposed convolution: `(n − 1)s − 2p + d(k − 1) + op + 1`
/// in checked i128 (it may be ≤ 0, which the callers refuse).
pub fn transposed_size(op: &str, n: usize, k: usize, s: usize, p: usize, op_: usize, d: usize) -> Result<i128> {
    let i = |v: usize| v as i128;
    (i(n) - 1)
        .checked_mul(i(s))
        .and_then(|a| a.checked_sub(2 * i(p)))
        .and_then(|a| a.checked_add(i(d).checked_mul(i(k) - 1)?))
        .and_then(|a| a.checked_add(i(op_) + 1))
        .ok_or_else(|| {
            Error::Value(format!(
                "{op}: the output size of input {n}, stride {s}, kernel {k} overflows"
            ))
        })
}

fn kernel_weight(op: &str, weight: &[usize], groups: usize) -> Result<[usize; 4]> {
    let w: [usize; 4] = weight.try_into().map_err(|_| {
        Error::Value(format!(
            "{op}: weight must be 4-D, got shape {}",
            tuple(weight)
        ))
    })?;
    if groups == 0 {
        return Err(Error::Value(format!(
            "{op}: groups must be a positive int, got 0"
        )));
    }
    if w[2] == 0 || w[3] == 0 {
        return Err(Error::Value(format!(
            "{op}: weight of shape {} has an empty kernel",
            tuple(weight)
        )));
    }
    Ok(w)
}

fn check_bias(op: &str, bias: Option<&[usize]>, channels: usize) -> Result<()> {
    match bias {
        Some(b) if b != [channels] => Err(Error::Value(format!(
            "{op}: bias of shape {} does not match out_channels {channels}",
            tuple(b)
        ))),
        _ => Ok(()),
    }
}

/// The padding `(top, bottom, left, right)` of `padding='same'` (stride 1):
/// `d(k − 1)` split with the smaller half first, as torch splits it.
pub fn same_padding(op: &str, weight: &[usize], dilation: Pair) -> Result<[usize; 4]> {
    let w = kernel_weight(op, weight, 1)?;
    let th = span(op, w[2], dilation.0)? - 1;
    let tw = span(op, w[3], dilation.1)? - 1;
    Ok([th / 2, th - th / 2, tw / 2, tw - tw / 2])
}

/// Max or average pooling: torch's `(H + 2p − d(k − 1) − 1)/s + 1`, rounded
/// up under `ceil_mode` unless the last window would start in the padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolGeometry {
    pub input: [usize; 4],
    pub output: [usize; 4],
}

impl PoolGeometry {
    pub fn new(
        op: &str,
        input: &[usize],
        kernel: Pair,
        stride: Pair,
        padding: Pair,
        dilation: Pair,
        ceil_mode: bool,
    ) -> Result<PoolGeometry> {
        let x = batched(op, input)?;
        let lists = Axes::lists(kernel, stride, padding, dilation);
        let hw = pool_rule(op, ("input shape", input), &x[2..], Axes::of(&lists), ceil_mode)?;
        Ok(PoolGeometry {
            input: x,
            output: output(op, [x[0], x[1], hw[0], hw[1]])?,
        })
    }
}

/// One axis of torch's pooling size rule, which without ceil mode is also
/// the convolution's `(n + 2p − d(k − 1) − 1)/s + 1`: windows of `k` taps
/// `d` apart, `s` apart, over the input of `n` padded by `p` on each side;
/// in ceil mode the last window must start inside the input or its left
/// padding. 0 when even one window does not fit.
fn window_axis(op: &str, n: usize, k: usize, s: usize, p: usize, d: usize, ceil_mode: bool) -> Result<usize> {
    let (full, sp) = (padded(op, n, p)?, span(op, k, d)?);
    if full < sp {
        return Ok(0);
    }
    let num = full - sp;
    let mut out = if ceil_mode { num.div_ceil(s) } else { num / s } + 1;
    // (out − 1)·s ≤ num < usize::MAX; n + p ≤ full fits.
    if ceil_mode && (out - 1).checked_mul(s).is_none_or(|start| start >= n + p) {
        out -= 1;
    }
    Ok(out)
}

/// The per-axis options of an N-d operator, one entry per spatial axis.
pub struct Axes<'a> {
    pub kernel: &'a [usize],
    pub stride: &'a [usize],
    pub padding: &'a [usize],
    pub dilation: &'a [usize],
}

impl<'a> Axes<'a> {
    /// A 2-D operator's pairs as per-axis lists, for [`Axes::of`].
    fn lists(kernel: Pair, stride: Pair, padding: Pair, dilation: Pair) -> [[usize; 2]; 4] {
        [kernel, stride, padding, dilation].map(|(a, b)| [a, b])
    }

    fn of(lists: &'a [[usize; 2]; 4]) -> Axes<'a> {
        let [kernel, stride, padding, dilation] = lists;
        Axes { kernel, stride, padding, dilation }
    }

    fn check(&self, op: &str, spatial: &[usize]) -> Result<()> {
        let n = spatial.len();
        let lens = [self.kernel.len(), self.stride.len(), self.padding.len(), self.dilation.len()];
        if lens.iter().any(|&l| l != n) {
            return Err(Error::Value(format!(
                "{op}: expected {n} values of kernel_size, stride, padding and dilation, got {lens:?}"
            )));
        }
        if self.kernel.iter().chain(self.stride).chain(self.dilation).any(|&v| v == 0) {
            return Err(Error::Value(format!(
                "{op}: kernel_size {}, stride {} and dilation {} must be positive",
                tuple(self.kernel),
                tuple(self.stride),
                tuple(self.dilation)
            )));
        }
        Ok(())
    }
}

/// The spatial output sizes of pooling over any number of spatial axes
/// (the 2-D pools through [`PoolGeometry`], the 3-D ones directly):
/// padding at most half the kernel, every size positive.
pub fn pool_sizes(op: &str, spatial: &[usize], a: Axes<'_>, ceil_mode: bool) -> Result<Vec<usize>> {
    pool_rule(op, ("spatial size", spatial), spatial, a, ceil_mode)
}

/// [`pool_sizes`], its errors showing `shown` (a label and the sizes: the
/// user's whole input where the caller has it).
fn pool_rule(op: &str, shown: InputLabel<'_>, spatial: &[usize], a: Axes<'_>, ceil_mode: bool) -> Result<Vec<usize>> {
    a.check(op, spatial)?;
    if a.padding.iter().zip(a.kernel).any(|(&p, &k)| p > k / 2) {
        return Err(Error::Value(format!(
            "{op}: pad should be at most half of effective kernel size, but got pad={} and kernel_size={}",
            tuple(a.padding),
            tuple(a.kernel)
        )));
    }
    windows(op, shown, spatial, &a, ceil_mode)
}

/// The spatial output sizes of a convolution over any number of spatial
/// axes (conv2d through [`ConvGeometry`], conv3d directly): `(n + 2p −
/// span) / s + 1` per axis, the dilated kernel no larger than the padded
/// input.
pub fn conv_sizes(op: &str, spatial: &[usize], a: Axes<'_>) -> Result<Vec<usize>> {
    conv_rule(op, ("spatial size", spatial), spatial, a)
}

/// [`conv_sizes`], its errors showing `shown` (as [`pool_rule`]'s).
fn conv_rule(op: &str, shown: InputLabel<'_>, spatial: &[usize], a: Axes<'_>) -> Result<Vec<usize>> {
    a.check(op, spatial)?;
    windows(op, shown, spatial, &a, false)
}

/// How a size error names the input: a label and the sizes it shows.
type InputLabel<'a> = (&'static str, &'a [usize]);

/// [`window_axis`] along every axis, or the error of a kernel that does not
/// fit the padded input along one of them.
fn windows(op: &str, shown: InputLabel<'_>, spatial: &[usize], a: &Axes<'_>, ceil_mode: bool) -> Result<Vec<usize>> {
    let outs = (0..spatial.len())
        .map(|i| window_axis(op, spatial[i], a.kernel[i], a.stride[i], a.padding[i], a.dilation[i], ceil_mode))
        .collect::<Result<Vec<usize>>>()?;
    if outs.contains(&0) {
        let full = spatial.iter().zip(a.padding).map(|(&n, &p)| n.saturating_add(p.saturating_mul(2)).to_string());
        return Err(Error::Value(format!(
            "{op}: kernel {} (dilation {}) is larger than the padded input {} ({} {}, padding {})",
            tuple(a.kernel),
            tuple(a.dilation),
            full.collect::<Vec<_>>().join("x"),
            shown.0,
            tuple(shown.1),
            tuple(a.padding)
        )));
    }
    Ok(outs)
}

/// torch's adaptive windows of a dimension of `n` cut into `o` cells: cell
/// i covers `[⌊i·n/o⌋, ⌈(i + 1)·n/o⌉)` (in u128, so `i·n` never wraps).
pub fn adaptive_windows(n: usize, o: usize) -> Vec<(usize, usize)> {
    let (n, o) = (n as u128, o as u128);
    (0..o)
        .map(|i| ((i * n / o) as usize, ((i + 1) * n).div_ceil(o) as usize))
        .collect()
}

/// The output `[N, C, oh, ow]` of adaptive pooling to `size` (None keeps
/// the input's size along that dimension).
pub fn adaptive_output(op: &str, input: &[usize], size: (Option<usize>, Option<usize>)) -> Result<[usize; 4]> {
    let x = batched(op, input)?;
    let oh = size.0.unwrap_or(x[2]);
    let ow = size.1.unwrap_or(x[3]);
    if oh == 0 || ow == 0 {
        return Err(Error::Value(format!(
            "{op}: output_size must be positive, got ({oh}, {ow})"
        )));
    }
    output(op, [x[0], x[1], oh, ow])
}

/// `interpolate`'s output `[N, C, *sizes]` over any number of spatial
/// dimensions, and the scales its kernels read per dimension.
#[derive(Clone, Debug, PartialEq)]
pub struct ResizeGeometry {
    pub output: Vec<usize>,
    /// The user's scale factors, or None per dimension where the kernel
    /// recomputes them from the sizes (`recompute_scale_factor`, or a size).
    pub scales: Vec<Option<f64>>,
}

impl ResizeGeometry {
    /// From exactly one of `size` (the user's ints) or `scale` (`⌊n · s⌋`
    /// in double, torch's rule), one per spatial dimension of `input`
    /// (`[N, C, ...]`); `keep_scales` false drops the scales.
    pub fn new(
        op: &str,
        input: &[usize],
        size: Option<&[i128]>,
        scale: Option<&[f64]>,
        keep_scales: bool,
    ) -> Result<ResizeGeometry> {
        let spatial = input.get(2..).filter(|s| !s.is_empty()).ok_or_else(|| {
            Error::Value(format!(
                "{op}: expected an input (N, C, ...) with spatial dimensions, got shape {}",
                tuple(input)
            ))
        })?;
        let (sizes, scales): (Vec<i128>, Vec<Option<f64>>) = match (size, scale) {
            (Some(s), None) if s.len() == spatial.len() => (s.to_vec(), vec![None; s.len()]),
            (Some(s), None) => {
                return Err(Error::Value(format!(
                    "{op}: Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of {spatial:?} and output size of {s:?}."
                )))
            }
            (None, Some(f)) if f.len() == spatial.len() => {
                let scaled = spatial.iter().zip(f).map(|(&n, &f)| {
                    let v = (n as f64 * f).floor();
                    if !(v >= 0.0 && v < 9.223_372_036_854_776e18) {
                        return Err(Error::Value(format!(
                            "{op}: scale_factor {} of the input size {n} gives no valid output size",
                            py_float(f)
                        )));
                    }
                    Ok(v as i128)
                });
                let keep = |&f: &f64| Some(f).filter(|_| keep_scales);
                (scaled.collect::<Result<_>>()?, f.iter().map(keep).collect())
            }
            (None, Some(f)) => {
                return Err(Error::Value(format!(
                    "{op}: Input and scale_factor must have the same number of spatial dimensions, but got input with spatial dimensions of {spatial:?} and scale_factor of shape {f:?}."
                )))
            }
            _ => {
                return Err(Error::Value(format!(
                    "{op}: exactly one of size or scale_factor must be given"
                )))
            }
        };
        let shown = || format!("({})", sizes.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", "));
        if sizes.iter().any(|&o| o <= 0) || spatial.contains(&0) {
            return Err(Error::Value(format!(
                "{op}: input of shape {} and output size {} must be non-empty",
                tuple(input),
                shown()
            )));
        }
        let mut output = input[..2].to_vec();
        for &o in &sizes {
            output.push(usize::try_from(o).ok().filter(|&o| o <= isize::MAX as usize).ok_or_else(|| {
                Error::Value(format!(
                    "{op}: the output size {} for input {} passes 2**63 - 1",
                    shown(),
                    tuple(input)
                ))
            })?);
        }
        numel(op, "output", &output, 4).map_err(|_| {
            Error::Value(format!(
                "{op}: the output of shape {} for input {} holds more than the largest possible tensor (2**63 - 1 bytes)",
                tuple(&output),
                tuple(input)
            ))
        })?;
        Ok(ResizeGeometry { output, scales })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(stride: Pair, padding: Pair, dilation: Pair, groups: usize) -> ConvOptions {
        ConvOptions { stride, padding, dilation, groups }
    }

    fn conv(x: &[usize], w: &[usize], s: Pair, p: Pair, d: Pair, g: usize) -> Result<[usize; 4]> {
        ConvGeometry::conv2d("conv2d", x, w, None, opts(s, p, d, g)).map(|c| c.output)
    }

    #[test]
    fn conv_sizes_by_hand() {
        // (5 + 2 − 3)/1 + 1 = 5; (7 + 0 − 2·2 − 1)/2 + 1 = 2.
        assert_eq!(conv(&[2, 3, 5, 7], &[4, 3, 3, 3], (1, 2), (1, 0), (1, 2), 1), Ok([2, 4, 5, 2]));
        assert_eq!(conv(&[3, 5, 5], &[4, 3, 3, 3], (1, 1), (0, 0), (1, 1), 1), Ok([1, 4, 3, 3]));
        assert!(conv(&[1, 1, 2, 2], &[1, 1, 3, 3], (1, 1), (0, 0), (1, 1), 1).is_err());
        assert!(conv(&[1, 4, 5, 5], &[6, 3, 3, 3], (1, 1), (0, 0), (1, 1), 2).is_err());
        // Sizes near usize::MAX are errors, not wraps.
        assert!(conv(&[1, 1, 5, 5], &[1, 1, 3, 3], (1, 1), (usize::MAX / 2, 0), (1, 1), 1).is_err());
        assert!(conv(&[1, 1, 5, 5], &[1, 1, 3, 3], (1, 1), (0, 0), (usize::MAX, 1), 1).is_err());
        assert!(conv(&[1 << 40, 1, 1 << 20, 1 << 20], &[1, 1, 1, 1], (1, 1), (0, 0), (1, 1), 1).is_err());
    }

    #[test]
    fn messages_name_the_shapes_shown() {
        // conv1d's (1, 2, 5) input checked as the plane (1, 2, 1, 5).
        let shown = Shown { input: &[1, 2, 5], weight: &[1, 1, 3] };
        let e = ConvGeometry::conv2d_shown("conv1d", shown, &[1, 2, 1, 5], &[1, 1, 1, 3], None, opts((1, 1), (0, 0), (1, 1), 1));
        assert_eq!(
            e,
            Err(Error::Value("conv1d: input of shape (1, 2, 5) has 2 channels, but weight of shape (1, 1, 3) with groups=1 expects 1".into()))
        );
        let e = ConvGeometry::conv_transpose2d_shown("t1", shown, &[1, 2, 1, 5], &[1, 1, 1, 3], None, opts((1, 1), (0, 0), (1, 1), 1), (0, 0));
        assert_eq!(e, Err(Error::Value("t1: input of shape (1, 2, 5) has 2 channels, weight of shape (1, 1, 3) expects 1".into())));
    }

    #[test]
    fn transposed_sizes_by_hand() {
        // (3 − 1)·2 − 0 + 1·(3 − 1) + 1 + 1 = 8.
        let g = ConvGeometry::conv_transpose2d("t", &[1, 2, 3, 3], &[2, 5, 3, 3], None, opts((2, 2), (0, 0), (1, 1), 1), (1, 1)).unwrap();
        assert_eq!(g.output, [1, 5, 8, 8]);
        assert!(ConvGeometry::conv_transpose2d("t", &[1, 2, 1, 1], &[2, 5, 1, 1], None, opts((1, 1), (3, 3), (1, 1), 1), (0, 0)).is_err());
    }

    #[test]
    fn pool_sizes_by_hand() {
        let p = |n: usize, k, s, pad, ceil| PoolGeometry::new("p", &[1, 1, n, n], (k, k), (s, s), (pad, pad), (1, 1), ceil).map(|g| g.output[2]);
        assert_eq!(p(5, 2, 2, 0, false), Ok(2));
        assert_eq!(p(5, 2, 2, 0, true), Ok(3));
        // ceil_mode's last window would start in the right padding: dropped.
        assert_eq!(p(4, 2, 2, 1, true), Ok(3));
        assert!(p(2, 3, 1, 0, false).is_err());
        assert!(p(6, 2, 1, 2, false).is_err());
    }

    #[test]
    fn adaptive_windows_are_torchs() {
        assert_eq!(adaptive_windows(5, 3), vec![(0, 2), (1, 4), (3, 5)]);
        assert_eq!(adaptive_windows(4, 2), vec![(0, 2), (2, 4)]);
        let big = adaptive_windows(usize::MAX, 2);
        assert_eq!(big[1].1, usize::MAX);
    }

    #[test]
    fn resize_refuses_outputs_no_tensor_holds() {
        let r = |x: &[usize], size: Option<&[i128]>, scale: Option<&[f64]>| ResizeGeometry::new("i", x, size, scale, true);
        let g = r(&[1, 1, 2, 3], None, Some(&[2.0, 1.5])).unwrap();
        assert_eq!((g.output, g.scales), (vec![1, 1, 4, 4], vec![Some(2.0), Some(1.5)]));
        // Any number of spatial dimensions; a size keeps no scale.
        let g = r(&[2, 3, 4, 5, 6], Some(&[1, 2, 3]), None).unwrap();
        assert_eq!((g.output, g.scales), (vec![2, 3, 1, 2, 3], vec![None; 3]));
        assert_eq!(r(&[1, 1, 7], None, Some(&[0.5])).unwrap().output, vec![1, 1, 3]);
        assert_eq!(ResizeGeometry::new("i", &[1, 1, 7], None, Some(&[0.5]), false).unwrap().scales, vec![None]);
        assert!(r(&[1, 1, 2, 2], Some(&[1 << 31, 1 << 31]), None).is_err());
        assert!(r(&[1, 1, 2, 2], Some(&[0, 2]), None).is_err());
        assert!(r(&[1, 1, 2, 2], Some(&[-1, 2]), None).is_err());
        assert!(r(&[1, 1, 2, 2], Some(&[1 << 63, 2]), None).is_err());
        assert!(r(&[1, 1, 2, 2], Some(&[1 << 70, 2]), None).is_err());
        assert!(r(&[1, 1, 2, 2], Some(&[2]), None).is_err());
        assert!(r(&[1, 1, 2, 2], None, Some(&[f64::NAN, 1.0])).is_err());
        assert!(r(&[1, 1, 2, 2], None, Some(&[-1.0, 1.0])).is_err());
        assert!(r(&[1, 1, 2, 2], None, Some(&[1e300, 1.0])).is_err());
        assert!(r(&[1, 1, 2, 2], None, None).is_err());
        assert!(r(&[1, 1], Some(&[]), None).is_err());
        assert!(r(&[1, 1, 0, 2], Some(&[2, 2]), None).is_err());
    }
}
