//! Bindings of the reduction kernels (`kernels::reduce`).

use super::operand::{Out, Strided};
use crate::dispatch::{self, Mode};
use crate::error::expect_len;
use crate::kernels::reduce;
use pyo3::prelude::*;

/// Sum (or mean) of `a` over `dims` into the contiguous `out`, whose element
/// count is the product of the kept dimensions.
#[pyfunction]
pub fn sum(
    py: Python<'_>,
    out: Out<f32>,
    a: Strided<f32>,
    dims: Vec<usize>,
    mean: bool,
) -> PyResult<()> {
    let (mask, kept) = reduce::reduce_mask("sum", a.shape(), &dims)?;
    expect_len("sum", "output", out.numel(), kept)?;
    let exact = dispatch::mode() == Mode::Exact;
    py.detach(|| {
        // SAFETY: the input lies inside its storage; out holds `kept`
        // contiguous elements and is a fresh buffer.
        unsafe {
            reduce::sum(
                a.shape(),
                a.ptr(),
                a.strides(),
                &mask,
                mean,
                exact,
                out.mut_ptr(),
            )
        }
    });
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sum, m)?)?;
    Ok(())
}
