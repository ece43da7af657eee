//! Bindings of the recurrent layers and CTC. Shapes are validated by the
//! Python wrappers (python/onemodel/ops/rnn.py, ctc.py); these functions check
//! what memory safety needs (sizes of every buffer) before releasing the GIL.

use super::storage::TView;
use crate::dispatch::{self, par_chunks};
use crate::kernels::{ctc, rnn};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

fn need(v: &TView, n: usize, what: &str, op: &str) -> PyResult<()> {
    if v.numel() != n || !crate::layout::is_contiguous(&v.shape, &v.strides) {
        return Err(PyValueError::new_err(format!(
            "{op}: {what} must be a contiguous tensor of {n} elements, got shape {:?}",
            v.shape
        )));
    }
    Ok(())
}

fn opt_view(
    obj: Option<&Bound<'_, PyAny>>,
    n: usize,
    what: &str,
    op: &str,
) -> PyResult<Option<TView>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => {
            let v = TView::f32(o, op)?;
            need(&v, n, what, op)?;
            Ok(Some(v))
        }
    }
}

fn ptr(v: &Option<TView>) -> Option<usize> {
    v.as_ref().map(|v| v.addr())
}

/// (T, B, I, H) of a layer from x [T, B, I] and W_hh [G·H, H].
fn dims(x: &TView, w_hh: &TView, gates: usize, op: &str) -> PyResult<rnn::Dims> {
    if x.shape.len() != 3 || w_hh.shape.len() != 2 || w_hh.shape[0] != gates * w_hh.shape[1] {
        return Err(PyValueError::new_err(format!(
            "{op}: expected x [T, B, I] and weight_hh [{gates}·H, H], got {:?} and {:?}",
            x.shape, w_hh.shape
        )));
    }
    Ok(rnn::Dims {
        t: x.shape[0],
        b: x.shape[1],
        i: x.shape[2],
        h: w_hh.shape[1],
    })
}

#[pyfunction]
#[pyo3(signature = (x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, out, saved=None))]
#[allow(clippy::too_many_arguments)]
pub fn lstm_forward(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    w_ih: &Bound<'_, PyAny>,
    w_hh: &Bound<'_, PyAny>,
    b_ih: Option<&Bound<'_, PyAny>>,
    b_hh: Option<&Bound<'_, PyAny>>,
    h0: Option<&Bound<'_, PyAny>>,
    c0: Option<&Bound<'_, PyAny>>,
    reverse: bool,
    out: &Bound<'_, PyAny>,
    saved: Option<(
        Bound<'_, PyAny>,
        Bound<'_, PyAny>,
        Bound<'_, PyAny>,
        Bound<'_, PyAny>,
    )>,
) -> PyResult<()> {
    let op = "lstm_layer";
    let xv = TView::f32(x, op)?;
    let whh = TView::f32(w_hh, op)?;
    let d = dims(&xv, &whh, 4, op)?;
    need(&xv, d.t * d.b * d.i, "input", op)?;
    let wih = TView::f32(w_ih, op)?;
    need(&wih, 4 * d.h * d.i, "weight_ih", op)?;
    need(&whh, 4 * d.h * d.h, "weight_hh", op)?;
    let bi = opt_view(b_ih, 4 * d.h, "bias_ih", op)?;
    let bh = opt_view(b_hh, 4 * d.h, "bias_hh", op)?;
    let h0v = opt_view(h0, d.b * d.h, "h0", op)?;
    let c0v = opt_view(c0, d.b * d.h, "c0", op)?;
    let ov = TView::f32(out, op)?.writable(op)?;
    need(&ov, (d.t + 1) * d.b * d.h, "out", op)?;
    let sv = match &saved {
        None => None,
        Some((g, c, tc, hp)) => {
            let views = [
                TView::f32(g, op)?,
                TView::f32(c, op)?,
                TView::f32(tc, op)?,
                TView::f32(hp, op)?,
            ];
            need(&views[0], d.t * d.b * 4 * d.h, "saved gates", op)?;
            for v in &views[1..] {
                need(v, d.t * d.b * d.h, "saved state", op)?;
            }
            Some(views)
        }
    };
    let mode = dispatch::mode();
    let (pb_ih, pb_hh, ph0, pc0) = (ptr(&bi), ptr(&bh), ptr(&h0v), ptr(&c0v));
    py.detach(move || {
        let keep = (&xv, &wih, &whh, &bi, &bh, &h0v, &c0v, &ov, &sv);
        let saved = sv.as_ref().map(|v| rnn::LstmSaved {
            gates: v[0].addr() as *mut f32,
            cells: v[1].addr() as *mut f32,
            tanh_c: v[2].addr() as *mut f32,
            h_prev: v[3].addr() as *mut f32,
        });
        // SAFETY: every buffer's size was checked above; outputs are fresh
        // buffers the Python side allocated; the TViews (kept alive by `keep`)
        // hold the memory.
        dispatch::with_ieee(|| unsafe {
            rnn::lstm_forward(
                mode,
                d,
                reverse,
                xv.addr() as *const f32,
                wih.addr() as *const f32,
                whh.addr() as *const f32,
                pb_ih.map(|p| p as *const f32),
                pb_hh.map(|p| p as *const f32),
                ph0.map(|p| p as *const f32),
                pc0.map(|p| p as *const f32),
                ov.addr() as *mut f32,
                saved.as_ref(),
            )
        });
        let _ = keep;
    });
    Ok(())
}

