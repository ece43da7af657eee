//! Bindings of the normalization kernels (`kernels::norm`).

use super::operand::{In, Out};
use crate::error::{expect_len, expect_shape};
use crate::kernels::norm;
use pyo3::prelude::*;

/// Every optional operand holds `len` elements.
fn opt_len<const W: bool>(
    op: &str,
    what: &str,
    v: &Option<super::operand::Operand<f32, true, W>>,
    len: usize,
) -> crate::error::Result<()> {
    match v {
        Some(v) => expect_len(op, what, v.numel(), len),
        None => Ok(()),
    }
}

/// The gradients a backward writes (each optional).
struct Grads<'a> {
    dx: &'a Option<Out<f32>>,
    dw: &'a Option<Out<f32>>,
    db: &'a Option<Out<f32>>,
}

/// What both forwards check: the output like x, the saved mean and invstd
/// `stats` long, the weight and bias `params` long.
fn forward_sizes(
    op: &str,
    (x, y): (&In<f32>, &Out<f32>),
    (mean, invstd): (&Out<f32>, &Out<f32>),
    (weight, bias): (&Option<In<f32>>, &Option<In<f32>>),
    (params, stats): (usize, usize),
) -> crate::error::Result<()> {
    expect_shape(op, "output", y.shape(), x.shape())?;
    expect_len(op, "save_mean", mean.numel(), stats)?;
    expect_len(op, "save_invstd", invstd.numel(), stats)?;
    opt_len(op, "weight", weight, params)?;
    opt_len(op, "bias", bias, params)
}

