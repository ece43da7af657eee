//! The gamma family in binary64 for binary32 arguments: `lgamma`,
//! `digamma`, `trigamma` and `polygamma` (through the Hurwitz zeta
//! function), rounded once to binary32 by the caller.
//!
//! Built from IEEE binary64 + − × ÷, `floor`/`round`-style integer steps,
//! [`detmath::log`] (fdlibm's log, < 1 ulp) and the π-scaled sine and
//! cosine below, in one fixed order: the same bits on every platform
//! (no libm, no fma). The binary64 results carry errors of a few 1e-16
//! relative (absolute near the zeros of lgamma at 1 and 2, handled by series
//! there, and near digamma's zero at 1.4616…), far below a binary32 ulp;
//! docs/numerics.md gives the measured accuracy after rounding to binary32
//! (tests/test_gamma_family.py against mpmath).
//!
//! Methods:
//! * `lgamma`: for x < 0 the reflection ln(π/|sin πx|) − lgamma(1 − x);
//!   near 1 and 2 the Taylor series of lgamma(1 + t) = −γt + Σ (−1)^k ζ(k)/k
//!   t^k (k = 2..27, |t| ≤ 0.2: the first omitted term is below 1e-20);
//!   elsewhere the recurrence up to z ≥ 10 (the product of the shifts in
//!   binary64, then one log) and Stirling's series to the 1/z¹³ term (the
//!   first omitted term is below 3e-17 at z = 10).
//! * `digamma`: for x < 0 the reflection ψ(1 − x) − π/tan(πr) with r the
//!   fractional part (as torch); ψ(x) = ψ(x + 1) − 1/x up to z ≥ 10, then
//!   ln z − 1/(2z) − Σ B₂ₖ/(2k z²ᵏ) to the z⁻¹⁴ term.
//! * `trigamma`: for x < ½ the reflection π²/sin²(πx) − ψ′(1 − x); ψ′(x) =
//!   ψ′(x + 1) + 1/x² up to z ≥ 10, then 1/z + 1/(2z²) + Σ B₂ₖ/z²ᵏ⁺¹ to the
//!   z⁻¹⁵ term.
//! * `polygamma(n ≥ 2)`: (−1)ⁿ⁺¹·n!·ζ(n + 1, x), ζ by torch's (Cephes')
//!   Euler–Maclaurin summation, with integer powers by repeated squaring.

use super::detmath;

const PI: f64 = std::f64::consts::PI;
const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// (−1)^k ζ(k)/k for k = 2..27 (mpmath, 40 digits, rounded to binary64).
const LGAMMA1_SERIES: [f64; 26] = [
    0.822_467_033_424_113_2,
    -0.400_685_634_386_531_43,
    0.270_580_808_427_784_54,
    -0.207_385_551_028_673_98,
    0.169_557_176_997_408_2,
    -0.144_049_896_768_846_1,
    0.125_509_669_524_743_04,
    -0.111_334_265_869_564_69,
    0.100_099_457_512_781_8,
    -0.090_954_017_145_829_04,
    0.083_353_840_546_109,
    -0.076_932_516_411_352_2,
    0.071_432_946_295_361_33,
    -0.066_668_705_882_420_46,
    0.062_500_955_141_213_04,
    -0.058_823_978_658_684_585,
    0.055_555_767_627_403_614,
    -0.052_631_679_379_616_66,
    0.050_000_047_698_101_69,
    -0.047_619_070_330_142_226,
    0.045_454_556_293_204_67,
    -0.043_478_266_053_040_26,
    0.041_666_669_150_341_21,
    -0.040_000_001_192_140_14,
    0.038_461_539_034_675_18,
    -0.037_037_037_312_989_324,
];

/// sin(πr) for |r| ≤ ½ (Taylor series in (πr)², 12 terms: the first
/// omitted term is below 2e-18 at |πr| = π/2).
fn sin_pi_reduced(r: f64) -> f64 {
    let x = PI * r;
    let z = x * x;
    // x·(1 − z/(2·3)·(1 − z/(4·5)·(1 − …))), Horner from the innermost term.
    let mut acc = 1.0;
    for k in (1..12).rev() {
        acc = 1.0 - z / ((2 * k) * (2 * k + 1)) as f64 * acc;
    }
    x * acc
}

/// cos(πr) for |r| ≤ ½ (Taylor series in (πr)², 12 terms).
fn cos_pi_reduced(r: f64) -> f64 {
    let x = PI * r;
    let z = x * x;
    let mut acc = 1.0;
    for k in (1..13).rev() {
        acc = 1.0 - z / ((2 * k - 1) * (2 * k)) as f64 * acc;
    }
    acc
}

/// x − nearest integer (exact) and the parity of that integer.
fn reduce_half(x: f64) -> (f64, bool) {
    let n = (x + 0.5).floor(); // x + ½ is exact for a binary32 x
    let odd = (n * 0.5).floor() * 2.0 != n;
    (x - n, odd)
}

