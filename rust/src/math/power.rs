//! Powers: x^p for a scalar exponent p (torch.pow(tensor, number)) and for
//! a per-element exponent (torch.pow(tensor, tensor)), on the fixed ln and
//! exp cores of [`super::fixed`]. Same rules as the rest of `crate::math`:
//! IEEE + − × ÷ √, compares/selects and bit operations only, one fixed order,
//! the f32 instantiation is the definition.

use super::fixed::{exp_core, k, log_parts, scale, SIGN};
use crate::simd::Lanes;

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
        let (lh, ll) = log_parts(a);
        // ln|x| = s_hi + s_lo (Fast2Sum: |lh| ≥ |ll| unless lh = 0).
        let s_hi = lh.add(ll);
        let s_lo = lh.sub(s_hi).add(ll);
        // p·s_hi exactly as y_hi + y_lo (Dekker's product; both factors split
        // into 12-bit halves on the bits).
        let ph = p_hi(p);
        let pl = p - ph;
        let sh = s_hi.and(L::splat_bits(0xffff_f000));
        let sl = s_hi.sub(sh);
        let y_hi = s_hi.mul(k(p));
        let y_lo = sh
            .mul(k(ph))
            .sub(y_hi)
            .add(sh.mul(k(pl)))
            .add(sl.mul(k(ph)))
            .add(sl.mul(k(pl)));
        let y_lo = y_lo.add(s_lo.mul(k(p)));
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

/// The high 12 bits of p (the split for Dekker's product).
#[inline(always)]
fn p_hi(p: f32) -> f32 {
    f32::from_bits(p.to_bits() & 0xffff_f000)
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
        let (lh, ll) = log_parts(a);
        let s_hi = lh.add(ll);
        let s_lo = lh.sub(s_hi).add(ll);
        let mask = L::splat_bits(0xffff_f000);
        let (ph, sh) = (p.and(mask), s_hi.and(mask));
        let (pl, sl) = (p.sub(ph), s_hi.sub(sh));
        let y_hi = s_hi.mul(p);
        let y_lo = sh
            .mul(ph)
            .sub(y_hi)
            .add(sh.mul(pl))
            .add(sl.mul(ph))
            .add(sl.mul(pl))
            .add(s_lo.mul(p));
        // y_hi = ±inf (|p| huge with |x| ≠ 1) makes y_lo NaN: drop it there.
        let y_lo = L::select(y_hi.abs().eq(inf), zero, y_lo);
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
