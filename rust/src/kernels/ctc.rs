//! Connectionist temporal classification (Graves et al. 2006, §3.1–3.2 and
//! §4.1) in double precision with the DetMath exp and log, scalar, so the
//! loss and its gradient are the same bits on every machine and in both
//! modes.
//!
//! Over the blank-extended label sequence l' (length S = 2L + 1, blanks at
//! even positions), in the log domain:
//! * alpha[0][0] = lp[0][blank], alpha[0][1] = lp[0][l'1];
//!   alpha[t][s] = logadd(alpha[t-1][s], alpha[t-1][s-1], alpha[t-1][s-2]) +
//!   lp[t][l's], the s-2 term only when l's is not blank and differs from
//!   l'(s-2);
//! * beta mirrors it from the last step; both include their own step's
//!   emission;
//! * logP = logadd(alpha[T-1][S-1], alpha[T-1][S-2]); the loss is −logP;
//! * ∂loss/∂lp[t][k] = −exp(acc[t][k] − lp[t][k] − logP), with acc[t][k] the
//!   logadd, in ascending s, of alpha[t][s] + beta[t][s] over the s labelled k
//!   (zero for classes no entry uses). This is the true partial derivative
//!   with respect to the log-probabilities.
//!
//! logadd(a, b) for a ≥ b is a + log(1 + exp(b − a)), and a itself when b is
//! −∞ or b − a < −40; several terms are folded left to right.

use crate::error::{Error, Result};
use crate::math::detmath;
use crate::storage::{scratch_elems, scratch_vec};

/// logadd of two log-domain values (order-independent by the swap).
#[inline]
pub fn logadd(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b || b.is_nan() { (a, b) } else { (b, a) };
    if lo == f64::NEG_INFINITY || lo - hi < -40.0 {
        return hi;
    }
    hi + detmath::log(1.0 + detmath::exp(lo - hi))
}

/// Check a batch before any recursion runs: log-probabilities [T, B, C],
/// one target and one input length per line, lengths at most T, labels
/// classes other than the blank.
pub fn check_batch(
    lp: &[usize],
    targets: &[Vec<i64>],
    input_lengths: &[usize],
    blank: usize,
) -> Result<()> {
    let op = "ctc_loss";
    let &[t, b, c] = lp else {
        return Err(Error::Value(format!(
            "{op}: log_probs must be [T, B, C], got {lp:?}"
        )));
    };
    if targets.len() != b || input_lengths.len() != b {
        return Err(Error::Value(format!(
            "{op}: {b} lines but {} targets and {} input lengths",
            targets.len(),
            input_lengths.len()
        )));
    }
    if blank >= c {
        return Err(Error::Value(format!(
            "{op}: blank {blank} is not a class of {c}"
        )));
    }
    for (line, (tg, &len)) in targets.iter().zip(input_lengths).enumerate() {
        if len > t {
            return Err(Error::Value(format!(
                "{op}: input length {len} of line {line} exceeds T = {t}"
            )));
        }
        if let Some(&bad) = tg
            .iter()
            .find(|&&l| l < 0 || l as usize >= c || l as usize == blank)
        {
            return Err(Error::Value(format!(
                "{op}: label {bad} of line {line} is the blank or not a class of {c}"
            )));
        }
    }
    Ok(())
}

/// One line's log-probabilities: element (t, c) at `ptr + t*st + c*sc`.
#[derive(Clone, Copy)]
pub struct LogProbs {
    pub ptr: *const f32,
    pub steps: usize,
    pub classes: usize,
    pub st: isize,
    pub sc: isize,
}

impl LogProbs {
    /// # Safety
    /// (t, c) must lie inside the view.
    #[inline]
    unsafe fn at(&self, t: usize, c: usize) -> f64 {
        debug_assert!(
            t < self.steps && c < self.classes,
            "ctc: ({t}, {c}) outside [{}, {}]",
            self.steps,
            self.classes
        );
        // SAFETY: guaranteed by the caller (asserted in debug builds).
        unsafe { *self.ptr.offset(t as isize * self.st + c as isize * self.sc) as f64 }
    }
}

