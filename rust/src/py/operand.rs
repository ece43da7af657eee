//! Typed tensor operands: what a binding takes instead of `&Bound<PyAny>`.
//!
//! A binding declares each tensor argument by what its kernel needs —
//! element type, contiguous or strided, read or written — and pyo3
//! converts it on the way in ([`FromPyObject`]): the checks that the object
//! is a onemodel tensor of that dtype, that its view lies inside its
//! storage, that it is contiguous, that a written one is not read-only
//! NumPy memory, are made here once and not again in each binding.
//!
//! | type            | element | layout          | kernel may |
//! |-----------------|---------|-----------------|------------|
//! | [`In<T>`]       | T       | contiguous      | read       |
//! | [`Out<T>`]      | T       | contiguous      | write      |
//! | [`Strided<T>`]  | T       | any strides     | read       |
//! | [`StridedOut<T>`] | T     | any strides     | write      |
//! | [`View`]        | any     | any strides     | read       |
//!
//! An operand keeps its memory alive (an `Arc` of the storage's memory), so
//! a tensor released by its ActivationScope during the call cannot free
//! what the kernel reads. Operands are `Send`: a binding moves or borrows
//! them into `py.detach`, and takes their pointers inside.

use super::storage::{check_extent, DType, Mem, Storage};
use crate::error::{Error, Result};
use crate::kernels::copy;
use crate::layout::{contiguous_strides, is_contiguous};
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::marker::PhantomData;
use std::sync::Arc;

/// A tensor of any dtype and layout: memory, dtype, shape, strides (in
/// elements) and offset, checked to lie inside its storage.
pub struct View {
    mem: Arc<Mem>,
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    offset: usize,
    readonly: bool,
}

impl View {
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn is_contiguous(&self) -> bool {
        is_contiguous(&self.shape, &self.strides)
    }

    /// Address of the first element.
    pub fn addr(&self) -> *mut u8 {
        self.mem.ptr().wrapping_add(self.offset * self.dtype.size())
    }

    /// Refuse read-only memory (a wrapped read-only NumPy array).
    pub fn writable(self) -> Result<View> {
        if self.readonly {
            return Err(Error::Value(
                "the tensor wraps a read-only NumPy array and cannot be written".into(),
            ));
        }
        Ok(self)
    }

    /// A contiguous view of a whole storage (`shape` must hold exactly its
    /// elements): the output a binding allocated itself.
    pub fn whole(storage: &Storage, shape: Vec<usize>) -> PyResult<View> {
        let strides = crate::layout::contiguous_strides(&shape);
        debug_assert_eq!(shape.iter().product::<usize>(), storage.numel);
        Ok(View {
            mem: storage.mem()?,
            dtype: storage.dtype,
            shape,
            strides,
            offset: 0,
            readonly: false,
        })
    }

    /// The same memory broadcast to `shape` (torch's rules: dimensions
    /// aligned from the right, a size-1 or missing dimension repeated with
    /// stride 0), or None when the shapes do not broadcast. Never reaches
    /// past the view's own elements, so it needs no extent check.
    pub fn broadcast_to(&self, shape: &[usize]) -> Option<View> {
        let lead = shape.len().checked_sub(self.shape.len())?;
        let mut strides = vec![0isize; shape.len()];
        for (i, (&n, &s)) in self.shape.iter().zip(&self.strides).enumerate() {
            if n == shape[lead + i] {
                strides[lead + i] = if n == 1 { 0 } else { s };
            } else if n != 1 {
                return None;
            }
        }
        Some(View {
            mem: self.mem.clone(),
            dtype: self.dtype,
            shape: shape.to_vec(),
            strides,
            offset: self.offset,
            readonly: self.readonly,
        })
    }

