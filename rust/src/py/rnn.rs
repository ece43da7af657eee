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

/// A tensor argument that may be None.
type Opt<'py> = Option<Bound<'py, PyAny>>;

/// One direction of a forward call: (w_ih, w_hh, b_ih, b_hh, h0, c0,
/// reverse, saved); c0 is None for a GRU; saved is None on the inference
/// path, else the buffers the kernel fills for backward.
type ForwardArgs<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Opt<'py>,
    Opt<'py>,
    Opt<'py>,
    Opt<'py>,
    bool,
    Option<Vec<Bound<'py, PyAny>>>,
);

/// One direction of a backward call: (w_ih, w_hh, c0, saved, reverse,
/// grads) with grads = (dx, dw_ih, dw_hh, db_ih, db_hh, dh0, dc0), all
/// preallocated (dc0 unused by a GRU).
type BackwardArgs<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Opt<'py>,
    Vec<Bound<'py, PyAny>>,
    bool,
    Seven<'py>,
);

type Seven<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
);

/// What a recurrent kind needs checked: gates per step and what forward
/// saves for backward (gates [T, B, G·H] first, then [T, B, H] states).
struct Kind {
    op: &'static str,
    gates: usize,
    saved: usize,
    /// Rows of `out` after the T steps (the LSTM's final cell).
    extra_rows: usize,
    has_cell: bool,
}

const LSTM: Kind = Kind {
    op: "lstm_layer",
    gates: 4,
    saved: 4,
    extra_rows: 1,
    has_cell: true,
};

const GRU: Kind = Kind {
    op: "gru_layer",
    gates: 3,
    saved: 3,
    extra_rows: 0,
    has_cell: false,
};

fn direction_count(n: usize, op: &str) -> PyResult<()> {
    if n == 1 || n == 2 {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "{op}: expected one or two directions, got {n}"
        )))
    }
}

/// x, the shared sizes, and each direction's (W_ih, W_hh).
type Checked = (TView, rnn::Dims, Vec<(TView, TView)>);

/// x, the shared sizes, and each direction's weights checked against them.
fn weights(
    x: &Bound<'_, PyAny>,
    pairs: &[(&Bound<'_, PyAny>, &Bound<'_, PyAny>)],
    kind: &Kind,
    op: &str,
) -> PyResult<Checked> {
    let xv = TView::f32(x, op)?;
    let first = TView::f32(pairs[0].1, op)?;
    let d = dims(&xv, &first, kind.gates, op)?;
    need(&xv, d.t * d.b * d.i, "input", op)?;
    let gh = kind.gates * d.h;
    let mut out = Vec::with_capacity(pairs.len());
    for (w_ih, w_hh) in pairs {
        let wih = TView::f32(w_ih, op)?;
        let whh = TView::f32(w_hh, op)?;
        need(&wih, gh * d.i, "weight_ih", op)?;
        need(&whh, gh * d.h, "weight_hh", op)?;
        out.push((wih, whh));
    }
    Ok((xv, d, out))
}

