//! `Storage`: the Python handle on one buffer (the tensor operands the
//! kernels take are in `operand.rs`).
//!
//! Ownership: a `Storage` holds `Arc<Mem>`; kernels clone that `Arc` for the
//! duration of a call, and a NumPy view holds one through its base object.
//! `release()` (used by ActivationScope) drops the storage's own reference:
//! the memory returns to the pool as soon as no kernel or NumPy view still
//! holds it, and any later use of the storage raises instead of reading
//! freed memory.

use crate::error::{Error, Result};
use crate::storage::Buffer;
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    F32,
    I64,
    /// One byte per element, 0 or 1 (NumPy's and torch's bool layout).
    Bool,
}

impl DType {
    pub fn parse(name: &str) -> PyResult<DType> {
        match name {
            "float32" => Ok(DType::F32),
            "int64" => Ok(DType::I64),
            "bool" => Ok(DType::Bool),
            other => Err(PyTypeError::new_err(format!(
                "unsupported dtype {other:?}: onemodel has float32, int64 and bool"
            ))),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::I64 => "int64",
            DType::Bool => "bool",
        }
    }
    pub fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::I64 => 8,
            DType::Bool => 1,
        }
    }
}

/// The memory behind a storage: a pooled buffer, or a NumPy array's memory
/// kept alive by a reference to the array.
pub enum Mem {
    Pooled(Buffer),
    External { ptr: *mut u8, _owner: Py<PyAny> },
}

// SAFETY: Pooled buffers are Send + Sync; an external pointer refers to memory
// owned by a NumPy array that `_owner` keeps alive, and Py<PyAny> is Send +
// Sync. Concurrent access is governed by the kernels (disjoint writes).
unsafe impl Send for Mem {}
// SAFETY: see Send.
unsafe impl Sync for Mem {}

impl Mem {
    pub fn ptr(&self) -> *mut u8 {
        match self {
            Mem::Pooled(b) => b.as_ptr(),
            Mem::External { ptr, .. } => *ptr,
        }
    }
}

#[pyclass(module = "onemodel._core", weakref, frozen)]
pub struct Storage {
    mem: Mutex<Option<Arc<Mem>>>,
    pub(super) dtype: DType,
    pub(super) numel: usize,
    version: AtomicU64,
    pub(super) readonly: bool,
    pooled: bool,
}

impl Storage {
    /// A pooled storage of `numel` elements: [`Error::Value`] when the byte
    /// size overflows, [`Error::Memory`] when the system cannot supply it
    /// (both before anything is written).
    pub fn new_pooled(dtype: DType, numel: usize, zeroed: bool) -> Result<Storage> {
        let bytes = numel
            .checked_mul(dtype.size())
            .filter(|&b| b <= crate::storage::MAX_BYTES)
            .ok_or_else(|| {
                Error::Value(format!(
                    "empty: {numel} {} elements of {} bytes overflow the largest possible size ({} bytes)",
                    dtype.name(),
                    dtype.size(),
                    crate::storage::MAX_BYTES
                ))
            })?;
        let buf = if zeroed {
            Buffer::try_zeroed(bytes)
        } else {
            Buffer::try_new(bytes)
        }
        .map_err(|e| e.context("empty"))?;
        Ok(Storage {
            mem: Mutex::new(Some(Arc::new(Mem::Pooled(buf)))),
            dtype,
            numel,
            version: AtomicU64::new(0),
            readonly: false,
            pooled: true,
        })
    }

    pub fn mem(&self) -> PyResult<Arc<Mem>> {
        self.mem
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .ok_or_else(|| PyRuntimeError::new_err("this tensor's storage was released (its ActivationScope ended); copy values out before the scope closes"))
    }
}

#[pymethods]
impl Storage {
    /// A new pooled storage of `numel` elements (zeros if `zeroed`).
    #[staticmethod]
    #[pyo3(signature = (dtype, numel, zeroed=false))]
    fn empty(dtype: &str, numel: usize, zeroed: bool) -> PyResult<Storage> {
        Ok(Storage::new_pooled(DType::parse(dtype)?, numel, zeroed)?)
    }

