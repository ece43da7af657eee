//! Binding of the batched product (`kernels::matmul`).

use super::operand::{Out, Strided};
use crate::gemm::{gemm, MatRef, Product};
use crate::kernels::matmul as mm;
use pyo3::prelude::*;

/// Batched product `out[i] = a[i] · b[i]`: a [B, M, K], b [B, K, N] (any
/// strides, batch stride 0 to broadcast), out [B, M, N] contiguous.
#[pyfunction]
pub fn matmul(py: Python<'_>, out: Out<f32>, a: Strided<f32>, b: Strided<f32>) -> PyResult<()> {
    let (bt, m, k, n) = mm::batched_dims(a.shape(), b.shape(), out.shape())?;
    let (sa, sb) = (a.strides(), b.strides());
    let (token, mode) = super::settings();
    super::kernel::detach(py, || {
        let ar = MatRef {
            ptr: a.ptr(),
            rows: m,
            cols: k,
            rs: sa[1],
            cs: sa[2],
        };
        let br = MatRef {
            ptr: b.ptr(),
            rows: k,
            cols: n,
            rs: sb[1],
            cs: sb[2],
        };
        // SAFETY: the views lie inside their storages; out is a fresh
        // contiguous [B, M, N] buffer that does not overlap the inputs.
        unsafe {
            let prod = Product::views(ar, br, out.mut_ptr(), n).batched(bt, sa[0], sb[0]);
            gemm(token, mode, &prod)
        }
    })?;
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(matmul, m)?)?;
    Ok(())
}
