//! Bindings of the crnn-v0 trainer (onemodel.recognizer). Python validates
//! and converts (charset, file I/O, shapes); the Rust core checks every
//! input it relies on again and reports a clear error. The GIL is released
//! around every forward/backward.
//!
//! `model.rs` binds the model (`CrnnCore`), `trainer.rs` the trainer
//! (`TrainerCore`, `rec_batch_loss`), `layers.rs` the single layers the
//! per-layer parity fixtures call (tests/test_recognizer_torch.py). Those are
//! test-only: they are compiled with the `test-layers` cargo feature, which
//! the editable (test) build turns on and the wheel leaves off
//! (build_backend/portable_wheels.py, docs/install.md).

#[cfg(feature = "test-layers")]
mod layers;
mod model;
mod trainer;

pub use model::CrnnCore;
pub use trainer::TrainerCore;

use crate::error::Error;
use crate::recognizer::model::Config;
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;

fn config(
    height: usize,
    channels: Vec<usize>,
    pools: Vec<(usize, usize)>,
    hidden: usize,
    layers: usize,
    classes: usize,
) -> PyResult<Config> {
    let cfg = Config {
        height,
        channels,
        pools,
        hidden,
        layers,
        classes,
    };
    cfg.validate()?;
    Ok(cfg)
}

/// A copy of a contiguous float32 array, asked for with `try_reserve_exact`
/// (the GIL is held here, so a refusal must be an error, not an unwind:
/// MemoryError instead of an abort).
fn flat(a: &PyReadonlyArray1<'_, f32>) -> PyResult<Vec<f32>> {
    let s = a
        .as_slice()
        .map_err(|e| Error::Value(format!("expected a contiguous float32 array: {e}")))?;
    let mut v = Vec::new();
    v.try_reserve_exact(s.len())
        .map_err(|_| crate::storage::refused_bytes(std::mem::size_of_val(s)))?;
    v.extend_from_slice(s);
    Ok(v)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CrnnCore>()?;
    m.add_class::<TrainerCore>()?;
    m.add_function(wrap_pyfunction!(model::crnn_config_check, m)?)?;
    m.add_function(wrap_pyfunction!(trainer::rec_batch_loss, m)?)?;
    #[cfg(feature = "test-layers")]
    layers::register(m)?;
    Ok(())
}
