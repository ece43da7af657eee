//! Bindings of the copy kernels (`kernels::copy`): copy and fill over any
//! strides and any dtype.

use super::operand::View;
use super::storage::DType;
use crate::error::{expect_shape, Error};
use crate::kernels::copy;
use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;

/// Copy `src` into `dst` element by element (same shape; any strides, `src`
/// may broadcast with stride 0).
#[pyfunction]
pub fn copy_(py: Python<'_>, dst: View, src: View) -> PyResult<()> {
    let d = dst.writable()?;
    expect_shape("copy_", "source", &src.shape, &d.shape)?;
    if d.dtype != src.dtype {
        return Err(Error::Type(format!(
            "copy_: dtypes {} and {} differ",
            d.dtype.name(),
            src.dtype.name()
        ))
        .into());
    }
    super::kernel::detach(py, || {
        // SAFETY: both views lie inside their storages (checked on
        // extraction), whose memory they keep alive.
        unsafe {
            copy::copy_strided(
                &d.shape,
                src.addr(),
                &src.strides,
                d.addr(),
                &d.strides,
                d.dtype.size(),
            )
        }
    })?;
    Ok(())
}

/// Fill `dst` with one value.
#[pyfunction]
pub fn fill_(py: Python<'_>, dst: View, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let d = dst.writable()?;
    // A Python int past int64 (or past f64) is a value the tensor cannot
    // hold: ValueError, as the rest of the library's size and range errors,
    // not the OverflowError of the conversion.
    let overflow = |e: PyErr| {
        if e.is_instance_of::<PyOverflowError>(py) {
            PyErr::from(Error::Value(format!(
                "fill: the value {value} cannot be converted to {} without overflow",
                d.dtype.name()
            )))
        } else {
            e
        }
    };
    let bits = match d.dtype {
        DType::F32 => (value.extract::<f64>().map_err(overflow)? as f32).to_bits() as u64,
        DType::I64 => value.extract::<i64>().map_err(overflow)? as u64,
        DType::Bool => value.is_truthy()? as u64,
    };
    super::kernel::detach(py, || {
        // SAFETY: the view lies inside its storage.
        unsafe { copy::fill_strided(&d.shape, d.addr(), &d.strides, bits, d.dtype.size()) }
    })?;
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(copy_, m)?)?;
    m.add_function(wrap_pyfunction!(fill_, m)?)?;
    Ok(())
}
