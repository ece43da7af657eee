//! Bindings of the CTC recursion (`kernels::ctc`) for the engine's
//! `ctc_loss` (python/onemodel/ops/ctc.py).

use super::operand::{Out, Strided};
use crate::dispatch::par_chunks_sized;
use crate::error::{expect_len, expect_shape, Error};
use crate::kernels::ctc;
use crate::ptr::Ptr;
use crate::simd::Token;
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

/// The element steps of `dispatch::INLINE_WORK` one CTC cell (a log-add
/// in f64 through `detmath`'s exp and log) counts for. Measured on the
/// development VM: 64 ns per cell (`ctc_loss` of T 64, B 8, L 20 at one
/// thread), so the threshold of 32 768 steps is 1 024 cells, ≈ 65 µs of
/// work: about one helper wake-up. A chosen weight, not a fitted optimum.
const CELL_STEPS: usize = 32;

/// The element steps of the recursion over the batch: each line's frames
/// times its extended labels (2L + 1), once for α (the loss) and once more
/// for β and the per-class sums (`with_grad`).
fn work(targets: &[Vec<i64>], input_lengths: &[usize], classes: usize, with_grad: bool) -> usize {
    let cells: usize = targets
        .iter()
        .zip(input_lengths)
        .map(|(l, &t)| {
            let labels = 2 * l.len() + 1;
            let per_frame = if with_grad {
                2 * labels + classes
            } else {
                labels
            };
            t.saturating_mul(per_frame)
        })
        .fold(0, usize::saturating_add);
    cells.saturating_mul(CELL_STEPS)
}

/// `per_line(line b's log-probabilities, its target)` for every line of a
/// checked batch, on the library's threads (each line's result in its own
/// slot; the recursions' cost sets the threads' share).
fn each_line<T: Send>(
    py: Python<'_>,
    log_probs: &Strided<f32>,
    targets: &[Vec<i64>],
    input_lengths: &[usize],
    blank: usize,
    per_line: impl Fn(&ctc::LogProbs, &[i64]) -> T + Sync,
) -> PyResult<Vec<T>> {
    ctc::check_batch(log_probs.shape(), targets, input_lengths, blank)?;
    let mut slots: Vec<Option<T>> = (0..targets.len()).map(|_| None).collect();
    let out = Ptr::new(slots.as_mut_ptr(), slots.len());
    super::kernel::detach(py, || {
        let work = work(targets, input_lengths, log_probs.shape()[2], false);
        par_chunks_sized(targets.len(), work, |b| {
            // SAFETY: each chunk writes its own line's slot.
            unsafe {
                out.write(
                    b,
                    Some(per_line(&line(log_probs, b, input_lengths[b]), &targets[b])),
                )
            };
        })
    })?;
    Ok(slots
        .into_iter()
        .map(|v| v.expect("ctc: every line ran"))
        .collect())
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
    let token = Token::current();
    // SAFETY (the closure): `each_line` checked the batch (lengths ≤ T,
    // labels < C), and the line lies inside the checked log_probs view.
    each_line(
        py,
        &log_probs,
        &targets,
        &input_lengths,
        blank,
        |lp, t| unsafe { ctc::loss(token, lp, t, blank) },
    )
}

/// The forward recursions of a batch, kept from `ctc_forward` for
/// `ctc_grad` (opaque to Python).
#[pyclass(module = "onemodel._core", frozen)]
pub struct CtcAlphas {
    lines: Vec<ctc::Alpha>,
    /// The batch they were computed over: [T, B, C], the targets and the
    /// input lengths, which `ctc_grad` must be given again.
    shape: Vec<usize>,
    targets: Vec<Vec<i64>>,
    input_lengths: Vec<usize>,
}

/// Per-line CTC losses (as [`ctc_losses`]) and the forward recursions that
/// gave them, for `ctc_grad` to start from instead of running them again.
#[pyfunction]
pub fn ctc_forward(
    py: Python<'_>,
    log_probs: Strided<f32>,
    targets: Vec<Vec<i64>>,
    input_lengths: Vec<usize>,
    blank: usize,
) -> PyResult<(Vec<f64>, CtcAlphas)> {
    let token = Token::current();
    // SAFETY (the closure): as in `ctc_losses`.
    let lines = each_line(
        py,
        &log_probs,
        &targets,
        &input_lengths,
        blank,
        |lp, t| unsafe { ctc::alpha(token, lp, t, blank) },
    )?;
    let losses = lines.iter().map(|a| -a.log_p).collect();
    let kept = CtcAlphas {
        lines,
        shape: log_probs.shape().to_vec(),
        targets,
        input_lengths,
    };
    Ok((losses, kept))
}

/// Write scale[b]·∂loss_b/∂log_probs into `grad` ([T, B, C], zero-filled by
/// the caller), rounded once to f32; lines with an infinite loss stay zero.
/// `alphas`, from `ctc_forward` over the same batch, spares the forward
/// recursions (the same bits either way).
#[pyfunction]
#[pyo3(signature = (log_probs, targets, input_lengths, blank, scales, grad, alphas=None))]
#[allow(clippy::too_many_arguments)]
pub fn ctc_grad(
    py: Python<'_>,
    log_probs: Strided<f32>,
    targets: Vec<Vec<i64>>,
    input_lengths: Vec<usize>,
    blank: usize,
    scales: Vec<f64>,
    grad: Out<f32>,
    alphas: Option<PyRef<'_, CtcAlphas>>,
) -> PyResult<()> {
    let op = "ctc_loss backward";
    let token = Token::current();
    ctc::check_batch(log_probs.shape(), &targets, &input_lengths, blank)?;
    expect_shape(op, "gradient", grad.shape(), log_probs.shape())?;
    expect_len(op, "scales", scales.len(), targets.len())?;
    if let Some(k) = &alphas {
        if k.shape != log_probs.shape() || k.targets != targets || k.input_lengths != input_lengths
        {
            return Err(Error::Value(format!(
                "{op}: the kept forward recursions are of another batch (log_probs {:?}, \
                 {} lines) than this one (log_probs {:?}, {} lines)",
                k.shape,
                k.targets.len(),
                log_probs.shape(),
                targets.len()
            ))
            .into());
        }
    }
    let kept = alphas.as_ref().map(|k| &k.lines[..]);
    let (b_len, c_len) = (grad.shape()[1], grad.shape()[2]);
    let g = Ptr::new(grad.mut_ptr(), grad.numel());
    super::kernel::detach(py, || {
        let work = work(&targets, &input_lengths, c_len, true);
        par_chunks_sized(targets.len(), work, |b| {
            let scale = scales[b];
            // SAFETY: checked batch; each line writes only its own column
            // b of the [T, B, C] gradient, so lines never overlap.
            unsafe {
                ctc::loss_and_grad(
                    token,
                    &line(&log_probs, b, input_lengths[b]),
                    &targets[b],
                    blank,
                    kept.map(|k| &k[b]),
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
    m.add_function(wrap_pyfunction!(ctc_forward, m)?)?;
    m.add_class::<CtcAlphas>()?;
    Ok(())
}
