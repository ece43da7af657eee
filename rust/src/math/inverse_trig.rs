//! atan, atan2, asin and acos in binary32, generic over [`Lanes`].
//!
//! atan: |x| ≤ tan(π/8): the polynomial on x; up to tan(3π/8):
//! π/4 + atan((|x| − 1)/(|x| + 1)); beyond: π/2 + atan(−1/|x|); the
//! reduced argument t (|t| ≤ tan(π/8) = 0.41421) is a float-float pair
//! (exact sums, `div_ff`), atan(th + tl) ≈ th + (th·z·A(z) + tl·(1 − z)),
//! and the constant is added as a pair, so the result has one rounding.
//! atan2 reduces to atan(min/max) ∈ [0, π/4] the same way, then
//! π/2 − · (|y| > |x|) and π − · (x < 0 or x = −0) in float-float, the
//! sign of y last, with C99's special values. asin: |x| ≤ 1/2 the
//! polynomial, else π/2 − 2·asin(√((1 − |x|)/2)) with the root as a pair;
//! acos from the same pieces.

use super::ff::{div_ff, fast_two_sum, sqrt_ff, two_sum};
use super::fixed::{horner, k, SIGN};
use crate::simd::Lanes;

/// A(z) ≈ (atan(t)/t − 1)/z on z ∈ [0, 0.4143²]. Degree 6.
/// Max |z·(A − a)| = 3.64e−11 = 2^−34.68 (fit_polys.py atan).
const ATAN_A: [f32; 7] = [
    -0.333_333_34,
    0.200_000_87,
    -0.142_884_09,
    0.111_503_33,
    -0.093_702_74,
    0.084_987_71,
    -0.062_023_636,
];
/// B(z) ≈ (asin(t)/t − 1)/z on z ∈ [0, 0.25]. Degree 6.
/// Max |z·(B − b)| = 1.77e−11 = 2^−35.71 (fit_polys.py asin).
const ASIN_B: [f32; 7] = [
    0.166_666_67,
    0.074_999_504,
    0.044_659_57,
    0.030_117_426,
    0.024_574_848,
    0.007_598_527,
    0.034_542_795,
];

/// π/4, π/2 and π as binary32 plus RN(rest).
const PIO4_H: f32 = f32::from_bits(0x3f49_0fdb);
const PIO4_L: f32 = f32::from_bits(0xb2bb_bd2e);
const PIO2_H: f32 = f32::from_bits(0x3fc9_0fdb);
const PIO2_L: f32 = f32::from_bits(0xb33b_bd2e);
const PI_H: f32 = f32::from_bits(0x4049_0fdb);
const PI_L: f32 = f32::from_bits(0xb3bb_bd2e);
/// atan2's scaling: numerators below 2^−80 are scaled by 2^100, quotients
/// below 2^−100 are taken without residual.
const TINY_NUM: f32 = f32::from_bits(0x17_80_0000); // 2^−80
const TWO_100: f32 = f32::from_bits(0x71_80_0000); // 2^100
const TINY_Q: f32 = f32::from_bits(0x0d_80_0000); // 2^−100
/// tan(π/8) and tan(3π/8).
const TAN_PI_8: f32 = 0.414_213_57;
const TAN_3PI_8: f32 = 2.414_213_7;

/// atan(th + tl) for |th| ≤ 0.41422 as (th, tail).
#[inline(always)]
unsafe fn atan_kernel<L: Lanes>(th: L, tl: L) -> (L, L) {
    // SAFETY: module contract.
    unsafe {
        let z = th.mul(th);
        let tail = th
            .mul(z.mul(horner(z, &ATAN_A)))
            .add(tl.mul(k::<L>(1.0).sub(z)));
        (th, tail)
    }
}

/// base + atan(th + tl) as a pair (hi, lo), base = (bh, bl), |th| ≤ |bh| or bh = 0.
#[inline(always)]
unsafe fn plus_atan<L: Lanes>(bh: L, bl: L, th: L, tl: L) -> (L, L) {
    // SAFETY: module contract.
    unsafe {
        let (v, tail) = atan_kernel(th, tl);
        let (s, e) = fast_two_sum(bh, v);
        (s, e.add(bl.add(tail)))
    }
}

