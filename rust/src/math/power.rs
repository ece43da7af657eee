//! Powers: x^p for a scalar exponent p (torch.pow(tensor, number)) and for
//! a per-element exponent (torch.pow(tensor, tensor)), on the fixed ln and
//! exp cores of [`super::fixed`]. Same rules as the rest of `crate::math`:
//! IEEE + − × ÷ √, compares/selects and bit operations only, one fixed order,
//! the f32 instantiation is the definition.

use super::fixed::horner;
use super::ff::{div_ff, fast_two_sum, two_prod, two_sum};
use super::fixed::{exp_core, k, log_reduce, scale, LN2_HI, LN2_LO, SIGN};
use crate::simd::Lanes;

// ---------------------------------------------------------------------------
// ln |x| in float-float
// ---------------------------------------------------------------------------

/// Taylor coefficients of (2·atanh(s) − 2s − (2/3)s³)/s⁵ = 2/5 + 2z/7 + …
/// (z = s²), degree 4: 2/(2j + 5), j = 0..4. On |s| ≤ 0.17158 (z ≤ 0.02944)
/// the truncated series' remainder is below 2·z⁵/15·s⁵/(1 − z) ≤ 3.0e−9·s⁵,
/// 2^−39.5 relative to 2s; the coefficients' binary32 rounding adds at most
/// 2^−24 of the s⁵ term, itself ≤ 2^−12.5 of 2s (exact series terms, not a
/// fit).
const LN_SERIES: [f32; 5] = [0.4, 0.285_714_3, 0.222_222_22, 0.181_818_18, 0.153_846_15];
/// 2/3 as binary32 plus RN(rest).
const TWO_THIRDS_H: f32 = f32::from_bits(0x3f2a_aaab);
const TWO_THIRDS_L: f32 = -1.986_821_e-8;

/// ln a for finite a > 0 as an unevaluated sum (hi, lo) with a relative
/// error of about 2^−36: pow's p·ln a (|p·ln a| up to 104 before exp
/// saturates, so the binary32 logarithm's 0.84 ulp, amplified by p, would
/// cost up to ~9 ulp at p = 25) and erfinv's w = −ln(1 − x²) are built on it.
/// a = 2^e(1 + f) as the fixed log reduces it (subnormals scaled), s = f/(2 + f) as a pair (2 + f by TwoSum, the
/// quotient by `div_ff`), ln(1 + f) = 2s + (2/3)s³ + s⁵·T(s²): 2s exact,
/// s³ and (2/3)s³ as pairs (Dekker products), T in binary32 (its term is
/// below 2^−12.5 of the result); then e·ln 2 with ln 2 = LN2_HI + LN2_LO
/// (e·LN2_HI exact) added by Fast2Sum, and the pair renormalised.
/// Values for a = 0, inf or NaN are meaningless (the callers select).
#[inline(always)]
pub(crate) unsafe fn ln_ff<L: Lanes>(a: L) -> (L, L) {
    // SAFETY: module contract.
    unsafe {
        let (dk, f, _hfsq, _s, _r) = log_reduce(a);
        let (dh, dl) = two_sum(k(2.0), f);
        let (sh, sl) = div_ff(f, L::zero(), dh, dl);
        // s² = zh + zl, s³ = ch + cl.
        let (zh, zl) = two_prod(sh, sh);
        let zl = zl.add(k::<L>(2.0).mul(sh).mul(sl));
        let (ch, cl) = two_prod(sh, zh);
        let cl = cl.add(sh.mul(zl)).add(sl.mul(zh));
        // (2/3)·s³ = th + tl.
        let (th, tl) = two_prod(ch, k(TWO_THIRDS_H));
        let tl = tl.add(ch.mul(k(TWO_THIRDS_L))).add(cl.mul(k(TWO_THIRDS_H)));
        let t5 = ch.mul(zh).mul(horner(zh, &LN_SERIES));
        let two = k::<L>(2.0);
        let (uh, ul) = fast_two_sum(two.mul(sh), th);
        let ul = ul.add(two.mul(sl).add(tl).add(t5));
        // + e·ln 2 (|e·LN2_HI| ≥ ln 2 > |uh| unless e = 0).
        let (hh, hl) = fast_two_sum(dk.mul(k(LN2_HI)), uh);
        let hl = hl.add(ul.add(dk.mul(k(LN2_LO))));
        fast_two_sum(hh, hl)
    }
}

