//! Connectionist temporal classification (Graves et al. 2006, §3.1–3.2 and
//! §4.1) in double precision with the DetMath exp and log, so the loss and
//! its gradient are the same bits on every machine and in both modes. The
//! cells of a row (and the gradient's steps) run several at a time in
//! binary64 lanes (`simd::F64Lanes`), each lane the scalar definition's
//! bits; `logadd` below is that definition.
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
use crate::simd::{run_on, F64Lanes, LaneFn, Lanes, Token};
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

/// The lane form of [`logadd`]: lane by lane its bits. Lanes whose terms
/// are both finite and within 40 of each other take the lane exp and log
/// (the only range those reach); lanes with an −∞ or a far term keep the
/// larger; a lane with a NaN or ∞ − ∞ (never in a finite recursion) sends
/// the whole register through the scalar rule.
///
/// # Safety
/// Only inside `run_on` with `W`'s features enabled (see [`F64Lanes`]).
#[inline(always)]
unsafe fn logadd_lanes<W: F64Lanes>(a: W, b: W) -> W {
    // SAFETY: forwarded from the caller; the arrays hold W::N ≤ 8 lanes.
    unsafe {
        let keep = W::mask_or(a.ge(b), b.is_nan());
        let hi = W::select(keep, a, b);
        let lo = W::select(keep, b, a);
        let d = lo.sub(hi);
        let near = d.ge(W::splat(-40.0));
        let settled = W::mask_or(lo.eq(W::splat(f64::NEG_INFINITY)), d.lt(W::splat(-40.0)));
        if W::any(W::mask_not(W::mask_or(near, settled))) {
            let (mut x, mut y) = ([0.0f64; 8], [0.0f64; 8]);
            a.store(x.as_mut_ptr());
            b.store(y.as_mut_ptr());
            for i in 0..W::N {
                x[i] = logadd(x[i], y[i]);
            }
            return W::load(x.as_ptr());
        }
        if !W::any(near) {
            return hi;
        }
        let e = detmath::exp_lanes(d);
        let v = hi.add(detmath::log_lanes_on_1_2(W::splat(1.0).add(e)));
        W::select(near, v, hi)
    }
}

/// One cell of a recursion row: the log-add of `first`, `second` and, when
/// `skip`, `third`, then the emission unless that is −∞.
#[inline(always)]
fn cell(first: f64, second: Option<f64>, third: Option<f64>, emission: f64) -> f64 {
    let mut a = first;
    if let Some(b) = second {
        a = logadd(a, b);
    }
    if let Some(c) = third {
        a = logadd(a, c);
    }
    if a == f64::NEG_INFINITY {
        a
    } else {
        a + emission
    }
}

/// [`cell`] for `W::N` consecutive cells: `skip` holds 1.0 where the third
/// term enters.
///
/// # Safety
/// As [`logadd_lanes`]; every pointer valid for `W::N` reads, `out` for
/// `W::N` writes.
#[inline(always)]
unsafe fn cells<W: F64Lanes>(
    first: *const f64,
    second: *const f64,
    third: *const f64,
    skip: *const f64,
    emission: *const f64,
    out: *mut f64,
) {
    // SAFETY: forwarded from the caller.
    unsafe {
        let a = logadd_lanes(W::load(first), W::load(second));
        let sk = W::load(skip).eq(W::splat(1.0));
        let a = if W::any(sk) {
            W::select(sk, logadd_lanes(a, W::load(third)), a)
        } else {
            a
        };
        let e = W::load(emission);
        W::select(a.eq(W::splat(f64::NEG_INFINITY)), a, a.add(e)).store(out);
    }
}

/// Row t's emissions, lp[t][l's] for every s.
///
/// # Safety
/// t < steps; every label < classes.
#[inline(always)]
unsafe fn emissions<L: LogProbSource>(lp: &L, t: usize, l: &[usize], row: &mut [f64]) {
    for (e, &c) in row.iter_mut().zip(l) {
        // SAFETY: forwarded from the caller.
        *e = unsafe { lp.at(t, c) };
    }
}

