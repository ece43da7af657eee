//! Bindings of `geometry`: the output shapes the Python operators allocate.
//! Each converts its arguments and calls one constructor; the sizes and
//! their checks are the core's.

use crate::geometry::{self, ctc, spatial};
use pyo3::prelude::*;

type Ints = (i128, i128);

fn pair(op: &str, what: &str, v: Ints) -> PyResult<(usize, usize)> {
    let [a, b] = geometry::sizes(op, what, [v.0, v.1])?;
    Ok((a, b))
}

/// A Python int as i128, those past it saturated: every size rule refuses
/// them with its own message instead of PyO3's OverflowError.
fn wide(v: &Bound<'_, PyAny>) -> PyResult<i128> {
    match v.extract::<i128>() {
        Ok(v) => Ok(v),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(v.py()) => {
            Ok(if v.lt(0)? { i128::MIN } else { i128::MAX })
        }
        Err(e) => Err(e),
    }
}

fn wide_all(values: &[Bound<'_, PyAny>]) -> PyResult<Vec<i128>> {
    values.iter().map(wide).collect()
}

/// The batched output shape of `conv2d`, or of `conv_transpose2d` when
/// `output_padding` is given; `options` is (stride, padding, dilation, groups);
/// `shown`: the (input, weight) shapes the messages name, where the caller
/// reshaped the user's (conv1d's height-1 plane).
#[pyfunction]
#[pyo3(signature = (op, input, weight, bias, options, output_padding=None, shown=None))]
fn conv2d_geometry(
    op: &str,
    input: Vec<usize>,
    weight: Vec<usize>,
    bias: Option<Vec<usize>>,
    options: (Ints, Ints, Ints, i128),
    output_padding: Option<Ints>,
    shown: Option<(Vec<usize>, Vec<usize>)>,
) -> PyResult<[usize; 4]> {
    let (stride, padding, dilation, groups) = options;
    let o = spatial::ConvOptions {
        stride: pair(op, "stride", stride)?,
        padding: pair(op, "padding", padding)?,
        dilation: pair(op, "dilation", dilation)?,
        groups: geometry::sizes(op, "groups", [groups])?[0],
    };
    let (input, weight, bias) = (&input, &weight, bias.as_deref());
    let named = match &shown {
        Some((i, w)) => spatial::Shown { input: i, weight: w },
        None => spatial::Shown { input, weight },
    };
    Ok(match output_padding {
        None => spatial::ConvGeometry::conv2d_shown(op, named, input, weight, bias, o)?,
        Some(p) => {
            let p = pair(op, "output_padding", p)?;
            spatial::ConvGeometry::conv_transpose2d_shown(op, named, input, weight, bias, o, p)?
        }
    }
    .output)
}

/// One axis of a transposed convolution's output (≤ 0 when empty).
#[pyfunction]
fn conv_transpose_size(op: &str, n: usize, kernel: usize, stride: usize, padding: usize, output_padding: usize, dilation: usize) -> PyResult<i128> {
    Ok(spatial::transposed_size(op, n, kernel, stride, padding, output_padding, dilation)?)
}

/// `(top, bottom, left, right)` of `padding='same'`.
#[pyfunction]
fn conv2d_same_padding(op: &str, weight: Vec<usize>, dilation: Ints) -> PyResult<[usize; 4]> {
    Ok(spatial::same_padding(op, &weight, pair(op, "dilation", dilation)?)?)
}

/// The batched output shape of max or average pooling.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn pool2d_geometry(
    op: &str,
    input: Vec<usize>,
    kernel: Ints,
    stride: Ints,
    padding: Ints,
    dilation: Ints,
    ceil_mode: bool,
) -> PyResult<[usize; 4]> {
    Ok(spatial::PoolGeometry::new(
        op,
        &input,
        pair(op, "kernel_size", kernel)?,
        pair(op, "stride", stride)?,
        pair(op, "padding", padding)?,
        pair(op, "dilation", dilation)?,
        ceil_mode,
    )?
    .output)
}

/// (kernel_size, stride, padding, dilation), one value per spatial axis.
type AxesArg = (Vec<usize>, Vec<usize>, Vec<usize>, Vec<usize>);