/// y = p·(s_hi + s_lo) as hi + lo: p·s_hi exactly (Dekker), plus p·s_lo.
/// Beyond |y_hi| > 200 the exp core saturates anyway and the low part is
/// dropped (it can be large against the clamped high part, or NaN when
/// y_hi = ±inf).
#[inline(always)]
unsafe fn times_ln<L: Lanes>(p: L, s_hi: L, s_lo: L) -> (L, L) {
    // SAFETY: module contract.
    unsafe {
        let (y_hi, e) = two_prod(p, s_hi);
        let y_lo = e.add(s_lo.mul(p));
        (y_hi, L::select(y_hi.abs().gt(k(200.0)), L::zero(), y_lo))
    }
}

// ---------------------------------------------------------------------------
// pow with a scalar exponent
// ---------------------------------------------------------------------------

/// x^p for a fixed scalar p, as torch.pow(tensor, scalar) defines it:
/// p = 0 → 1 (even for NaN x); exponents 1, 2, 3, −1, −2, 0.5, −0.5 by
/// plain IEEE operations (x·x, x·x·x, 1/x, 1/(x·x), √x, 1/√x, as torch
/// special-cases them, so ±0 and −inf give sqrt's and rsqrt's values);
/// otherwise |x|^p = e^(p·ln|x|) with ln|x| as an unevaluated sum and p·ln|x|
/// formed exactly (Dekker's product), negative x giving NaN unless p is an
/// integer (then the sign of x^p is that of x for odd p).
/// Zeros and infinities follow C's pow.
#[inline(always)]
pub unsafe fn pow<L: Lanes>(x: L, p: f32) -> L {
    // SAFETY: module contract.
    unsafe {
        if p == 0.0 {
            return k(1.0);
        } else if p == 1.0 {
            return x;
        } else if p == 2.0 {
            return x.mul(x);
        } else if p == 3.0 {
            return x.mul(x).mul(x);
        } else if p == -1.0 {
            return k::<L>(1.0).div(x);
        } else if p == -2.0 {
            return k::<L>(1.0).div(x.mul(x));
        } else if p == 0.5 {
            // torch computes pow(x, 0.5) as sqrt(x): sqrt(−0) = −0 and
            // sqrt(−inf) = NaN (C's pow would give +0 and +inf).
            return x.sqrt();
        } else if p == -0.5 {
            // torch: rsqrt(x) = 1/sqrt(x) (rsqrt(−0) = −inf, rsqrt(−inf) = NaN).
            return k::<L>(1.0).div(x.sqrt());
        }
        let inf = k::<L>(f32::INFINITY);
        let a = x.abs();
        if p.is_nan() {
            return L::select(x.eq(k(1.0)), k(1.0), k(f32::NAN));
        }
        if p.is_infinite() {
            // C: |x| > 1 → +inf (p = +inf) or +0; |x| < 1 the reverse; |x| = 1 → 1.
            let (big, little) = if p > 0.0 {
                (inf, L::zero())
            } else {
                (L::zero(), inf)
            };
            let r = L::select(a.gt(k(1.0)), big, little);
            let r = L::select(a.eq(k(1.0)), k(1.0), r);
            return L::select(a.is_nan(), x, r);
        }
        let is_int = p == p.trunc();
        let odd = is_int && p.abs() < 16_777_216.0 && (p as i64) % 2 != 0;
        let (s_hi, s_lo) = ln_ff(a);
        let (y_hi, y_lo) = times_ln(k(p), s_hi, s_lo);
        let (h, _l, ki) = exp_core(y_hi, y_lo);
        let r = scale(h, ki);
        // Zeros and infinities of |x| (C99 F.10.4.4), then NaN.
        let (at_zero, at_inf) = if p > 0.0 {
            (L::zero(), inf)
        } else {
            (inf, L::zero())
        };
        let r = L::select(a.eq(L::zero()), at_zero, r);
        let r = L::select(a.eq(inf), at_inf, r);
        let r = L::select(a.is_nan(), x, r);
        if odd {
            // x^p has the sign of x (−0 and −inf included).
            r.or(x.and(L::splat_bits(SIGN)))
        } else if is_int {
            r
        } else {
            // A negative finite base with a non-integer exponent has no real power.
            let neg_finite = L::mask_and(x.lt(L::zero()), x.gt(k(f32::NEG_INFINITY)));
            L::select(neg_finite, k(f32::NAN), r)
        }
    }
}

