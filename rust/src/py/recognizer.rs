//! Bindings of the crnn-v0 trainer (onemodel.recognizer). Python validates
//! and converts (charset, file I/O, shapes); the Rust core checks every
//! input it relies on again and reports a clear error. The GIL is released
//! around every forward/backward.

use crate::dispatch;
use crate::recognizer::model::{Config, Model};
use crate::recognizer::trainer::{BatchResult, Hyper, Line, Trainer};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyFloatingPointError, PyValueError};
use pyo3::prelude::*;

fn config(height: usize, channels: Vec<usize>, pools: Vec<(usize, usize)>, hidden: usize, layers: usize, classes: usize) -> PyResult<Config> {
    let cfg = Config { height, channels, pools, hidden, layers, classes };
    cfg.validate().map_err(PyValueError::new_err)?;
    Ok(cfg)
}

/// The model's fp32 masters.
#[pyclass(module = "onemodel._core")]
pub struct CrnnCore {
    pub model: Model,
}

fn flat(a: &PyReadonlyArray1<'_, f32>) -> PyResult<Vec<f32>> {
    Ok(a.as_slice().map_err(|e| PyValueError::new_err(format!("expected a contiguous float32 array: {e}")))?.to_vec())
}

#[pymethods]
impl CrnnCore {
    #[new]
    fn new(height: usize, channels: Vec<usize>, pools: Vec<(usize, usize)>, hidden: usize, layers: usize, classes: usize, seed: u64) -> PyResult<Self> {
        let cfg = config(height, channels, pools, hidden, layers, classes)?;
        Ok(CrnnCore { model: Model::new(cfg, seed).map_err(PyValueError::new_err)? })
    }

    /// `[(name, shape, kind, is_bias)]` in parameter order.
    fn param_info(&self) -> Vec<(String, Vec<usize>, String, bool)> {
        self.model.info.iter().map(|p| (p.name.clone(), p.shape.clone(), format!("{:?}", p.kind), p.kind.is_bias())).collect()
    }

    /// Replace every parameter (natural layout, flat float32, parameter order).
    fn set_params(&mut self, tensors: Vec<PyReadonlyArray1<'_, f32>>) -> PyResult<()> {
        let t: Vec<Vec<f32>> = tensors.iter().map(flat).collect::<PyResult<_>>()?;
        self.model = Model::from_natural(self.model.cfg.clone(), t).map_err(PyValueError::new_err)?;
        Ok(())
    }

    /// Every parameter, natural layout, flat float32, parameter order.
    fn params<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyArray1<f32>>> {
        self.model
            .info
            .iter()
            .zip(&self.model.params)
            .map(|(i, p)| crate::recognizer::model::to_natural(i, p).into_pyarray(py))
            .collect()
    }

