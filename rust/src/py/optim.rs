//! Bindings of the optimizer kernels (`crate::kernels::optim`). Each call
//! takes every tensor of one parameter group, checks them all (holding the
//! GIL), then releases the GIL for one kernel call over all of them. Strided
//! operands go through contiguous copies; written tensors get their storage
//! version bumped (in-place updates, as autograd must see them).

use super::storage::TView;
use crate::kernels::copy;
use crate::kernels::optim::{
    self as k, AdamScalars, AdamSlot, ElementMap, NormKind, SgdScalars, SgdSlot,
};
use crate::layout::{contiguous_strides, is_contiguous};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;

/// A float32 operand as contiguous memory for the kernels: the tensor's own
/// memory when it is contiguous, else a gathered copy that is scattered
/// back after the kernel when the operand is written.
struct Flat {
    view: TView,
    temp: Option<Vec<f32>>,
    write: bool,
}

impl Flat {
    /// `numel` None: any size.
    fn of(
        obj: &Bound<'_, PyAny>,
        op: &str,
        what: &str,
        numel: Option<usize>,
        write: bool,
    ) -> PyResult<Flat> {
        let v = TView::f32(obj, op)?;
        let view = if write { v.writable(op)? } else { v };
        if let Some(n) = numel {
            if view.numel() != n {
                return Err(PyValueError::new_err(format!(
                    "{op}: the {what} has {} elements, the parameter {n}",
                    view.numel()
                )));
            }
        }
        Ok(Flat {
            view,
            temp: None,
            write,
        })
    }

    fn len(&self) -> usize {
        self.view.numel()
    }

    /// The bytes the view's elements span, [first, end), and whether written.
    fn span(&self) -> (usize, usize, bool) {
        let v = &self.view;
        if v.numel() == 0 {
            return (0, 0, self.write);
        }
        let last: usize = v
            .shape
            .iter()
            .zip(&v.strides)
            .map(|(&n, &s)| (n - 1) * s as usize)
            .sum();
        (v.addr(), v.addr() + 4 * (last + 1), self.write)
    }

    /// Contiguous memory holding the operand (gathering a strided one).
    /// Call without the GIL; the pointer is valid until `finish`.
    fn ptr(&mut self) -> *mut f32 {
        let v = &self.view;
        if is_contiguous(&v.shape, &v.strides) {
            return v.addr() as *mut f32;
        }
        let mut buf = vec![0f32; v.numel()];
        // SAFETY: the view lies inside its storage (checked on extraction);
        // `buf` holds numel contiguous elements.
        unsafe {
            copy::copy_strided(
                &v.shape,
                v.addr() as *const u8,
                &v.strides,
                buf.as_mut_ptr() as *mut u8,
                &contiguous_strides(&v.shape),
                4,
            )
        };
        self.temp.insert(buf).as_mut_ptr()
    }

    /// Scatter a gathered, written operand back into the tensor.
    fn finish(&mut self) {
        if let (Some(buf), true) = (self.temp.take(), self.write) {
            let v = &self.view;
            // SAFETY: as in `ptr`, in the other direction.
            unsafe {
                copy::copy_strided(
                    &v.shape,
                    buf.as_ptr() as *const u8,
                    &contiguous_strides(&v.shape),
                    v.addr() as *mut u8,
                    &v.strides,
                    4,
                )
            };
        }
    }
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
        return Err(PyValueError::new_err(format!(
            "{OP}: every list must have one entry per parameter ({n})"
        )));
    }
    // Per parameter: p, g, m, v and (AMSGrad) vmax.
    let mut ops: Vec<[Option<Flat>; 5]> = Vec::with_capacity(n);
    for i in 0..n {
        let p = Flat::of(&params[i], OP, "parameter", None, true)?;
        let len = p.len();
        let g = Flat::of(&grads[i], OP, "gradient", Some(len), false)?;
        let m = Flat::of(&exp_avgs[i], OP, "exp_avg", Some(len), true)?;
        let v = Flat::of(&exp_avg_sqs[i], OP, "exp_avg_sq", Some(len), true)?;
        let vmax = match &max_exp_avg_sqs {
            Some(list) => Some(Flat::of(&list[i], OP, "max_exp_avg_sq", Some(len), true)?),
            None => None,
        };
        ops.push([Some(p), Some(g), Some(m), Some(v), vmax]);
    }
    check_disjoint(OP, ops.iter().flatten().flatten().map(Flat::span).collect())?;
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
    py.detach(|| {
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
        unsafe { k::adam_step_many(&slots) };
        ops.iter_mut().flatten().flatten().for_each(Flat::finish);
    });
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
        return Err(PyValueError::new_err(format!(
            "{OP}: every list must have one entry per parameter ({n})"
        )));
    }
    let scalars = SgdScalars::new(lr, momentum, dampening, weight_decay, nesterov, maximize);
    let mut ops: Vec<[Option<Flat>; 3]> = Vec::with_capacity(n);
    for i in 0..n {
        let p = Flat::of(&params[i], OP, "parameter", None, true)?;
        let len = p.len();
        let g = Flat::of(&grads[i], OP, "gradient", Some(len), false)?;
        let buf = match &momentum_buffers[i] {
            Some(b) => Some(Flat::of(b, OP, "momentum buffer", Some(len), true)?),
            None => None,
        };
        ops.push([Some(p), Some(g), buf]);
    }
    check_disjoint(OP, ops.iter().flatten().flatten().map(Flat::span).collect())?;
    py.detach(|| {
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
        unsafe { k::sgd_step_many(&slots) };
        ops.iter_mut().flatten().flatten().for_each(Flat::finish);
    });
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
        Err(PyValueError::new_err(format!(
            "norm_type must be inf or a finite number > 0, got {norm_type}"
        )))
    }
}

/// The global `norm_type`-norm of the tensors, in double precision: each
/// tensor's double sum in element order (or max |x| for inf), combined in
/// the order given.
#[pyfunction]
pub fn global_norm(
    py: Python<'_>,
    tensors: Vec<Bound<'_, PyAny>>,
    norm_type: f64,
) -> PyResult<f64> {
    let kind = norm_kind(norm_type)?;
    let mut ops = tensors
        .iter()
        .map(|t| Flat::of(t, "global_norm", "tensor", None, false))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(py.detach(move || {
        let slices: Vec<&[f32]> = ops
            .iter_mut()
            .map(|f| {
                let n = f.len();
                // SAFETY: contiguous memory of n f32 that `ops` keeps alive.
                unsafe { std::slice::from_raw_parts(f.ptr() as *const f32, n) }
            })
            .collect();
        k::global_norm(&slices, kind)
    }))
}

fn map_tensors(
    py: Python<'_>,
    op: &str,
    tensors: Vec<Bound<'_, PyAny>>,
    map: ElementMap,
) -> PyResult<()> {
    let mut ops = tensors
        .iter()
        .map(|t| Flat::of(t, op, "tensor", None, true))
        .collect::<PyResult<Vec<_>>>()?;
    check_disjoint(op, ops.iter().map(Flat::span).collect())?;
    py.detach(|| {
        let parts: Vec<(*mut f32, usize)> = ops.iter_mut().map(|f| (f.ptr(), f.len())).collect();
        // SAFETY: disjoint contiguous memory kept alive by `ops`.
        unsafe { k::map_many(&parts, map) };
        ops.iter_mut().for_each(Flat::finish);
    });
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
