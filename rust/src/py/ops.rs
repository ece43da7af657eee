//! Kernel entry points. Each converts its arguments (holding the GIL), checks
//! what the kernel relies on, then releases the GIL for the kernel itself.
//! Shape rules (broadcasting, which dims to reduce) are the Python side's;
//! these functions only refuse layouts the kernels cannot serve safely.

use super::storage::{DType, TView};
use crate::dispatch::{self, Mode};
use crate::kernels::{copy, elementwise, matmul as mm, reduce};
use crate::layout::is_contiguous;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

fn same_shape(op: &str, a: &TView, b: &TView) -> PyResult<()> {
    if a.shape != b.shape {
        return Err(PyValueError::new_err(format!(
            "{op}: shapes {:?} and {:?} differ",
            a.shape, b.shape
        )));
    }
    Ok(())
}

/// Copy `src` into `dst` element by element (same shape; any strides, `src`
/// may broadcast with stride 0).
#[pyfunction]
pub fn copy_(py: Python<'_>, dst: &Bound<'_, PyAny>, src: &Bound<'_, PyAny>) -> PyResult<()> {
    let d = TView::of(dst, "copy_")?.writable("copy_")?;
    let s = TView::of(src, "copy_")?;
    same_shape("copy_", &d, &s)?;
    if d.dtype != s.dtype {
        return Err(PyTypeError::new_err(format!(
            "copy_: dtypes {} and {} differ",
            d.dtype.name(),
            s.dtype.name()
        )));
    }
    py.detach(move || {
        // SAFETY: both views were checked to lie inside their storages, whose
        // memory the TViews keep alive.
        unsafe {
            copy::copy_strided(
                &d.shape,
                s.addr() as *const u8,
                &s.strides,
                d.addr() as *mut u8,
                &d.strides,
                d.dtype.size(),
            )
        }
    });
    Ok(())
}

/// Fill `dst` with one value.
#[pyfunction]
pub fn fill_(py: Python<'_>, dst: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let d = TView::of(dst, "fill_")?.writable("fill_")?;
    let bits = match d.dtype {
        DType::F32 => (value.extract::<f64>()? as f32).to_bits() as u64,
        DType::I64 => value.extract::<i64>()? as u64,
    };
    py.detach(move || {
        // SAFETY: the view was checked to lie inside its storage.
        unsafe {
            copy::fill_strided(
                &d.shape,
                d.addr() as *mut u8,
                &d.strides,
                bits,
                d.dtype.size(),
            )
        }
    });
    Ok(())
}

fn exact() -> bool {
    dispatch::mode() == Mode::Exact
}

/// `out = op(a, b)`; all three of one shape (broadcast views have stride 0).
/// `p`, `q`: the scalar parameters of `pow_backward` (exponent) and
/// `clamp_backward` (bounds; NaN = none).
#[pyfunction]
#[pyo3(signature = (op, out, a, b, p=None, q=None))]
pub fn binary(
    py: Python<'_>,
    op: &str,
    out: &Bound<'_, PyAny>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    p: Option<f64>,
    q: Option<f64>,
) -> PyResult<()> {
    use elementwise::BinaryOp as B;
    let (p, q) = (p.unwrap_or(f64::NAN) as f32, q.unwrap_or(f64::NAN) as f32);
    let kind = match op {
        "add" => B::Add,
        "sub" => B::Sub,
        "mul" => B::Mul,
        "div" => B::Div,
        "relu_backward" => B::ReluBackward,
        "maximum" => B::Maximum,
        "minimum" => B::Minimum,
        "sigmoid_backward" => B::SigmoidBackward,
        "tanh_backward" => B::TanhBackward,
        "gelu_backward" => B::GeluBackward,
        "exp_backward" => B::ExpBackward,
        "log_backward" => B::LogBackward,
        "erf_backward" => B::ErfBackward,
        "sqrt_backward" => B::SqrtBackward,
        "abs_backward" => B::AbsBackward,
        "square_backward" => B::SquareBackward,
        "pow_backward" => B::PowBackward(p),
        "clamp_backward" => B::ClampBackward(p, q),
        other => {
            return Err(PyValueError::new_err(format!(
                "binary: unknown op {other:?}"
            )))
        }
    };
    let o = TView::f32(out, op)?.writable(op)?;
    let x = TView::f32(a, op)?;
    let y = TView::f32(b, op)?;
    same_shape(op, &o, &x)?;
    same_shape(op, &o, &y)?;
    let exact = exact();
    py.detach(move || {
        dispatch::with_ieee(|| {
            // SAFETY: every view lies inside its storage (checked on extraction).
            unsafe {
                elementwise::binary(
                    kind,
                    exact,
                    &o.shape,
                    o.addr() as *mut f32,
                    &o.strides,
                    x.addr() as *const f32,
                    &x.strides,
                    y.addr() as *const f32,
                    &y.strides,
                )
            }
        })
    });
    Ok(())
}

