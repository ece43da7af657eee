//! Bindings of the convolution kernels (`kernels::conv`): conv2d forward,
//! input gradient and weight gradient, which also serve conv_transpose2d.

use super::operand::{In, Out};
use crate::error::expect_len;
use crate::kernels::conv::{self, Conv2d};
use pyo3::prelude::*;

type Pair = (usize, usize);

/// `out = conv2d(x, weight) (+ bias)`.
#[pyfunction]
#[pyo3(signature = (out, x, weight, bias, stride, padding, dilation, groups))]
#[allow(clippy::too_many_arguments)]
pub fn conv2d_forward(
    py: Python<'_>,
    out: Out<f32>,
    x: In<f32>,
    weight: In<f32>,
    bias: Option<In<f32>>,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
    groups: usize,
) -> PyResult<()> {
    let op = "conv2d";
    let (xs, ws, ys) = (x.dims()?, weight.dims()?, out.dims()?);
    let s = Conv2d::from_shapes(op, xs, ws, ys, stride, padding, dilation, groups)?;
    if let Some(b) = &bias {
        expect_len(op, "bias", b.numel(), s.c_out)?;
    }
    let (token, mode) = super::settings();
    super::kernel::detach(py, || {
        // SAFETY: every operand has the size `s` gives it (checked above);
        // `out` is a fresh buffer no input overlaps.
        unsafe {
            conv::forward(
                token,
                mode,
                &s,
                x.ptr(),
                weight.ptr(),
                bias.as_ref().map(In::ptr),
                out.mut_ptr(),
            )
        }
    })?;
    Ok(())
}

/// `dx = ∂conv2d/∂x` applied to `dy`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn conv2d_input_grad(
    py: Python<'_>,
    dx: Out<f32>,
    dy: In<f32>,
    weight: In<f32>,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
    groups: usize,
) -> PyResult<()> {
    let op = "conv2d_input_grad";
    let (xs, ws, ys) = (dx.dims()?, weight.dims()?, dy.dims()?);
    let s = Conv2d::from_shapes(op, xs, ws, ys, stride, padding, dilation, groups)?;
    let (token, mode) = super::settings();
    super::kernel::detach(py, || {
        // SAFETY: sizes checked above; `dx` is a fresh buffer.
        unsafe { conv::input_grad(token, mode, &s, dy.ptr(), weight.ptr(), dx.mut_ptr()) }
    })?;
    Ok(())
}

/// `dw = ∂conv2d/∂w` applied to `dy`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn conv2d_weight_grad(
    py: Python<'_>,
    dw: Out<f32>,
    x: In<f32>,
    dy: In<f32>,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
    groups: usize,
) -> PyResult<()> {
    let op = "conv2d_weight_grad";
    let (xs, ws, ys) = (x.dims()?, dw.dims()?, dy.dims()?);
    let s = Conv2d::from_shapes(op, xs, ws, ys, stride, padding, dilation, groups)?;
    let (token, mode) = super::settings();
    super::kernel::detach(py, || {
        // SAFETY: sizes checked above; `dw` is a fresh buffer.
        unsafe { conv::weight_grad(token, mode, &s, x.ptr(), dy.ptr(), dw.mut_ptr()) }
    })?;
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(conv2d_forward, m)?)?;
    m.add_function(wrap_pyfunction!(conv2d_input_grad, m)?)?;
    m.add_function(wrap_pyfunction!(conv2d_weight_grad, m)?)?;
    Ok(())
}
