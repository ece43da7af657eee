//! erfc and erfinv in binary32, generic over [`Lanes`], on the pieces of
//! [`super::fixed`] (same rules: IEEE + − × ÷, compares/selects, bit
//! operations, a 16-entry table lookup, one fixed order, the f32
//! instantiation is the definition).
//!
//! erfc x = 1 − erf x cancels for x > 0, so erfc has its own paths:
//!
//! * |x| < 1/2: 1 − x − x·P(x²) with erf's polynomial P (erf x = x + x·P),
//!   1 − x by TwoSum, so the only large rounding is the last one
//!   (erfc ≥ 0.47 there; |x·P| ≤ 0.021).
//! * x ≥ 1/2: erfc x = 2Q(t) with t = √2·x, Q(t) = Z(t)·e^(−t²/2)/t, i.e.
//!   erfc x = (√2/x)·Z(t)·e^(−x²): −x² formed exactly and fed to the exp
//!   core (2^k(h + l)); t = √2·x as a pair th + tl (√2 as hi + lo, Dekker)
//!   and Z(t) = Z(th)·(1 + D·tl) with the logarithmic slope
//!   D = d ln Z/dt = 1/t + t − t/(√(2π)·Z); √2/x as a pair (`div_ff`); the
//!   three factors multiplied as pairs and rounded once (then scaled by 2^k,
//!   the only other rounding being into the subnormal range, x > 9.2).
//! * x ≤ −1/2: 2 − erfc|x| (no cancellation: the result is in [1.47, 2]).
//!
//! Special values: erfc(−inf) = 2, erfc(+inf) = +0, erfc(NaN) = NaN,
//! erfc(±0) = 1; erfc x = +0 from x ≥ 10.06 (erfc x < 2^−150).
//!
//! erfinv x = x·G(x²) for |x| < 1/2 and x·F(w), w = −ln(1 − x²), beyond:
//! G one polynomial in z = x² on [0, 1/4], F on the twelve half-octave
//! pieces of w ∈ [0.25, 16) (w ≤ 15.95 for |x| ≤ 1 − 2^−24), both with the
//! constant term as hi + lo; 1 − x² formed exactly (Dekker, TwoSum) and
//! its logarithm in float-float (`power::ln_ff`), so w has one rounding;
//! x·c0_hi exact (Dekker) and x·rest added, one final rounding. Special
//! values: erfinv(±1) = ±inf, |x| > 1 → NaN, erfinv(±0) = ±0, NaN → NaN.
//!
//! # Safety
//! As in [`super::fixed`]: unsafe only because of the [`Lanes`] calls.

use super::ff::{div_ff, two_prod, two_sum};
use super::fixed::{exp_core, half_octaves, horner, k, neg_square, scale, z_tail, ERF_P, SIGN};
use super::power::ln_ff;
use crate::simd::Lanes;

include!("erfinv_pieces.rs");

/// √2 as binary32 (0x3fb504f3) plus RN(rest).
const SQRT2_H: f32 = std::f32::consts::SQRT_2;
const SQRT2_L: f32 = 2.420_323_4e-8;
/// 1/√(2π).
const INV_SQRT_2PI: f32 = 0.398_942_3;
/// From here on erfc x < 2^−150 (erfc(10.0595) = 6.3e−46) and rounds to +0.
const ERFC_ZERO: f32 = 10.1;

/// erfc a for a ∈ [1/2, 10.1] (a clamped into it), as described above.
#[inline(always)]
pub(crate) unsafe fn erfc_tail<L: Lanes>(a: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let a = L::select(a.lt(k(0.5)), k(0.5), a);
        let a = L::select(a.gt(k(ERFC_ZERO)), k(ERFC_ZERO), a);
        // t = √2·a = th + tl.
        let (th, te) = two_prod(k(SQRT2_H), a);
        let tl = te.add(k::<L>(SQRT2_L).mul(a));
        let (z0, zr) = z_tail(th);
        let zz = z0.add(zr);
        // Z(th + tl) = Z(th)(1 + D·tl) and √2/a = wh(1 + wl/wh).
        let d = k::<L>(1.0)
            .div(th)
            .add(th)
            .sub(th.mul(k(INV_SQRT_2PI)).div(zz));
        let (wh, wl) = div_ff(k(SQRT2_H), k(SQRT2_L), a, L::zero());
        let c = d.mul(tl).add(wl.div(wh));
        // A = Z·(√2/a) as a pair: z0·wh exactly, the rest to first order.
        let (p1, e1) = two_prod(z0, wh);
        let al = e1.add(zr.mul(wh)).add(zz.mul(wh).mul(c));
        let (ah, al) = (p1.add(al), p1.sub(p1.add(al)).add(al));
        // × e^(−a²) = 2^k(h + l).
        let (sh, sl) = neg_square(a);
        let (h, l, ki) = exp_core(sh, sl);
        let (q, qe) = two_prod(ah, h);
        let y = q.add(qe.add(ah.mul(l)).add(al.mul(h)));
        scale(y, ki)
    }
}

/// erfc x = 1 − erf x, as described in the module comment.
#[inline(always)]
pub unsafe fn erfc<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let a = x.abs();
        let (s, e) = two_sum(k(1.0), x.neg());
        let small = s.add(e.sub(x.mul(horner(x.mul(x), &ERF_P))));
        let tail = erfc_tail(a);
        let tail = L::select(a.ge(k(ERFC_ZERO)), L::zero(), tail);
        let big = L::select(x.lt(L::zero()), k::<L>(2.0).sub(tail), tail);
        let r = L::select(a.lt(k(0.5)), small, big);
        L::select(x.is_nan(), x, r)
    }
}

/// erfinv x, the inverse of erf on (−1, 1), as described in the module
/// comment.
#[inline(always)]
pub unsafe fn erfinv<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let one = k::<L>(1.0);
        let a = x.abs();
        // |x| < 1/2: G(z) = G_HI + (c0_lo + z·(c1 + …)).
        let z = a.mul(a);
        let g_rest = horner(z, &ERFINV_G);
        // w = −ln(1 − a²): 1 − a² = s + lo exactly, ln of the pair.
        let (p, e) = two_prod(a, a);
        let (s, t) = two_sum(one, p.neg());
        let lo = t.sub(e);
        let (lh, ll) = ln_ff(s);
        let w = lh.add(ll.add(lo.div(s))).neg();
        let wc = L::select(w.lt(k(0.25)), k(0.25), w);
        let wc = L::select(wc.gt(k(15.999_999)), k(15.999_999), wc);
        let (f0, f_rest) = half_octaves(wc, &ERFINV_F);
        let small = a.lt(k(0.5));
        let c0 = L::select(small, k(ERFINV_G_HI), f0);
        let rest = L::select(small, g_rest, f_rest);
        let (ph, pe) = two_prod(a, c0);
        let r = ph.add(pe.add(a.mul(rest)));
        let r = L::select(a.eq(one), k(f32::INFINITY), r);
        let r = L::select(a.gt(one), k(f32::NAN), r);
        let r = r.or(x.and(L::splat_bits(SIGN)));
        L::select(x.is_nan(), x, r)
    }
}