/// `out = op(a, b, c)`: `where` (b where a ≠ 0, else c) and the gradients of
/// maximum/minimum (`maximum_backward`: a = g, b = this input, c = the other).
#[pyfunction]
pub fn ternary(
    py: Python<'_>,
    op: &str,
    out: &Bound<'_, PyAny>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    c: &Bound<'_, PyAny>,
) -> PyResult<()> {
    use elementwise::TernaryOp as T;
    let kind = match op {
        "where" => T::Where,
        "maximum_backward" => T::MaximumBackward,
        "minimum_backward" => T::MinimumBackward,
        other => {
            return Err(PyValueError::new_err(format!(
                "ternary: unknown op {other:?}"
            )))
        }
    };
    let o = TView::f32(out, op)?.writable(op)?;
    let x = TView::f32(a, op)?;
    let y = TView::f32(b, op)?;
    let z = TView::f32(c, op)?;
    same_shape(op, &o, &x)?;
    same_shape(op, &o, &y)?;
    same_shape(op, &o, &z)?;
    let exact = exact();
    py.detach(move || {
        // SAFETY: every view lies inside its storage (checked on extraction).
        unsafe {
            elementwise::ternary(
                kind,
                exact,
                &o.shape,
                o.addr() as *mut f32,
                &o.strides,
                x.addr() as *const f32,
                &x.strides,
                y.addr() as *const f32,
                &y.strides,
                z.addr() as *const f32,
                &z.strides,
            )
        }
    });
    Ok(())
}

/// `out = op(a)`. `p`, `q`: the exponent of `pow`, the bounds of `clamp`
/// (NaN = no bound on that side).
#[pyfunction]
#[pyo3(signature = (op, out, a, p=None, q=None))]
pub fn unary(
    py: Python<'_>,
    op: &str,
    out: &Bound<'_, PyAny>,
    a: &Bound<'_, PyAny>,
    p: Option<f64>,
    q: Option<f64>,
) -> PyResult<()> {
    use elementwise::UnaryOp as U;
    let (p, q) = (p.unwrap_or(f64::NAN) as f32, q.unwrap_or(f64::NAN) as f32);
    let kind = match op {
        "neg" => U::Neg,
        "relu" => U::Relu,
        "exp" => U::Exp,
        "log" => U::Log,
        "sigmoid" => U::Sigmoid,
        "tanh" => U::Tanh,
        "gelu" => U::Gelu,
        "erf" => U::Erf,
        "sqrt" => U::Sqrt,
        "abs" => U::Abs,
        "square" => U::Square,
        "pow" => U::Pow(p),
        "clamp" => U::Clamp(p, q),
        other => {
            return Err(PyValueError::new_err(format!(
                "unary: unknown op {other:?}"
            )))
        }
    };
    let o = TView::f32(out, op)?.writable(op)?;
    let x = TView::f32(a, op)?;
    same_shape(op, &o, &x)?;
    let exact = exact();
    py.detach(move || {
        dispatch::with_ieee(|| {
            // SAFETY: both views lie inside their storages.
            unsafe {
                elementwise::unary(
                    kind,
                    exact,
                    &o.shape,
                    o.addr() as *mut f32,
                    &o.strides,
                    x.addr() as *const f32,
                    &x.strides,
                )
            }
        })
    });
    Ok(())
}

