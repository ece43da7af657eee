//! Bindings of the reduction kernels (`kernels::reduce`, `kernels::moments`).

use super::operand::{Out, Strided};
use crate::dispatch::Mode;
use crate::error::expect_len;
use crate::kernels::moments::{moments, Moment};
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
    let (token, mode) = super::settings();
    let exact = mode == Mode::Exact;
    super::kernel::detach(py, || {
        // SAFETY: the input lies inside its storage; out holds `kept`
        // contiguous elements and is a fresh buffer.
        unsafe {
            reduce::sum(
                token,
                a.shape(),
                a.ptr(),
                a.strides(),
                &mask,
                mean,
                exact,
                out.mut_ptr(),
            )
        }
    })?;
    Ok(())
}

/// Variance or standard deviation (`std`) of `a` over `dims` with
/// `correction` (`kernels::moments`), into the contiguous `out`.
#[pyfunction]
pub fn var(
    py: Python<'_>,
    out: Out<f32>,
    a: Strided<f32>,
    dims: Vec<usize>,
    correction: f64,
    std: bool,
) -> PyResult<()> {
    moments_call(py, "var", out, a, dims, Moment::Var { correction, std })
}

/// Euclidean norm of `a` over `dims` (`kernels::moments`).
#[pyfunction]
pub fn norm2(py: Python<'_>, out: Out<f32>, a: Strided<f32>, dims: Vec<usize>) -> PyResult<()> {
    moments_call(py, "norm", out, a, dims, Moment::Norm2)
}

fn moments_call(
    py: Python<'_>,
    op: &str,
    out: Out<f32>,
    a: Strided<f32>,
    dims: Vec<usize>,
    moment: Moment,
) -> PyResult<()> {
    let (mask, kept) = reduce::reduce_mask(op, a.shape(), &dims)?;
    expect_len(op, "output", out.numel(), kept)?;
    let (token, mode) = super::settings();
    let exact = mode == Mode::Exact;
    super::kernel::detach(py, || {
        // SAFETY: the input lies inside its storage; out holds `kept`
        // contiguous elements and is a fresh buffer.
        unsafe {
            moments(
                token,
                a.shape(),
                a.ptr(),
                a.strides(),
                &mask,
                moment,
                exact,
                out.mut_ptr(),
            )
        }
    })?;
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sum, m)?)?;
    m.add_function(wrap_pyfunction!(var, m)?)?;
    m.add_function(wrap_pyfunction!(norm2, m)?)?;
    Ok(())
}