    /// The first byte and the end of the bytes the view's elements span.
    pub fn byte_span(&self) -> (usize, usize) {
        if self.numel() == 0 {
            return (0, 0);
        }
        let last: usize = self
            .shape
            .iter()
            .zip(&self.strides)
            .map(|(&n, &s)| (n - 1) * s as usize)
            .sum();
        let first = self.addr() as usize;
        (first, first + self.dtype.size() * (last + 1))
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for View {
    type Error = PyErr;

    /// From a Python `Tensor` (attributes `_storage`, `_shape`, `_strides`,
    /// `_offset`).
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<View> {
        let py = obj.py();
        let storage = obj.getattr(intern!(py, "_storage"))?;
        let storage = storage
            .cast::<Storage>()
            .map_err(|_| PyTypeError::new_err("expected a onemodel Tensor"))?;
        let s = storage.get();
        let shape: Vec<usize> = ints(&obj.getattr(intern!(py, "_shape"))?)?;
        let strides: Vec<isize> = ints(&obj.getattr(intern!(py, "_strides"))?)?;
        let offset: usize = obj.getattr(intern!(py, "_offset"))?.extract()?;
        check_extent(s.numel, &shape, &strides, offset, "tensor")?;
        Ok(View {
            mem: s.mem()?,
            dtype: s.dtype,
            shape,
            strides,
            offset,
            readonly: s.readonly,
        })
    }
}

/// The ints of a shape or strides: a tuple item by item (what a Tensor
/// holds; pyo3's generic sequence extraction costs several times more, on
/// the path of every kernel call), any other sequence the generic way.
fn ints<'py, T>(obj: &Bound<'py, PyAny>) -> PyResult<Vec<T>>
where
    T: for<'a> FromPyObject<'a, 'py, Error = PyErr>,
    Vec<T>: for<'a> FromPyObject<'a, 'py, Error = PyErr>,
{
    match obj.cast::<PyTuple>() {
        Ok(t) => {
            let mut v = Vec::with_capacity(t.len());
            for item in t.iter() {
                v.push(item.extract::<T>()?);
            }
            Ok(v)
        }
        Err(_) => Ok(obj.extract()?),
    }
}

/// An element type a tensor can hold.
pub trait Element: Copy + Send + Sync + 'static {
    const DTYPE: DType;
}
impl Element for f32 {
    const DTYPE: DType = DType::F32;
}
impl Element for i64 {
    const DTYPE: DType = DType::I64;
}

/// A tensor operand of element type `T`; `CONTIG`: contiguous (checked on
/// extraction); `WRITE`: the kernel writes it (not read-only memory).
pub struct Operand<T, const CONTIG: bool, const WRITE: bool> {
    view: View,
    _elem: PhantomData<fn() -> T>,
}

/// A contiguous tensor the kernel reads.
pub type In<T> = Operand<T, true, false>;
/// A contiguous tensor the kernel writes.
pub type Out<T> = Operand<T, true, true>;
/// A tensor with any strides the kernel reads.
pub type Strided<T> = Operand<T, false, false>;
/// A tensor with any strides the kernel writes.
pub type StridedOut<T> = Operand<T, false, true>;

impl<T: Element, const CONTIG: bool, const WRITE: bool> Operand<T, CONTIG, WRITE> {
    /// Check a view against the operand's type.
    pub fn from_view(view: View) -> Result<Self> {
        if view.dtype != T::DTYPE {
            return Err(Error::Type(format!(
                "expected a {} tensor, got {}",
                T::DTYPE.name(),
                view.dtype.name()
            )));
        }
        if CONTIG && !view.is_contiguous() {
            return Err(Error::Value(format!(
                "the kernel needs a contiguous tensor, got shape {:?} with strides {:?}",
                view.shape, view.strides
            )));
        }
        let view = if WRITE { view.writable()? } else { view };
        Ok(Operand {
            view,
            _elem: PhantomData,
        })
    }

    pub fn shape(&self) -> &[usize] {
        &self.view.shape
    }

    pub fn strides(&self) -> &[isize] {
        &self.view.strides
    }

    pub fn numel(&self) -> usize {
        self.view.numel()
    }

    pub fn into_view(self) -> View {
        self.view
    }

    /// The shape as `N` sizes, or an error naming the rank it has.
    pub fn dims<const N: usize>(&self) -> Result<[usize; N]> {
        self.shape().try_into().map_err(|_| {
            Error::Value(format!(
                "expected a {N}-D tensor, got shape {:?}",
                self.shape()
            ))
        })
    }

    /// The first element, to read.
    pub fn ptr(&self) -> *const T {
        self.view.addr() as *const T
    }
}

impl<T: Element, const CONTIG: bool> Operand<T, CONTIG, true> {
    /// The first element, to write. The kernel's contract says which other
    /// operands of the call it may overlap (an output the Python side
    /// allocated for the call overlaps none).
    pub fn mut_ptr(&self) -> *mut T {
        self.view.addr() as *mut T
    }
}

impl<T: Element, const WRITE: bool> Operand<T, true, WRITE> {
    /// The elements, in row-major order.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the view is contiguous (checked on extraction) and lies
        // inside its storage, whose memory `self` keeps alive.
        unsafe { std::slice::from_raw_parts(self.ptr(), self.numel()) }
    }
}

