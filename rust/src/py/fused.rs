//! The small-op path: one call that checks the operands, broadcasts them,
//! allocates the output from the pool and runs the kernel, for the
//! operators whose Python-side bookkeeping (broadcast shape, output
//! allocation, stride-0 views) used to cost more than the kernel itself on
//! small tensors (issue 22).
//!
//! Each function returns `None` when its fast case does not apply (an
//! operand that is not a float32 tensor or a Python number, shapes that do
//! not broadcast, ranks the fast case does not cover): the caller then takes
//! the general Python path, which raises the error naming the op and the
//! shapes. So the errors stay in one place, and so do the kernels: these
//! functions call the same bindings the general path calls (same kernel,
//! same order, same bits), only with operands built here.

use super::elementwise;
use super::operand::{Out, Strided, StridedOut, View};
use super::storage::{DType, Storage};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyTuple};

/// A new storage, its shape and its (contiguous) strides, for the caller to
/// wrap in a Tensor.
type NewTensor = (Py<Storage>, Py<PyTuple>, Py<PyTuple>);

/// A float32 operand: a float32 tensor, or a Python float or int (not a
/// bool) as a 0-d tensor holding it rounded to float32, as the general path
/// makes it. None for anything else.
fn operand(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Option<View>> {
    if (obj.is_exact_instance_of::<PyFloat>() || obj.is_instance_of::<PyInt>())
        && !obj.is_instance_of::<PyBool>()
    {
        let value = obj.extract::<f64>()? as f32;
        let storage = Storage::new_pooled(DType::F32, 1, false)?;
        let view = View::whole(&storage, Vec::new())?;
        // SAFETY: a fresh one-element float32 buffer that nothing else sees.
        unsafe { *(view.addr() as *mut f32) = value };
        let _ = py;
        return Ok(Some(view));
    }
    match obj.extract::<View>() {
        Ok(v) if v.dtype == DType::F32 => Ok(Some(v)),
        _ => Ok(None),
    }
}

/// torch's broadcast shape of two shapes, or None.
fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    if a == b {
        return Some(a.to_vec());
    }
    let n = a.len().max(b.len());
    let mut out = vec![0usize; n];
    for (i, o) in out.iter_mut().enumerate() {
        let x = if i + a.len() >= n { a[i + a.len() - n] } else { 1 };
        let y = if i + b.len() >= n { b[i + b.len() - n] } else { 1 };
        *o = if x == y || y == 1 {
            x
        } else if x == 1 {
            y
        } else {
            return None;
        };
    }
    Some(out)
}

/// A fresh float32 output of `shape` and its view.
fn output(py: Python<'_>, shape: &[usize]) -> PyResult<(Py<Storage>, View)> {
    let storage = Py::new(py, Storage::new_pooled(DType::F32, shape.iter().product(), false)?)?;
    let view = View::whole(storage.get(), shape.to_vec())?;
    Ok((storage, view))
}

fn finish(py: Python<'_>, storage: Py<Storage>, shape: &[usize]) -> PyResult<NewTensor> {
    let strides = crate::layout::contiguous_strides(shape);
    Ok((
        storage,
        PyTuple::new(py, shape)?.unbind(),
        PyTuple::new(py, strides)?.unbind(),
    ))
}

/// `op(a, b)` (an element-wise binary op of `_core.binary` without scalar
/// parameters) into a new tensor of the broadcast shape.
#[pyfunction]
pub fn binary_new(
    py: Python<'_>,
    op: &str,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<Option<NewTensor>> {
    let (Some(a), Some(b)) = (operand(py, a)?, operand(py, b)?) else {
        return Ok(None);
    };
    let Some(shape) = broadcast(&a.shape, &b.shape) else {
        return Ok(None);
    };
    // (An operand of the output's shape is used as it is: no copy of its
    // layout, the common case of equal shapes.)
    let a = if a.shape == shape { Some(a) } else { a.broadcast_to(&shape) };
    let b = if b.shape == shape { Some(b) } else { b.broadcast_to(&shape) };
    let (Some(a), Some(b)) = (a, b) else {
        return Ok(None);
    };
    let (storage, out) = output(py, &shape)?;
    elementwise::binary(
        py,
        op,
        StridedOut::from_view(out)?,
        Strided::from_view(a)?,
        Strided::from_view(b)?,
        None,
        None,
    )?;
    finish(py, storage, &shape).map(Some)
}

/// `op(a)` (an element-wise unary op of `_core.unary` without scalar
/// parameters) into a new tensor of a's shape.
#[pyfunction]
pub fn unary_new(py: Python<'_>, op: &str, a: &Bound<'_, PyAny>) -> PyResult<Option<NewTensor>> {
    let Some(a) = operand(py, a)? else {
        return Ok(None);
    };
    let shape = a.shape.clone();
    let (storage, out) = output(py, &shape)?;
    elementwise::unary(
        py,
        op,
        StridedOut::from_view(out)?,
        Strided::from_view(a)?,
        None,
        None,
    )?;
    finish(py, storage, &shape).map(Some)
}

/// The double-precision sum (or mean) of every element of a float32 tensor,
/// as a new 0-d tensor (`_core.sum` over all dimensions).
#[pyfunction]
pub fn sum_all_new(py: Python<'_>, a: &Bound<'_, PyAny>, mean: bool) -> PyResult<Option<NewTensor>> {
    let Ok(a) = a.extract::<View>() else {
        return Ok(None);
    };
    if a.dtype != DType::F32 {
        return Ok(None);
    }
    let dims = (0..a.shape.len()).collect();
    let (storage, out) = output(py, &[])?;
    super::reduce::sum(py, Out::from_view(out)?, Strided::from_view(a)?, dims, mean)?;
    finish(py, storage, &[]).map(Some)
}

/// The product of two float32 matrices (2-D × 2-D, any strides) as a new
/// contiguous [M, N] tensor (`_core.matmul` with a batch of one).
#[pyfunction]
pub fn matmul_new(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<Option<NewTensor>> {
    let (Ok(a), Ok(b)) = (a.extract::<View>(), b.extract::<View>()) else {
        return Ok(None);
    };
    if a.dtype != DType::F32 || b.dtype != DType::F32 || a.shape.len() != 2 || b.shape.len() != 2 {
        return Ok(None);
    }
    let (m, k, n) = (a.shape[0], a.shape[1], b.shape[1]);
    if b.shape[0] != k {
        return Ok(None);
    }
    let (Some(a3), Some(b3)) = (a.broadcast_to(&[1, m, k]), b.broadcast_to(&[1, k, n])) else {
        return Ok(None);
    };
    let (storage, out) = output(py, &[1, m, n])?;
    super::matmul::matmul(py, Out::from_view(out)?, Strided::from_view(a3)?, Strided::from_view(b3)?)?;
    finish(py, storage, &[m, n]).map(Some)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(binary_new, m)?)?;
    m.add_function(wrap_pyfunction!(unary_new, m)?)?;
    m.add_function(wrap_pyfunction!(sum_all_new, m)?)?;
    m.add_function(wrap_pyfunction!(matmul_new, m)?)?;
    Ok(())
}