fn grads_of(gs: &[TView; 7]) -> rnn::RnnGrads {
    rnn::RnnGrads {
        dx: gs[0].addr() as *mut f32,
        dw_ih: gs[1].addr() as *mut f32,
        dw_hh: gs[2].addr() as *mut f32,
        db_ih: gs[3].addr() as *mut f32,
        db_hh: gs[4].addr() as *mut f32,
        dh0: gs[5].addr() as *mut f32,
        dc0: gs[6].addr() as *mut f32,
    }
}

fn grad_views(
    grads: &(
        Bound<'_, PyAny>,
        Bound<'_, PyAny>,
        Bound<'_, PyAny>,
        Bound<'_, PyAny>,
        Bound<'_, PyAny>,
        Bound<'_, PyAny>,
        Bound<'_, PyAny>,
    ),
    d: rnn::Dims,
    gates: usize,
    op: &str,
) -> PyResult<[TView; 7]> {
    let v = [
        TView::f32(&grads.0, op)?.writable(op)?,
        TView::f32(&grads.1, op)?.writable(op)?,
        TView::f32(&grads.2, op)?.writable(op)?,
        TView::f32(&grads.3, op)?.writable(op)?,
        TView::f32(&grads.4, op)?.writable(op)?,
        TView::f32(&grads.5, op)?.writable(op)?,
        TView::f32(&grads.6, op)?.writable(op)?,
    ];
    let gh = gates * d.h;
    let sizes = [
        d.t * d.b * d.i,
        gh * d.i,
        gh * d.h,
        gh,
        gh,
        d.b * d.h,
        d.b * d.h,
    ];
    for (view, n) in v.iter().zip(sizes) {
        need(view, n, "gradient buffer", op)?;
    }
    Ok(v)
}

type Seven<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
);