impl<T: Element> Out<T> {
    /// The elements, to write.
    ///
    /// # Safety
    /// No other operand of the call may overlap this one while the slice
    /// lives (true of an output the Python side allocated for the call).
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn as_mut_slice(&self) -> &mut [T] {
        // SAFETY: contiguous inside live memory, as `as_slice`; exclusive
        // by the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.mut_ptr(), self.numel()) }
    }
}

impl<'a, 'py, T: Element, const CONTIG: bool, const WRITE: bool> FromPyObject<'a, 'py>
    for Operand<T, CONTIG, WRITE>
{
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Self::from_view(View::extract(obj)?)?)
    }
}

/// Refuse operands whose memory overlaps where one of them is written
/// (each span is the bytes an operand's elements reach and whether it is
/// written): their chunks would race, and the result would depend on
/// threads.
pub fn check_disjoint(
    op: &str,
    spans: impl IntoIterator<Item = ((usize, usize), bool)>,
) -> Result<()> {
    let mut ranges: Vec<(usize, usize, bool)> = spans
        .into_iter()
        .filter(|((a, b), _)| b > a)
        .map(|((a, b), w)| (a, b, w))
        .collect();
    ranges.sort_unstable();
    // Sweep: the furthest end so far and whether what reaches it is written.
    let mut reach: Option<(usize, bool)> = None;
    for &(a, b, w) in &ranges {
        if let Some((end, wrote)) = reach {
            if a < end && (w || wrote) {
                return Err(Error::Value(format!(
                    "{op}: two operands share memory and one of them is written (a parameter given twice, or a gradient that is a view of a parameter?)"
                )));
            }
            if b > end {
                reach = Some((b, w));
            } else if w {
                reach = Some((end, true));
            }
        } else {
            reach = Some((b, w));
        }
    }
    Ok(())
}

/// A float32 operand as contiguous memory for kernels that take many
/// tensors at once (the optimizer steps): the tensor's own
/// memory when it is contiguous, else a gathered copy that is scattered
/// back after the kernel when the operand is written.
pub struct Flat {
    view: View,
    temp: Option<Vec<f32>>,
    write: bool,
}

impl Flat {
    pub fn read(v: Strided<f32>) -> Flat {
        Flat {
            view: v.into_view(),
            temp: None,
            write: false,
        }
    }

    pub fn written(v: StridedOut<f32>) -> Flat {
        Flat {
            view: v.into_view(),
            temp: None,
            write: true,
        }
    }

    /// The operand, which must hold `n` elements (those of its parameter).
    pub fn sized(self, op: &str, what: &str, n: usize) -> PyResult<Flat> {
        if self.len() != n {
            return Err(Error::Value(format!(
                "{op}: the {what} has {} elements, the parameter {n}",
                self.len()
            ))
            .into());
        }
        Ok(self)
    }

    pub fn len(&self) -> usize {
        self.view.numel()
    }

    /// The bytes the view's elements span, and whether written.
    pub fn span(&self) -> ((usize, usize), bool) {
        (self.view.byte_span(), self.write)
    }

    /// Contiguous memory holding the operand (gathering a strided one).
    /// Call without the GIL; the pointer is valid until `finish`.
    pub fn ptr(&mut self) -> *mut f32 {
        let v = &self.view;
        if v.is_contiguous() {
            return v.addr() as *mut f32;
        }
        let mut buf = crate::storage::scratch_vec(v.numel(), 0f32);
        // SAFETY: the view lies inside its storage (checked on extraction);
        // `buf` holds numel contiguous elements.
        unsafe {
            copy::copy_strided(
                &v.shape,
                v.addr(),
                &v.strides,
                buf.as_mut_ptr() as *mut u8,
                &contiguous_strides(&v.shape),
                4,
            )
        };
        self.temp.insert(buf).as_mut_ptr()
    }

    /// Scatter a gathered, written operand back into the tensor.
    pub fn finish(&mut self) {
        if let (Some(buf), true) = (self.temp.take(), self.write) {
            let v = &self.view;
            // SAFETY: as in `ptr`, in the other direction.
            unsafe {
                copy::copy_strided(
                    &v.shape,
                    buf.as_ptr() as *const u8,
                    &contiguous_strides(&v.shape),
                    v.addr(),
                    &v.strides,
                    4,
                )
            };
        }
    }
}
