//! Bindings of `geometry`: the output shapes the Python operators allocate.
//! Each converts its arguments and calls one constructor; the sizes and
//! their checks are the core's.

use crate::geometry::{self, spatial};
use pyo3::prelude::*;

type Ints = (i128, i128);

fn pair(op: &str, what: &str, v: Ints) -> PyResult<(usize, usize)> {
    let [a, b] = geometry::sizes(op, what, [v.0, v.1])?;
    Ok((a, b))
}

/// The batched output shape of `conv2d` (input 3-D or 4-D).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn conv2d_geometry(
    op: &str,
    input: Vec<usize>,
    weight: Vec<usize>,
    bias: Option<Vec<usize>>,
    stride: Ints,
    padding: Ints,
    dilation: Ints,
    groups: i128,
) -> PyResult<[usize; 4]> {
    let [groups] = geometry::sizes(op, "groups", [groups])?;
    Ok(spatial::ConvGeometry::conv2d(
        op,
        &input,
        &weight,
        bias.as_deref(),
        pair(op, "stride", stride)?,
        pair(op, "padding", padding)?,
        pair(op, "dilation", dilation)?,
        groups,
    )?
    .output)
}

/// The batched output shape of `conv_transpose2d`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn conv_transpose2d_geometry(
    op: &str,
    input: Vec<usize>,
    weight: Vec<usize>,
    bias: Option<Vec<usize>>,
    stride: Ints,
    padding: Ints,
    output_padding: Ints,
    dilation: Ints,
    groups: i128,
) -> PyResult<[usize; 4]> {
    let [groups] = geometry::sizes(op, "groups", [groups])?;
    Ok(spatial::ConvGeometry::conv_transpose2d(
        op,
        &input,
        &weight,
        bias.as_deref(),
        pair(op, "stride", stride)?,
        pair(op, "padding", padding)?,
        pair(op, "output_padding", output_padding)?,
        pair(op, "dilation", dilation)?,
        groups,
    )?
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

/// The output shape of `interpolate` from a size or a scale factor.
#[pyfunction]
fn resize2d_geometry(
    op: &str,
    input: Vec<usize>,
    size: Option<Ints>,
    scale: Option<(f64, f64)>,
) -> PyResult<[usize; 4]> {
    let size = size.map(|s| pair(op, "size", s)).transpose()?;
    Ok(spatial::resize_output(op, &input, size, scale)?)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(conv2d_geometry, m)?)?;
    m.add_function(wrap_pyfunction!(conv_transpose2d_geometry, m)?)?;
    m.add_function(wrap_pyfunction!(conv2d_same_padding, m)?)?;
    m.add_function(wrap_pyfunction!(conv_transpose_size, m)?)?;
    m.add_function(wrap_pyfunction!(pool2d_geometry, m)?)?;
    m.add_function(wrap_pyfunction!(adaptive_pool_geometry, m)?)?;
    m.add_function(wrap_pyfunction!(adaptive_windows, m)?)?;
    m.add_function(wrap_pyfunction!(resize2d_geometry, m)?)?;
    Ok(())
}
