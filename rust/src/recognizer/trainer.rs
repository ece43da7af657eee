//! The training step: lines on threads, each into its own buffers; the
//! batch gradient g₀ + g₁ + … in line order; the global norm in double in
//! parameter order; clipping by float(limit / (norm + 1e-6)); AdamW.

use super::ctc;
use super::dot16::gemm_nt;
use super::lstm::RecScratch;
use super::model::{LineState, Model};
use crate::error::{Error, Result};
use crate::kernels::optim::{adam_step_many, AdamScalars, AdamSlot};
use crate::simd::Token;
use crate::storage::scratch_vec;
use std::sync::Mutex;

/// One line of a batch: `[height][width]` pixels and its labels (≥ 1).
pub struct Line<'a> {
    pub pixels: &'a [f32],
    pub width: usize,
    pub labels: &'a [usize],
}

/// AdamW and clipping settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Hyper {
    pub lr: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    pub weight_decay: f64,
    /// Global-norm limit; `None` turns clipping off.
    pub clip: Option<f64>,
    pub decay_biases: bool,
}

impl Default for Hyper {
    fn default() -> Hyper {
        Hyper {
            lr: 1e-3,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 0.01,
            clip: Some(5.0),
            decay_biases: false,
        }
    }
}

impl Hyper {
    pub fn validate(&self) -> Result<()> {
        let ok = |x: f64| x.is_finite();
        if !(ok(self.lr) && self.lr >= 0.0) {
            return Err(Error::Value(format!(
                "lr must be a finite number ≥ 0, got {}",
                self.lr
            )));
        }
        for (n, b) in [("beta1", self.beta1), ("beta2", self.beta2)] {
            if !(ok(b) && (0.0..1.0).contains(&b)) {
                return Err(Error::Value(format!("{n} must be in [0, 1), got {b}")));
            }
        }
        if !(ok(self.eps) && self.eps > 0.0) {
            return Err(Error::Value(format!(
                "eps must be a finite number > 0, got {}",
                self.eps
            )));
        }
        if !(ok(self.weight_decay) && self.weight_decay >= 0.0) {
            return Err(Error::Value(format!(
                "weight_decay must be a finite number ≥ 0, got {}",
                self.weight_decay
            )));
        }
        if let Some(c) = self.clip {
            if !(ok(c) && c > 0.0) {
                return Err(Error::Value(format!(
                    "clip must be a finite number > 0 (or None), got {c}"
                )));
            }
        }
        Ok(())
    }
}

/// Per-line buffers, reused across steps.
#[derive(Default)]
struct LineWork {
    st: LineState,
    grads: Vec<Vec<f32>>,
    ctc: ctc::Scratch,
    loss: f64,
}

/// What one forward/backward over a batch gives.
#[derive(Clone, Debug)]
pub struct BatchResult {
    /// Mean over the lines of each line's loss, infinite ones counted as 0.
    pub loss: f64,
    /// Each line's loss (+∞ where no alignment exists).
    pub line_losses: Vec<f64>,
    /// Global gradient norm before clipping.
    pub norm: f64,
}

/// The trainer: AdamW state and per-line workspaces.
pub struct Trainer {
    pub hyper: Hyper,
    pub step: u64,
    pub b1_pow: f64,
    pub b2_pow: f64,
    pub m: Vec<Vec<f32>>,
    pub v: Vec<Vec<f32>>,
    /// The batch gradient of the last `compute` (run-time layout).
    pub grads: Vec<Vec<f32>>,
    work: Vec<Mutex<LineWork>>,
    /// How many of `work` hold the lines of the last `compute_lines`.
    kept: usize,
    /// The step's transposed weights, in buffers kept between steps.
    prep: super::model::Prepared,
    /// The batched recurrences' workspaces, one per direction.
    rec: [RecScratch; 2],
}