/// sin(πx) with exact argument reduction.
pub fn sin_pi(x: f64) -> f64 {
    let (r, odd) = reduce_half(x);
    let s = sin_pi_reduced(r);
    if odd {
        -s
    } else {
        s
    }
}

/// cos(πx) with exact argument reduction.
pub fn cos_pi(x: f64) -> f64 {
    let (r, odd) = reduce_half(x);
    let c = cos_pi_reduced(r);
    if odd {
        -c
    } else {
        c
    }
}

fn is_integer(x: f64) -> bool {
    x.floor() == x
}

/// lgamma(1 + t) for |t| ≤ 0.2 by its Taylor series.
fn lgamma1p_series(t: f64) -> f64 {
    let mut acc = 0.0;
    for &c in LGAMMA1_SERIES.iter().rev() {
        acc = acc * t + c;
    }
    (acc * t - EULER_GAMMA) * t
}

/// Stirling's series for lgamma(z), z ≥ 10.
fn lgamma_stirling(z: f64) -> f64 {
    let w = 1.0 / z;
    let w2 = w * w;
    // 1/12 − w²/360 + w⁴/1260 − w⁶/1680 + w⁸/1188 − 691w¹⁰/360360 + w¹²/156.
    let series = w
        * (1.0 / 12.0
            + w2 * (-1.0 / 360.0
                + w2 * (1.0 / 1260.0
                    + w2 * (-1.0 / 1680.0
                        + w2 * (1.0 / 1188.0 + w2 * (-691.0 / 360_360.0 + w2 / 156.0))))));
    (z - 0.5) * detmath::log(z) - z + HALF_LN_2PI + series
}

/// ln|Γ(x)| (glibc's and torch's conventions: +inf at 0, at the negative
/// integers and at ±inf; NaN for NaN).
pub fn lgamma(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.is_infinite() {
        return f64::INFINITY;
    }
    if x <= 0.0 {
        if is_integer(x) {
            return f64::INFINITY;
        }
        let s = sin_pi(x).abs();
        return detmath::log(PI / s) - lgamma(1.0 - x);
    }
    if (x - 1.0).abs() <= 0.2 {
        return lgamma1p_series(x - 1.0);
    }
    if (x - 2.0).abs() <= 0.2 {
        let t = x - 2.0;
        return detmath::log(1.0 + t) + lgamma1p_series(t);
    }
    if x >= 10.0 {
        return lgamma_stirling(x);
    }
    let (mut z, mut prod) = (x, 1.0);
    while z < 10.0 {
        prod *= z;
        z += 1.0;
    }
    lgamma_stirling(z) - detmath::log(prod)
}

/// ψ(x) = Γ′(x)/Γ(x) (torch's conventions: ∓inf at ±0, NaN at the negative
/// integers and at −inf, +inf at +inf).
pub fn digamma(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        };
    }
    if x == f64::INFINITY {
        return x;
    }
    if x < 0.0 {
        if is_integer(x) {
            return f64::NAN;
        }
        let r = x - x.trunc();
        return digamma(1.0 - x) - PI * cos_pi(r) / sin_pi(r);
    }
    let (mut z, mut acc) = (x, 0.0);
    while z < 10.0 {
        acc -= 1.0 / z;
        z += 1.0;
    }
    let w = 1.0 / (z * z);
    // B₂ₖ/(2k): 1/12, −1/120, 1/252, −1/240, 1/132, −691/32760, 1/12.
    let tail = w
        * (1.0 / 12.0
            + w * (-1.0 / 120.0
                + w * (1.0 / 252.0
                    + w * (-1.0 / 240.0
                        + w * (1.0 / 132.0 + w * (-691.0 / 32_760.0 + w / 12.0))))));
    acc + detmath::log(z) - 0.5 / z - tail
}

/// ψ′(x) (+inf at 0 and the negative integers, as torch's; 0 at +inf, NaN
/// at −inf).
pub fn trigamma(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x == f64::INFINITY {
        return 0.0;
    }
    if x == f64::NEG_INFINITY {
        return f64::NAN;
    }
    if x < 0.5 {
        if is_integer(x) {
            return f64::INFINITY;
        }
        let s = sin_pi(x);
        return PI * PI / (s * s) - trigamma(1.0 - x);
    }
    let (mut z, mut acc) = (x, 0.0);
    while z < 10.0 {
        acc += 1.0 / (z * z);
        z += 1.0;
    }
    let w = 1.0 / z;
    let w2 = w * w;
    // 1/z + 1/(2z²) + Σ B₂ₖ/z²ᵏ⁺¹: 1/6, −1/30, 1/42, −1/30, 5/66, −691/2730, 7/6.
    let tail = w
        + 0.5 * w2
        + w * w2
            * (1.0 / 6.0
                + w2 * (-1.0 / 30.0
                    + w2 * (1.0 / 42.0
                        + w2 * (-1.0 / 30.0
                            + w2 * (5.0 / 66.0 + w2 * (-691.0 / 2730.0 + w2 * 7.0 / 6.0))))));
    acc + tail
}

