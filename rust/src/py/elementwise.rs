//! Bindings of the element-wise kernels (`kernels::elementwise`): one
//! function per arity, the operation named by a string.

use super::operand::{In, Out, Strided, StridedOut};
use super::Token;
use crate::dispatch::{self, Mode};
use crate::error::{expect_shape, Error};
use crate::kernels::elementwise;
use pyo3::marker::Ungil;
use pyo3::prelude::*;

fn unknown(arity: &str, op: &str) -> PyErr {
    Error::Value(format!("{arity}: unknown op {op:?}")).into()
}

/// Check that every operand has `out`'s shape, then run `kernel(token,
/// exact)` with the GIL released, in the IEEE environment when `ieee` (the
/// arithmetic arities; `ternary` only selects).
fn launch(
    py: Python<'_>,
    op: &str,
    out: &StridedOut<f32>,
    operands: &[(&str, &Strided<f32>)],
    ieee: bool,
    kernel: impl FnOnce(Token, bool) + Ungil + Send,
) -> PyResult<()> {
    for (what, v) in operands {
        expect_shape(op, what, v.shape(), out.shape())?;
    }
    let (token, mode) = super::settings();
    let exact = mode == Mode::Exact;
    super::kernel::detach(py, || {
        if ieee {
            dispatch::with_ieee(|| kernel(token, exact))
        } else {
            kernel(token, exact)
        }
    })
}

/// `out = op(a, b)`; all three of one shape (broadcast views have stride 0).
/// `p`, `q`: the scalar parameters of `pow_backward` (exponent) and
/// `clamp_backward` (bounds; NaN = none).
#[pyfunction]
#[pyo3(signature = (op, out, a, b, p=None, q=None))]
pub fn binary(
    py: Python<'_>,
    op: &str,
    out: StridedOut<f32>,
    a: Strided<f32>,
    b: Strided<f32>,
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
        "atan2" => B::Atan2,
        "pow" => B::Power,
        other => return Err(unknown("binary", other)),
    };
    launch(py, op, &out, &[("a", &a), ("b", &b)], true, |token, exact| {
        let (o, sh) = ((out.mut_ptr(), out.strides()), out.shape());
        // SAFETY: every view lies inside its storage (checked on
        // extraction) and has out's shape (checked by `launch`).
        unsafe { elementwise::binary(token, kind, exact, sh, o.0, o.1, a.ptr(), a.strides(), b.ptr(), b.strides()) }
    })
}

/// `out = op(a, b, c)`: `where` (b where a ≠ 0, else c) and the gradients of
/// maximum/minimum (`maximum_backward`: a = g, b = this input, c = the other).
#[pyfunction]
pub fn ternary(
    py: Python<'_>,
    op: &str,
    out: StridedOut<f32>,
    a: Strided<f32>,
    b: Strided<f32>,
    c: Strided<f32>,
) -> PyResult<()> {
    use elementwise::TernaryOp as T;
    let kind = match op {
        "where" => T::Where,
        "maximum_backward" => T::MaximumBackward,
        "minimum_backward" => T::MinimumBackward,
        other => return Err(unknown("ternary", other)),
    };
    launch(py, op, &out, &[("a", &a), ("b", &b), ("c", &c)], false, |token, exact| {
        let (o, sh) = ((out.mut_ptr(), out.strides()), out.shape());
        let (a, b, c) = ((a.ptr(), a.strides()), (b.ptr(), b.strides()), (c.ptr(), c.strides()));
        // SAFETY: every view lies inside its storage (checked on
        // extraction) and has out's shape (checked by `launch`).
        unsafe { elementwise::ternary(token, kind, exact, sh, o.0, o.1, a.0, a.1, b.0, b.1, c.0, c.1) }
    })
}

/// `out = op(a)`. `p`, `q`: the exponent of `pow`, the bounds of `clamp`
/// (NaN = no bound on that side).
#[pyfunction]
#[pyo3(signature = (op, out, a, p=None, q=None))]
pub fn unary(
    py: Python<'_>,
    op: &str,
    out: StridedOut<f32>,
    a: Strided<f32>,
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
        "sin" => U::Sin,
        "cos" => U::Cos,
        "tan" => U::Tan,
        "asin" => U::Asin,
        "acos" => U::Acos,
        "atan" => U::Atan,
        "sinh" => U::Sinh,
        "cosh" => U::Cosh,
        "asinh" => U::Asinh,
        "acosh" => U::Acosh,
        "atanh" => U::Atanh,
        "expm1" => U::Expm1,
        "log1p" => U::Log1p,
        "exp2" => U::Exp2,
        "log2" => U::Log2,
        "log10" => U::Log10,
        "log1pexp" => U::Log1pExp,
        "erfc" => U::Erfc,
        "erfinv" => U::Erfinv,
        other => return Err(unknown("unary", other)),
    };
    launch(py, op, &out, &[("a", &a)], true, |token, exact| {
        let (o, sh) = ((out.mut_ptr(), out.strides()), out.shape());
        // SAFETY: both views lie inside their storages and have one shape
        // (checked by `launch`).
        unsafe { elementwise::unary(token, kind, exact, sh, o.0, o.1, a.ptr(), a.strides()) }
    })
}

/// `out = f(a)` for the gamma family (`math::gamma`): each element in
/// binary64, rounded once to binary32 (one scalar loop on the calling
/// thread: no sum, so no order to fix). `op`: "lgamma", "digamma" or
/// "polygamma" (of order `n`). Both tensors contiguous, one shape.
#[pyfunction]
#[pyo3(signature = (op, out, a, n=0))]
pub fn gamma_family(py: Python<'_>, op: &str, out: Out<f32>, a: In<f32>, n: u32) -> PyResult<()> {
    use crate::math::gamma;
    let f: fn(u32, f64) -> f64 = match op {
        "lgamma" => |_, x| gamma::lgamma(x),
        "digamma" => |_, x| gamma::digamma(x),
        "polygamma" => gamma::polygamma,
        other => return Err(unknown("gamma_family", other)),
    };
    expect_shape(op, "input", a.shape(), out.shape())?;
    super::kernel::detach(py, || {
        // SAFETY: `out` was allocated by the Python side for this call, so
        // it overlaps no other operand.
        let dst = unsafe { out.as_mut_slice() };
        for (d, &x) in dst.iter_mut().zip(a.as_slice()) {
            *d = crate::kernels::canonical(f(n, x as f64) as f32, true);
        }
    })?;
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(gamma_family, m)?)?;
    m.add_function(wrap_pyfunction!(binary, m)?)?;
    m.add_function(wrap_pyfunction!(unary, m)?)?;
    m.add_function(wrap_pyfunction!(ternary, m)?)?;
    Ok(())
}
