//! Bindings of the resize kernels (`kernels::resize`).

use super::operand::{In, Out};
use crate::kernels::resize::{self, Resize2d};
use pyo3::prelude::*;

/// Resize forward (`backward = False`: out ← resize(x)) or backward
/// (`backward = True`: out ← the input gradient of the output gradient x).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (out, x, mode, align_corners, scale_h, scale_w, backward))]
pub fn resize2d(
    py: Python<'_>,
    out: Out<f32>,
    x: In<f32>,
    mode: &str,
    align_corners: bool,
    scale_h: Option<f64>,
    scale_w: Option<f64>,
    backward: bool,
) -> PyResult<()> {
    let op = "interpolate";
    let (inp, [yn, yc, oh, ow]) = if backward {
        (out.dims()?, x.dims()?)
    } else {
        (x.dims()?, out.dims()?)
    };
    // The axes' index and weight tables are scratch too (a refusal is
    // MemoryError through `detach`).
    let r = super::kernel::detach(py, || {
        Resize2d::new(op, inp, (oh, ow), mode, align_corners, (scale_h, scale_w))
    })??;
    crate::error::expect_shape(op, "output", &[yn, yc, oh, ow], &[inp[0], inp[1], oh, ow])?;
    super::kernel::detach(py, || {
        // SAFETY: sizes checked above; out is fresh.
        unsafe {
            if backward {
                resize::backward(&r, x.ptr(), out.mut_ptr())
            } else {
                resize::forward(&r, x.ptr(), out.mut_ptr())
            }
        }
    })?;
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(resize2d, m)?)?;
    Ok(())
}