/// a^−s for a ≠ 0 and a positive integer s, by repeated squaring of 1/a.
fn pow_neg_int(a: f64, s: u32) -> f64 {
    let mut base = 1.0 / a;
    let mut e = s;
    let mut r = 1.0;
    while e > 0 {
        if e & 1 == 1 {
            r *= base;
        }
        base *= base;
        e >>= 1;
    }
    r
}

/// The Hurwitz zeta function ζ(s, q) for an integer s ≥ 2, by torch's
/// (Cephes') Euler–Maclaurin summation in binary64.
pub fn hurwitz_zeta_int(s: u32, q: f64) -> f64 {
    const MACHEP: f64 = 1.110_223_024_625_156_5e-16;
    const A: [f64; 12] = [
        12.0,
        -720.0,
        30240.0,
        -1_209_600.0,
        47_900_160.0,
        -1.892_437_580_318_379_2e9,
        7.472_424_96e10,
        -2.950_130_727_918_164_2e12,
        1.164_678_281_435_006_7e14,
        -4.597_978_722_407_472_6e15,
        1.815_210_540_194_354_7e17,
        -7.166_165_256_175_667e18,
    ];
    if q.is_nan() {
        return q;
    }
    if q <= 0.0 && is_integer(q) {
        return f64::INFINITY;
    }
    if q == f64::INFINITY {
        // torch's summation meets 0·∞ here and returns NaN (the limit is 0).
        return f64::NAN;
    }
    let x = s as f64;
    let mut sum = pow_neg_int(q, s);
    let mut a = q;
    let mut i = 0;
    let mut b = 0.0;
    while i < 9 || a <= 9.0 {
        i += 1;
        a += 1.0;
        b = pow_neg_int(a, s);
        sum += b;
        if -MACHEP * sum < b && b < MACHEP * sum {
            return sum;
        }
    }
    let w = a;
    sum += b * w / (x - 1.0);
    sum -= 0.5 * b;
    let mut fac = 1.0;
    let mut k = 0.0;
    for &ai in A.iter() {
        fac *= x + k;
        b /= w;
        let t = fac * b / ai;
        sum += t;
        if (t / sum).abs() < MACHEP {
            return sum;
        }
        k += 1.0;
        fac *= x + k;
        b /= w;
        k += 1.0;
    }
    sum
}

/// ψ⁽ⁿ⁾(x) for n ≥ 0.
pub fn polygamma(n: u32, x: f64) -> f64 {
    match n {
        0 => digamma(x),
        1 => trigamma(x),
        _ => {
            let mut fact = 1.0;
            for k in 2..=n {
                fact *= k as f64;
            }
            let sign = if n % 2 == 1 { 1.0 } else { -1.0 };
            sign * fact * hurwitz_zeta_int(n + 1, x)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // Γ(½) = √π, Γ(10) = 9!, Γ(3.5) = 15√π/8, ψ(1) = −γ, ψ′(1) = π²/6,
        // ψ″(1) = −2ζ(3). The binary64 results may be a few 1e-15 off
        // (the shifted paths cancel); a binary32 ulp is 6e-8 relative.
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-13 * b.abs().max(1.0);
        assert!(close(lgamma(0.5), 0.572_364_942_924_700_1));
        assert_eq!(lgamma(1.0), 0.0);
        assert_eq!(lgamma(2.0), 0.0);
        assert!(close(lgamma(10.0), 12.801_827_480_081_469));
        assert!(close(lgamma(3.5), 1.200_973_602_347_074_3));
        assert!(close(lgamma(-0.5), 1.265_512_123_484_645_4));
        assert!(close(digamma(1.0), -EULER_GAMMA));
        assert!(close(digamma(-0.5), 0.036_489_973_978_576_52));
        assert!(close(trigamma(1.0), PI * PI / 6.0));
        assert!(close(trigamma(-0.5), 8.934_802_200_544_704));
        assert!(close(polygamma(2, 1.0), -2.0 * 1.202_056_903_159_594_2));
        assert!(close(polygamma(3, 0.5), PI.powi(4)));
        assert_eq!(lgamma(-3.0), f64::INFINITY);
        assert!(digamma(-2.0).is_nan());
        assert_eq!(digamma(0.0), f64::NEG_INFINITY);
        assert_eq!(digamma(-0.0), f64::INFINITY);
    }

    #[test]
    fn sin_and_cos_of_pi_x() {
        for &(x, s, c) in &[
            (0.5, 1.0, 0.0),
            (1.0, 0.0, -1.0),
            (-0.25, -0.5f64.sqrt(), 0.5f64.sqrt()),
            (2.5, 1.0, 0.0),
        ] {
            assert!((sin_pi(x) - s).abs() < 4e-16, "sin_pi({x})");
            assert!((cos_pi(x) - c).abs() < 4e-16, "cos_pi({x})");
        }
    }
}