/// Where the recursion reads log-probabilities from: the engine's strided
/// f32 view ([`LogProbs`]) or the recognizer's dense f64 log-softmax
/// ([`LogProbs64`]). One recursion serves both front ends
/// (docs/recurrent.md, "CTC loss").
pub trait LogProbSource {
    fn steps(&self) -> usize;
    fn classes(&self) -> usize;
    /// # Safety
    /// t < steps, c < classes.
    unsafe fn at(&self, t: usize, c: usize) -> f64;
}

impl LogProbSource for LogProbs {
    fn steps(&self) -> usize {
        self.steps
    }
    fn classes(&self) -> usize {
        self.classes
    }
    #[inline]
    unsafe fn at(&self, t: usize, c: usize) -> f64 {
        // SAFETY: forwarded from the caller.
        unsafe { LogProbs::at(self, t, c) }
    }
}

/// Dense `[steps][classes]` f64 log-probabilities (the recognizer's).
#[derive(Clone, Copy)]
pub struct LogProbs64<'a> {
    pub lp: &'a [f64],
    pub steps: usize,
    pub classes: usize,
}

impl LogProbSource for LogProbs64<'_> {
    fn steps(&self) -> usize {
        self.steps
    }
    fn classes(&self) -> usize {
        self.classes
    }
    #[inline]
    unsafe fn at(&self, t: usize, c: usize) -> f64 {
        self.lp[t * self.classes + c]
    }
}

fn extended(target: &[i64], blank: usize) -> Vec<usize> {
    // blank, c0, blank, c1, ..., blank: 2·len + 1 labels (no overflow: a
    // slice of i64 holds at most isize::MAX / 8 elements).
    let mut l = scratch_vec(2 * target.len() + 1, blank);
    for (i, &c) in target.iter().enumerate() {
        l[2 * i + 1] = c as usize;
    }
    l
}

fn can_skip(l: &[usize], s: usize, blank: usize) -> bool {
    s >= 2 && l[s] != blank && l[s] != l[s - 2]
}

/// alpha (and logP) of one line; alpha is [T][S] row-major.
///
/// # Safety
/// `lp` must be valid for `steps` × `classes`; labels must be < classes.
unsafe fn forward<L: LogProbSource>(lp: &L, l: &[usize], blank: usize) -> (Vec<f64>, f64) {
    let (t_len, s_len) = (lp.steps(), l.len());
    let mut alpha = scratch_vec(scratch_elems(&[t_len, s_len]), f64::NEG_INFINITY);
    if t_len == 0 {
        return (alpha, if s_len == 1 { 0.0 } else { f64::NEG_INFINITY });
    }
    // SAFETY: t < steps and labels < classes (guaranteed by the caller).
    unsafe {
        alpha[0] = lp.at(0, blank);
        if s_len > 1 {
            alpha[1] = lp.at(0, l[1]);
        }
        for t in 1..t_len {
            for s in 0..s_len {
                let prev = &alpha[(t - 1) * s_len..t * s_len];
                let mut a = prev[s];
                if s >= 1 {
                    a = logadd(a, prev[s - 1]);
                }
                if can_skip(l, s, blank) {
                    a = logadd(a, prev[s - 2]);
                }
                alpha[t * s_len + s] = if a == f64::NEG_INFINITY {
                    a
                } else {
                    a + lp.at(t, l[s])
                };
            }
        }
    }
    let last = &alpha[(t_len - 1) * s_len..];
    let log_p = if s_len > 1 {
        logadd(last[s_len - 1], last[s_len - 2])
    } else {
        last[0]
    };
    (alpha, log_p)
}

/// beta of one line, [T][S] row-major.
///
/// # Safety
/// As [`forward`].
unsafe fn backward<L: LogProbSource>(lp: &L, l: &[usize], blank: usize) -> Vec<f64> {
    let (t_len, s_len) = (lp.steps(), l.len());
    let mut beta = scratch_vec(scratch_elems(&[t_len, s_len]), f64::NEG_INFINITY);
    if t_len == 0 {
        return beta;
    }
    let last = t_len - 1;
    // SAFETY: as in `forward`.
    unsafe {
        beta[last * s_len + s_len - 1] = lp.at(last, l[s_len - 1]);
        if s_len > 1 {
            beta[last * s_len + s_len - 2] = lp.at(last, l[s_len - 2]);
        }
        for t in (0..last).rev() {
            for s in 0..s_len {
                let next = &beta[(t + 1) * s_len..(t + 2) * s_len];
                let mut v = next[s];
                if s + 1 < s_len {
                    v = logadd(v, next[s + 1]);
                }
                if s + 2 < s_len && can_skip(l, s + 2, blank) {
                    v = logadd(v, next[s + 2]);
                }
                beta[t * s_len + s] = if v == f64::NEG_INFINITY {
                    v
                } else {
                    v + lp.at(t, l[s])
                };
            }
        }
    }
    beta
}