/// grads = (dx, dw_ih, dw_hh, db_ih, db_hh, dh0, dc0), all preallocated.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn lstm_backward(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    w_ih: &Bound<'_, PyAny>,
    w_hh: &Bound<'_, PyAny>,
    c0: Option<&Bound<'_, PyAny>>,
    saved: (
        Bound<'_, PyAny>,
        Bound<'_, PyAny>,
        Bound<'_, PyAny>,
        Bound<'_, PyAny>,
    ),
    g_out: &Bound<'_, PyAny>,
    reverse: bool,
    grads: Seven<'_>,
) -> PyResult<()> {
    let op = "lstm_layer backward";
    let xv = TView::f32(x, op)?;
    let whh = TView::f32(w_hh, op)?;
    let d = dims(&xv, &whh, 4, op)?;
    let wih = TView::f32(w_ih, op)?;
    need(&wih, 4 * d.h * d.i, "weight_ih", op)?;
    let c0v = opt_view(c0, d.b * d.h, "c0", op)?;
    let sv = [
        TView::f32(&saved.0, op)?,
        TView::f32(&saved.1, op)?,
        TView::f32(&saved.2, op)?,
        TView::f32(&saved.3, op)?,
    ];
    need(&sv[0], d.t * d.b * 4 * d.h, "saved gates", op)?;
    for v in &sv[1..] {
        need(v, d.t * d.b * d.h, "saved state", op)?;
    }
    let gv = TView::f32(g_out, op)?;
    need(&gv, (d.t + 1) * d.b * d.h, "output gradient", op)?;
    let outs = grad_views(&grads, d, 4, op)?;
    let mode = dispatch::mode();
    let pc0 = ptr(&c0v);
    py.detach(move || {
        let keep = (&xv, &wih, &whh, &c0v, &sv, &gv, &outs);
        let s = rnn::LstmSaved {
            gates: sv[0].addr() as *mut f32,
            cells: sv[1].addr() as *mut f32,
            tanh_c: sv[2].addr() as *mut f32,
            h_prev: sv[3].addr() as *mut f32,
        };
        let g = grads_of(&outs);
        // SAFETY: sizes checked above; gradient buffers are fresh.
        dispatch::with_ieee(|| unsafe {
            rnn::lstm_backward(
                mode,
                d,
                reverse,
                xv.addr() as *const f32,
                wih.addr() as *const f32,
                whh.addr() as *const f32,
                pc0.map(|p| p as *const f32),
                &s,
                gv.addr() as *const f32,
                &g,
            )
        });
        let _ = keep;
    });
    Ok(())
}