/// alpha (and logP) of one line; alpha is [T][S] row-major. A row's cells
/// depend only on the row before, so they run `W::N` at a time; the first
/// two (no third term to read) and the tail run one at a time.
///
/// # Safety
/// `lp` must be valid for `steps` × `classes`; labels must be < classes;
/// `W`'s features enabled.
#[inline(always)]
unsafe fn forward<W: F64Lanes, L: LogProbSource>(
    lp: &L,
    l: &[usize],
    blank: usize,
) -> (Vec<f64>, f64) {
    let (t_len, s_len) = (lp.steps(), l.len());
    let mut alpha = scratch_vec(scratch_elems(&[t_len, s_len]), f64::NEG_INFINITY);
    if t_len == 0 {
        return (alpha, if s_len == 1 { 0.0 } else { f64::NEG_INFINITY });
    }
    let mut skip = scratch_vec(s_len, 0.0);
    for (s, k) in skip.iter_mut().enumerate() {
        *k = if can_skip(l, s, blank) { 1.0 } else { 0.0 };
    }
    let mut em = scratch_vec(s_len, 0.0);
    // SAFETY: t < steps and labels < classes (guaranteed by the caller);
    // the lane loop reads prev[s − 2 .. s + N] and skip/em[s .. s + N]
    // with 2 ≤ s and s + N ≤ S.
    unsafe {
        alpha[0] = lp.at(0, blank);
        if s_len > 1 {
            alpha[1] = lp.at(0, l[1]);
        }
        for t in 1..t_len {
            emissions(lp, t, l, &mut em);
            let (done, rest) = alpha.split_at_mut(t * s_len);
            let prev = &done[(t - 1) * s_len..];
            let row = &mut rest[..s_len];
            let one = |s: usize| {
                cell(
                    prev[s],
                    (s >= 1).then(|| prev[s - 1]),
                    (skip[s] == 1.0).then(|| prev[s - 2]),
                    em[s],
                )
            };
            let mut s = 0;
            while s < s_len.min(2) {
                row[s] = one(s);
                s += 1;
            }
            while s + W::N <= s_len {
                let p = prev.as_ptr();
                cells::<W>(
                    p.add(s),
                    p.add(s - 1),
                    p.add(s - 2),
                    skip.as_ptr().add(s),
                    em.as_ptr().add(s),
                    row.as_mut_ptr().add(s),
                );
                s += W::N;
            }
            while s < s_len {
                row[s] = one(s);
                s += 1;
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

/// beta of one line, [T][S] row-major; rows as in [`forward`], mirrored
/// (the last two cells have no third term to read).
///
/// # Safety
/// As [`forward`].
#[inline(always)]
unsafe fn backward<W: F64Lanes, L: LogProbSource>(lp: &L, l: &[usize], blank: usize) -> Vec<f64> {
    let (t_len, s_len) = (lp.steps(), l.len());
    let mut beta = scratch_vec(scratch_elems(&[t_len, s_len]), f64::NEG_INFINITY);
    if t_len == 0 {
        return beta;
    }
    // skip[s]: whether next[s + 2] enters cell s.
    let mut skip = scratch_vec(s_len, 0.0);
    for (s, k) in skip.iter_mut().enumerate() {
        *k = if s + 2 < s_len && can_skip(l, s + 2, blank) {
            1.0
        } else {
            0.0
        };
    }
    let mut em = scratch_vec(s_len, 0.0);
    let last = t_len - 1;
    // SAFETY: as in `forward`; the lane loop reads next[s .. s + N + 2]
    // with s + N + 2 ≤ S.
    unsafe {
        beta[last * s_len + s_len - 1] = lp.at(last, l[s_len - 1]);
        if s_len > 1 {
            beta[last * s_len + s_len - 2] = lp.at(last, l[s_len - 2]);
        }
        for t in (0..last).rev() {
            emissions(lp, t, l, &mut em);
            let (head, tail) = beta.split_at_mut((t + 1) * s_len);
            let next = &tail[..s_len];
            let row = &mut head[t * s_len..];
            let mut s = 0;
            while s + W::N + 2 <= s_len {
                let p = next.as_ptr();
                cells::<W>(
                    p.add(s),
                    p.add(s + 1),
                    p.add(s + 2),
                    skip.as_ptr().add(s),
                    em.as_ptr().add(s),
                    row.as_mut_ptr().add(s),
                );
                s += W::N;
            }
            while s < s_len {
                row[s] = cell(
                    next[s],
                    (s + 1 < s_len).then(|| next[s + 1]),
                    (skip[s] == 1.0).then(|| next[s + 2]),
                    em[s],
                );
                s += 1;
            }
        }
    }
    beta
}

/// One step's gradient entry for class c: −exp(acc − lp − logP), zero
/// where no label of the line is c (acc = −∞).
#[inline(always)]
fn grad_entry(acc: f64, lp: f64, log_p: f64) -> f64 {
    if acc == f64::NEG_INFINITY {
        0.0
    } else {
        -detmath::exp(acc - lp - log_p)
    }
}

/// The gradient of one line from its alpha and beta, handed to `grad` in
/// increasing t then c. The log-adds of a step's occupancies chain along s
/// (one chain per class), but steps are independent, so `W::N` steps run
/// at a time, one lane each; the steps left over run one at a time.
///
/// # Safety
/// As [`forward`]; alpha and beta are this line's, [T][S].
#[inline(always)]
unsafe fn gradient<W: F64Lanes, L: LogProbSource>(
    lp: &L,
    l: &[usize],
    alpha: &[f64],
    beta: &[f64],
    log_p: f64,
    grad: &mut impl FnMut(usize, usize, f64),
) {
    let n = W::N;
    let (steps, classes, s_len) = (lp.steps(), lp.classes(), l.len());
    // acc[c·N + i]: class c's occupancy at step t0 + i; rows[i·C + c] the
    // gradient of step t0 + i.
    let mut acc = scratch_vec(scratch_elems(&[classes, n]), f64::NEG_INFINITY);
    let mut rows = scratch_vec(scratch_elems(&[n, classes]), 0.0);
    let (mut ab, mut lps, mut v) = ([0.0f64; 8], [0.0f64; 8], [0.0f64; 8]);
    let mut t0 = 0;
    // SAFETY: t0 + i < steps and c < classes for every lp read; acc holds
    // C·N values and every class index l[s] < C; the arrays hold N ≤ 8.
    unsafe {
        while t0 + n <= steps {
            acc.fill(f64::NEG_INFINITY);
            for (s, &c) in l.iter().enumerate() {
                for (i, x) in ab[..n].iter_mut().enumerate() {
                    *x = alpha[(t0 + i) * s_len + s] + beta[(t0 + i) * s_len + s];
                }
                let p = acc.as_mut_ptr().add(c * n);
                logadd_lanes(W::load(p), W::load(ab.as_ptr())).store(p);
            }
            for c in 0..classes {
                let a = W::load(acc.as_ptr().add(c * n));
                let used = W::mask_not(a.eq(W::splat(f64::NEG_INFINITY)));
                if !W::any(used) {
                    (0..n).for_each(|i| rows[i * classes + c] = 0.0);
                    continue;
                }
                for (i, x) in lps[..n].iter_mut().enumerate() {
                    *x = lp.at(t0 + i, c);
                }
                let x = a.sub(W::load(lps.as_ptr())).sub(W::splat(log_p));
                let general = W::mask_and(
                    x.ge(W::splat(detmath::EXP_LOW)),
                    W::splat(detmath::EXP_HIGH).ge(x),
                );
                if W::any(W::mask_and(used, W::mask_not(general))) {
                    // An exponent past the general range (or NaN): the
                    // scalar rule for the register.
                    a.store(v.as_mut_ptr());
                    for i in 0..n {
                        v[i] = grad_entry(v[i], lps[i], log_p);
                    }
                } else {
                    let g = detmath::exp_lanes(x).neg();
                    W::select(used, g, W::splat(0.0)).store(v.as_mut_ptr());
                }
                (0..n).for_each(|i| rows[i * classes + c] = v[i]);
            }
            for i in 0..n {
                for c in 0..classes {
                    grad(t0 + i, c, rows[i * classes + c]);
                }
            }
            t0 += n;
        }
        let acc = &mut acc[..classes];
        for t in t0..steps {
            acc.fill(f64::NEG_INFINITY);
            for (s, &c) in l.iter().enumerate() {
                acc[c] = logadd(acc[c], alpha[t * s_len + s] + beta[t * s_len + s]);
            }
            for (c, &a) in acc.iter().enumerate() {
                grad(t, c, grad_entry(a, lp.at(t, c), log_p));
            }
        }
    }
}

/// [`forward`] on the lanes of a kernel path (constructed only by the
/// unsafe entry points below, which forward their callers' guarantees).
struct Forward<'a, L: LogProbSource> {
    lp: &'a L,
    l: &'a [usize],
    blank: usize,
}

impl<S: LogProbSource> LaneFn for Forward<'_, S> {
    type Output = (Vec<f64>, f64);
    #[inline(always)]
    fn run<L: Lanes>(self) -> Self::Output {
        // SAFETY: the entry point that built `self` holds its caller's
        // guarantee on lp and the labels; run_on enabled L's features.
        unsafe { forward::<L::F64, S>(self.lp, self.l, self.blank) }
    }
}

/// [`backward`] on the lanes of a kernel path (as [`Forward`]).
struct Backward<'a, L: LogProbSource> {
    lp: &'a L,
    l: &'a [usize],
    blank: usize,
}

impl<S: LogProbSource> LaneFn for Backward<'_, S> {
    type Output = Vec<f64>;
    #[inline(always)]
    fn run<L: Lanes>(self) -> Self::Output {
        // SAFETY: as in Forward::run.
        unsafe { backward::<L::F64, S>(self.lp, self.l, self.blank) }
    }
}