    /// Wrap a NumPy array's memory without copying. Returns
    /// (storage, shape, strides in elements).
    #[staticmethod]
    fn from_numpy(
        py: Python<'_>,
        array: &Bound<'_, PyAny>,
    ) -> PyResult<(Storage, Vec<usize>, Vec<isize>)> {
        let (ptr, shape, byte_strides, dtype) = if let Ok(a) = array.cast::<PyArrayDyn<f32>>() {
            (
                a.data() as *mut u8,
                a.shape().to_vec(),
                a.strides().to_vec(),
                DType::F32,
            )
        } else if let Ok(a) = array.cast::<PyArrayDyn<i64>>() {
            (
                a.data() as *mut u8,
                a.shape().to_vec(),
                a.strides().to_vec(),
                DType::I64,
            )
        } else if let Ok(a) = array.cast::<PyArrayDyn<bool>>() {
            (
                a.data() as *mut u8,
                a.shape().to_vec(),
                a.strides().to_vec(),
                DType::Bool,
            )
        } else {
            let dt = array
                .getattr(intern!(py, "dtype"))
                .map(|d| d.to_string())
                .unwrap_or_default();
            return Err(PyTypeError::new_err(format!(
                "from_numpy: expected a float32, int64 or bool array, got dtype {dt}; convert with .astype(numpy.float32)"
            )));
        };
        let writeable: bool = array
            .getattr(intern!(py, "flags"))?
            .getattr(intern!(py, "writeable"))?
            .extract()?;
        let size = dtype.size() as isize;
        let mut strides = Vec::with_capacity(shape.len());
        let mut extent = 1usize;
        for (&n, &s) in shape.iter().zip(&byte_strides) {
            if s < 0 || s % size != 0 {
                return Err(PyValueError::new_err(format!(
                    "from_numpy: strides {byte_strides:?} (bytes) of an array of shape {shape:?} are negative or not a multiple of the element size; pass a copy (numpy.ascontiguousarray)"
                )));
            }
            strides.push(s / size);
            if n == 0 {
                extent = 0;
            } else if extent != 0 {
                extent += (n - 1) * (s / size) as usize;
            }
        }
        let storage = Storage {
            mem: Mutex::new(Some(Arc::new(Mem::External {
                ptr,
                _owner: array.clone().unbind(),
            }))),
            dtype,
            numel: extent,
            version: AtomicU64::new(0),
            readonly: !writeable,
            pooled: false,
        };
        Ok((storage, shape, strides))
    }

    /// A NumPy array viewing `shape`/`strides` (elements) from `offset`,
    /// sharing this storage's memory. The array keeps the memory alive.
    fn numpy<'py>(
        &self,
        py: Python<'py>,
        shape: Vec<usize>,
        strides: Vec<isize>,
        offset: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mem = self.mem()?;
        check_extent(self.numel, &shape, &strides, offset, "numpy")?;
        let holder = Bound::new(py, MemHolder { _mem: mem.clone() })?.into_any();
        let size = self.dtype.size();
        // SAFETY: the view lies inside the storage (checked above); the
        // memory stays alive as long as `holder`, the array's base, lives.
        unsafe {
            let base = mem.ptr().add(offset * size);
            match self.dtype {
                DType::F32 => {
                    Ok(view_array::<f32>(base as *const f32, &shape, &strides, holder)?.into_any())
                }
                DType::I64 => {
                    Ok(view_array::<i64>(base as *const i64, &shape, &strides, holder)?.into_any())
                }
                // Every byte a bool storage holds is 0 or 1: the storages
                // are written only by NumPy bool arrays, copies of bool
                // storages and fills with 0 or 1.
                DType::Bool => {
                    Ok(view_array::<bool>(base as *const bool, &shape, &strides, holder)?.into_any())
                }
            }
        }
    }

    #[getter]
    fn dtype(&self) -> &'static str {
        self.dtype.name()
    }
    #[getter]
    fn numel(&self) -> usize {
        self.numel
    }
    #[getter]
    fn nbytes(&self) -> usize {
        self.numel * self.dtype.size()
    }
    #[getter]
    fn version(&self) -> u64 {
        self.version.load(Ordering::Relaxed)
    }
    #[getter]
    fn readonly(&self) -> bool {
        self.readonly
    }
    /// True for pooled buffers, false for wrapped NumPy memory.
    #[getter]
    fn pooled(&self) -> bool {
        self.pooled
    }
    #[getter]
    fn released(&self) -> bool {
        self.mem.lock().unwrap_or_else(|e| e.into_inner()).is_none()
    }
    /// Address of the first element (for identity checks in tests).
    #[getter]
    fn data_ptr(&self) -> PyResult<usize> {
        Ok(self.mem()?.ptr() as usize)
    }
    /// Record an in-place write: saved copies of this storage are now stale.
    fn bump_version(&self) {
        self.version.fetch_add(1, Ordering::Relaxed);
    }
    /// Drop this storage's reference to its memory (ActivationScope). Returns
    /// False if it was already released.
    fn release(&self) -> bool {
        self.mem
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .is_some()
    }
}

