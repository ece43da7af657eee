//! DetMath: double-precision `exp` and `log` that give the same bits on every
//! platform, because they use only IEEE binary64 + − × ÷ and bit
//! manipulation in one fixed order (no fma, no libm). Both follow fdlibm
//! (Sun Microsystems, 1993: "Permission to use, copy, modify, and distribute
//! this software is freely granted, provided that this notice is preserved"),
//! whose polynomial coefficients they use. Accuracy against a double-double
//! reference: docs/numerics.md (tools/accuracy.rs).
//!
//! Used by the CTC recursions and by the normal random generator. The CTC
//! recursions also run the two over binary64 lanes on the ranges they reach
//! ([`exp_lanes`], [`log_lanes_on_1_2`]).

use crate::simd::F64Lanes;

/// Natural logarithm, binary64.
///
/// Method (the classic fdlibm `e_log.c` algorithm, Sun Microsystems 1993):
/// 1. Reduce x = 2^k · (1 + f) with √2/2 ≤ 1 + f < √2.
/// 2. With s = f / (2 + f), log(1 + f) = 2s + 2/3 s³ + 2/5 s⁵ + … =
///    f − f²/2 + s·(f²/2 + R(z)), z = s², where R is a degree-14 even
///    polynomial (Remez, |error| < 2^-58.45 on [0, 0.1716]).
/// 3. log(x) = k·ln2_hi + (f − (hfsq − (s·(hfsq + R) + k·ln2_lo))).
///
/// Error bound (fdlibm): below 1 ulp. Special values: log(±0) = −∞,
/// log(x < 0) = NaN, log(+∞) = +∞, log(NaN) = NaN, log(1) = +0.
pub fn log(x: f64) -> f64 {
    const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-01; // 0x3fe62e42_fee00000
    const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10; // 0x3dea39ef_35793c76
    const LG1: f64 = 6.666_666_666_666_735_130e-01; // 0x3FE55555_55555593
    const LG2: f64 = 3.999_999_999_940_941_908e-01; // 0x3FD99999_9997FA04
    const LG3: f64 = 2.857_142_874_366_239_149e-01; // 0x3FD24924_94229359
    const LG4: f64 = 2.222_219_843_214_978_396e-01; // 0x3FCC71C5_1D8E78AF
    const LG5: f64 = 1.818_357_216_161_805_012e-01; // 0x3FC74664_96CB03DE
    const LG6: f64 = 1.531_383_769_920_937_332e-01; // 0x3FC39A09_D078C69F
    const LG7: f64 = 1.479_819_860_511_658_591e-01; // 0x3FC2F112_DF3E5244

    let mut bits = x.to_bits();
    let mut hx = (bits >> 32) as u32;
    let mut k: i32 = 0;
    if hx < 0x0010_0000 || (hx >> 31) != 0 {
        if bits << 1 == 0 {
            return f64::NEG_INFINITY; // log(±0)
        }
        if hx >> 31 != 0 {
            return f64::NAN; // log(negative)
        }
        // Subnormal: scale up by 2^54.
        k -= 54;
        bits = (x * f64::from_bits(0x4350_0000_0000_0000)).to_bits();
        hx = (bits >> 32) as u32;
    } else if hx >= 0x7ff0_0000 {
        return x; // +inf or NaN
    } else if hx == 0x3ff0_0000 && bits << 32 == 0 {
        return 0.0;
    }
    // Reduce x into [√2/2, √2).
    hx = hx.wrapping_add(0x3ff0_0000 - 0x3fe6_a09e);
    k += (hx >> 20) as i32 - 0x3ff;
    hx = (hx & 0x000f_ffff) + 0x3fe6_a09e;
    let xr = f64::from_bits(((hx as u64) << 32) | (bits & 0xffff_ffff));

    let f = xr - 1.0;
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG2 + w * (LG4 + w * LG6));
    let t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
    let r = t2 + t1;
    let dk = k as f64;
    s * (hfsq + r) + dk * LN2_LO - hfsq + f + dk * LN2_HI
}