    /// Logits `[T][classes]` (flat) and T for one `[height][width]` image.
    fn logits<'py>(&self, py: Python<'py>, image: PyReadonlyArray2<'py, f32>) -> PyResult<(Bound<'py, PyArray1<f32>>, usize)> {
        let shape = image.shape();
        let (h, w) = (shape[0], shape[1]);
        let pixels = image.as_slice().map_err(|e| PyValueError::new_err(format!("expected a contiguous array: {e}")))?.to_vec();
        if h != self.model.cfg.height {
            return Err(PyValueError::new_err(format!("the image is {h} px high; this model needs {}", self.model.cfg.height)));
        }
        let labels: Vec<usize> = vec![];
        crate::recognizer::trainer::validate_batch(&self.model, &[Line { pixels: &pixels, width: w, labels: &labels }])
            .map_err(PyValueError::new_err)?;
        let model = &self.model;
        let (logits, t) = py.detach(|| {
            dispatch::with_ieee(|| {
                let prep = model.prepare();
                let mut st = crate::recognizer::model::LineState::default();
                model.forward(&prep, &pixels, w, &mut st);
                (std::mem::take(&mut st.logits), st.t)
            })
        });
        Ok((logits.into_pyarray(py), t))
    }
}

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
    fn new(images: Vec<PyReadonlyArray2<'_, f32>>, labels: Vec<Vec<usize>>, height: usize) -> PyResult<Batch> {
        if images.len() != labels.len() {
            return Err(PyValueError::new_err(format!("{} images but {} targets", images.len(), labels.len())));
        }
        let mut pixels = vec![];
        let mut widths = vec![];
        for (i, im) in images.iter().enumerate() {
            let s = im.shape();
            if s[0] != height {
                return Err(PyValueError::new_err(format!("line {i}: the image is {} px high; this model needs {height}", s[0])));
            }
            widths.push(s[1]);
            pixels.push(im.as_slice().map_err(|e| PyValueError::new_err(format!("line {i}: {e}")))?.to_vec());
        }
        Ok(Batch { pixels, widths, labels })
    }
    fn lines(&self) -> Vec<Line<'_>> {
        (0..self.pixels.len()).map(|i| Line { pixels: &self.pixels[i], width: self.widths[i], labels: &self.labels[i] }).collect()
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
    fn new(model: &CrnnCore, lr: f64, beta1: f64, beta2: f64, eps: f64, weight_decay: f64, clip: Option<f64>, decay_biases: bool) -> PyResult<Self> {
        let hyper = Hyper { lr, beta1, beta2, eps, weight_decay, clip, decay_biases };
        Ok(TrainerCore { trainer: Trainer::new(&model.model, hyper).map_err(PyValueError::new_err)? })
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
        let r = py.detach(|| tr.compute(m, &batch.lines())).map_err(PyValueError::new_err)?;
        let grads = m
            .info
            .iter()
            .zip(&self.trainer.grads)
            .map(|(i, g)| crate::recognizer::model::to_natural(i, g).into_pyarray(py))
            .collect();
        Ok((result_tuple(&r), grads))
    }

    /// One step: (loss, line losses, pre-clip norm).
    fn step(&mut self, py: Python<'_>, mut model: PyRefMut<'_, CrnnCore>, images: Vec<PyReadonlyArray2<'_, f32>>, labels: Vec<Vec<usize>>) -> PyResult<(f64, Vec<f64>, f64)> {
        let batch = Batch::new(images, labels, model.model.cfg.height)?;
        let tr = &mut self.trainer;
        let m = &mut model.model;
        let r = py.detach(|| tr.train_step(m, &batch.lines()));
        match r {
            Ok(r) => Ok(result_tuple(&r)),
            Err(e) if e.contains("non-finite") => Err(PyFloatingPointError::new_err(e)),
            Err(e) => Err(PyValueError::new_err(e)),
        }
    }

    #[getter]
    fn step_count(&self) -> u64 {
        self.trainer.step
    }

    /// (m, v) natural layout, flat, parameter order.
    fn adam_state<'py>(&self, py: Python<'py>, model: &CrnnCore) -> (Vec<Bound<'py, PyArray1<f32>>>, Vec<Bound<'py, PyArray1<f32>>>) {
        let conv = |xs: &Vec<Vec<f32>>| {
            model.model.info.iter().zip(xs).map(|(i, g)| crate::recognizer::model::to_natural(i, g).into_pyarray(py)).collect()
        };
        (conv(&self.trainer.m), conv(&self.trainer.v))
    }

    fn set_adam_state(&mut self, model: &CrnnCore, step: u64, m: Vec<PyReadonlyArray1<'_, f32>>, v: Vec<PyReadonlyArray1<'_, f32>>) -> PyResult<()> {
        let info = &model.model.info;
        if m.len() != info.len() || v.len() != info.len() {
            return Err(PyValueError::new_err("set_adam_state: one m and one v per parameter"));
        }
        let mut mm = vec![];
        let mut vv = vec![];
        for (i, p) in info.iter().enumerate() {
            let (a, b) = (flat(&m[i])?, flat(&v[i])?);
            if a.len() != p.natural_numel() || b.len() != p.natural_numel() {
                return Err(PyValueError::new_err(format!("set_adam_state: {} has the wrong size", p.name)));
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CrnnCore>()?;
    m.add_class::<TrainerCore>()?;
    Ok(())
}