/// Base object of NumPy views: keeps the memory alive.
#[pyclass(module = "onemodel._core", frozen)]
struct MemHolder {
    _mem: Arc<Mem>,
}

/// # Safety
/// `base` must be valid for every offset of `shape`/`strides` while `holder`
/// lives.
unsafe fn view_array<'py, T: numpy::Element>(
    base: *const T,
    shape: &[usize],
    strides: &[isize],
    holder: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArrayDyn<T>>> {
    use numpy::ndarray::{ArrayViewD, IxDyn, ShapeBuilder};
    let ustrides: Vec<usize> = strides.iter().map(|&s| s as usize).collect();
    // SAFETY: guaranteed by the caller; strides are non-negative (checked by
    // check_extent), so ndarray's raw view is well-formed.
    let view = unsafe { ArrayViewD::from_shape_ptr(IxDyn(shape).strides(IxDyn(&ustrides)), base) };
    // SAFETY: the memory behind `view` stays valid while `holder` lives,
    // and `holder` becomes the array's base object.
    Ok(unsafe { PyArrayDyn::borrow_from_array(&view, holder) })
}

/// Why a strided view does not fit its storage ([`extent_fault`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtentFault {
    /// The shape and the strides differ in length.
    Rank,
    /// More elements than `isize::MAX`.
    TooMany,
    /// A negative stride.
    Negative,
    /// An element past the storage's end.
    Past,
}

/// The extent rule of every view, without allocating (the small-op path
/// of py/fused.rs runs it on every operand): None when a view of `shape`
/// and `strides` from `offset` stays inside a storage of `numel` elements
/// and its element count is a size (at most `isize::MAX`, so that
/// `shape.iter().product()` in the kernels cannot wrap). Every sum and
/// product here is checked: a view built from any Python ints either
/// passes or is refused. A view of no elements reaches nothing.
#[inline]
pub fn extent_fault(numel: usize, shape: &[usize], strides: &[isize], offset: usize) -> Option<ExtentFault> {
    if shape.len() != strides.len() {
        return Some(ExtentFault::Rank);
    }
    let count = shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .filter(|&c| c <= isize::MAX as usize);
    match count {
        None => return Some(ExtentFault::TooMany),
        Some(0) => return None,
        Some(_) => {}
    }
    let mut last = Some(offset);
    for (&n, &s) in shape.iter().zip(strides) {
        if s < 0 {
            return Some(ExtentFault::Negative);
        }
        last = last.and_then(|l| l.checked_add((n - 1).checked_mul(s as usize)?));
    }
    match last {
        Some(last) if last < numel => None,
        _ => Some(ExtentFault::Past),
    }
}

/// [`extent_fault`] as the ValueError naming `op` and the view.
pub fn check_extent(
    numel: usize,
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    op: &str,
) -> PyResult<()> {
    let Some(fault) = extent_fault(numel, shape, strides, offset) else {
        return Ok(());
    };
    Err(PyValueError::new_err(match fault {
        ExtentFault::Rank => format!("{op}: shape {shape:?} and strides {strides:?} differ in rank"),
        ExtentFault::TooMany => format!(
            "{op}: a view of shape {shape:?} holds more elements than the largest possible size ({})",
            isize::MAX
        ),
        ExtentFault::Negative => format!("{op}: negative stride in {strides:?}"),
        ExtentFault::Past => format!(
            "{op}: view (shape {shape:?}, strides {strides:?}, offset {offset}) reaches past the {numel} elements of its storage"
        ),
    }))
}