/// e^x, binary64.
///
/// Method (fdlibm `e_exp.c`):
/// 1. Reduce x = k·ln2 + r, |r| ≤ ln2/2, k = RN(x/ln2); r = hi − lo with
///    hi = x − k·LN2_HI exact (LN2_HI has 32 significant bits) and
///    lo = k·LN2_LO.
/// 2. With t = r², c = r − t·(P1 + t·(P2 + t·(P3 + t·(P4 + t·P5)))) (P a
///    Remez fit of the rational form, |error| < 2^−59 on [0, 0.347]),
///    e^r = 1 + (r + r·c/(2 − c)), computed as 1 − ((lo − r·c/(2 − c)) − hi).
/// 3. Scale by 2^k as two powers of two (so that subnormal results round
///    once).
///
/// Error bound (fdlibm): below 1 ulp. Special values: exp(−inf) = +0,
/// exp(+inf) = +inf, exp(NaN) = NaN; overflow above 709.782712893384,
/// zero below −745.1332191019411.
pub fn exp(x: f64) -> f64 {
    const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-01; // 0x3fe62e42_fee00000
    const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10; // 0x3dea39ef_35793c76
    const INV_LN2: f64 = std::f64::consts::LOG2_E; // 0x3ff71547_652b82fe
    const P1: f64 = 1.666_666_666_666_660_190_37e-01; // 0x3FC55555_5555553E
    const P2: f64 = -2.777_777_777_701_559_338_42e-03; // 0xBF66C16C_16BEBD93
    const P3: f64 = 6.613_756_321_437_934_361_17e-05; // 0x3F11566A_AF25DE2C
    const P4: f64 = -1.653_390_220_546_525_153_90e-06; // 0xBEBBBD41_C5D26BF1
    const P5: f64 = 4.138_136_797_057_238_460_39e-08; // 0x3E663769_72BEA4D0
    const O_THRESHOLD: f64 = EXP_HIGH;
    const U_THRESHOLD: f64 = EXP_LOW;
    const SHIFTER: f64 = 6_755_399_441_055_744.0; // 1.5·2^52

    if x.is_nan() {
        return x;
    }
    if x > O_THRESHOLD {
        return f64::INFINITY;
    }
    if x < U_THRESHOLD {
        return 0.0;
    }
    // k = RN(x/ln2) by the shifter (|x/ln2| < 1076 ≪ 2^51).
    let t = x * INV_LN2 + SHIFTER;
    let kf = t - SHIFTER;
    let k = (t.to_bits() as i64 - SHIFTER.to_bits() as i64) as i32;
    let hi = x - kf * LN2_HI;
    let lo = kf * LN2_LO;
    let r = hi - lo;
    let tt = r * r;
    let c = r - tt * (P1 + tt * (P2 + tt * (P3 + tt * (P4 + tt * P5))));
    let y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
    // y·2^k as y·2^k1·2^k2: y ∈ [0.7, 1.42] and k1 ≥ −538, so the first
    // product is exact and only the second rounds.
    let k1 = k >> 1;
    let k2 = k - k1;
    let s1 = f64::from_bits(((k1 + 1023) as u64) << 52);
    let s2 = f64::from_bits(((k2 + 1023) as u64) << 52);
    y * s1 * s2
}

/// The range on which [`exp`] takes its general path (outside it, and for
/// NaN, it returns a special value).
pub const EXP_LOW: f64 = -7.451_332_191_019_411_084_20e+02;
pub const EXP_HIGH: f64 = 7.097_827_128_933_839_730_96e+02;

/// [`exp`] over binary64 lanes for x ∈ [[`EXP_LOW`], [`EXP_HIGH`]]: the
/// same operations in the same order, less the special-value branches that
/// range never takes (k ∈ [−1075, 1024], so both scale factors are
/// normal), so each lane is the bits [`exp`] gives. Outside that range, and
/// for NaN, the result is unspecified.
///
/// # Safety
/// Only inside `run_on` with `W`'s features enabled (see [`F64Lanes`]).
#[inline(always)]
pub unsafe fn exp_lanes<W: F64Lanes>(x: W) -> W {
    const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-01;
    const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;
    const INV_LN2: f64 = std::f64::consts::LOG2_E;
    const P1: f64 = 1.666_666_666_666_660_190_37e-01;
    const P2: f64 = -2.777_777_777_701_559_338_42e-03;
    const P3: f64 = 6.613_756_321_437_934_361_17e-05;
    const P4: f64 = -1.653_390_220_546_525_153_90e-06;
    const P5: f64 = 4.138_136_797_057_238_460_39e-08;
    const SHIFTER: f64 = 6_755_399_441_055_744.0;
    // SAFETY: forwarded from the caller.
    unsafe {
        let c = W::splat;
        let t = x.mul(c(INV_LN2)).add(c(SHIFTER));
        let kf = t.sub(c(SHIFTER));
        // k as a two's-complement 64-bit integer in the lane's bits.
        let k = t.sub_u64(W::splat_bits(SHIFTER.to_bits()));
        let hi = x.sub(kf.mul(c(LN2_HI)));
        let lo = kf.mul(c(LN2_LO));
        let r = hi.sub(lo);
        let tt = r.mul(r);
        let p = c(P4).add(tt.mul(c(P5)));
        let p = c(P3).add(tt.mul(p));
        let p = c(P2).add(tt.mul(p));
        let p = c(P1).add(tt.mul(p));
        let cc = r.sub(tt.mul(p));
        let q = r.mul(cc).div(c(2.0).sub(cc));
        let y = c(1.0).sub(lo.sub(q).sub(hi));
        // k1 = k >> 1 (arithmetic) as ((k + 2048) >> 1) − 1024: k ≥ −1075
        // here, so k + 2048 is positive and the logical shift floors.
        let k1 = k
            .add_u64(W::splat_bits(2048))
            .shr_u64::<1>()
            .sub_u64(W::splat_bits(1024));
        let k2 = k.sub_u64(k1);
        let s1 = k1.add_u64(W::splat_bits(1023)).shl_u64::<52>();
        let s2 = k2.add_u64(W::splat_bits(1023)).shl_u64::<52>();
        y.mul(s1).mul(s2)
    }
}