/// Sum (or mean) of `a` over `dims` into the contiguous `out`, whose element
/// count is the product of the kept dimensions.
#[pyfunction]
pub fn sum(
    py: Python<'_>,
    out: &Bound<'_, PyAny>,
    a: &Bound<'_, PyAny>,
    dims: Vec<usize>,
    mean: bool,
) -> PyResult<()> {
    let o = TView::f32(out, "sum")?.writable("sum")?;
    let x = TView::f32(a, "sum")?;
    let mut reduce = vec![false; x.shape.len()];
    for &d in &dims {
        if d >= reduce.len() {
            return Err(PyValueError::new_err(format!(
                "sum: dim {d} out of range for shape {:?}",
                x.shape
            )));
        }
        reduce[d] = true;
    }
    let kept: usize = (0..x.shape.len())
        .filter(|&d| !reduce[d])
        .map(|d| x.shape[d])
        .product();
    if o.numel() != kept || !is_contiguous(&o.shape, &o.strides) {
        return Err(PyValueError::new_err(format!(
            "sum: output of shape {:?} does not hold {kept} contiguous elements",
            o.shape
        )));
    }
    let exact = exact();
    py.detach(move || {
        // SAFETY: both views lie inside their storages; out holds `kept`
        // contiguous elements.
        unsafe {
            reduce::sum(
                &x.shape,
                x.addr() as *const f32,
                &x.strides,
                &reduce,
                mean,
                exact,
                o.addr() as *mut f32,
            )
        }
    });
    Ok(())
}

/// Batched product `out[i] = a[i] · b[i]`: a [B, M, K], b [B, K, N] (any
/// strides, batch stride 0 to broadcast), out [B, M, N] contiguous.
#[pyfunction]
pub fn matmul(
    py: Python<'_>,
    out: &Bound<'_, PyAny>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let o = TView::f32(out, "matmul")?.writable("matmul")?;
    let x = TView::f32(a, "matmul")?;
    let y = TView::f32(b, "matmul")?;
    if x.shape.len() != 3 || y.shape.len() != 3 || o.shape.len() != 3 {
        return Err(PyValueError::new_err(format!(
            "matmul kernel: expected 3-D operands, got {:?}, {:?} -> {:?}",
            x.shape, y.shape, o.shape
        )));
    }
    let (bt, m, k) = (x.shape[0], x.shape[1], x.shape[2]);
    let n = y.shape[2];
    if y.shape[0] != bt || y.shape[1] != k || o.shape != [bt, m, n] {
        return Err(PyValueError::new_err(format!(
            "matmul kernel: shapes {:?} @ {:?} -> {:?} do not agree",
            x.shape, y.shape, o.shape
        )));
    }
    if !is_contiguous(&o.shape, &o.strides) {
        return Err(PyValueError::new_err(
            "matmul kernel: the output must be contiguous",
        ));
    }
    let mode = dispatch::mode();
    py.detach(move || {
        let ar = mm::MatRef {
            ptr: x.addr() as *const f32,
            rows: m,
            cols: k,
            rs: x.strides[1],
            cs: x.strides[2],
        };
        let br = mm::MatRef {
            ptr: y.addr() as *const f32,
            rows: k,
            cols: n,
            rs: y.strides[1],
            cs: y.strides[2],
        };
        // SAFETY: the views lie inside their storages; out is a fresh
        // contiguous [B, M, N] buffer that does not overlap the inputs
        // (the Python side always allocates it).
        unsafe {
            mm::gemm_batched(
                mode,
                bt,
                ar,
                x.strides[0],
                br,
                y.strides[0],
                o.addr() as *mut f32,
                n,
            )
        }
    });
    Ok(())
}