#[pyfunction]
#[pyo3(signature = (x, w_ih, w_hh, b_ih, b_hh, h0, reverse, out, saved=None))]
#[allow(clippy::too_many_arguments)]
pub fn gru_forward(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    w_ih: &Bound<'_, PyAny>,
    w_hh: &Bound<'_, PyAny>,
    b_ih: Option<&Bound<'_, PyAny>>,
    b_hh: Option<&Bound<'_, PyAny>>,
    h0: Option<&Bound<'_, PyAny>>,
    reverse: bool,
    out: &Bound<'_, PyAny>,
    saved: Option<(Bound<'_, PyAny>, Bound<'_, PyAny>, Bound<'_, PyAny>)>,
) -> PyResult<()> {
    let op = "gru_layer";
    let xv = TView::f32(x, op)?;
    let whh = TView::f32(w_hh, op)?;
    let d = dims(&xv, &whh, 3, op)?;
    need(&xv, d.t * d.b * d.i, "input", op)?;
    let wih = TView::f32(w_ih, op)?;
    need(&wih, 3 * d.h * d.i, "weight_ih", op)?;
    need(&whh, 3 * d.h * d.h, "weight_hh", op)?;
    let bi = opt_view(b_ih, 3 * d.h, "bias_ih", op)?;
    let bh = opt_view(b_hh, 3 * d.h, "bias_hh", op)?;
    let h0v = opt_view(h0, d.b * d.h, "h0", op)?;
    let ov = TView::f32(out, op)?.writable(op)?;
    need(&ov, d.t * d.b * d.h, "out", op)?;
    let sv = match &saved {
        None => None,
        Some((g, hn, hp)) => {
            let views = [TView::f32(g, op)?, TView::f32(hn, op)?, TView::f32(hp, op)?];
            need(&views[0], d.t * d.b * 3 * d.h, "saved gates", op)?;
            need(&views[1], d.t * d.b * d.h, "saved state", op)?;
            need(&views[2], d.t * d.b * d.h, "saved state", op)?;
            Some(views)
        }
    };
    let mode = dispatch::mode();
    let (pb_ih, pb_hh, ph0) = (ptr(&bi), ptr(&bh), ptr(&h0v));
    py.detach(move || {
        let keep = (&xv, &wih, &whh, &bi, &bh, &h0v, &ov, &sv);
        let saved = sv.as_ref().map(|v| rnn::GruSaved {
            gates: v[0].addr() as *mut f32,
            hp_n: v[1].addr() as *mut f32,
            h_prev: v[2].addr() as *mut f32,
        });
        // SAFETY: sizes checked above; outputs are fresh buffers.
        dispatch::with_ieee(|| unsafe {
            rnn::gru_forward(
                mode,
                d,
                reverse,
                xv.addr() as *const f32,
                wih.addr() as *const f32,
                whh.addr() as *const f32,
                pb_ih.map(|p| p as *const f32),
                pb_hh.map(|p| p as *const f32),
                ph0.map(|p| p as *const f32),
                ov.addr() as *mut f32,
                saved.as_ref(),
            )
        });
        let _ = keep;
    });
    Ok(())
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn gru_backward(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    w_ih: &Bound<'_, PyAny>,
    w_hh: &Bound<'_, PyAny>,
    saved: (Bound<'_, PyAny>, Bound<'_, PyAny>, Bound<'_, PyAny>),
    g_out: &Bound<'_, PyAny>,
    reverse: bool,
    grads: Seven<'_>,
) -> PyResult<()> {
    let op = "gru_layer backward";
    let xv = TView::f32(x, op)?;
    let whh = TView::f32(w_hh, op)?;
    let d = dims(&xv, &whh, 3, op)?;
    let wih = TView::f32(w_ih, op)?;
    need(&wih, 3 * d.h * d.i, "weight_ih", op)?;
    let sv = [
        TView::f32(&saved.0, op)?,
        TView::f32(&saved.1, op)?,
        TView::f32(&saved.2, op)?,
    ];
    need(&sv[0], d.t * d.b * 3 * d.h, "saved gates", op)?;
    need(&sv[1], d.t * d.b * d.h, "saved state", op)?;
    need(&sv[2], d.t * d.b * d.h, "saved state", op)?;
    let gv = TView::f32(g_out, op)?;
    need(&gv, d.t * d.b * d.h, "output gradient", op)?;
    let outs = grad_views(&grads, d, 3, op)?;
    let mode = dispatch::mode();
    py.detach(move || {
        let keep = (&xv, &wih, &whh, &sv, &gv, &outs);
        let s = rnn::GruSaved {
            gates: sv[0].addr() as *mut f32,
            hp_n: sv[1].addr() as *mut f32,
            h_prev: sv[2].addr() as *mut f32,
        };
        let mut g = grads_of(&outs);
        g.dc0 = std::ptr::null_mut();
        // SAFETY: sizes checked above; gradient buffers are fresh.
        dispatch::with_ieee(|| unsafe {
            rnn::gru_backward(
                mode,
                d,
                reverse,
                xv.addr() as *const f32,
                wih.addr() as *const f32,
                whh.addr() as *const f32,
                &s,
                gv.addr() as *const f32,
                &g,
            )
        });
        let _ = keep;
    });
    Ok(())
}

/// Validated CTC batch: log-probs view [T, B, C] plus per-line targets.
struct CtcBatch {
    lp: TView,
    targets: Vec<Vec<i64>>,
    input_lengths: Vec<usize>,
    blank: usize,
}

fn ctc_batch(
    log_probs: &Bound<'_, PyAny>,
    targets: Vec<Vec<i64>>,
    input_lengths: Vec<usize>,
    blank: usize,
) -> PyResult<CtcBatch> {
    let op = "ctc_loss";
    let lp = TView::f32(log_probs, op)?;
    if lp.shape.len() != 3 {
        return Err(PyValueError::new_err(format!(
            "{op}: log_probs must be [T, B, C], got {:?}",
            lp.shape
        )));
    }
    let (t, b, c) = (lp.shape[0], lp.shape[1], lp.shape[2]);
    if targets.len() != b || input_lengths.len() != b {
        return Err(PyValueError::new_err(format!(
            "{op}: {b} lines but {} targets and {} input lengths",
            targets.len(),
            input_lengths.len()
        )));
    }
    if blank >= c {
        return Err(PyValueError::new_err(format!(
            "{op}: blank {blank} is not a class of {c}"
        )));
    }
    for (line, (tg, &len)) in targets.iter().zip(&input_lengths).enumerate() {
        if len > t {
            return Err(PyValueError::new_err(format!(
                "{op}: input length {len} of line {line} exceeds T = {t}"
            )));
        }
        if let Some(&bad) = tg
            .iter()
            .find(|&&l| l < 0 || l as usize >= c || l as usize == blank)
        {
            return Err(PyValueError::new_err(format!(
                "{op}: label {bad} of line {line} is the blank or not a class of {c}"
            )));
        }
    }
    Ok(CtcBatch {
        lp,
        targets,
        input_lengths,
        blank,
    })
}

impl CtcBatch {
    fn line(&self, b: usize) -> ctc::LogProbs {
        ctc::LogProbs {
            ptr: (self.lp.addr() as *const f32).wrapping_offset(b as isize * self.lp.strides[1]),
            steps: self.input_lengths[b],
            classes: self.lp.shape[2],
            st: self.lp.strides[0],
            sc: self.lp.strides[2],
        }
    }
}

/// Per-line CTC losses (f64; +inf where no alignment exists).
#[pyfunction]
pub fn ctc_losses(
    py: Python<'_>,
    log_probs: &Bound<'_, PyAny>,
    targets: Vec<Vec<i64>>,
    input_lengths: Vec<usize>,
    blank: usize,
) -> PyResult<Vec<f64>> {
    let batch = ctc_batch(log_probs, targets, input_lengths, blank)?;
    let lines = batch.targets.len();
    Ok(py.detach(move || {
        let out: Vec<std::sync::Mutex<f64>> =
            (0..lines).map(|_| std::sync::Mutex::new(0.0)).collect();
        par_chunks(lines, |b| {
            let view = batch.line(b);
            // SAFETY: the batch was validated (lengths ≤ T, labels < C) and
            // the view lies inside the checked log_probs tensor.
            let l = unsafe { ctc::loss(&view, &batch.targets[b], batch.blank) };
            *out[b].lock().unwrap() = l;
        });
        out.into_iter().map(|m| m.into_inner().unwrap()).collect()
    }))
}

/// Write scale[b]·∂loss_b/∂log_probs into `grad` ([T, B, C], zero-filled by
/// the caller), rounded once to f32; lines with an infinite loss stay zero.
#[pyfunction]
pub fn ctc_grad(
    py: Python<'_>,
    log_probs: &Bound<'_, PyAny>,
    targets: Vec<Vec<i64>>,
    input_lengths: Vec<usize>,
    blank: usize,
    scales: Vec<f64>,
    grad: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let batch = ctc_batch(log_probs, targets, input_lengths, blank)?;
    let gv = TView::f32(grad, "ctc_loss backward")?.writable("ctc_loss backward")?;
    if gv.shape != batch.lp.shape || !crate::layout::is_contiguous(&gv.shape, &gv.strides) {
        return Err(PyValueError::new_err(
            "ctc_loss backward: gradient buffer must be contiguous like log_probs",
        ));
    }
    if scales.len() != batch.targets.len() {
        return Err(PyTypeError::new_err(
            "ctc_loss backward: one scale per line",
        ));
    }
    let (b_len, c_len) = (gv.shape[1], gv.shape[2]);
    let gaddr = gv.addr();
    py.detach(move || {
        let keep = &gv;
        par_chunks(batch.targets.len(), |b| {
            let view = batch.line(b);
            let scale = scales[b];
            let g = gaddr as *mut f32;
            // SAFETY: validated batch; each line writes only its own column
            // b of the [T, B, C] gradient, so lines never overlap.
            unsafe {
                ctc::loss_and_grad(&view, &batch.targets[b], batch.blank, |t, c, v| {
                    if v != 0.0 {
                        *g.add((t * b_len + b) * c_len + c) = (scale * v) as f32;
                    }
                });
            }
        });
        let _ = keep;
    });
    Ok(())
}
