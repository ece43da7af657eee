//! Bindings of the optimizer kernels (`crate::kernels::optim`). Each call
//! takes every tensor of one parameter group, checks them all (holding the
//! GIL), then releases the GIL for one kernel call over all of them. Strided
//! operands go through contiguous copies; written tensors get their storage
//! version bumped (in-place updates, as autograd must see them).

use super::operand::{check_disjoint, Flat, Strided, StridedOut};
use crate::error::Error;
use crate::kernels::optim::{
    self as k, AdamScalars, AdamSlot, ElementMap, NormKind, SgdScalars, SgdSlot,
};
use crate::simd::Token;
use pyo3::intern;
use pyo3::prelude::*;

/// The parameters, written in place, with the Python objects kept for
/// [`bump`].
fn params_of(params: &[Bound<'_, PyAny>]) -> PyResult<Vec<Flat>> {
    params
        .iter()
        .map(|p| Ok(Flat::written(p.extract()?)))
        .collect()
}

/// Record the in-place write on each tensor's storage (its version counter),
/// so that autograd detects saved tensors made stale by the update.
fn bump(tensors: &[Bound<'_, PyAny>]) -> PyResult<()> {
    for t in tensors {
        t.getattr(intern!(t.py(), "_storage"))?
            .call_method0(intern!(t.py(), "bump_version"))?;
    }
    Ok(())
}

/// One Adam/AdamW step over every tensor of a group. `beta1_pows` and
/// `beta2_pows` are each tensor's β1ᵗ and β2ᵗ (running double products);
/// the other scalars are the group's, in double.
#[pyfunction]
#[pyo3(signature = (params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, beta1_pows, beta2_pows, *, lr, beta1, beta2, eps, weight_decay, decoupled, maximize))]
#[allow(clippy::too_many_arguments)]
pub fn adam_step(
    py: Python<'_>,
    params: Vec<Bound<'_, PyAny>>,
    grads: Vec<Strided<f32>>,
    exp_avgs: Vec<StridedOut<f32>>,
    exp_avg_sqs: Vec<StridedOut<f32>>,
    max_exp_avg_sqs: Option<Vec<StridedOut<f32>>>,
    beta1_pows: Vec<f64>,
    beta2_pows: Vec<f64>,
    lr: f64,
    beta1: f64,
    beta2: f64,
    eps: f64,
    weight_decay: f64,
    decoupled: bool,
    maximize: bool,
) -> PyResult<()> {
    const OP: &str = "adam_step";
    let n = params.len();
    let lens_ok = grads.len() == n
        && exp_avgs.len() == n
        && exp_avg_sqs.len() == n
        && beta1_pows.len() == n
        && beta2_pows.len() == n
        && max_exp_avg_sqs.as_ref().is_none_or(|v| v.len() == n);
    if !lens_ok {
        return Err(Error::Value(format!(
            "{OP}: every list must have one entry per parameter ({n})"
        ))
        .into());
    }
    // Per parameter: p, g, m, v and (AMSGrad) vmax.
    let mut vmaxes = max_exp_avg_sqs.map(|l| l.into_iter());
    let mut ops: Vec<[Option<Flat>; 5]> = Vec::with_capacity(n);
    for (((p, g), m), v) in params_of(&params)?
        .into_iter()
        .zip(grads)
        .zip(exp_avgs)
        .zip(exp_avg_sqs)
    {
        let len = p.len();
        let g = Flat::read(g).sized(OP, "gradient", len)?;
        let m = Flat::written(m).sized(OP, "exp_avg", len)?;
        let v = Flat::written(v).sized(OP, "exp_avg_sq", len)?;
        let vmax = match vmaxes.as_mut().and_then(Iterator::next) {
            Some(x) => Some(Flat::written(x).sized(OP, "max_exp_avg_sq", len)?),
            None => None,
        };
        ops.push([Some(p), Some(g), Some(m), Some(v), vmax]);
    }
    check_disjoint(OP, ops.iter().flatten().flatten().map(Flat::span))?;
    let scalars: Vec<AdamScalars> = (0..n)
        .map(|i| {
            AdamScalars::from_powers(
                lr,
                beta1,
                beta2,
                eps,
                weight_decay,
                decoupled,
                beta1_pows[i],
                beta2_pows[i],
            )
            .with_maximize(maximize)
        })
        .collect();
    let token = Token::current();
    super::kernel::detach(py, || {
        let ptr = |f: &mut Option<Flat>| f.as_mut().map_or(std::ptr::null_mut(), Flat::ptr);
        let slots: Vec<AdamSlot> = ops
            .iter_mut()
            .zip(&scalars)
            .map(|(o, s)| {
                let len = o[0].as_ref().map_or(0, Flat::len);
                let [p, g, m, v, vmax] = o;
                AdamSlot {
                    p: ptr(p),
                    g: ptr(g),
                    m: ptr(m),
                    v: ptr(v),
                    vmax: ptr(vmax),
                    len,
                    scalars: *s,
                }
            })
            .collect();
        // SAFETY: every pointer is contiguous memory of `len` f32 (the
        // tensor's own, kept alive by its TView, or a gathered copy); no
        // written operand overlaps any other (checked above).
        unsafe { k::adam_step_many(token, &slots) };
        ops.iter_mut().flatten().flatten().for_each(Flat::finish);
    })?;
    bump(&params)
}

/// One SGD step over every tensor of a group. `momentum_buffers[i]` is None
/// when momentum is 0; `first[i]` says that buffer is still to be filled.
#[pyfunction]
#[pyo3(signature = (params, grads, momentum_buffers, first, *, lr, momentum, dampening, weight_decay, nesterov, maximize))]
#[allow(clippy::too_many_arguments)]
pub fn sgd_step(
    py: Python<'_>,
    params: Vec<Bound<'_, PyAny>>,
    grads: Vec<Strided<f32>>,
    momentum_buffers: Vec<Option<StridedOut<f32>>>,
    first: Vec<bool>,
    lr: f64,
    momentum: f64,
    dampening: f64,
    weight_decay: f64,
    nesterov: bool,
    maximize: bool,
) -> PyResult<()> {
    const OP: &str = "sgd_step";
    let n = params.len();
    if grads.len() != n || momentum_buffers.len() != n || first.len() != n {
        return Err(Error::Value(format!(
            "{OP}: every list must have one entry per parameter ({n})"
        ))
        .into());
    }
    let scalars = SgdScalars::new(lr, momentum, dampening, weight_decay, nesterov, maximize);
    let mut ops: Vec<[Option<Flat>; 3]> = Vec::with_capacity(n);
    for ((p, g), buf) in params_of(&params)?
        .into_iter()
        .zip(grads)
        .zip(momentum_buffers)
    {
        let len = p.len();
        let g = Flat::read(g).sized(OP, "gradient", len)?;
        let buf = match buf {
            Some(b) => Some(Flat::written(b).sized(OP, "momentum buffer", len)?),
            None => None,
        };
        ops.push([Some(p), Some(g), buf]);
    }
    check_disjoint(OP, ops.iter().flatten().flatten().map(Flat::span))?;
    let token = Token::current();
    super::kernel::detach(py, || {
        let ptr = |f: &mut Option<Flat>| f.as_mut().map_or(std::ptr::null_mut(), Flat::ptr);
        let slots: Vec<SgdSlot> = ops
            .iter_mut()
            .zip(&first)
            .map(|(o, &first)| {
                let len = o[0].as_ref().map_or(0, Flat::len);
                let [p, g, buf] = o;
                SgdSlot {
                    p: ptr(p),
                    g: ptr(g),
                    buf: ptr(buf),
                    first,
                    len,
                    scalars,
                }
            })
            .collect();
        // SAFETY: as in adam_step.
        unsafe { k::sgd_step_many(token, &slots) };
        ops.iter_mut().flatten().flatten().for_each(Flat::finish);
    })?;
    bump(&params)
}

fn norm_kind(norm_type: f64) -> PyResult<NormKind> {
    if norm_type == f64::INFINITY {
        Ok(NormKind::Inf)
    } else if norm_type == 2.0 {
        Ok(NormKind::L2)
    } else if norm_type == 1.0 {
        Ok(NormKind::L1)
    } else if norm_type.is_finite() && norm_type > 0.0 {
        Ok(NormKind::P(norm_type))
    } else {
        Err(Error::Value(format!(
            "norm_type must be inf or a finite number > 0, got {norm_type}"
        ))
        .into())
    }
}

/// The global `norm_type`-norm of the tensors, in double precision: each
/// tensor's double sum in element order (or max |x| for inf), combined in
/// the order given.
#[pyfunction]
pub fn global_norm(py: Python<'_>, tensors: Vec<Strided<f32>>, norm_type: f64) -> PyResult<f64> {
    let kind = norm_kind(norm_type)?;
    let mut ops: Vec<Flat> = tensors.into_iter().map(Flat::read).collect();
    Ok(super::kernel::detach(py, move || {
        let slices: Vec<&[f32]> = ops
            .iter_mut()
            .map(|f| {
                let n = f.len();
                // SAFETY: contiguous memory of n f32 that `ops` keeps alive.
                unsafe { std::slice::from_raw_parts(f.ptr() as *const f32, n) }
            })
            .collect();
        k::global_norm(&slices, kind)
    })?)
}

fn map_tensors(
    py: Python<'_>,
    op: &str,
    tensors: Vec<Bound<'_, PyAny>>,
    map: ElementMap,
) -> PyResult<()> {
    let mut ops = params_of(&tensors)?;
    check_disjoint(op, ops.iter().map(Flat::span))?;
    let token = Token::current();
    super::kernel::detach(py, || {
        let parts: Vec<(*mut f32, usize)> = ops.iter_mut().map(|f| (f.ptr(), f.len())).collect();
        // SAFETY: disjoint contiguous memory kept alive by `ops`.
        unsafe { k::map_many(token, &parts, map) };
        ops.iter_mut().for_each(Flat::finish);
    })?;
    bump(&tensors)
}

/// Multiply every element of every tensor by `f32(coef)` in place.
#[pyfunction]
pub fn scale_(py: Python<'_>, tensors: Vec<Bound<'_, PyAny>>, coef: f64) -> PyResult<()> {
    map_tensors(py, "scale_", tensors, ElementMap::Scale(coef as f32))
}

/// Clamp every element of every tensor to `[f32(lo), f32(hi)]` in place.
#[pyfunction]
pub fn clamp_(py: Python<'_>, tensors: Vec<Bound<'_, PyAny>>, lo: f64, hi: f64) -> PyResult<()> {
    map_tensors(
        py,
        "clamp_",
        tensors,
        ElementMap::Clamp(lo as f32, hi as f32),
    )
}

/// `β^t` as a running double product (the bias-correction powers).
#[pyfunction]
pub fn beta_power(beta: f64, t: u64) -> f64 {
    k::beta_power(beta, t)
}

/// AdamW's f32 scalars for step t, as the kernel uses them (for tests and
/// for callers that want to see them): a dict.
#[pyfunction]
#[pyo3(signature = (lr, beta1, beta2, eps, weight_decay, step, decay=true))]
#[allow(clippy::too_many_arguments)]
pub fn adamw_scalars(
    lr: f64,
    beta1: f64,
    beta2: f64,
    eps: f64,
    weight_decay: f64,
    step: u64,
    decay: bool,
) -> Vec<(&'static str, f32)> {
    let s = AdamScalars::new(lr, beta1, beta2, eps, weight_decay, step, decay);
    vec![
        ("step_size", s.step_size),
        ("sqrt_c2", s.sqrt_c2),
        ("decay", s.decay),
        ("one_minus_beta1", s.one_minus_beta1),
        ("beta2", s.beta2),
        ("one_minus_beta2", s.one_minus_beta2),
        ("eps", s.eps),
    ]
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(adam_step, m)?)?;
    m.add_function(wrap_pyfunction!(sgd_step, m)?)?;
    m.add_function(wrap_pyfunction!(global_norm, m)?)?;
    m.add_function(wrap_pyfunction!(scale_, m)?)?;
    m.add_function(wrap_pyfunction!(clamp_, m)?)?;
    m.add_function(wrap_pyfunction!(beta_power, m)?)?;
    m.add_function(wrap_pyfunction!(adamw_scalars, m)?)?;
    Ok(())
}