/// What both backwards check: the gradient and dx like x, dw, db and the
/// weight `params` long, the saved mean and invstd `stats` long.
fn backward_sizes(
    op: &str,
    (x, g): (&In<f32>, &In<f32>),
    grads: Grads<'_>,
    weight: &Option<In<f32>>,
    (mean, invstd): (&In<f32>, &In<f32>),
    (params, stats): (usize, usize),
) -> crate::error::Result<()> {
    expect_shape(op, "gradient", g.shape(), x.shape())?;
    opt_len(op, "dx", grads.dx, x.numel())?;
    opt_len(op, "dw", grads.dw, params)?;
    opt_len(op, "db", grads.db, params)?;
    opt_len(op, "weight", weight, params)?;
    expect_len(op, "mean", mean.numel(), stats)?;
    expect_len(op, "invstd", invstd.numel(), stats)
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (y, save_mean, save_invstd, var_unbiased, x, weight, bias, running_mean, running_var, eps))]
pub fn batch_norm_forward(
    py: Python<'_>,
    y: Out<f32>,
    save_mean: Out<f32>,
    save_invstd: Out<f32>,
    var_unbiased: Out<f32>,
    x: In<f32>,
    weight: Option<In<f32>>,
    bias: Option<In<f32>>,
    running_mean: Option<In<f32>>,
    running_var: Option<In<f32>>,
    eps: f64,
) -> PyResult<()> {
    let op = "batch_norm";
    let dims = norm::batch_dims(op, x.shape())?;
    let c = dims.1;
    let saved = (&save_mean, &save_invstd);
    forward_sizes(op, (&x, &y), saved, (&weight, &bias), (c, c))?;
    expect_len(op, "var", var_unbiased.numel(), c)?;
    opt_len(op, "running_mean", &running_mean, c)?;
    opt_len(op, "running_var", &running_var, c)?;
    let running = running_mean.as_ref().zip(running_var.as_ref());
    let (token, _) = super::settings();
    super::kernel::detach(py, || {
        // SAFETY: sizes checked above; the outputs are fresh buffers.
        unsafe {
            norm::batch_norm_forward(
                token,
                dims,
                x.ptr(),
                weight.as_ref().map(In::ptr),
                bias.as_ref().map(In::ptr),
                running.map(|(m, v)| (m.ptr(), v.ptr())),
                eps,
                y.mut_ptr(),
                save_mean.mut_ptr(),
                save_invstd.mut_ptr(),
                var_unbiased.mut_ptr(),
            )
        }
    })
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (dx, dw, db, x, g, weight, mean, invstd, training))]
pub fn batch_norm_backward(
    py: Python<'_>,
    dx: Option<Out<f32>>,
    dw: Option<Out<f32>>,
    db: Option<Out<f32>>,
    x: In<f32>,
    g: In<f32>,
    weight: Option<In<f32>>,
    mean: In<f32>,
    invstd: In<f32>,
    training: bool,
) -> PyResult<()> {
    let op = "batch_norm_backward";
    let dims = norm::batch_dims(op, x.shape())?;
    let grads = Grads { dx: &dx, dw: &dw, db: &db };
    backward_sizes(op, (&x, &g), grads, &weight, (&mean, &invstd), (dims.1, dims.1))?;
    super::kernel::detach(py, || {
        // SAFETY: sizes checked above; the gradients are fresh buffers.
        unsafe {
            norm::batch_norm_backward(
                dims,
                x.ptr(),
                g.ptr(),
                weight.as_ref().map(In::ptr),
                mean.ptr(),
                invstd.ptr(),
                training,
                dx.as_ref().map(Out::mut_ptr),
                dw.as_ref().map(Out::mut_ptr),
                db.as_ref().map(Out::mut_ptr),
            )
        }
    })
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (y, save_mean, save_invstd, x, d, weight, bias, eps))]
pub fn layer_norm_forward(
    py: Python<'_>,
    y: Out<f32>,
    save_mean: Out<f32>,
    save_invstd: Out<f32>,
    x: In<f32>,
    d: usize,
    weight: Option<In<f32>>,
    bias: Option<In<f32>>,
    eps: f64,
) -> PyResult<()> {
    let op = "layer_norm";
    let rows = norm::layer_rows(op, x.shape(), d)?;
    let saved = (&save_mean, &save_invstd);
    forward_sizes(op, (&x, &y), saved, (&weight, &bias), (d, rows))?;
    let (token, _) = super::settings();
    super::kernel::detach(py, || {
        // SAFETY: sizes checked above; the outputs are fresh buffers.
        unsafe {
            norm::layer_norm_forward(
                token,
                rows,
                d,
                x.ptr(),
                weight.as_ref().map(In::ptr),
                bias.as_ref().map(In::ptr),
                eps,
                y.mut_ptr(),
                save_mean.mut_ptr(),
                save_invstd.mut_ptr(),
            )
        }
    })
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (dx, dw, db, x, g, d, weight, mean, invstd))]
pub fn layer_norm_backward(
    py: Python<'_>,
    dx: Option<Out<f32>>,
    dw: Option<Out<f32>>,
    db: Option<Out<f32>>,
    x: In<f32>,
    g: In<f32>,
    d: usize,
    weight: Option<In<f32>>,
    mean: In<f32>,
    invstd: In<f32>,
) -> PyResult<()> {
    let op = "layer_norm_backward";
    let rows = norm::layer_rows(op, x.shape(), d)?;
    let grads = Grads { dx: &dx, dw: &dw, db: &db };
    backward_sizes(op, (&x, &g), grads, &weight, (&mean, &invstd), (d, rows))?;
    super::kernel::detach(py, || {
        // SAFETY: sizes checked above; the gradients are fresh buffers.
        unsafe {
            norm::layer_norm_backward(
                rows,
                d,
                x.ptr(),
                g.ptr(),
                weight.as_ref().map(In::ptr),
                mean.ptr(),
                invstd.ptr(),
                dx.as_ref().map(Out::mut_ptr),
                dw.as_ref().map(Out::mut_ptr),
                db.as_ref().map(Out::mut_ptr),
            )
        }
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(batch_norm_forward, m)?)?;
    m.add_function(wrap_pyfunction!(batch_norm_backward, m)?)?;
    m.add_function(wrap_pyfunction!(layer_norm_forward, m)?)?;
    m.add_function(wrap_pyfunction!(layer_norm_backward, m)?)?;
    Ok(())
}
