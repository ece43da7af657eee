//! Bindings of the gather kernels (`kernels::gather`): embedding, the class
//! pick of nll_loss, the dropout mask.

use super::operand::{In, Out};
use crate::dispatch;
use crate::error::{expect_len, Error};
use crate::kernels::gather;
use pyo3::prelude::*;

/// `out[i] = weight[idx[i]]` (rows); IndexError for an index out of range.
#[pyfunction]
pub fn embedding_forward(
    py: Python<'_>,
    out: Out<f32>,
    weight: In<f32>,
    idx: In<i64>,
) -> PyResult<()> {
    let op = "embedding";
    let (rows, d) = gather::embedding_shape(op, weight.shape(), idx.numel(), out.numel())?;
    if let Err((pos, v)) = gather::check_indices(idx.as_slice(), rows, None) {
        return Err(Error::Value(format!(
            "embedding: index {v} at position {pos} is out of range for a table of {rows} rows (weight shape {:?})",
            weight.shape()
        ))
        .into());
    }
    // SAFETY: out is a fresh buffer no other operand overlaps.
    let dst = unsafe { out.as_mut_slice() };
    super::kernel::detach(py, || {
        gather::gather_rows(weight.as_slice(), d, idx.as_slice(), dst)
    })?;
    Ok(())
}

/// `dw[r] = Σ g[i]` over positions with `idx[i] = r`, `padding_idx` skipped.
#[pyfunction]
#[pyo3(signature = (dw, g, idx, padding_idx))]
pub fn embedding_backward(
    py: Python<'_>,
    dw: Out<f32>,
    g: In<f32>,
    idx: In<i64>,
    padding_idx: Option<i64>,
) -> PyResult<()> {
    let op = "embedding_backward";
    let (rows, d) = gather::embedding_shape(op, dw.shape(), idx.numel(), g.numel())?;
    if gather::check_indices(idx.as_slice(), rows, None).is_err() {
        return Err(Error::Value(format!("{op}: index out of range")).into());
    }
    // SAFETY: dw is a fresh buffer.
    let dst = unsafe { dw.as_mut_slice() };
    super::kernel::detach(py, || {
        dispatch::with_ieee(|| {
            gather::scatter_add_rows(g.as_slice(), d, idx.as_slice(), padding_idx, dst)
        })
    })?;
    Ok(())
}

/// nll_loss's per-element loss and weight (see kernels::gather::nll_pick).
#[pyfunction]
#[pyo3(signature = (loss, wt, lp, target, weight, ignore_index))]
pub fn nll_pick(
    py: Python<'_>,
    loss: Out<f32>,
    wt: Out<f32>,
    lp: In<f32>,
    target: In<i64>,
    weight: Option<In<f32>>,
    ignore_index: i64,
) -> PyResult<()> {
    let op = "nll_loss";
    let dims = gather::nll_shape(op, lp.shape(), target.numel())?;
    expect_len(op, "loss", loss.numel(), target.numel())?;
    expect_len(op, "weights", wt.numel(), target.numel())?;
    if let Some(w) = &weight {
        expect_len(op, "weight", w.numel(), dims.1)?;
    }
    if let Err((pos, v)) = gather::check_indices(target.as_slice(), dims.1, Some(ignore_index)) {
        return Err(Error::Value(format!(
            "nll_loss: target {v} at position {pos} is out of bounds for {} classes (input shape {:?})",
            dims.1,
            lp.shape()
        ))
        .into());
    }
    // SAFETY: loss and wt are fresh buffers.
    let (lo, wo) = unsafe { (loss.as_mut_slice(), wt.as_mut_slice()) };
    super::kernel::detach(py, || {
        dispatch::with_ieee(|| {
            gather::nll_pick(
                lp.as_slice(),
                dims,
                target.as_slice(),
                weight.as_ref().map(In::as_slice),
                ignore_index,
                lo,
                wo,
            )
        })
    })?;
    Ok(())
}

#[pyfunction]
#[pyo3(signature = (dlp, g, target, weight, ignore_index))]
pub fn nll_scatter(
    py: Python<'_>,
    dlp: Out<f32>,
    g: In<f32>,
    target: In<i64>,
    weight: Option<In<f32>>,
    ignore_index: i64,
) -> PyResult<()> {
    let op = "nll_loss_backward";
    let dims = gather::nll_shape(op, dlp.shape(), target.numel())?;
    expect_len(op, "gradient", g.numel(), target.numel())?;
    if let Some(w) = &weight {
        expect_len(op, "weight", w.numel(), dims.1)?;
    }
    if gather::check_indices(target.as_slice(), dims.1, Some(ignore_index)).is_err() {
        return Err(Error::Value(format!("{op}: target out of range")).into());
    }
    // SAFETY: dlp is a fresh buffer.
    let dst = unsafe { dlp.as_mut_slice() };
    super::kernel::detach(py, || {
        dispatch::with_ieee(|| {
            gather::nll_scatter(
                g.as_slice(),
                dims,
                target.as_slice(),
                weight.as_ref().map(In::as_slice),
                ignore_index,
                dst,
            )
        })
    })?;
    Ok(())
}

/// Fill `out` with the dropout multipliers (0 or 1/(1−p)) of `key`.
#[pyfunction]
pub fn dropout_mask(py: Python<'_>, out: Out<f32>, key: u64, p: f64) -> PyResult<()> {
    if !(0.0..1.0).contains(&p) {
        return Err(Error::Value(format!("dropout: p must be in [0, 1), got {p}")).into());
    }
    let scale = (1.0 / (1.0 - p)) as f32;
    // SAFETY: out is a fresh buffer.
    let dst = unsafe { out.as_mut_slice() };
    super::kernel::detach(py, || gather::dropout_mask(key, p, scale, dst))?;
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(embedding_forward, m)?)?;
    m.add_function(wrap_pyfunction!(embedding_backward, m)?)?;
    m.add_function(wrap_pyfunction!(nll_pick, m)?)?;
    m.add_function(wrap_pyfunction!(nll_scatter, m)?)?;
    m.add_function(wrap_pyfunction!(dropout_mask, m)?)?;
    Ok(())
}