/// Check a batch against the model; a clear message for each bad input.
pub fn validate_batch(model: &Model, lines: &[Line<'_>]) -> Result<()> {
    let cfg = &model.cfg;
    if lines.is_empty() {
        return Err(Error::Value("empty batch: give at least one line".into()));
    }
    for (i, l) in lines.iter().enumerate() {
        if l.width == 0 {
            return Err(Error::Value(format!("line {i}: the image has zero width")));
        }
        if l.pixels.len() != cfg.height * l.width {
            return Err(Error::Value(format!(
                "line {i}: expected {}×{} = {} pixels, got {}",
                cfg.height,
                l.width,
                cfg.height * l.width,
                l.pixels.len()
            )));
        }
        if l.width < cfg.min_width() {
            return Err(Error::Value(format!(
                "line {i}: the image is {} px wide; this model needs at least {} px (one output column)",
                l.width,
                cfg.min_width()
            )));
        }
        if let Some(p) = l.pixels.iter().position(|v| !v.is_finite()) {
            return Err(Error::Value(format!(
                "line {i}: pixel (row {}, column {}) is {} (images must be finite)",
                p / l.width,
                p % l.width,
                l.pixels[p]
            )));
        }
        if let Some(&bad) = l.labels.iter().find(|&&c| c == 0 || c >= cfg.classes) {
            return Err(Error::Value(format!(
                "line {i}: label {bad} is not a character class (1..={}; 0 is the blank)",
                cfg.classes - 1
            )));
        }
    }
    Ok(())
}

impl Trainer {
    pub fn new(model: &Model, hyper: Hyper) -> Result<Trainer> {
        hyper.validate()?;
        let zeros: Vec<Vec<f32>> = model
            .params
            .iter()
            .map(|p| scratch_vec(p.len(), 0f32))
            .collect();
        Ok(Trainer {
            hyper,
            step: 0,
            b1_pow: 1.0,
            b2_pow: 1.0,
            m: zeros.clone(),
            v: zeros.clone(),
            grads: zeros,
            work: Vec::new(),
            kept: 0,
            prep: Default::default(),
            rec: Default::default(),
        })
    }

    /// Set the step count (after loading a checkpoint): the running
    /// products are rebuilt by the same multiplications.
    pub fn set_step(&mut self, step: u64) {
        self.step = step;
        self.b1_pow = 1.0;
        self.b2_pow = 1.0;
        for _ in 0..step {
            self.b1_pow *= self.hyper.beta1;
            self.b2_pow *= self.hyper.beta2;
        }
    }

    /// Forward and backward over a batch: `self.grads` becomes the batch
    /// gradient (before clipping). Weights are not touched. The LSTM
    /// weights' gradients are summed over the lines as they are made
    /// (`Model::chained_lstm_weight_grads`), the others per line and then
    /// chained; either way every element is g₀ + g₁ + … in line order. No
    /// lines are kept for `chain_lines` afterwards.
    pub fn compute(
        &mut self,
        token: Token,
        model: &Model,
        lines: &[Line<'_>],
    ) -> Result<BatchResult> {
        let b = lines.len();
        let line_losses = self.run_lines(token, model, lines, b, true)?;
        // g = g0; g += g1; … in line order, per element (so the threads may
        // take any element chunks: the chunking is a function of the sizes).
        let chained = model.cfg.lstm_params();
        for ti in (0..self.grads.len()).filter(|ti| !chained.contains(ti)) {
            let mut acc = std::mem::take(&mut self.grads[ti]);
            self.chain_tensor(ti, 0, &mut acc, true);
            self.grads[ti] = acc;
        }
        self.kept = 0;
        let loss = batch_loss(&line_losses)?;
        let norm = global_norm(token, &self.grads);
        Ok(BatchResult {
            loss,
            line_losses,
            norm,
        })
    }

    /// Forward, CTC and backward of `lines`, which belong to a batch of
    /// `batch` lines (each logit gradient is scaled by 1/`batch`), each line
    /// into its own gradient buffers (the recurrences of all lines share
    /// their per-step products, see below). The buffers are kept
    /// until the next call, for `chain_lines`. Returns each line's loss.
    /// A data-parallel worker calls this with its own lines of the batch.
    pub fn compute_lines(
        &mut self,
        token: Token,
        model: &Model,
        lines: &[Line<'_>],
        batch: usize,
    ) -> Result<Vec<f64>> {
        self.run_lines(token, model, lines, batch, false)
    }

    /// `compute_lines`; with `chain_lstm`, the LSTM weights' gradients of
    /// the lines go straight into the batch gradient `self.grads` (summed in
    /// line order) instead of each line's buffers.
    fn run_lines(
        &mut self,
        token: Token,
        model: &Model,
        lines: &[Line<'_>],
        batch: usize,
        chain_lstm: bool,
    ) -> Result<Vec<f64>> {
        validate_batch(model, lines)?;
        if batch < lines.len() {
            return Err(Error::value(format!(
                "a batch of {batch} lines cannot hold the {} lines given",
                lines.len()
            )));
        }
        let b = lines.len();
        while self.work.len() < b {
            self.work.push(Mutex::new(LineWork::default()));
        }
        self.kept = b;
        model.prepare_into(token, &mut self.prep);
        let prep = &self.prep;
        let rec = &mut self.rec;
        let grads = &mut self.grads;
        let scale = 1.0 / batch as f64;
        let cfg = &model.cfg;
        let k = cfg.classes;
        let work = &self.work[..b];
        let lock = |i: usize| work[i].lock().unwrap_or_else(|e| e.into_inner());
        // Per line on the threads: the convolutions. Then each LSTM layer
        // over all lines at once (one product per step for the running
        // lines; the two directions on two threads), the classifier, CTC
        // and the classifier's backward per line, each layer's backward
        // recurrence over all lines and its weight gradients per line, and
        // the convolutions' backward per line. Every product output is
        // still one line's dot16 and every gradient one line's own.
        crate::dispatch::par_chunks(b, |i| {
            let mut w = lock(i);
            let w = &mut *w;
            if w.grads.len() != model.params.len()
                || w.grads
                    .iter()
                    .zip(&model.params)
                    .any(|(g, p)| g.len() != p.len())
            {
                w.grads = model
                    .params
                    .iter()
                    .map(|p| scratch_vec(p.len(), 0f32))
                    .collect();
            }
            model.forward_convs(
                token,
                lines[i].pixels,
                lines[i].width,
                Some(prep),
                &mut w.st,
            );
        });
        let all_lines =
            |rec: &mut [RecScratch; 2], f: &dyn Fn(&mut [&mut LineState], &mut [RecScratch; 2])| {
                let mut guards: Vec<_> = (0..b).map(lock).collect();
                let mut sts: Vec<&mut LineState> = guards.iter_mut().map(|g| &mut g.st).collect();
                f(&mut sts, rec);
            };
        for l in 0..cfg.layers {
            all_lines(rec, &|sts, rec| {
                model.forward_lstm(token, l, Some(prep), sts, rec)
            });
        }
        crate::dispatch::par_chunks(b, |i| {
            let mut w = lock(i);
            let w = &mut *w;
            model.forward_head(token, &mut w.st);
            let t = w.st.t;
            super::reuse(&mut w.st.dlogits, t * k, 0.0);
            w.loss = ctc::loss_from_logits(
                token,
                &w.st.logits,
                t,
                k,
                lines[i].labels,
                scale,
                &mut w.st.dlogits,
                &mut w.ctc,
            );
            model.backward_head(token, &mut w.st, &mut w.grads);
        });
        for l in (0..cfg.layers).rev() {
            all_lines(rec, &|sts, rec| {
                model.backward_recurrence(token, l, prep, sts, rec)
            });
            crate::dispatch::par_chunks(b, |i| {
                let mut w = lock(i);
                let w = &mut *w;
                if chain_lstm {
                    model.backward_lstm_input(token, l, prep, &mut w.st);
                } else {
                    model.backward_lstm_grads(token, l, prep, &mut w.st, &mut w.grads);
                }
            });
            if chain_lstm {
                let guards: Vec<_> = (0..b).map(lock).collect();
                let sts: Vec<&LineState> = guards.iter().map(|g| &g.st).collect();
                model.chained_lstm_weight_grads(token, l, &sts, grads);
            }
        }
        crate::dispatch::par_chunks(b, |i| {
            let mut w = lock(i);
            let w = &mut *w;
            model.backward_convs(token, &mut w.st, &mut w.grads);
        });
        Ok(work
            .iter()
            .map(|w| w.lock().unwrap_or_else(|e| e.into_inner()).loss)
            .collect())
    }

    /// Element count of the flat run-time gradient (every tensor in
    /// parameter order, run-time layout): the vector `chain_lines` slices.
    pub fn flat_len(&self) -> usize {
        self.grads.iter().map(|g| g.len()).sum()
    }

    /// The chain of the kept lines (those of the last `compute_lines`), in
    /// their order, over the flat run-time elements `[lo, lo + acc.len())`.
    /// `start`: the chain begins here, so `acc` becomes the first line's
    /// values (a copy, not 0 + g₀) and the others are added; otherwise
    /// `acc` holds the chain of the batch's earlier lines and every kept
    /// line is added to it. Each element sees `acc = acc + g` in line order
    /// (the batch gradient of docs/recognizer.md, "The arithmetic contract"),
    /// whoever holds the other lines.
    pub fn chain_lines(&self, lo: usize, acc: &mut [f32], start: bool) -> Result<()> {
        let total = self.flat_len();
        if lo + acc.len() > total {
            return Err(Error::value(format!(
                "chain_lines: elements [{lo}, {}) lie outside the gradient's {total}",
                lo + acc.len()
            )));
        }
        if self.kept == 0 {
            return Err(Error::value(
                "chain_lines: no lines were computed (call compute_lines first)",
            ));
        }
        let mut base = 0;
        let mut done = 0;
        for (ti, g) in self.grads.iter().enumerate() {
            let (a, b) = (lo.max(base), (lo + acc.len()).min(base + g.len()));
            if a < b {
                self.chain_tensor(ti, a - base, &mut acc[done..done + (b - a)], start);
                done += b - a;
            }
            base += g.len();
        }
        Ok(())
    }

    /// `chain_lines` for elements `[from, from + dst.len())` of tensor `ti`.
    fn chain_tensor(&self, ti: usize, from: usize, dst: &mut [f32], start: bool) {
        let guards: Vec<_> = self.work[..self.kept]
            .iter()
            .map(|w| w.lock().unwrap_or_else(|e| e.into_inner()))
            .collect();
        let parts: Vec<&[f32]> = guards
            .iter()
            .map(|w| &w.grads[ti][from..from + dst.len()])
            .collect();
        let n = dst.len();
        let out = crate::ptr::Ptr::new(dst.as_mut_ptr(), n);
        crate::dispatch::par_chunks(n.div_ceil(SUM_CHUNK), |c| {
            let range = c * SUM_CHUNK..((c + 1) * SUM_CHUNK).min(n);
            // SAFETY: chunks write disjoint ranges of `dst`, which outlives
            // this call.
            let dst = unsafe { out.slice_mut(range.start, range.len()) };
            let rest = if start {
                dst.copy_from_slice(&parts[0][range.clone()]);
                &parts[1..]
            } else {
                &parts[..]
            };
            for g in rest {
                for (a, x) in dst.iter_mut().zip(&g[range.clone()]) {
                    *a += *x;
                }
            }
        });
    }

    /// Replace the batch gradient by `flat` (run-time layout, tensors in
    /// parameter order), e.g. one a data-parallel reduction produced.
    /// Returns its global norm.
    pub fn set_flat_grads(&mut self, token: Token, flat: &[f32]) -> Result<f64> {
        let total = self.flat_len();
        if flat.len() != total {
            return Err(Error::value(format!(
                "set_flat_grads: expected {total} values, got {}",
                flat.len()
            )));
        }
        let mut base = 0;
        for g in self.grads.iter_mut() {
            let n = g.len();
            g.copy_from_slice(&flat[base..base + n]);
            base += n;
        }
        Ok(global_norm(token, &self.grads))
    }

    /// One training step: compute, clip, AdamW. On a non-finite gradient
    /// norm nothing is updated and an error names it.
    pub fn train_step(
        &mut self,
        token: Token,
        model: &mut Model,
        lines: &[Line<'_>],
    ) -> Result<BatchResult> {
        let r = self.compute(token, model, lines)?;
        self.finish_step(token, model, r.norm)?;
        Ok(r)
    }

    /// The end of a step once `self.grads` holds the batch gradient and
    /// `norm` its global norm: refuse a non-finite norm (nothing updated),
    /// clip, AdamW.
    pub fn finish_step(&mut self, token: Token, model: &mut Model, norm: f64) -> Result<()> {
        if !norm.is_finite() {
            return Err(Error::NonFinite(format!(
                "the gradient norm is {norm} (a non-finite gradient); the weights were not updated"
            )));
        }
        if let Some(limit) = self.hyper.clip {
            if norm > limit {
                let coef = (limit / (norm + 1e-6)) as f32;
                for g in self.grads.iter_mut() {
                    for x in g.iter_mut() {
                        *x *= coef;
                    }
                }
            }
        }
        self.apply(token, model);
        Ok(())
    }

    /// AdamW with the current `self.grads`: the library's shared AdamW
    /// kernel (kernels::optim, docs/optim.md, "Arithmetic"), every tensor in one
    /// call; a tensor not flagged for decay gets weight decay 0 (its decay
    /// factor is exactly 1).
    pub fn apply(&mut self, token: Token, model: &mut Model) {
        let h = &self.hyper;
        self.step += 1;
        self.b1_pow *= h.beta1;
        self.b2_pow *= h.beta2;
        let mut slots = Vec::with_capacity(model.info.len());
        for (i, info) in model.info.iter().enumerate() {
            let decay = !info.kind.is_bias() || h.decay_biases;
            let wd = if decay { h.weight_decay } else { 0.0 };
            let scalars = AdamScalars::from_powers(
                h.lr,
                h.beta1,
                h.beta2,
                h.eps,
                wd,
                true,
                self.b1_pow,
                self.b2_pow,
            );
            let n = model.params[i].len();
            assert!(self.grads[i].len() == n && self.m[i].len() == n && self.v[i].len() == n);
            slots.push(AdamSlot {
                p: model.params[i].as_mut_ptr(),
                g: self.grads[i].as_ptr(),
                m: self.m[i].as_mut_ptr(),
                v: self.v[i].as_mut_ptr(),
                vmax: std::ptr::null_mut(),
                len: n,
                scalars,
            });
        }
        // SAFETY: every slot points into distinct, live Vecs of `len`
        // elements borrowed mutably (p, m, v) or shared (g) for this call.
        unsafe { adam_step_many(token, &slots) }
    }
}

/// The batch loss: the mean over the lines of each line's loss in double,
/// summed in line order, an infinite loss (no alignment) counted as 0; a NaN
/// loss is an error naming its line.
pub fn batch_loss(line_losses: &[f64]) -> Result<f64> {
    if let Some(i) = line_losses.iter().position(|l| l.is_nan()) {
        return Err(Error::NonFinite(format!(
            "line {i}: the loss is NaN (non-finite logits: the weights or activations overflowed)"
        )));
    }
    let mut sum = 0.0f64;
    for l in line_losses {
        if l.is_finite() {
            sum += *l;
        }
    }
    Ok(sum / line_losses.len() as f64)
}

/// Elements per thread chunk of the line-order gradient sum (a constant).
const SUM_CHUNK: usize = 16 * 1024;

/// √(Σ over tensors in parameter order of (dot16(g, g) widened to double)).
pub fn global_norm(token: Token, grads: &[Vec<f32>]) -> f64 {
    let mut sum = 0.0f64;
    for g in grads {
        let mut d = [0f32];
        gemm_nt(token, 1, 1, g.len(), g, g.len(), g, g.len(), &mut d, 1);
        sum += d[0] as f64;
    }
    sum.sqrt()
}
