//! The recognizer's CTC front end (docs/recognizer.md, "The arithmetic
//! contract"): from logits, with the log-softmax in double precision
//! (DetMath), the forward/backward recursion shared with the engine's
//! `ctc_loss` (`kernels::ctc`, one recursion for both front ends), and the
//! logit gradient rounded to binary32 once.

use crate::kernels::ctc::{self as shared, LogProbs64};
use crate::math::detmath::{exp as dexp, log as dlog};
use crate::simd::Token;

/// Log-softmax of each row of `logits` (`[T][K]`): m = the maximum logit
/// (first of equals), s = Σ exp(z − m) over classes in ascending order,
/// lp[k] = (z[k] − m) − log(s).
pub fn log_softmax(logits: &[f32], t_len: usize, k: usize, lp: &mut Vec<f64>) {
    lp.clear();
    super::reuse(lp, t_len * k, 0.0);
    for t in 0..t_len {
        let z = &logits[t * k..][..k];
        let mut m = z[0] as f64;
        for &v in &z[1..] {
            if (v as f64) > m {
                m = v as f64;
            }
        }
        let mut s = 0.0f64;
        for &v in z {
            s += dexp(v as f64 - m);
        }
        let ls = dlog(s);
        for (o, &v) in lp[t * k..][..k].iter_mut().zip(z) {
            *o = (v as f64 - m) - ls;
        }
    }
}

/// Workspace of [`loss_from_logits`].
#[derive(Default)]
pub struct Scratch {
    pub lp: Vec<f64>,
    labels: Vec<i64>,
}

/// CTC loss of one line from its logits (`[T][K]`, blank 0) and the logit
/// gradient `scale · (exp(lp[k]) − exp(acc[k] − lp[k] − logP))` (the shared
/// recursion gives the second term, −exp(acc[k] − lp[k] − logP), as the
/// partial derivative with respect to lp), computed in double and rounded to
/// binary32 once, written to `grad`. Returns the loss −logP; when it is +∞
/// (no alignment) `grad` is zero.
pub fn loss_from_logits(
    token: Token,
    logits: &[f32],
    t_len: usize,
    k: usize,
    labels: &[usize],
    scale: f64,
    grad: &mut [f32],
    s: &mut Scratch,
) -> f64 {
    assert!(
        labels.iter().all(|&l| l > 0 && l < k),
        "labels must be in 1..K"
    );
    log_softmax(logits, t_len, k, &mut s.lp);
    s.labels.clear();
    s.labels.extend(labels.iter().map(|&l| l as i64));
    let grad = &mut grad[..t_len * k];
    grad.fill(0.0);
    let lp = LogProbs64 {
        lp: &s.lp,
        steps: t_len,
        classes: k,
    };
    let lpv = &s.lp;
    // SAFETY: LogProbs64 is bounds-checked; labels are < k (asserted).
    let loss = unsafe {
        shared::loss_and_grad(token, &lp, &s.labels, 0, None, |t, c, d| {
            let l = lpv[t * k + c];
            grad[t * k + c] = (scale * (dexp(l) + d)) as f32;
        })
    };
    if !loss.is_finite() {
        grad.fill(0.0);
    }
    loss
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: sum over every path of length T that collapses to the
    /// labels, in plain f64.
    fn brute(lp: &[f64], t_len: usize, k: usize, labels: &[usize]) -> f64 {
        let mut total = 0.0f64;
        let n = k.pow(t_len as u32);
        for mut code in 0..n {
            let mut path = vec![0; t_len];
            for p in path.iter_mut() {
                *p = code % k;
                code /= k;
            }
            let mut out = vec![];
            let mut prev = usize::MAX;
            for &p in &path {
                if p != prev && p != 0 {
                    out.push(p);
                }
                prev = p;
            }
            if out == labels {
                total += path
                    .iter()
                    .enumerate()
                    .map(|(t, &p)| lp[t * k + p])
                    .sum::<f64>()
                    .exp();
            }
        }
        total.ln()
    }

    #[test]
    fn matches_brute_force_and_gradient_sums_to_zero() {
        let (t_len, k) = (5, 3);
        let logits: Vec<f32> = (0..t_len * k)
            .map(|i| ((i * 7919) % 13) as f32 * 0.3 - 1.5)
            .collect();
        for labels in [vec![], vec![1], vec![1, 1], vec![1, 2], vec![2, 2, 1]] {
            let mut s = Scratch::default();
            let mut g = vec![0f32; t_len * k];
            let loss = loss_from_logits(
                Token::current(),
                &logits,
                t_len,
                k,
                &labels,
                1.0,
                &mut g,
                &mut s,
            );
            let want = -brute(&s.lp, t_len, k, &labels);
            assert!(
                (loss - want).abs() < 1e-12 * want.abs().max(1.0),
                "{labels:?}: {loss} vs {want}"
            );
            for t in 0..t_len {
                let sum: f32 = g[t * k..][..k].iter().sum();
                assert!(sum.abs() < 1e-5, "{sum}");
            }
        }
    }

    #[test]
    fn impossible_alignment_is_infinite_with_zero_gradient() {
        let (t_len, k) = (2, 3);
        let logits = vec![0.5f32; t_len * k];
        let mut s = Scratch::default();
        let mut g = vec![1f32; t_len * k];
        let loss = loss_from_logits(
            Token::current(),
            &logits,
            t_len,
            k,
            &[1, 1],
            1.0,
            &mut g,
            &mut s,
        );
        assert_eq!(loss, f64::INFINITY);
        assert!(g.iter().all(|&v| v == 0.0));
    }
}
