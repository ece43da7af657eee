//! Bindings of the pooling kernels (`kernels::pool`).

use super::operand::{In, Out};
use crate::error::{expect_len, Error};
use crate::kernels::pool::{self, Pool2d};
use pyo3::prelude::*;

type Pair = (usize, usize);

#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn max_pool2d_forward(
    py: Python<'_>,
    out: Out<f32>,
    idx: Out<i64>,
    x: In<f32>,
    kernel: Pair,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
) -> PyResult<()> {
    let op = "max_pool2d";
    let s = Pool2d::from_shapes(
        op,
        x.dims()?,
        out.dims()?,
        kernel,
        stride,
        padding,
        dilation,
    )?;
    expect_len(op, "indices", idx.numel(), s.output_len())?;
    let (token, _) = super::settings();
    super::kernel::detach(py, || {
        // SAFETY: sizes checked above; out and idx are fresh buffers.
        unsafe { pool::max_forward(token, &s, x.ptr(), out.mut_ptr(), idx.mut_ptr()) }
    })?;
    Ok(())
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn max_pool2d_backward(
    py: Python<'_>,
    dx: Out<f32>,
    g: In<f32>,
    idx: In<i64>,
    kernel: Pair,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
) -> PyResult<()> {
    let op = "max_pool2d_backward";
    let s = Pool2d::from_shapes(op, dx.dims()?, g.dims()?, kernel, stride, padding, dilation)?;
    expect_len(op, "indices", idx.numel(), s.output_len())?;
    let hw = (s.h * s.w) as i64;
    if idx.as_slice().iter().any(|&i| i >= hw) {
        return Err(Error::Index(format!("{op}: an index is outside a plane of {hw}")).into());
    }
    super::kernel::detach(py, || {
        // SAFETY: sizes and index range checked above; dx is fresh.
        unsafe { pool::max_backward(&s, g.ptr(), idx.ptr(), dx.mut_ptr()) }
    })?;
    Ok(())
}

/// Forward (`backward = False`: out ← avg_pool2d(x)) or backward (out ←
/// the input gradient of the output gradient x).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (out, x, kernel, stride, padding, count_include_pad, divisor_override, backward))]
pub fn avg_pool2d(
    py: Python<'_>,
    out: Out<f32>,
    x: In<f32>,
    kernel: Pair,
    stride: Pair,
    padding: Pair,
    count_include_pad: bool,
    divisor_override: Option<usize>,
    backward: bool,
) -> PyResult<()> {
    let op = "avg_pool2d";
    let (inp, outp) = if backward {
        (out.dims()?, x.dims()?)
    } else {
        (x.dims()?, out.dims()?)
    };
    let s = Pool2d::from_shapes(op, inp, outp, kernel, stride, padding, (1, 1))?;
    super::kernel::detach(py, || {
        // SAFETY: sizes checked above; out is fresh.
        unsafe {
            if backward {
                pool::avg_backward(
                    &s,
                    x.ptr(),
                    out.mut_ptr(),
                    count_include_pad,
                    divisor_override,
                )
            } else {
                pool::avg_forward(
                    &s,
                    x.ptr(),
                    out.mut_ptr(),
                    count_include_pad,
                    divisor_override,
                )
            }
        }
    })?;
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(max_pool2d_forward, m)?)?;
    m.add_function(wrap_pyfunction!(max_pool2d_backward, m)?)?;
    m.add_function(wrap_pyfunction!(avg_pool2d, m)?)?;
    Ok(())
}
