//! The trainer's bindings: batches of lines, the AdamW state, checkpoints.

use super::{flat, CrnnCore};
use crate::dispatch;
use crate::error::Error;
use crate::py::kernel::detach;
use crate::recognizer::trainer::{BatchResult, Hyper, Line, Trainer};
use crate::simd::Token;
use numpy::{
    IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyReadwriteArray1,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;

/// AdamW state and per-line workspaces.
#[pyclass(module = "onemodel._core")]
pub struct TrainerCore {
    trainer: Trainer,
}

struct Batch {
    pixels: Vec<Vec<f32>>,
    widths: Vec<usize>,
    labels: Vec<Vec<usize>>,
}

impl Batch {
    fn new(
        images: Vec<PyReadonlyArray2<'_, f32>>,
        labels: Vec<Vec<usize>>,
        height: usize,
    ) -> PyResult<Batch> {
        if images.len() != labels.len() {
            return Err(Error::value(format!(
                "{} images but {} targets",
                images.len(),
                labels.len()
            ))
            .into());
        }
        let mut pixels = vec![];
        let mut widths = vec![];
        for (i, im) in images.iter().enumerate() {
            let s = im.shape();
            if s[0] != height {
                return Err(Error::value(format!(
                    "line {i}: the image is {} px high; this model needs {height}",
                    s[0]
                ))
                .into());
            }
            widths.push(s[1]);
            pixels.push(
                im.as_slice()
                    .map_err(|e| Error::Value(format!("line {i}: {e}")))?
                    .to_vec(),
            );
        }
        Ok(Batch {
            pixels,
            widths,
            labels,
        })
    }
    fn lines(&self) -> Vec<Line<'_>> {
        (0..self.pixels.len())
            .map(|i| Line {
                pixels: &self.pixels[i],
                width: self.widths[i],
                labels: &self.labels[i],
            })
            .collect()
    }
}

fn result_tuple(r: &BatchResult) -> (f64, Vec<f64>, f64) {
    (r.loss, r.line_losses.clone(), r.norm)
}

