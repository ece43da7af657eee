//! The model's bindings: parameters in and out, one line's forward.

use super::{config, flat};
use crate::dispatch;
use crate::error::Error;
use crate::py::kernel::detach;
use crate::recognizer::model::Model;
use crate::recognizer::trainer::Line;
use crate::simd::Token;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// The model's fp32 masters.
#[pyclass(module = "onemodel._core")]
pub struct CrnnCore {
    pub model: Model,
}

#[pymethods]
impl CrnnCore {
    #[new]
    fn new(
        height: usize,
        channels: Vec<usize>,
        pools: Vec<(usize, usize)>,
        hidden: usize,
        layers: usize,
        classes: usize,
        seed: u64,
    ) -> PyResult<Self> {
        let cfg = config(height, channels, pools, hidden, layers, classes)?;
        Ok(CrnnCore {
            model: Model::new(cfg, seed)?,
        })
    }

    /// `[(name, shape)]` of the parameters a config gives, in parameter
    /// order, without allocating them; refused when they would hold more
    /// than `stored` elements (a loader passes the most its file's bytes
    /// could hold, so that a config read from a file never asks for more).
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn shapes(
        height: usize,
        channels: Vec<usize>,
        pools: Vec<(usize, usize)>,
        hidden: usize,
        layers: usize,
        classes: usize,
        stored: usize,
    ) -> PyResult<Vec<(String, Vec<usize>)>> {
        let cfg = config(height, channels, pools, hidden, layers, classes)?;
        cfg.validate()?;
        match cfg.parameter_elements(false) {
            Some(n) if n <= stored => {}
            n => {
                return Err(Error::value(format!(
                    "config: its parameters hold {} elements, more than the file's bytes hold ({stored} at 2 bytes each)",
                    n.map_or("more than 2**64".to_string(), |n| n.to_string())
                ))
                .into())
            }
        }
        Ok(cfg
            .params()
            .into_iter()
            .map(|p| (p.name, p.shape))
            .collect())
    }

    /// `[(name, shape, kind, is_bias)]` in parameter order.
    fn param_info(&self) -> Vec<(String, Vec<usize>, String, bool)> {
        self.model
            .info
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    p.shape.clone(),
                    format!("{:?}", p.kind),
                    p.kind.is_bias(),
                )
            })
            .collect()
    }

    /// Replace every parameter (natural layout, flat float32, parameter order).
    fn set_params(&mut self, tensors: Vec<PyReadonlyArray1<'_, f32>>) -> PyResult<()> {
        let t: Vec<Vec<f32>> = tensors.iter().map(flat).collect::<PyResult<_>>()?;
        self.model = Model::from_natural(self.model.cfg.clone(), t)?;
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
    fn logits<'py>(
        &self,
        py: Python<'py>,
        image: PyReadonlyArray2<'py, f32>,
    ) -> PyResult<(Bound<'py, PyArray1<f32>>, usize)> {
        let shape = image.shape();
        let (h, w) = (shape[0], shape[1]);
        let pixels = image
            .as_slice()
            .map_err(|e| Error::Value(format!("expected a contiguous array: {e}")))?
            .to_vec();
        if h != self.model.cfg.height {
            return Err(Error::value(format!(
                "the image is {h} px high; this model needs {}",
                self.model.cfg.height
            ))
            .into());
        }
        let labels: Vec<usize> = vec![];
        crate::recognizer::trainer::validate_batch(
            &self.model,
            &[Line {
                pixels: &pixels,
                width: w,
                labels: &labels,
            }],
        )?;
        let model = &self.model;
        let token = Token::current();
        let (logits, t) = detach(py, || {
            dispatch::with_ieee(|| {
                let mut st = crate::recognizer::model::LineState::default();
                model.forward(token, &pixels, w, &mut st);
                (std::mem::take(&mut st.logits), st.t)
            })
        })?;
        Ok((logits.into_pyarray(py), t))
    }
}

/// Check an architecture (the core's rules, `recognizer::Config::validate`)
/// and return `(min_width, features)`: the narrowest line that gives one time
/// step, and the feature size of a time step. onemodel.recognizer's config
/// takes both from here rather than computing them again.
#[pyfunction]
pub fn crnn_config_check(
    height: usize,
    channels: Vec<usize>,
    pools: Vec<(usize, usize)>,
    hidden: usize,
    layers: usize,
    classes: usize,
) -> PyResult<(usize, usize)> {
    let cfg = config(height, channels, pools, hidden, layers, classes)?;
    Ok((cfg.min_width(), cfg.features()))
}
