//! Bindings of the CTC recursion (`kernels::ctc`) for the engine's
//! `ctc_loss` (python/onemodel/ops/ctc.py).

use super::operand::{Out, Strided};
use crate::dispatch::par_chunks;
use crate::error::{expect_len, expect_shape};
use crate::kernels::ctc;
use crate::ptr::Ptr;
use pyo3::prelude::*;

/// Line `b` of log-probabilities [T, B, C] (any strides), its first
/// `steps` frames.
fn line(lp: &Strided<f32>, b: usize, steps: usize) -> ctc::LogProbs {
    let st = lp.strides();
    ctc::LogProbs {
        ptr: lp.ptr().wrapping_offset(b as isize * st[1]),
        steps,
        classes: lp.shape()[2],
        st: st[0],
        sc: st[2],
    }
}

/// Per-line CTC losses (f64; +inf where no alignment exists).
#[pyfunction]
pub fn ctc_losses(
    py: Python<'_>,
    log_probs: Strided<f32>,
    targets: Vec<Vec<i64>>,
    input_lengths: Vec<usize>,
    blank: usize,
) -> PyResult<Vec<f64>> {
    ctc::check_batch(log_probs.shape(), &targets, &input_lengths, blank)?;
    let mut losses = vec![0f64; targets.len()];
    let out = Ptr::new(losses.as_mut_ptr(), losses.len());
    super::kernel::detach(py, || {
        par_chunks(targets.len(), |b| {
            // SAFETY: the batch was checked (lengths ≤ T, labels < C) and
            // the line lies inside the checked log_probs view; each chunk
            // writes its own line's loss.
            unsafe {
                out.write(
                    b,
                    ctc::loss(&line(&log_probs, b, input_lengths[b]), &targets[b], blank),
                )
            };
        })
    })?;
    Ok(losses)
}

/// Write scale[b]·∂loss_b/∂log_probs into `grad` ([T, B, C], zero-filled by
/// the caller), rounded once to f32; lines with an infinite loss stay zero.
#[pyfunction]
pub fn ctc_grad(
    py: Python<'_>,
    log_probs: Strided<f32>,
    targets: Vec<Vec<i64>>,
    input_lengths: Vec<usize>,
    blank: usize,
    scales: Vec<f64>,
    grad: Out<f32>,
) -> PyResult<()> {
    let op = "ctc_loss backward";
    ctc::check_batch(log_probs.shape(), &targets, &input_lengths, blank)?;
    expect_shape(op, "gradient", grad.shape(), log_probs.shape())?;
    expect_len(op, "scales", scales.len(), targets.len())?;
    let (b_len, c_len) = (grad.shape()[1], grad.shape()[2]);
    let g = Ptr::new(grad.mut_ptr(), grad.numel());
    super::kernel::detach(py, || {
        par_chunks(targets.len(), |b| {
            let scale = scales[b];
            // SAFETY: checked batch; each line writes only its own column
            // b of the [T, B, C] gradient, so lines never overlap.
            unsafe {
                ctc::loss_and_grad(
                    &line(&log_probs, b, input_lengths[b]),
                    &targets[b],
                    blank,
                    |t, c, v| {
                        if v != 0.0 {
                            g.write((t * b_len + b) * c_len + c, (scale * v) as f32);
                        }
                    },
                );
            }
        });
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ctc_losses, m)?)?;
    m.add_function(wrap_pyfunction!(ctc_grad, m)?)?;
    Ok(())
}