/// [`gradient`] on the lanes of a kernel path (as [`Forward`]).
struct Gradient<'a, L: LogProbSource, G: FnMut(usize, usize, f64)> {
    lp: &'a L,
    l: &'a [usize],
    alpha: &'a [f64],
    beta: &'a [f64],
    log_p: f64,
    grad: &'a mut G,
}

impl<S: LogProbSource, G: FnMut(usize, usize, f64)> LaneFn for Gradient<'_, S, G> {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        // SAFETY: as in Forward::run.
        unsafe {
            gradient::<L::F64, S>(
                self.lp, self.l, self.alpha, self.beta, self.log_p, self.grad,
            )
        }
    }
}

/// The negative log-likelihood of one line (+∞ when no alignment exists).
///
/// # Safety
/// `lp` valid for its steps × classes; every label < classes; blank < classes.
pub unsafe fn loss<L: LogProbSource>(token: Token, lp: &L, target: &[i64], blank: usize) -> f64 {
    // SAFETY: forwarded from the caller.
    -unsafe { alpha(token, lp, target, blank) }.log_p
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
pub unsafe fn alpha<L: LogProbSource>(token: Token, lp: &L, target: &[i64], blank: usize) -> Alpha {
    let l = extended(target, blank);
    let (alpha, log_p) = run_on(token, Forward { lp, l: &l, blank });
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
    token: Token,
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
            run = run_on(token, Forward { lp, l: &l, blank });
            (&run.0[..], run.1)
        }
    };
    if log_p == f64::NEG_INFINITY || log_p.is_nan() {
        return -log_p;
    }
    let beta = run_on(token, Backward { lp, l: &l, blank });
    run_on(
        token,
        Gradient {
            lp,
            l: &l,
            alpha,
            beta: &beta,
            log_p,
            grad: &mut grad,
        },
    );
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
            std::panic::catch_unwind(|| unsafe { loss(Token::current(), &view, &[1], 0) })
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
        let l = unsafe {
            loss_and_grad(Token::current(), &view, &[1], 0, None, |t, c, v| {
                g[t * 2 + c] = v
            })
        };
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
        let l = unsafe {
            loss_and_grad(Token::current(), &view, &[1, 1], 0, None, |_, _, _| {
                called = true
            })
        };
        assert_eq!(l, f64::INFINITY);
        assert!(!called);
    }

    #[test]
    fn empty_target_is_all_blanks() {
        let probs = vec![vec![0.25, 0.75], vec![0.5, 0.5], vec![0.1, 0.9]];
        let lp = lp_of(&probs);
        let view = row_major(&lp, 3, 2);
        // SAFETY: the test's buffers hold every element the call reaches.
        let l = unsafe { loss(Token::current(), &view, &[], 0) };
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

#[cfg(test)]
#[path = "ctc_lanes_tests.rs"]
mod lanes_tests;
