//! DetMath: double-precision `log` (and later `exp`) that give the same bits
//! on every platform, because they use only IEEE binary64 + − × ÷ and bit
//! manipulation in one fixed order (no fma, no libm).
//!
//! Used by the CTC recursions and by the normal random generator.

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