/// [`log`] over binary64 lanes for x ∈ [1, 2] (`logadd`'s 1 + e^d): the
/// same operations in the same order, less the branches for zero,
/// negative, subnormal, infinite and NaN arguments; x = 1 gives +0 as
/// [`log`]'s early return does. Outside that range the result is
/// unspecified.
///
/// # Safety
/// As [`exp_lanes`].
#[inline(always)]
pub unsafe fn log_lanes_on_1_2<W: F64Lanes>(x: W) -> W {
    const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-01;
    const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;
    const LG1: f64 = 6.666_666_666_666_735_130e-01;
    const LG2: f64 = 3.999_999_999_940_941_908e-01;
    const LG3: f64 = 2.857_142_874_366_239_149e-01;
    const LG4: f64 = 2.222_219_843_214_978_396e-01;
    const LG5: f64 = 1.818_357_216_161_805_012e-01;
    const LG6: f64 = 1.531_383_769_920_937_332e-01;
    const LG7: f64 = 1.479_819_860_511_658_591e-01;
    // SAFETY: forwarded from the caller.
    unsafe {
        let c = W::splat;
        // The high word hx ∈ [0x3ff00000, 0x40000000] gains
        // 0x3ff00000 − 0x3fe6a09e without a carry out of 32 bits, so the
        // reduction works on the whole 64-bit pattern.
        let moved = x.add_u64(W::splat_bits((0x3ff0_0000u64 - 0x3fe6_a09e) << 32));
        // k = (hx >> 20) − 0x3ff ∈ {0, 1}, and k as f64 by the 2^52 trick.
        let k = moved.shr_u64::<52>().sub_u64(W::splat_bits(0x3ff));
        let dk = k
            .add_u64(W::splat_bits(0x4330_0000_0000_0000))
            .sub(c(4_503_599_627_370_496.0));
        let xr = moved
            .and(W::splat_bits(0x000f_ffff_ffff_ffff))
            .add_u64(W::splat_bits(0x3fe6_a09eu64 << 32));
        let f = xr.sub(c(1.0));
        let hfsq = c(0.5).mul(f).mul(f);
        let s = f.div(c(2.0).add(f));
        let z = s.mul(s);
        let w = z.mul(z);
        let t1 = w.mul(c(LG2).add(w.mul(c(LG4).add(w.mul(c(LG6))))));
        let t2 = z.mul(c(LG1).add(w.mul(c(LG3).add(w.mul(c(LG5).add(w.mul(c(LG7))))))));
        let r = t2.add(t1);
        let v = s
            .mul(hfsq.add(r))
            .add(dk.mul(c(LN2_LO)))
            .sub(hfsq)
            .add(f)
            .add(dk.mul(c(LN2_HI)));
        W::select(x.eq(c(1.0)), c(0.0), v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_values() {
        assert_eq!(log(0.0), f64::NEG_INFINITY);
        assert_eq!(log(-0.0), f64::NEG_INFINITY);
        assert!(log(-1.0).is_nan());
        assert!(log(f64::NAN).is_nan());
        assert_eq!(log(f64::INFINITY), f64::INFINITY);
        assert_eq!(log(1.0).to_bits(), 0);
    }

    #[test]
    fn exp_special_values() {
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-0.0), 1.0);
        assert_eq!(exp(f64::NEG_INFINITY).to_bits(), 0);
        assert_eq!(exp(f64::INFINITY), f64::INFINITY);
        assert!(exp(f64::NAN).is_nan());
        assert_eq!(exp(709.79), f64::INFINITY);
        assert_eq!(exp(-745.2).to_bits(), 0);
        // The smallest subnormal, e^−744.44 ≈ 2^−1074·1.0x.
        assert_eq!(exp(-744.44).to_bits(), 1);
        assert!(exp(709.78) < f64::INFINITY);
    }

    #[test]
    fn exp_close_to_the_platform_exp() {
        // A witness only (the platform exp is within 1 ulp either side); the
        // accuracy table against a double-double reference is in
        // docs/numerics.md.
        let mut x = -745.0f64;
        while x < 709.7 {
            let ours = exp(x);
            let theirs = x.exp();
            let ulp = (theirs.to_bits() as i64 - ours.to_bits() as i64).abs();
            assert!(ulp <= 2, "exp({x:e}) = {ours:e} vs {theirs:e}");
            x += 0.0137;
        }
    }

    #[test]
    fn close_to_the_platform_log() {
        // The platform log is only a witness here (within 1 ulp either side);
        // the accuracy table against a correctly rounded reference is in
        // docs/numerics.md.
        let mut x = 1e-310f64;
        while x < 1e300 {
            let ours = log(x);
            let theirs = x.ln();
            let ulp = (theirs.to_bits() as i64 - ours.to_bits() as i64).abs();
            assert!(ulp <= 2, "log({x:e}) = {ours:e} vs {theirs:e}");
            x *= 1.37;
        }
    }
}