/// x^p with a per-element exponent (torch.pow(tensor, tensor)): the general
/// path of [`pow`] lane by lane, |x|^p = e^(p·ln|x|) with ln|x| a pair and
/// p·ln|x| formed exactly; p = 1 → x, p = 2 → x·x, p = −1 → 1/x by plain
/// IEEE operations; integer p found on the bits (|p| ≥ 2^23 is an
/// integer, odd only below 2^24). Zeros, infinities and NaNs follow C's
/// pow: p = 0 → 1 and x = 1 → 1 even with a NaN other operand; a negative
/// finite base with a non-integer exponent is NaN; x^(±inf) by |x| vs 1.
#[inline(always)]
pub unsafe fn pow_lanes<L: Lanes>(x: L, p: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let one = k::<L>(1.0);
        let inf = k::<L>(f32::INFINITY);
        let zero = L::zero();
        let a = x.abs();
        let pa = p.abs();
        let (s_hi, s_lo) = ln_ff(a);
        let (y_hi, y_lo) = times_ln(p, s_hi, s_lo);
        let (h, _l, ki) = exp_core(y_hi, y_lo);
        let r = scale(h, ki);
        // Integer exponents: |p| < 2^23 rounds to itself; odd: the last bit
        // of the integer (below 2^23 read after adding 2^23, up to 2^24 from
        // the significand).
        let shifted = pa.add(k(8_388_608.0));
        let small_int = L::mask_and(pa.lt(k(8_388_608.0)), shifted.sub(k(8_388_608.0)).eq(pa));
        let is_int = L::mask_or(small_int, pa.ge(k(8_388_608.0)));
        let low_bit = L::select(pa.lt(k(8_388_608.0)), shifted, pa).and(L::splat_bits(1));
        let odd = L::mask_and(
            L::mask_and(is_int, pa.lt(k(16_777_216.0))),
            low_bit.i32_to_f32().eq(one),
        );
        // Zeros and infinities of |x| (C99 F.10.4.4).
        let pos = p.gt(zero);
        let r = L::select(a.eq(zero), L::select(pos, zero, inf), r);
        let r = L::select(a.eq(inf), L::select(pos, inf, zero), r);
        // p = ±inf: |x| > 1 → inf or 0, |x| < 1 → 0 or inf, |x| = 1 → 1.
        let p_inf = pa.eq(inf);
        let gt1 = a.gt(one);
        let r_inf = L::select(pos, L::select(gt1, inf, zero), L::select(gt1, zero, inf));
        let r = L::select(p_inf, L::select(a.eq(one), one, r_inf), r);
        let sign = x.and(L::splat_bits(SIGN));
        let r = L::select(odd, r.or(sign), r);
        let neg_finite = L::mask_and(x.lt(zero), x.gt(k(f32::NEG_INFINITY)));
        let r = L::select(L::mask_and(neg_finite, L::mask_not(is_int)), k(f32::NAN), r);
        // The exact small cases, then NaNs and the two rules that beat them.
        let r = L::select(p.eq(one), x, r);
        let r = L::select(p.eq(k(2.0)), x.mul(x), r);
        let r = L::select(p.eq(k(-1.0)), one.div(x), r);
        let r = L::select(L::mask_or(x.is_nan(), p.is_nan()), x.add(p), r);
        let r = L::select(x.eq(one), one, r);
        L::select(p.eq(zero), one, r)
    }
}
