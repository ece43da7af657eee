//! Bindings of the optimizer kernels (`crate::kernels::optim`). Each call
//! takes every tensor of one parameter group, checks them all (holding the
//! GIL), then releases the GIL for one kernel call over all of them.

use super::storage::TView;
use crate::kernels::optim::{self as k, AdamScalars, AdamSlot, ElementMap, NormKind, SgdScalars, SgdSlot};
use crate::layout::is_contiguous;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// A contiguous float32 operand of `numel` elements (`numel` None: any).
fn operand(obj: &Bound<'_, PyAny>, op: &str, what: &str, numel: Option<usize>, write: bool) -> PyResult<TView> {
    let v = TView::f32(obj, op)?;
    let v = if write { v.writable(op)? } else { v };
    if !is_contiguous(&v.shape, &v.strides) {
        return Err(PyValueError::new_err(format!("{op}: the {what} must be contiguous (shape {:?}, strides {:?})", v.shape, v.strides)));
    }
    if let Some(n) = numel {
        if v.numel() != n {
            return Err(PyValueError::new_err(format!("{op}: the {what} has {} elements, the parameter {n}", v.numel())));
        }
    }
    Ok(v)
}

/// Refuse operands whose memory overlaps where one of them is written: the
/// kernel's chunks would race, and the result would depend on threads.
/// `ranges` are (first byte, end byte, written).
fn check_disjoint(op: &str, mut ranges: Vec<(usize, usize, bool)>) -> PyResult<()> {
    ranges.retain(|r| r.1 > r.0);
    ranges.sort_unstable();
    // Sweep: the furthest end so far and whether what reaches it is written.
    let mut reach: Option<(usize, bool)> = None;
    for &(a, b, w) in &ranges {
        if let Some((end, wrote)) = reach {
            if a < end && (w || wrote) {
                return Err(PyValueError::new_err(format!(
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

fn range(v: &TView, write: bool) -> (usize, usize, bool) {
    (v.addr(), v.addr() + 4 * v.numel(), write)
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
    grads: Vec<Bound<'_, PyAny>>,
    exp_avgs: Vec<Bound<'_, PyAny>>,
    exp_avg_sqs: Vec<Bound<'_, PyAny>>,
    max_exp_avg_sqs: Option<Vec<Bound<'_, PyAny>>>,
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
        return Err(PyValueError::new_err(format!("{OP}: every list must have one entry per parameter ({n})")));
    }
    let mut views = Vec::with_capacity(n * 5);
    let mut slots = Vec::with_capacity(n);
    let mut ranges = Vec::with_capacity(n * 5);
    for i in 0..n {
        let p = operand(&params[i], OP, "parameter", None, true)?;
        let len = p.numel();
        let g = operand(&grads[i], OP, "gradient", Some(len), false)?;
        let m = operand(&exp_avgs[i], OP, "exp_avg", Some(len), true)?;
        let v = operand(&exp_avg_sqs[i], OP, "exp_avg_sq", Some(len), true)?;
        let vmax = match &max_exp_avg_sqs {
            Some(list) => Some(operand(&list[i], OP, "max_exp_avg_sq", Some(len), true)?),
            None => None,
        };
        ranges.extend([range(&p, true), range(&g, false), range(&m, true), range(&v, true)]);
        let scalars = AdamScalars::from_powers(lr, beta1, beta2, eps, weight_decay, decoupled, beta1_pows[i], beta2_pows[i]).with_maximize(maximize);
        slots.push(AdamSlot {
            p: p.addr() as *mut f32,
            g: g.addr() as *const f32,
            m: m.addr() as *mut f32,
            v: v.addr() as *mut f32,
            vmax: vmax.as_ref().map_or(std::ptr::null_mut(), |x| x.addr() as *mut f32),
            len,
            scalars,
        });
        if let Some(x) = &vmax {
            ranges.push(range(x, true));
        }
        views.extend([p, g, m, v]);
        views.extend(vmax);
    }
    check_disjoint(OP, ranges)?;
    py.detach(move || {
        // SAFETY: every operand is a contiguous f32 view checked to lie in
        // its storage, whose memory `views` keeps alive for the call; no
        // written range overlaps any other operand (checked above).
        unsafe { k::adam_step_many(&slots) };
        drop(views);
    });
    Ok(())
}

/// One SGD step over every tensor of a group. `momentum_buffers[i]` is None
/// when momentum is 0; `first[i]` says that buffer is still to be filled.
#[pyfunction]
#[pyo3(signature = (params, grads, momentum_buffers, first, *, lr, momentum, dampening, weight_decay, nesterov, maximize))]
#[allow(clippy::too_many_arguments)]
pub fn sgd_step(
    py: Python<'_>,
    params: Vec<Bound<'_, PyAny>>,
    grads: Vec<Bound<'_, PyAny>>,
    momentum_buffers: Vec<Option<Bound<'_, PyAny>>>,
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
        return Err(PyValueError::new_err(format!("{OP}: every list must have one entry per parameter ({n})")));
    }
    let scalars = SgdScalars::new(lr, momentum, dampening, weight_decay, nesterov, maximize);
    let mut views = Vec::with_capacity(n * 3);
    let mut slots = Vec::with_capacity(n);
    let mut ranges = Vec::with_capacity(n * 3);
    for i in 0..n {
        let p = operand(&params[i], OP, "parameter", None, true)?;
        let len = p.numel();
        let g = operand(&grads[i], OP, "gradient", Some(len), false)?;
        let buf = match &momentum_buffers[i] {
            Some(b) => Some(operand(b, OP, "momentum buffer", Some(len), true)?),
            None => None,
        };
        ranges.extend([range(&p, true), range(&g, false)]);
        if let Some(b) = &buf {
            ranges.push(range(b, true));
        }
        slots.push(SgdSlot {
            p: p.addr() as *mut f32,
            g: g.addr() as *const f32,
            buf: buf.as_ref().map_or(std::ptr::null_mut(), |b| b.addr() as *mut f32),
            first: first[i],
            len,
            scalars,
        });
        views.extend([p, g]);
        views.extend(buf);
    }
    check_disjoint(OP, ranges)?;
    py.detach(move || {
        // SAFETY: as in adam_step.
        unsafe { k::sgd_step_many(&slots) };
        drop(views);
    });
    Ok(())
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
        Err(PyValueError::new_err(format!("norm_type must be inf or a finite number > 0, got {norm_type}")))
    }
}

/// The global `norm_type`-norm of the tensors, in double precision: each
/// tensor's double sum in element order (or max |x| for inf), combined in
/// the order given.
#[pyfunction]
pub fn global_norm(py: Python<'_>, tensors: Vec<Bound<'_, PyAny>>, norm_type: f64) -> PyResult<f64> {
    let kind = norm_kind(norm_type)?;
    let views = tensors
        .iter()
        .map(|t| operand(t, "global_norm", "tensor", None, false))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(py.detach(move || {
        // SAFETY: contiguous f32 views inside storages kept alive by `views`.
        let slices: Vec<&[f32]> = views.iter().map(|v| unsafe { std::slice::from_raw_parts(v.addr() as *const f32, v.numel()) }).collect();
        k::global_norm(&slices, kind)
    }))
}

fn map_tensors(py: Python<'_>, op: &str, tensors: Vec<Bound<'_, PyAny>>, map: ElementMap) -> PyResult<()> {
    let views = tensors.iter().map(|t| operand(t, op, "tensor", None, true)).collect::<PyResult<Vec<_>>>()?;
    check_disjoint(op, views.iter().map(|v| range(v, true)).collect())?;
    let parts: Vec<(usize, usize)> = views.iter().map(|v| (v.addr(), v.numel())).collect();
    py.detach(move || {
        let ptrs: Vec<(*mut f32, usize)> = parts.iter().map(|&(a, n)| (a as *mut f32, n)).collect();
        // SAFETY: disjoint contiguous views kept alive by `views`.
        unsafe { k::map_many(&ptrs, map) };
        drop(views);
    });
    Ok(())
}

/// Multiply every element of every tensor by `f32(coef)` in place.
#[pyfunction]
pub fn scale_(py: Python<'_>, tensors: Vec<Bound<'_, PyAny>>, coef: f64) -> PyResult<()> {
    map_tensors(py, "scale_", tensors, ElementMap::Scale(coef as f32))
}

/// Clamp every element of every tensor to `[f32(lo), f32(hi)]` in place.
#[pyfunction]
pub fn clamp_(py: Python<'_>, tensors: Vec<Bound<'_, PyAny>>, lo: f64, hi: f64) -> PyResult<()> {
    map_tensors(py, "clamp_", tensors, ElementMap::Clamp(lo as f32, hi as f32))
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
pub fn adamw_scalars(lr: f64, beta1: f64, beta2: f64, eps: f64, weight_decay: f64, step: u64, decay: bool) -> Vec<(&'static str, f32)> {
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
