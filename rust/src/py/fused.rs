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
use super::storage::{extent_fault, DType, Mem, Storage};
use crate::dispatch::Mode;
use crate::kernels::elementwise::{binary_row, BinaryOp};
use crate::ptr::Ptr;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyTuple};
use std::sync::Arc;

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
    if let Some(r) = binary_flat(py, op, a, b)? {
        return Ok(Some(r));
    }
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

// ---------------------------------------------------------------------------
// The contiguous case of + - * /: no views, no strided walk
// ---------------------------------------------------------------------------

/// The most dimensions the contiguous case reads into its fixed arrays.
const FLAT_DIMS: usize = 8;

/// Below this many elements the contiguous case keeps the GIL (releasing
/// and retaking it costs more than the kernel).
const FLAT_KEEP_GIL: usize = 1 << 14;

/// A float32 operand of the contiguous case: a Python number, or a tensor
/// read in place, with its shape and whether its strides are the canonical
/// contiguous ones.
struct Flat<'py> {
    /// The number's value rounded to float32 (as the general path makes
    /// it), or NaN for a tensor.
    value: f32,
    /// The memory of a tensor, held while the kernel reads it.
    mem: Option<Arc<Mem>>,
    ptr: *const f32,
    dims: [usize; FLAT_DIMS],
    ndim: usize,
    numel: usize,
    canonical: bool,
    /// A tensor's `_shape` and `_strides` tuples, which a result of the
    /// same shape shares.
    tuples: Option<(Bound<'py, PyTuple>, Bound<'py, PyTuple>)>,
}

impl<'py> Flat<'py> {
    /// None where the contiguous case does not apply: anything but a
    /// float32 tensor or a Python number, more than FLAT_DIMS dimensions,
    /// no elements, or a view failing the extent check of `View::extract`
    /// (`extent_fault`; the general path then raises its error).
    fn read(obj: &Bound<'py, PyAny>) -> Option<Flat<'py>> {
        let py = obj.py();
        if (obj.is_exact_instance_of::<PyFloat>() || obj.is_instance_of::<PyInt>())
            && !obj.is_instance_of::<PyBool>()
        {
            let value = obj.extract::<f64>().ok()? as f32;
            return Some(Flat {
                value,
                mem: None,
                ptr: std::ptr::null(),
                dims: [0; FLAT_DIMS],
                ndim: 0,
                numel: 1,
                canonical: true,
                tuples: None,
            });
        }
        let storage = obj.getattr(intern!(py, "_storage")).ok()?;
        let s = storage.cast::<Storage>().ok()?.get();
        if s.dtype != DType::F32 {
            return None;
        }
        let shape = obj.getattr(intern!(py, "_shape")).ok()?.cast_into::<PyTuple>().ok()?;
        let strides = obj.getattr(intern!(py, "_strides")).ok()?.cast_into::<PyTuple>().ok()?;
        let offset: usize = obj.getattr(intern!(py, "_offset")).ok()?.extract().ok()?;
        let ndim = shape.len();
        if ndim > FLAT_DIMS || strides.len() != ndim {
            return None;
        }
        let (mut dims, mut steps) = ([0usize; FLAT_DIMS], [0isize; FLAT_DIMS]);
        let (mut numel, mut canonical) = (1usize, true);
        // (Innermost first: the canonical stride of a dimension is the
        // product of the extents after it.)
        for d in (0..ndim).rev() {
            let n: usize = shape.get_item(d).ok()?.extract().ok()?;
            let st: isize = strides.get_item(d).ok()?.extract().ok()?;
            canonical &= st >= 0 && st as usize == numel;
            (dims[d], steps[d]) = (n, st);
            numel = numel.checked_mul(n)?;
        }
        // The two layouts used here: canonical strides, or one element.
        if numel == 0 || !(canonical || numel == 1) {
            return None;
        }
        if extent_fault(s.numel, &dims[..ndim], &steps[..ndim], offset).is_some() {
            return None;
        }
        let mem = s.mem().ok()?;
        let ptr = (mem.ptr() as *const f32).wrapping_add(offset);
        Some(Flat {
            value: f32::NAN,
            mem: Some(mem),
            ptr,
            dims,
            ndim,
            numel,
            canonical,
            tuples: Some((shape, strides)),
        })
    }

    fn dims(&self) -> &[usize] {
        &self.dims[..self.ndim]
    }

    /// Where the kernel reads: the tensor's first element or the number.
    fn src(&self) -> *const f32 {
        if self.mem.is_some() {
            self.ptr
        } else {
            &self.value
        }
    }
}

/// `a op b` for + - * / when both operands are contiguous tensors of one
/// shape (canonical strides), or one of them is a Python number or a
/// one-element tensor of no more dimensions than the other: the output has
/// the other's shape and shares its shape and strides tuples. None for
/// every other case (the strided path below takes it).
fn binary_flat(
    py: Python<'_>,
    op: &str,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<Option<NewTensor>> {
    let kind = match op {
        "add" => BinaryOp::Add,
        "sub" => BinaryOp::Sub,
        "mul" => BinaryOp::Mul,
        "div" => BinaryOp::Div,
        _ => return Ok(None),
    };
    let (Some(fa), Some(fb)) = (Flat::read(a), Flat::read(b)) else {
        return Ok(None);
    };
    // The operand whose shape the output takes, and each input's step.
    let (full, steps) = if fa.canonical && fb.canonical && fa.dims() == fb.dims() {
        (&fa, (1, 1))
    } else if fb.numel == 1 && fb.ndim <= fa.ndim && fa.canonical {
        (&fa, (1, 0))
    } else if fa.numel == 1 && fa.ndim <= fb.ndim && fb.canonical {
        (&fb, (0, 1))
    } else {
        return Ok(None);
    };
    let Some((shape, strides)) = &full.tuples else {
        // (Two numbers: not a tensor operation.)
        return Ok(None);
    };
    let n = full.numel;
    let storage = Py::new(py, Storage::new_pooled(DType::F32, n, false)?)?;
    let mem = storage.get().mem()?;
    let (token, mode) = super::settings();
    let exact = mode == Mode::Exact;
    // The operands as Ptrs (Send, for the detached call) over what each
    // step reads: n elements at step 1, one at step 0.
    let reach = |step: usize| if step == 0 { 1 } else { n };
    let out = Ptr::new(mem.ptr() as *mut f32, n);
    let (pa, pb) = (Ptr::new(fa.src(), reach(steps.0)), Ptr::new(fb.src(), reach(steps.1)));
    let (sa, sb) = (steps.0 as isize, steps.1 as isize);
    let kernel = move || {
        // SAFETY: the output holds n fresh elements that nothing else sees;
        // each input holds what its step reads (Flat::read checked the
        // extents), and the Flats and `mem` keep the memory alive until the
        // call returns.
        unsafe {
            binary_row(
                token,
                kind,
                exact,
                n,
                out.range(0, n),
                (pa.range(0, reach(steps.0)), sa),
                (pb.range(0, reach(steps.1)), sb),
            )
        }
    };
    if n < FLAT_KEEP_GIL {
        kernel();
    } else {
        py.detach(kernel);
    }
    drop(mem);
    Ok(Some((storage, shape.clone().unbind(), strides.clone().unbind())))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(binary_new, m)?)?;
    m.add_function(wrap_pyfunction!(unary_new, m)?)?;
    m.add_function(wrap_pyfunction!(sum_all_new, m)?)?;
    m.add_function(wrap_pyfunction!(matmul_new, m)?)?;
    Ok(())
}
