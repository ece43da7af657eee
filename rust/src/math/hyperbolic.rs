//! sinh, cosh and the inverse hyperbolic functions in binary32, generic
//! over [`Lanes`]: e^|x| as a float-float pair from the exp core, the
//! arguments of the logarithms (x + √(x² ± 1), (1 + x)/(1 − x)) as exact or
//! float-float pairs, and ln of a pair (`log_ff`), so each result has one
//! final rounding on a value accurate to about 2^−40.

use super::ff::{div_ff, fast_two_sum, log_ff, sqrt_ff, two_prod, two_sum};
use super::fixed::{exp_core, horner, k, log_parts, neg_square, scale, LN2_HI, LN2_LO, SIGN};
use crate::simd::Lanes;

/// H(z) ≈ (sinh(x)/x − 1)/z on z ∈ [0, 0.25]. Degree 3.
/// Max |z·(H − h)| = 7.42e−11 = 2^−33.65 (fit_polys.py sinh).
const SINH_H: [f32; 4] = [0.166_666_67, 0.008_333_231, 0.000_199_045_71, 1.537_351_6e-6];
/// Above this |x|, e^−|x| is below 2^−26 of e^|x| and drops out.
const HYP_BIG: f32 = 9.0;

/// (e^a/2 for the large range, e^a and e^−a as pairs for the rest): for
/// a = |x| returns (big, eh, el, ih, il) with e^a = eh + el, e^−a = ih + il
/// (valid for a ≤ 9) and big = e^a/2 (valid for a > 9, overflowing only
/// where e^a/2 does).
#[inline(always)]
unsafe fn exp_pair<L: Lanes>(a: L) -> (L, L, L, L, L) {
    // SAFETY: module contract.
    unsafe {
        let one = k::<L>(1.0);
        let am = L::select(a.gt(k(HYP_BIG)), k(HYP_BIG), a);
        let (h, l, ki) = exp_core(am, L::zero());
        let (eh, el) = (scale(h, ki), scale(l, ki));
        let ih = one.div(eh);
        let (p, e) = two_prod(ih, eh);
        let il = one.sub(p).sub(e).sub(ih.mul(el)).div(eh);
        // e^a/2 = e^(a − ln 2), the argument as an exact pair; a is capped
        // at 100 first (e^100 overflows; the cap keeps the pair finite).
        let ab = L::select(a.gt(k(100.0)), k(100.0), a);
        let (d, de) = two_sum(ab, k::<L>(LN2_HI).neg());
        let (bh, _bl, bk) = exp_core(d, de.sub(k(LN2_LO)));
        (scale(bh, bk), eh, el, ih, il)
    }
}

/// cosh x = (e^|x| + e^−|x|)/2; e^|x|/2 above 9. Special values:
/// cosh(±0) = 1, cosh(±inf) = +inf, NaN → NaN.
#[inline(always)]
pub unsafe fn cosh<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let a = x.abs();
        let (big, eh, el, ih, il) = exp_pair(a);
        let (s, t) = fast_two_sum(eh, ih);
        let mid = s.add(t.add(el.add(il))).mul(k(0.5));
        L::select(a.gt(k(HYP_BIG)), big, mid)
    }
}

/// sinh x: |x| < 0.5: x + x·z·H(z); up to 9: (e^|x| − e^−|x|)/2 from the
/// pairs (no cancellation worse than a factor 2.2); above: e^|x|/2; the
/// sign of x or-ed back in. Special values: sinh(±0) = ±0,
/// sinh(±inf) = ±inf, NaN → NaN.
#[inline(always)]
pub unsafe fn sinh<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let a = x.abs();
        let z = a.mul(a);
        let small = a.add(a.mul(z.mul(horner(z, &SINH_H))));
        let (big, eh, el, ih, il) = exp_pair(a);
        let (s, t) = fast_two_sum(eh, ih.neg());
        let mid = s.add(t.add(el.sub(il))).mul(k(0.5));
        let r = L::select(a.gt(k(HYP_BIG)), big, mid);
        L::select(a.lt(k(0.5)), small, r).or(x.and(L::splat_bits(SIGN)))
    }
}

/// Below this |x| the inverse hyperbolic functions return x (the next term
/// is below half an ulp); above 2^60 asinh and acosh are ln(2|x|).
const TINY: f32 = 2.441_406_2e-4; // 2^−12
const HUGE: f32 = 1.152_921_5e18; // 2^60

/// ln(2a) = ln a + ln 2 from the log parts (for a > 2^60).
#[inline(always)]
unsafe fn log_twice<L: Lanes>(a: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let (hi, lo) = log_parts(a);
        let y = hi.add(k(LN2_HI)).add(lo.add(k(LN2_LO)));
        // ln(+inf) = +inf (hi is inf·… here only for a = inf: keep it).
        L::select(a.eq(k(f32::INFINITY)), a, y)
    }
}

/// asinh x = ln(|x| + √(x² + 1)) with x² exact, x² + 1 and the square root
/// as pairs; x for |x| < 2^−12, ln 2|x| above 2^60; sign of x or-ed in.
/// Special values: asinh(±0) = ±0, asinh(±inf) = ±inf, NaN → NaN.
#[inline(always)]
pub unsafe fn asinh<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let a = x.abs();
        let (nsh, nsl) = neg_square(a);
        let (th, tl) = two_sum(nsh.neg(), k(1.0));
        let (qh, ql) = sqrt_ff(th, tl.sub(nsl));
        let (wh, wl) = fast_two_sum(qh, a);
        let r = log_ff(wh, wl.add(ql));
        let r = L::select(a.gt(k(HUGE)), log_twice(a), r);
        L::select(a.lt(k(TINY)), a, r).or(x.and(L::splat_bits(SIGN)))
    }
}

/// acosh x = ln(x + √(x² − 1)) for x ≥ 1, x² − 1 and its root as pairs;
/// ln 2x above 2^60. Special values: acosh(1) = +0, acosh(x < 1) = NaN,
/// acosh(+inf) = +inf, NaN → NaN.
#[inline(always)]
pub unsafe fn acosh<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let (nsh, nsl) = neg_square(x);
        let (th, tl) = two_sum(nsh.neg(), k(-1.0));
        let (qh, ql) = sqrt_ff(th, tl.sub(nsl));
        let (wh, wl) = fast_two_sum(x, qh);
        let r = log_ff(wh, wl.add(ql));
        let r = L::select(x.gt(k(HUGE)), log_twice(x), r);
        L::select(x.lt(k(1.0)), k(f32::NAN), r)
    }
}

/// atanh x = ln((1 + |x|)/(1 − |x|))/2 with both sums exact pairs and the
/// quotient a pair (`div_ff`); x for |x| < 2^−12; sign of x or-ed in.
/// Special values: atanh(±0) = ±0, atanh(±1) = ±inf, |x| > 1 → NaN,
/// NaN → NaN.
#[inline(always)]
pub unsafe fn atanh<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let one = k::<L>(1.0);
        let a = x.abs();
        let (nh, nl) = two_sum(one, a);
        let (dh, dl) = two_sum(one, a.neg());
        let (wh, wl) = div_ff(nh, nl, dh, dl);
        let wl = L::select(dh.eq(L::zero()), L::zero(), wl);
        let r = log_ff(wh, wl).mul(k(0.5));
        let r = L::select(a.gt(one), k(f32::NAN), r);
        L::select(a.lt(k(TINY)), a, r).or(x.and(L::splat_bits(SIGN)))
    }
}