fn axes_view(a: &AxesArg) -> spatial::Axes<'_> {
    spatial::Axes { kernel: &a.0, stride: &a.1, padding: &a.2, dilation: &a.3 }
}

/// The spatial output sizes of an N-d pooling (the 3-D and 1-D pools).
#[pyfunction]
fn pool_output_sizes(op: &str, spatial: Vec<usize>, axes: AxesArg, ceil_mode: bool) -> PyResult<Vec<usize>> {
    Ok(spatial::pool_sizes(op, &spatial, axes_view(&axes), ceil_mode)?)
}

/// The spatial output sizes of an N-d convolution (conv3d, conv1d).
#[pyfunction]
fn conv_output_sizes(op: &str, spatial: Vec<usize>, axes: AxesArg) -> PyResult<Vec<usize>> {
    Ok(spatial::conv_sizes(op, &spatial, axes_view(&axes))?)
}

/// The batched output shape of adaptive pooling (None: keep that size).
#[pyfunction]
fn adaptive_pool_geometry(
    op: &str,
    input: Vec<usize>,
    size: (Option<i128>, Option<i128>),
) -> PyResult<[usize; 4]> {
    let one = |v: Option<i128>| -> PyResult<Option<usize>> {
        Ok(match v {
            Some(v) => Some(geometry::sizes(op, "output_size", [v])?[0]),
            None => None,
        })
    };
    Ok(spatial::adaptive_output(op, &input, (one(size.0)?, one(size.1)?))?)
}

/// torch's adaptive windows `[(start, end)]` of `n` positions in `o` cells.
#[pyfunction]
fn adaptive_windows(n: usize, o: usize) -> Vec<(usize, usize)> {
    spatial::adaptive_windows(n, o)
}

/// `interpolate`'s output shape and per-dimension scales (None where the
/// kernel recomputes them), from one size or scale per spatial dimension.
#[pyfunction]
fn resize_geometry(
    op: &str,
    input: Vec<usize>,
    size: Option<Vec<Bound<'_, PyAny>>>,
    scale: Option<Vec<f64>>,
    keep_scales: bool,
) -> PyResult<(Vec<usize>, Vec<Option<f64>>)> {
    let size = size.as_deref().map(wide_all).transpose()?;
    let g = spatial::ResizeGeometry::new(op, &input, size.as_deref(), scale.as_deref(), keep_scales)?;
    Ok((g.output, g.scales))
}

/// `ctc_loss`'s checked call: `(log_probs [T, N, C], unbatched, blank,
/// input_lengths, lines)`, from the targets' shape and row-major values.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn ctc_geometry(
    log_probs: Vec<usize>,
    targets_shape: Vec<usize>,
    targets: Vec<i64>,
    input_lengths: Vec<Bound<'_, PyAny>>,
    target_lengths: Vec<Bound<'_, PyAny>>,
    blank: Bound<'_, PyAny>,
    reduction: &str,
) -> PyResult<([usize; 3], bool, usize, Vec<usize>, Vec<Vec<i64>>)> {
    ctc::Reduction::parse(reduction)?;
    let g = ctc::CtcGeometry::new(
        &log_probs,
        &targets_shape,
        &targets,
        &wide_all(&input_lengths)?,
        &wide_all(&target_lengths)?,
        wide(&blank)?,
    )?;
    Ok((g.log_probs, g.unbatched, g.blank, g.input_lengths, g.lines))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(conv2d_geometry, m)?)?;
    m.add_function(wrap_pyfunction!(conv2d_same_padding, m)?)?;
    m.add_function(wrap_pyfunction!(conv_transpose_size, m)?)?;
    m.add_function(wrap_pyfunction!(pool2d_geometry, m)?)?;
    m.add_function(wrap_pyfunction!(pool_output_sizes, m)?)?;
    m.add_function(wrap_pyfunction!(conv_output_sizes, m)?)?;
    m.add_function(wrap_pyfunction!(adaptive_pool_geometry, m)?)?;
    m.add_function(wrap_pyfunction!(adaptive_windows, m)?)?;
    m.add_function(wrap_pyfunction!(resize_geometry, m)?)?;
    m.add_function(wrap_pyfunction!(ctc_geometry, m)?)?;
    Ok(())
}