/// (u − 1)/(u + 1) for u = uh + ul as a pair.
#[inline(always)]
unsafe fn shifted_ratio<L: Lanes>(uh: L, ul: L) -> (L, L) {
    // SAFETY: module contract.
    unsafe {
        let (nh, nl) = two_sum(uh, k(-1.0));
        let (dh, dl) = two_sum(uh, k(1.0));
        div_ff(nh, nl.add(ul), dh, dl.add(ul))
    }
}

/// atan x. Special values: atan(±0) = ±0, atan(±inf) = ±π/2, NaN → NaN.
#[inline(always)]
pub unsafe fn atan<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let a = x.abs();
        let mid = a.gt(k(TAN_PI_8));
        let big = a.gt(k(TAN_3PI_8));
        let (mh, ml) = shifted_ratio(a, L::zero());
        let (bh, bl) = div_ff(k(-1.0), L::zero(), a, L::zero());
        // −1/a for huge a: the residual's product would meet inf.
        let bl = L::select(a.gt(k(1.0e30)), L::zero(), bl);
        let th = L::select(big, bh, L::select(mid, mh, a));
        let tl = L::select(big, bl, L::select(mid, ml, L::zero()));
        let ch = L::select(big, k(PIO2_H), L::select(mid, k(PIO4_H), L::zero()));
        let cl = L::select(big, k(PIO2_L), L::select(mid, k(PIO4_L), L::zero()));
        let (s, lo) = plus_atan(ch, cl, th, tl);
        s.add(lo).or(x.and(L::splat_bits(SIGN)))
    }
}

/// atan2(y, x), the angle of (x, y) in [−π, π]. Special values (C99):
/// atan2(±0, +0) = ±0, atan2(±0, −0) = ±π, atan2(±0, x < 0) = ±π,
/// atan2(y ≠ 0, ±0) = ±π/2, atan2(±y, +inf) = ±0, atan2(±y, −inf) = ±π
/// (y finite), atan2(±inf, x finite) = ±π/2, atan2(±inf, +inf) = ±π/4,
/// atan2(±inf, −inf) = ±3π/4; NaN if either is NaN.
#[inline(always)]
pub unsafe fn atan2<L: Lanes>(y: L, x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let (ay, ax) = (y.abs(), x.abs());
        let swap = ay.gt(ax);
        let num = L::select(swap, ax, ay);
        let den = L::select(swap, ay, ax);
        // A small numerator (subnormal, or so small that the residual's
        // partial products num·2^−24 would be): both scaled by 2^100
        // (exact; den < 2^26 keeps den·2^100 finite). The quotient is
        // unchanged, and its residual is computed on normal numbers.
        let rescale = L::mask_and(num.lt(k(TINY_NUM)), den.lt(k(67_108_864.0)));
        let s = L::select(rescale, k(TWO_100), k(1.0));
        let (num, den) = (num.mul(s), den.mul(s));
        let (uh, ul) = div_ff(num, L::zero(), den, L::zero());
        let inf = k::<L>(f32::INFINITY);
        // Below 2^−100 the quotient is the result (atan u = u(1 − u²/3)) and
        // its residual may have underflowed: dropped.
        let ul = L::select(
            L::mask_or(L::mask_or(den.eq(inf), num.eq(L::zero())), uh.lt(k(TINY_Q))),
            L::zero(),
            ul,
        );
        // 0/0 → 0 and inf/inf → 1.
        let uh = L::select(num.eq(L::zero()), L::zero(), uh);
        let uh = L::select(num.eq(inf), k(1.0), uh);
        let mid = uh.gt(k(TAN_PI_8));
        let (mh, ml) = shifted_ratio(uh, ul);
        let th = L::select(mid, mh, uh);
        let tl = L::select(mid, ml, ul);
        let ch = L::select(mid, k(PIO4_H), L::zero());
        let cl = L::select(mid, k(PIO4_L), L::zero());
        let (s, lo) = plus_atan(ch, cl, th, tl);
        // |y| > |x|: π/2 − angle.
        let (s2, e2) = fast_two_sum(k(PIO2_H), s.neg());
        let lo2 = e2.add(k::<L>(PIO2_L).sub(lo));
        let (s, lo) = (L::select(swap, s2, s), L::select(swap, lo2, lo));
        // x < 0 or x = −0: π − angle.
        let west = x.and(L::splat_bits(SIGN)).i32_to_f32().lt(L::zero());
        let (s3, e3) = fast_two_sum(k(PI_H), s.neg());
        let lo3 = e3.add(k::<L>(PI_L).sub(lo));
        let (s, lo) = (L::select(west, s3, s), L::select(west, lo3, lo));
        let r = s.add(lo).or(y.and(L::splat_bits(SIGN)));
        L::select(L::mask_or(x.is_nan(), y.is_nan()), x.add(y), r)
    }
}

