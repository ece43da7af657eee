//! Bindings of the softmax kernels (`kernels::softmax`).

use super::operand::{In, Out};
use crate::dispatch;
use crate::error::{expect_shape, Error};
use crate::kernels::softmax;
use pyo3::prelude::*;

/// Softmax / log-softmax over the last dim of a contiguous tensor; with
/// `backward`, `a` is the forward output and `b` its gradient.
#[pyfunction]
#[pyo3(signature = (out, a, b, log, backward))]
pub fn softmax_rows(
    py: Python<'_>,
    out: Out<f32>,
    a: In<f32>,
    b: Option<In<f32>>,
    log: bool,
    backward: bool,
) -> PyResult<()> {
    let op = if log { "log_softmax" } else { "softmax" };
    expect_shape(op, "output", out.shape(), a.shape())?;
    let Some(&d) = out.shape().last() else {
        return Err(Error::Value(format!("{op}: a 0-D tensor has no rows")).into());
    };
    let rows = if d == 0 { 0 } else { out.numel() / d };
    let (token, mode) = super::settings();
    let exact = mode == dispatch::Mode::Exact;
    if backward {
        let g = b.ok_or_else(|| Error::Value(format!("{op}: backward needs the gradient")))?;
        expect_shape(op, "gradient", g.shape(), out.shape())?;
        super::kernel::detach(py, || {
            // SAFETY: three buffers of one contiguous shape; out is fresh.
            unsafe {
                softmax::backward(token, rows, d, a.ptr(), g.ptr(), out.mut_ptr(), log, exact)
            }
        })?;
    } else {
        super::kernel::detach(py, || {
            // SAFETY: two buffers of one contiguous shape.
            unsafe { softmax::forward(token, rows, d, a.ptr(), out.mut_ptr(), log, exact) }
        })?;
    }
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(softmax_rows, m)?)?;
    Ok(())
}
