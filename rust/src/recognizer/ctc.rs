//! CTC (Graves et al. 2006, §§3.1–3.2, 4.1) in double precision with
//! DetMath, scalar: the same bits everywhere.
//!
//! The forward/backward recursion ([`alpha_beta`]) takes log-probabilities
//! and is shared by every front end; [`loss_from_logits`] is the
//! recognizer's: it folds in the log-softmax and returns the logit gradient.

use super::act::{dexp, dlog};

/// `logadd(a, b)` = `a + log(1 + exp(b − a))` for a ≥ b (arguments swapped
/// otherwise); `a` when `b − a < −40` or `b` is −∞.
#[inline]
pub fn logadd(a: f64, b: f64) -> f64 {
    let (a, b) = if a >= b { (a, b) } else { (b, a) };
    if b == f64::NEG_INFINITY {
        return a;
    }
    let d = b - a;
    if d < -40.0 {
        return a;
    }
    a + dlog(1.0 + dexp(d))
}

/// Log-softmax of each row of `logits` (`[T][K]`): m = the maximum logit
/// (first of equals), s = Σ exp(z − m) over classes in ascending order,
/// lp[k] = (z[k] − m) − log(s).
pub fn log_softmax(logits: &[f32], t_len: usize, k: usize, lp: &mut Vec<f64>) {
    lp.clear();
    lp.resize(t_len * k, 0.0);
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

/// The blank-extended label sequence `[blank, l1, blank, …, lL, blank]`.
pub fn extend(labels: &[usize], blank: usize, ext: &mut Vec<usize>) {
    ext.clear();
    ext.push(blank);
    for &l in labels {
        ext.push(l);
        ext.push(blank);
    }
}

/// Forward and backward variables (`[T][S]`, S = 2L + 1, log domain, both
/// including their own step's emission) over the extended sequence `ext`,
/// from log-probabilities `lp` (`[T][K]`). A skip of two entries is allowed
/// only between different non-blank labels. Three-way sums are
/// `logadd(logadd(same, one back), two back)`. Returns logP: the logadd of
/// the last two forward entries at the last step (the last entry alone when
/// L = 0); −∞ when no alignment exists or T = 0.
pub fn alpha_beta(
    lp: &[f64],
    t_len: usize,
    k: usize,
    ext: &[usize],
    blank: usize,
    alpha: &mut Vec<f64>,
    beta: &mut Vec<f64>,
) -> f64 {
    let s_len = ext.len();
    let ninf = f64::NEG_INFINITY;
    alpha.clear();
    alpha.resize(t_len * s_len, ninf);
    beta.clear();
    beta.resize(t_len * s_len, ninf);
    if t_len == 0 {
        return ninf;
    }
    let skip = |s: usize| s >= 2 && ext[s] != blank && ext[s] != ext[s - 2];
    alpha[0] = lp[ext[0]];
    if s_len > 1 {
        alpha[1] = lp[ext[1]];
    }
    for t in 1..t_len {
        let (prev, cur) = alpha.split_at_mut(t * s_len);
        let prev = &prev[(t - 1) * s_len..];
        for s in 0..s_len {
            let mut a = prev[s];
            if s >= 1 {
                a = logadd(a, prev[s - 1]);
            }
            if skip(s) {
                a = logadd(a, prev[s - 2]);
            }
            cur[s] = a + lp[t * k + ext[s]];
        }
    }
    let last = (t_len - 1) * s_len;
    beta[last + s_len - 1] = lp[(t_len - 1) * k + ext[s_len - 1]];
    if s_len > 1 {
        beta[last + s_len - 2] = lp[(t_len - 1) * k + ext[s_len - 2]];
    }
    for t in (0..t_len - 1).rev() {
        let (cur, next) = beta.split_at_mut((t + 1) * s_len);
        let cur = &mut cur[t * s_len..];
        for s in 0..s_len {
            let mut b = next[s];
            if s + 1 < s_len {
                b = logadd(b, next[s + 1]);
            }
            if s + 2 < s_len && skip(s + 2) {
                b = logadd(b, next[s + 2]);
            }
            cur[s] = b + lp[t * k + ext[s]];
        }
    }
    if s_len > 1 {
        logadd(alpha[last + s_len - 1], alpha[last + s_len - 2])
    } else {
        alpha[last]
    }
}

/// Workspace of [`loss_from_logits`].
#[derive(Default)]
pub struct Scratch {
    pub lp: Vec<f64>,
    pub ext: Vec<usize>,
    pub alpha: Vec<f64>,
    pub beta: Vec<f64>,
    acc: Vec<f64>,
}

/// CTC loss of one line from its logits (`[T][K]`, blank 0) and the logit
/// gradient `scale · (exp(lp[k]) − exp(acc[k] − lp[k] − logP))`, computed in
/// double and rounded to binary32 once, written to `grad`. `acc[k]` is the
/// logadd in ascending entry order of alpha + beta over the entries labelled
/// k. Returns the loss −logP; when it is +∞ (no alignment) `grad` is zero.
pub fn loss_from_logits(
    logits: &[f32],
    t_len: usize,
    k: usize,
    labels: &[usize],
    scale: f64,
    grad: &mut [f32],
    s: &mut Scratch,
) -> f64 {
    log_softmax(logits, t_len, k, &mut s.lp);
    extend(labels, 0, &mut s.ext);
    let logp = alpha_beta(&s.lp, t_len, k, &s.ext, 0, &mut s.alpha, &mut s.beta);
    let grad = &mut grad[..t_len * k];
    if logp == f64::NEG_INFINITY || logp.is_nan() {
        grad.fill(0.0);
        return if logp.is_nan() { f64::NAN } else { f64::INFINITY };
    }
    let s_len = s.ext.len();
    s.acc.clear();
    s.acc.resize(k, 0.0);
    for t in 0..t_len {
        s.acc.fill(f64::NEG_INFINITY);
        for e in 0..s_len {
            let label = s.ext[e];
            s.acc[label] = logadd(s.acc[label], s.alpha[t * s_len + e] + s.beta[t * s_len + e]);
        }
        for c in 0..k {
            let l = s.lp[t * k + c];
            let g = scale * (dexp(l) - dexp(s.acc[c] - l - logp));
            grad[t * k + c] = g as f32;
        }
    }
    -logp
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
                total += path.iter().enumerate().map(|(t, &p)| lp[t * k + p]).sum::<f64>().exp();
            }
        }
        total.ln()
    }

    #[test]
    fn matches_brute_force_and_gradient_sums_to_zero() {
        let (t_len, k) = (5, 3);
        let logits: Vec<f32> = (0..t_len * k).map(|i| ((i * 7919) % 13) as f32 * 0.3 - 1.5).collect();
        for labels in [vec![], vec![1], vec![1, 1], vec![1, 2], vec![2, 2, 1]] {
            let mut s = Scratch::default();
            let mut g = vec![0f32; t_len * k];
            let loss = loss_from_logits(&logits, t_len, k, &labels, 1.0, &mut g, &mut s);
            let want = -brute(&s.lp, t_len, k, &labels);
            assert!((loss - want).abs() < 1e-12 * want.abs().max(1.0), "{labels:?}: {loss} vs {want}");
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
        let loss = loss_from_logits(&logits, t_len, k, &[1, 1], 1.0, &mut g, &mut s);
        assert_eq!(loss, f64::INFINITY);
        assert!(g.iter().all(|&v| v == 0.0));
    }
}