/// asin(sh + sl) for 0 ≤ sh ≤ 0.5 as (sh, tail); the slope 1/√(1 − s²)
/// ≈ 1 + s²/2 carries sl.
#[inline(always)]
unsafe fn asin_kernel<L: Lanes>(sh: L, sl: L) -> (L, L) {
    // SAFETY: module contract.
    unsafe {
        let z = sh.mul(sh);
        let tail = sh
            .mul(z.mul(horner(z, &ASIN_B)))
            .add(sl.mul(k::<L>(1.0).add(z.mul(k(0.5)))));
        (sh, tail)
    }
}

/// For a = |x| > 1/2: asin(√((1 − a)/2)) as (v, tail) with the root a
/// pair (1 − a is exact, Sterbenz).
#[inline(always)]
unsafe fn half_angle<L: Lanes>(a: L) -> (L, L) {
    // SAFETY: module contract.
    unsafe {
        let w = k::<L>(1.0).sub(a).mul(k(0.5));
        let (qh, ql) = sqrt_ff(w, L::zero());
        asin_kernel(qh, ql)
    }
}

/// asin x. Special values: asin(±0) = ±0, asin(±1) = ±π/2, |x| > 1 → NaN,
/// NaN → NaN.
#[inline(always)]
pub unsafe fn asin<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let a = x.abs();
        let (v1, t1) = asin_kernel(a, L::zero());
        let (v2, t2) = half_angle(a);
        let (d, e) = fast_two_sum(k(PIO2_H), v2.add(v2).neg());
        let big = d.add(e.add(k::<L>(PIO2_L).sub(t2.add(t2))));
        L::select(a.gt(k(0.5)), big, v1.add(t1)).or(x.and(L::splat_bits(SIGN)))
    }
}

/// acos x: |x| ≤ 1/2: π/2 − asin x; x > 1/2: 2·asin(√((1 − x)/2));
/// x < −1/2: π − 2·asin(√((1 + x)/2)); constants as pairs.
/// Special values: acos(1) = +0, acos(−1) = π, |x| > 1 → NaN, NaN → NaN.
#[inline(always)]
pub unsafe fn acos<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let a = x.abs();
        let (v1, t1) = asin_kernel(a, L::zero());
        let sign = x.and(L::splat_bits(SIGN));
        let (v1, t1) = (v1.or(sign), t1.xor(sign));
        let (d1, e1) = fast_two_sum(k(PIO2_H), v1.neg());
        let small = d1.add(e1.add(k::<L>(PIO2_L).sub(t1)));
        let (v2, t2) = half_angle(a);
        let east = v2.add(v2).add(t2.add(t2));
        let (d3, e3) = fast_two_sum(k(PI_H), v2.add(v2).neg());
        let west = d3.add(e3.add(k::<L>(PI_L).sub(t2.add(t2))));
        let big = L::select(x.lt(L::zero()), west, east);
        L::select(a.gt(k(0.5)), big, small)
    }
}