#[pymethods]
impl TrainerCore {
    #[new]
    #[pyo3(signature = (model, lr, beta1, beta2, eps, weight_decay, clip, decay_biases))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        model: &CrnnCore,
        lr: f64,
        beta1: f64,
        beta2: f64,
        eps: f64,
        weight_decay: f64,
        clip: Option<f64>,
        decay_biases: bool,
    ) -> PyResult<Self> {
        let hyper = Hyper {
            lr,
            beta1,
            beta2,
            eps,
            weight_decay,
            clip,
            decay_biases,
        };
        Ok(TrainerCore {
            trainer: Trainer::new(&model.model, hyper)?,
        })
    }

    /// Forward/backward without updating: (loss, line losses, norm, batch
    /// gradients natural-layout flat in parameter order).
    fn gradients<'py>(
        &mut self,
        py: Python<'py>,
        model: &CrnnCore,
        images: Vec<PyReadonlyArray2<'py, f32>>,
        labels: Vec<Vec<usize>>,
    ) -> PyResult<((f64, Vec<f64>, f64), Vec<Bound<'py, PyArray1<f32>>>)> {
        let batch = Batch::new(images, labels, model.model.cfg.height)?;
        let tr = &mut self.trainer;
        let m = &model.model;
        let token = Token::current();
        let r = detach(py, || tr.compute(token, m, &batch.lines()))??;
        let grads = m
            .info
            .iter()
            .zip(&self.trainer.grads)
            .map(|(i, g)| crate::recognizer::model::to_natural(i, g).into_pyarray(py))
            .collect();
        Ok((result_tuple(&r), grads))
    }

    /// One step: (loss, line losses, pre-clip norm).
    fn step(
        &mut self,
        py: Python<'_>,
        mut model: PyRefMut<'_, CrnnCore>,
        images: Vec<PyReadonlyArray2<'_, f32>>,
        labels: Vec<Vec<usize>>,
    ) -> PyResult<(f64, Vec<f64>, f64)> {
        let batch = Batch::new(images, labels, model.model.cfg.height)?;
        let tr = &mut self.trainer;
        let m = &mut model.model;
        // The clipping multiplies on this thread: subnormals honoured here too.
        let token = Token::current();
        let r = detach(py, || {
            dispatch::with_ieee(|| tr.train_step(token, m, &batch.lines()))
        })??;
        Ok(result_tuple(&r))
    }

    /// Check a whole batch (a data-parallel driver does, before it hands
    /// the lines out, so that errors name the batch's line numbers).
    fn validate(
        &self,
        model: &CrnnCore,
        images: Vec<PyReadonlyArray2<'_, f32>>,
        labels: Vec<Vec<usize>>,
    ) -> PyResult<()> {
        let batch = Batch::new(images, labels, model.model.cfg.height)?;
        crate::recognizer::trainer::validate_batch(&model.model, &batch.lines())?;
        Ok(())
    }

    /// Forward/backward of some lines of a batch of `batch` lines, each into
    /// its own buffers (kept for `chain_lines`): the lines' losses.
    fn compute_lines(
        &mut self,
        py: Python<'_>,
        model: &CrnnCore,
        images: Vec<PyReadonlyArray2<'_, f32>>,
        labels: Vec<Vec<usize>>,
        batch: usize,
    ) -> PyResult<Vec<f64>> {
        let b = Batch::new(images, labels, model.model.cfg.height)?;
        let tr = &mut self.trainer;
        let m = &model.model;
        let token = Token::current();
        Ok(detach(py, || {
            tr.compute_lines(token, m, &b.lines(), batch)
        })??)
    }

    /// Elements of the flat run-time gradient.
    fn flat_len(&self) -> usize {
        self.trainer.flat_len()
    }

    /// The kept lines' chain over flat elements `[lo, lo + len(acc))`, in
    /// place (`start`: the chain begins with the first kept line).
    fn chain_lines(
        &self,
        py: Python<'_>,
        lo: usize,
        mut acc: PyReadwriteArray1<'_, f32>,
        start: bool,
    ) -> PyResult<()> {
        let acc = acc
            .as_slice_mut()
            .map_err(|e| Error::value(format!("chain_lines: {e}")))?;
        let tr = &self.trainer;
        Ok(detach(py, || {
            dispatch::with_ieee(|| tr.chain_lines(lo, acc, start))
        })??)
    }

    /// Make `flat` (run-time layout) the batch gradient; its global norm.
    fn set_flat_grads(&mut self, flat: PyReadonlyArray1<'_, f32>) -> PyResult<f64> {
        let f = flat
            .as_slice()
            .map_err(|e| Error::value(format!("set_flat_grads: {e}")))?;
        Ok(self.trainer.set_flat_grads(Token::current(), f)?)
    }

    /// Clip and AdamW with the batch gradient of `set_flat_grads` and its
    /// norm; FloatingPointError (nothing updated) on a non-finite norm.
    fn finish_step(
        &mut self,
        py: Python<'_>,
        mut model: PyRefMut<'_, CrnnCore>,
        norm: f64,
    ) -> PyResult<()> {
        let tr = &mut self.trainer;
        let m = &mut model.model;
        let token = Token::current();
        Ok(detach(py, || {
            dispatch::with_ieee(|| tr.finish_step(token, m, norm))
        })??)
    }

    /// The batch gradient, natural layout, flat, parameter order.
    fn grads<'py>(&self, py: Python<'py>, model: &CrnnCore) -> Vec<Bound<'py, PyArray1<f32>>> {
        model
            .model
            .info
            .iter()
            .zip(&self.trainer.grads)
            .map(|(i, g)| crate::recognizer::model::to_natural(i, g).into_pyarray(py))
            .collect()
    }

    #[getter]
    fn step_count(&self) -> u64 {
        self.trainer.step
    }

    /// (m, v) natural layout, flat, parameter order.
    fn adam_state<'py>(
        &self,
        py: Python<'py>,
        model: &CrnnCore,
    ) -> (
        Vec<Bound<'py, PyArray1<f32>>>,
        Vec<Bound<'py, PyArray1<f32>>>,
    ) {
        let conv = |xs: &Vec<Vec<f32>>| {
            model
                .model
                .info
                .iter()
                .zip(xs)
                .map(|(i, g)| crate::recognizer::model::to_natural(i, g).into_pyarray(py))
                .collect()
        };
        (conv(&self.trainer.m), conv(&self.trainer.v))
    }

    fn set_adam_state(
        &mut self,
        model: &CrnnCore,
        step: u64,
        m: Vec<PyReadonlyArray1<'_, f32>>,
        v: Vec<PyReadonlyArray1<'_, f32>>,
    ) -> PyResult<()> {
        let info = &model.model.info;
        if m.len() != info.len() || v.len() != info.len() {
            return Err(Error::value("set_adam_state: one m and one v per parameter").into());
        }
        let mut mm = vec![];
        let mut vv = vec![];
        for (i, p) in info.iter().enumerate() {
            let (a, b) = (flat(&m[i])?, flat(&v[i])?);
            if a.len() != p.natural_numel() || b.len() != p.natural_numel() {
                return Err(
                    Error::value(format!("set_adam_state: {} has the wrong size", p.name)).into(),
                );
            }
            mm.push(crate::recognizer::model::to_runtime(p, &a));
            vv.push(crate::recognizer::model::to_runtime(p, &b));
        }
        self.trainer.m = mm;
        self.trainer.v = vv;
        self.trainer.set_step(step);
        Ok(())
    }
}

/// The batch loss of the lines' losses (mean, infinite ones counted as 0);
/// FloatingPointError naming a line whose loss is NaN.
#[pyfunction]
pub fn rec_batch_loss(line_losses: Vec<f64>) -> PyResult<f64> {
    if line_losses.is_empty() {
        return Err(Error::value("empty batch: give at least one line").into());
    }
    Ok(crate::recognizer::trainer::batch_loss(&line_losses)?)
}