/// The negative log-likelihood of one line (+∞ when no alignment exists).
///
/// # Safety
/// `lp` valid for its steps × classes; every label < classes; blank < classes.
pub unsafe fn loss<L: LogProbSource>(lp: &L, target: &[i64], blank: usize) -> f64 {
    let l = extended(target, blank);
    // SAFETY: forwarded from the caller.
    let (_, log_p) = unsafe { forward(lp, &l, blank) };
    -log_p
}

/// One line's forward recursion, kept for its gradient: alpha [T][S] and
/// logP (the loss is −logP).
pub struct Alpha {
    pub alpha: Vec<f64>,
    pub log_p: f64,
}

/// The forward recursion of one line, for [`loss_and_grad`] to reuse (the
/// engine's loss keeps it from the forward pass to the backward, as torch
/// keeps its log_alpha).
///
/// # Safety
/// As [`loss`].
pub unsafe fn alpha<L: LogProbSource>(lp: &L, target: &[i64], blank: usize) -> Alpha {
    let l = extended(target, blank);
    // SAFETY: forwarded from the caller.
    let (alpha, log_p) = unsafe { forward(lp, &l, blank) };
    Alpha { alpha, log_p }
}

/// Loss and gradient of one line. `grad(t, c, value)` receives
/// ∂loss/∂lp[t][c] (f64, before any scaling) for every t < steps and every
/// class, in increasing t then c; it is not called when the loss is infinite
/// (the gradient is then zero). `kept` is this line's [`alpha`] over the
/// same `lp`, `target` and `blank`, when the caller kept it; else the
/// recursion runs here (the same bits either way).
///
/// # Safety
/// As [`loss`].
pub unsafe fn loss_and_grad<L: LogProbSource>(
    lp: &L,
    target: &[i64],
    blank: usize,
    kept: Option<&Alpha>,
    mut grad: impl FnMut(usize, usize, f64),
) -> f64 {
    let l = extended(target, blank);
    let run;
    let (alpha, log_p) = match kept {
        Some(k) => {
            assert_eq!(
                k.alpha.len(),
                lp.steps() * l.len(),
                "ctc: a kept alpha of another line's size"
            );
            (&k.alpha[..], k.log_p)
        }
        None => {
            // SAFETY: forwarded from the caller.
            run = unsafe { forward(lp, &l, blank) };
            (&run.0[..], run.1)
        }
    };
    if log_p == f64::NEG_INFINITY || log_p.is_nan() {
        return -log_p;
    }
    // SAFETY: forwarded from the caller.
    let beta = unsafe { backward(lp, &l, blank) };
    let s_len = l.len();
    let mut acc = scratch_vec(lp.classes(), f64::NEG_INFINITY);
    for t in 0..lp.steps() {
        acc.iter_mut().for_each(|a| *a = f64::NEG_INFINITY);
        for s in 0..s_len {
            let ab = alpha[t * s_len + s] + beta[t * s_len + s];
            acc[l[s]] = logadd(acc[l[s]], ab);
        }
        for (c, &a) in acc.iter().enumerate() {
            let g = if a == f64::NEG_INFINITY {
                0.0
            } else {
                // SAFETY: t < steps, c < classes.
                -detmath::exp(a - unsafe { lp.at(t, c) } - log_p)
            };
            grad(t, c, g);
        }
    }
    -log_p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lp_of(probs: &[Vec<f64>]) -> Vec<f32> {
        probs
            .iter()
            .flat_map(|row| row.iter().map(|p| p.ln() as f32))
            .collect()
    }

    /// `steps` rows of `classes` log-probabilities, row-major.
    fn row_major(lp: &[f32], steps: usize, classes: usize) -> LogProbs {
        assert_eq!(lp.len(), steps * classes);
        LogProbs {
            ptr: lp.as_ptr(),
            steps,
            classes,
            st: classes as isize,
            sc: 1,
        }
    }

    #[test]
    fn a_refused_alpha_table_unwinds_as_scratch_refused() {
        let lp = lp_of(&[vec![0.4, 0.6], vec![0.3, 0.7]]);
        let view = row_major(&lp, 2, 2);
        // alpha is 2 steps × 3 labels × 8 bytes = 48 bytes (the extended
        // labels, 24 bytes, are granted).
        let r = crate::storage::refuse_hook::with_limit(48, || {
            // SAFETY: the view holds 2 × 2 log-probabilities; label 1 < 2.
            std::panic::catch_unwind(|| unsafe { loss(&view, &[1], 0) })
        });
        let payload = r.expect_err("the alpha table was granted");
        assert!(payload.is::<crate::storage::ScratchRefused>());
    }

    #[test]
    fn two_steps_one_label_by_hand() {
        // Classes {blank, a}; y_t = (0.4, 0.6), (0.3, 0.7). Paths for "a":
        // (a, a), (a, blank), (blank, a): P = .6·.7 + .6·.3 + .4·.7 = 0.88.
        let probs = vec![vec![0.4, 0.6], vec![0.3, 0.7]];
        let lp = lp_of(&probs);
        let view = row_major(&lp, 2, 2);
        let mut g = vec![0.0; 4];
        // SAFETY: the test's buffers hold every element the call reaches.
        let l = unsafe { loss_and_grad(&view, &[1], 0, None, |t, c, v| g[t * 2 + c] = v) };
        let p: f64 = lp[1] as f64;
        let (y00, y01, y10, y11) = (
            (lp[0] as f64).exp(),
            p.exp(),
            (lp[2] as f64).exp(),
            (lp[3] as f64).exp(),
        );
        let big_p = y01 * y11 + y01 * y10 + y00 * y11;
        assert!((l - (-big_p.ln())).abs() < 1e-12);
        // ∂(−log P)/∂lp[t][k] = −y_t(k)·(∂P/∂y_t(k))/P.
        let want = [
            -(y00 * y11) / big_p,
            -(y01 * y11 + y01 * y10) / big_p,
            -(y01 * y10) / big_p,
            -(y01 * y11 + y00 * y11) / big_p,
        ];
        for i in 0..4 {
            assert!(
                (g[i] - want[i]).abs() < 1e-12,
                "{i}: {} vs {}",
                g[i],
                want[i]
            );
        }
    }

    #[test]
    fn impossible_alignment_is_infinite_and_repeats_need_a_blank() {
        // "aa" needs at least 3 steps (a, blank, a).
        let probs = vec![vec![0.5, 0.5], vec![0.5, 0.5]];
        let lp = lp_of(&probs);
        let view = row_major(&lp, 2, 2);
        let mut called = false;
        // SAFETY: the test's buffers hold every element the call reaches.
        let l = unsafe { loss_and_grad(&view, &[1, 1], 0, None, |_, _, _| called = true) };
        assert_eq!(l, f64::INFINITY);
        assert!(!called);
    }

    #[test]
    fn empty_target_is_all_blanks() {
        let probs = vec![vec![0.25, 0.75], vec![0.5, 0.5], vec![0.1, 0.9]];
        let lp = lp_of(&probs);
        let view = row_major(&lp, 3, 2);
        // SAFETY: the test's buffers hold every element the call reaches.
        let l = unsafe { loss(&view, &[], 0) };
        let want = -((lp[0] + lp[2] + lp[4]) as f64);
        assert!((l - want).abs() < 1e-12);
    }

    #[test]
    fn logadd_rules() {
        assert_eq!(
            logadd(f64::NEG_INFINITY, f64::NEG_INFINITY),
            f64::NEG_INFINITY
        );
        assert_eq!(logadd(1.0, -100.0), 1.0);
        assert!((logadd(0.0, 0.0) - 2f64.ln()).abs() < 1e-15);
        assert_eq!(logadd(2.0, 3.0), logadd(3.0, 2.0));
    }
}