fn saved_views(
    list: &[Bound<'_, PyAny>],
    d: rnn::Dims,
    kind: &Kind,
    op: &str,
) -> PyResult<Vec<TView>> {
    if list.len() != kind.saved {
        return Err(PyValueError::new_err(format!(
            "{op}: expected {} saved buffers, got {}",
            kind.saved,
            list.len()
        )));
    }
    let mut views = Vec::with_capacity(list.len());
    for (k, obj) in list.iter().enumerate() {
        let v = TView::f32(obj, op)?;
        if k == 0 {
            need(&v, d.t * d.b * kind.gates * d.h, "saved gates", op)?;
        } else {
            need(&v, d.t * d.b * d.h, "saved state", op)?;
        }
        views.push(v);
    }
    Ok(views)
}

struct ForwardDirection {
    w_ih: TView,
    w_hh: TView,
    b_ih: Option<TView>,
    b_hh: Option<TView>,
    h0: Option<TView>,
    c0: Option<TView>,
    reverse: bool,
    saved: Option<Vec<TView>>,
}

/// A checked forward call: every buffer's size is known to fit the layout
/// the kernels read and write.
struct Forward {
    x: TView,
    d: rnn::Dims,
    dirs: Vec<ForwardDirection>,
    out: TView,
}

fn forward_call(
    x: &Bound<'_, PyAny>,
    directions: Vec<ForwardArgs<'_>>,
    out: &Bound<'_, PyAny>,
    kind: &Kind,
) -> PyResult<Forward> {
    let op = kind.op;
    direction_count(directions.len(), op)?;
    let pairs: Vec<_> = directions.iter().map(|a| (&a.0, &a.1)).collect();
    let (xv, d, ws) = weights(x, &pairs, kind, op)?;
    let gh = kind.gates * d.h;
    let mut dirs = Vec::with_capacity(directions.len());
    for ((w_ih, w_hh), a) in ws.into_iter().zip(&directions) {
        if !kind.has_cell && a.5.as_ref().is_some_and(|c| !c.is_none()) {
            return Err(PyValueError::new_err(format!("{op}: takes no cell state")));
        }
        dirs.push(ForwardDirection {
            w_ih,
            w_hh,
            b_ih: opt_view(a.2.as_ref(), gh, "bias_ih", op)?,
            b_hh: opt_view(a.3.as_ref(), gh, "bias_hh", op)?,
            h0: opt_view(a.4.as_ref(), d.b * d.h, "h0", op)?,
            c0: opt_view(a.5.as_ref(), d.b * d.h, "c0", op)?,
            reverse: a.6,
            saved: match &a.7 {
                None => None,
                Some(list) => Some(saved_views(list, d, kind, op)?),
            },
        });
    }
    let ov = TView::f32(out, op)?.writable(op)?;
    need(
        &ov,
        (d.t + kind.extra_rows) * d.b * dirs.len() * d.h,
        "out",
        op,
    )?;
    Ok(Forward {
        x: xv,
        d,
        dirs,
        out: ov,
    })
}

struct BackwardDirection {
    w_ih: TView,
    w_hh: TView,
    c0: Option<TView>,
    saved: Vec<TView>,
    reverse: bool,
    grads: [TView; 7],
}

struct Backward {
    x: TView,
    d: rnn::Dims,
    dirs: Vec<BackwardDirection>,
    g_out: TView,
}

fn backward_call(
    x: &Bound<'_, PyAny>,
    directions: Vec<BackwardArgs<'_>>,
    g_out: &Bound<'_, PyAny>,
    kind: &Kind,
) -> PyResult<Backward> {
    let op = &format!("{} backward", kind.op);
    direction_count(directions.len(), op)?;
    let pairs: Vec<_> = directions.iter().map(|a| (&a.0, &a.1)).collect();
    let (xv, d, ws) = weights(x, &pairs, kind, op)?;
    let mut dirs = Vec::with_capacity(directions.len());
    for ((w_ih, w_hh), a) in ws.into_iter().zip(&directions) {
        dirs.push(BackwardDirection {
            w_ih,
            w_hh,
            c0: opt_view(a.2.as_ref(), d.b * d.h, "c0", op)?,
            saved: saved_views(&a.3, d, kind, op)?,
            reverse: a.4,
            grads: grad_views(&a.5, d, kind.gates, op)?,
        });
    }
    let gv = TView::f32(g_out, op)?;
    need(
        &gv,
        (d.t + kind.extra_rows) * d.b * dirs.len() * d.h,
        "output gradient",
        op,
    )?;
    Ok(Backward {
        x: xv,
        d,
        dirs,
        g_out: gv,
    })
}

/// Run `run(k, direction)` for each direction: a lone one on this thread,
/// two at once on two threads of the pool ([`dispatch::join`]). Each writes
/// only its own buffers and its own H columns of the shared output, so the
/// bits do not depend on which runs where.
fn run_directions<T: Sync>(dirs: &[T], run: impl Fn(usize, &T) + Sync) {
    match dirs {
        [only] => dispatch::with_ieee(|| run(0, only)),
        [a, b] => {
            dispatch::join(|| run(0, a), || run(1, b));
        }
        _ => unreachable!("checked: one or two directions"),
    }
}

fn const_ptr(v: &Option<TView>) -> Option<*const f32> {
    v.as_ref().map(|v| v.addr() as *const f32)
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

fn grad_views(grads: &Seven<'_>, d: rnn::Dims, gates: usize, op: &str) -> PyResult<[TView; 7]> {
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

impl Forward {
    /// Release the GIL and run `kernel(direction, x, out, ld)` for each
    /// direction, `out` pointing at the direction's first column and `ld`
    /// the output's row stride (see [`run_directions`]).
    fn run(
        self,
        py: Python<'_>,
        kernel: impl Fn(&ForwardDirection, *const f32, *mut f32, usize) + Send + Sync,
    ) {
        py.detach(move || {
            let (h, ld) = (self.d.h, self.dirs.len() * self.d.h);
            run_directions(&self.dirs, |k, dir| {
                let out = (self.out.addr() as *mut f32).wrapping_add(k * h);
                kernel(dir, self.x.addr() as *const f32, out, ld)
            });
        });
    }
}

impl Backward {
    /// As [`Forward::run`], with the direction's columns of the output
    /// gradient.
    fn run(
        self,
        py: Python<'_>,
        kernel: impl Fn(&BackwardDirection, *const f32, *const f32, usize) + Send + Sync,
    ) {
        py.detach(move || {
            let (h, ld) = (self.d.h, self.dirs.len() * self.d.h);
            run_directions(&self.dirs, |k, dir| {
                let g = (self.g_out.addr() as *const f32).wrapping_add(k * h);
                kernel(dir, self.x.addr() as *const f32, g, ld)
            });
        });
    }
}

fn weights_of(w_ih: &TView, w_hh: &TView) -> (*const f32, *const f32) {
    (w_ih.addr() as *const f32, w_hh.addr() as *const f32)
}

/// The LSTM kernel's saved buffers, in the order the layouts list them
/// (sizes checked by `forward_call` / `backward_call`).
fn lstm_saved(v: &[TView]) -> rnn::LstmSaved {
    rnn::LstmSaved {
        gates: v[0].addr() as *mut f32,
        cells: v[1].addr() as *mut f32,
        tanh_c: v[2].addr() as *mut f32,
        h_prev: v[3].addr() as *mut f32,
    }
}

/// The GRU kernel's saved buffers, as [`lstm_saved`].
fn gru_saved(v: &[TView]) -> rnn::GruSaved {
    rnn::GruSaved {
        gates: v[0].addr() as *mut f32,
        hp_n: v[1].addr() as *mut f32,
        h_prev: v[2].addr() as *mut f32,
    }
}

/// LSTM forward over x [T, B, I] for one direction or two at once.
/// `out` is [T + 1, B, D·H]: direction k writes columns k·H..(k+1)·H, rows
/// 0..T its hidden states, row T its final cell state.
#[pyfunction]
pub fn lstm_forward(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    directions: Vec<ForwardArgs<'_>>,
    out: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let call = forward_call(x, directions, out, &LSTM)?;
    let (mode, d) = (dispatch::mode(), call.d);
    call.run(py, move |dir, x, out, ld| {
        let saved = dir.saved.as_deref().map(lstm_saved);
        let (w_ih, w_hh) = weights_of(&dir.w_ih, &dir.w_hh);
        // SAFETY: `forward_call` checked every buffer's size against the
        // layouts; `out` and the saved buffers are fresh buffers the Python
        // side allocated; the directions write disjoint columns of `out` and
        // their own saved buffers; the call keeps the memory alive.
        unsafe {
            rnn::lstm_forward(
                mode,
                d,
                dir.reverse,
                x,
                w_ih,
                w_hh,
                const_ptr(&dir.b_ih),
                const_ptr(&dir.b_hh),
                const_ptr(&dir.h0),
                const_ptr(&dir.c0),
                out,
                ld,
                saved.as_ref(),
            )
        }
    });
    Ok(())
}

/// LSTM backward for the directions of one forward call; `g_out` is the
/// gradient of its `out`.
#[pyfunction]
pub fn lstm_backward(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    directions: Vec<BackwardArgs<'_>>,
    g_out: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let call = backward_call(x, directions, g_out, &LSTM)?;
    let (mode, d) = (dispatch::mode(), call.d);
    call.run(py, move |dir, x, g, ld| {
        let s = lstm_saved(&dir.saved);
        let (w_ih, w_hh) = weights_of(&dir.w_ih, &dir.w_hh);
        // SAFETY: sizes checked by `backward_call`; each direction writes
        // only its own fresh gradient buffers.
        unsafe {
            rnn::lstm_backward(
                mode,
                d,
                dir.reverse,
                x,
                w_ih,
                w_hh,
                const_ptr(&dir.c0),
                &s,
                g,
                ld,
                &grads_of(&dir.grads),
            )
        }
    });
    Ok(())
}

/// GRU forward, as [`lstm_forward`] without the cell: `out` is
/// [T, B, D·H].
#[pyfunction]
pub fn gru_forward(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    directions: Vec<ForwardArgs<'_>>,
    out: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let call = forward_call(x, directions, out, &GRU)?;
    let (mode, d) = (dispatch::mode(), call.d);
    call.run(py, move |dir, x, out, ld| {
        let saved = dir.saved.as_deref().map(gru_saved);
        let (w_ih, w_hh) = weights_of(&dir.w_ih, &dir.w_hh);
        // SAFETY: as in `lstm_forward`.
        unsafe {
            rnn::gru_forward(
                mode,
                d,
                dir.reverse,
                x,
                w_ih,
                w_hh,
                const_ptr(&dir.b_ih),
                const_ptr(&dir.b_hh),
                const_ptr(&dir.h0),
                out,
                ld,
                saved.as_ref(),
            )
        }
    });
    Ok(())
}

/// GRU backward for the directions of one forward call.
#[pyfunction]
pub fn gru_backward(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    directions: Vec<BackwardArgs<'_>>,
    g_out: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let call = backward_call(x, directions, g_out, &GRU)?;
    let (mode, d) = (dispatch::mode(), call.d);
    call.run(py, move |dir, x, g, ld| {
        let s = gru_saved(&dir.saved);
        let mut grads = grads_of(&dir.grads);
        grads.dc0 = std::ptr::null_mut();
        let (w_ih, w_hh) = weights_of(&dir.w_ih, &dir.w_hh);
        // SAFETY: as in `lstm_backward`.
        unsafe { rnn::gru_backward(mode, d, dir.reverse, x, w_ih, w_hh, &s, g, ld, &grads) }
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
