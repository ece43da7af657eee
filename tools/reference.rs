// Reference values and error measures for the accuracy checks: included by
// tools/accuracy.rs (the exhaustive tool) and by rust/src/math/tests.rs (the
// fast subset in `cargo test`). Not part of the library: it calls the
// platform's binary64 libm, which the fixed functions never do.
//
// f32 functions are checked against binary64 references. The platform's
// exp, log, tanh, erf and erfc (glibc) are within 1 ulp of binary64, i.e.
// a relative error below 2^-52, which is 2^-28 of an f32 ulp (2^-24 relative
// at least): far below the half-ulp resolution the table reports, so the
// measured f32 errors are exact to about 1e-8 ulp. The composed references
// (sigmoid, gelu, the slopes) add a few binary64 roundings, still below
// 2^-45 relative where the measure matters. A result is counted as
// "correctly rounded" when it equals the reference rounded to f32; when the
// reference lies within 2^-20 f32-ulp of a rounding boundary the case is
// ambiguous and is counted separately instead.
//
// DetMath (binary64) is checked against double-double references (about
// 2^-100 relative) built here with fma-based error-free transformations.

#[allow(dead_code)]
pub mod reference {
    extern "C" {
        fn erf(x: f64) -> f64;
        fn erfc(x: f64) -> f64;
        fn asinh(x: f64) -> f64;
        fn acosh(x: f64) -> f64;
        fn atanh(x: f64) -> f64;
        fn expm1(x: f64) -> f64;
        fn log1p(x: f64) -> f64;
    }

    // The math work's functions: glibc's binary64 functions (within about
    // 1 ulp of binary64, i.e. ~2^-28 of an f32 ulp), or Rust's f64 methods
    // where those call the same libm.
    pub fn sin(x: f32) -> f64 {
        (x as f64).sin()
    }
    pub fn cos(x: f32) -> f64 {
        (x as f64).cos()
    }
    pub fn tan(x: f32) -> f64 {
        (x as f64).tan()
    }
    pub fn asin(x: f32) -> f64 {
        (x as f64).asin()
    }
    pub fn acos(x: f32) -> f64 {
        (x as f64).acos()
    }
    pub fn atan(x: f32) -> f64 {
        (x as f64).atan()
    }
    pub fn sinh(x: f32) -> f64 {
        (x as f64).sinh()
    }
    pub fn cosh(x: f32) -> f64 {
        (x as f64).cosh()
    }
    pub fn asinh_(x: f32) -> f64 {
        // SAFETY: a pure C function of a double.
        unsafe { asinh(x as f64) }
    }
    pub fn acosh_(x: f32) -> f64 {
        // SAFETY: a pure C function of a double.
        unsafe { acosh(x as f64) }
    }
    pub fn atanh_(x: f32) -> f64 {
        // SAFETY: a pure C function of a double.
        unsafe { atanh(x as f64) }
    }
    pub fn expm1_(x: f32) -> f64 {
        // SAFETY: a pure C function of a double.
        unsafe { expm1(x as f64) }
    }
    pub fn log1p_(x: f32) -> f64 {
        // SAFETY: a pure C function of a double.
        unsafe { log1p(x as f64) }
    }
    pub fn exp2(x: f32) -> f64 {
        (x as f64).exp2()
    }
    pub fn log2(x: f32) -> f64 {
        (x as f64).log2()
    }
    pub fn log10(x: f32) -> f64 {
        (x as f64).log10()
    }
    /// ln(1 + e^u).
    pub fn log1pexp(x: f32) -> f64 {
        let u = x as f64;
        if u > 30.0 {
            u + (-u).exp()
        } else {
            // SAFETY: a pure C function of a double.
            unsafe { log1p(u.exp()) }
        }
    }
    pub fn atan2(y: f32, x: f32) -> f64 {
        (y as f64).atan2(x as f64)
    }
    /// x^p in binary64: exact for |p·log2|x|| small enough that binary64's
    /// pow rounding is far below an f32 ulp.
    pub fn pow2(x: f32, p: f32) -> f64 {
        (x as f64).powf(p as f64)
    }

    pub fn exp(x: f32) -> f64 {
        (x as f64).exp()
    }
    pub fn log(x: f32) -> f64 {
        (x as f64).ln()
    }
    pub fn tanh(x: f32) -> f64 {
        (x as f64).tanh()
    }
    pub fn sigmoid(x: f32) -> f64 {
        let x = x as f64;
        if x >= 0.0 {
            1.0 / (1.0 + (-x).exp())
        } else {
            let e = x.exp();
            e / (1.0 + e)
        }
    }
    pub fn erfc_(x: f32) -> f64 {
        // SAFETY: erfc is a pure C function of a double.
        unsafe { erfc(x as f64) }
    }
    /// erfinv in binary64: Giles' single-precision approximation (2010)
    /// as the start, then four Newton steps on libm's erf (|x| ≤ 1/2) or
    /// erfc (beyond, against 1 − |x|, exact in binary64), each doubling
    /// the correct digits.
    pub fn erfinv_(x: f32) -> f64 {
        let a = (x as f64).abs();
        if x.is_nan() || a > 1.0 {
            return f64::NAN;
        }
        if a == 1.0 {
            return f64::INFINITY.copysign(x as f64);
        }
        if a == 0.0 {
            return x as f64;
        }
        let w0 = -((1.0 - a) * (1.0 + a)).ln();
        let p = if w0 < 5.0 {
            let w = w0 - 2.5;
            [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
             -0.00125372503, -0.00417768164, 0.246640727, 1.50140941]
                .iter()
                .fold(0.0, |p, &c| p * w + c)
        } else {
            let w = w0.sqrt() - 3.0;
            [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
             -0.0076224613, 0.00943887047, 1.00167406, 2.83297682]
                .iter()
                .fold(0.0, |p, &c| p * w + c)
        };
        let mut y = p * a;
        let k = 2.0 / std::f64::consts::PI.sqrt();
        for _ in 0..4 {
            let slope = k * (-y * y).exp();
            // SAFETY: erf and erfc are pure C functions of a double.
            let d = if a <= 0.5 {
                (unsafe { erf(y) }) - a
            } else {
                (1.0 - a) - (unsafe { erfc(y) })
            };
            y -= d / slope;
        }
        y.copysign(x as f64)
    }
    /// x·σ(x) in binary64.
    pub fn silu(x: f32) -> f64 {
        (x as f64) * sigmoid(x)
    }
    /// x·tanh(ln(1 + e^x)) in binary64.
    pub fn mish(x: f32) -> f64 {
        (x as f64) * log1pexp(x).tanh()
    }
    pub fn erf_(x: f32) -> f64 {
        // SAFETY: erf is a pure C function of a double.
        unsafe { erf(x as f64) }
    }
    /// Φ(x) = erfc(−x/√2)/2, accurate in relative terms in the lower tail.
    pub fn phi(x: f64) -> f64 {
        // SAFETY: erfc is a pure C function of a double.
        0.5 * unsafe { erfc(-x * std::f64::consts::FRAC_1_SQRT_2) }
    }
    pub fn gelu(x: f32) -> f64 {
        let x = x as f64;
        if x.is_infinite() {
            return if x > 0.0 { x } else { -0.0 };
        }
        x * phi(x)
    }
    pub fn gelu_slope(x: f32) -> f64 {
        let x = x as f64;
        if x.is_infinite() {
            return if x > 0.0 { 1.0 } else { 0.0 };
        }
        phi(x) + x * (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
    }
    pub fn erf_slope(x: f32) -> f64 {
        let x = x as f64;
        2.0 / std::f64::consts::PI.sqrt() * (-x * x).exp()
    }

    /// The f32 ulp at the magnitude of `r` (2^-149 in the subnormal range,
    /// 2^104 above f32::MAX), read from the exponent bits.
    pub fn ulp32(r: f64) -> f64 {
        let e = ((r.to_bits() >> 52) & 0x7ff) as i64 - 1023;
        let e = e.clamp(-126, 127) - 23;
        f64::from_bits(((e + 1023) as u64) << 52)
    }

    /// Error of `y` in ulps of the reference `r` (infinite for a wrong
    /// NaN/inf/finite class).
    pub fn err_ulp32(y: f32, r: f64) -> f64 {
        if r.is_nan() || y.is_nan() {
            return if r.is_nan() && y.is_nan() {
                0.0
            } else {
                f64::INFINITY
            };
        }
        let rr = r as f32; // the correctly rounded value (up to ambiguity)
        if y.is_infinite() || rr.is_infinite() || r.is_infinite() {
            return if y == rr || (y as f64) == r {
                0.0
            } else {
                f64::INFINITY
            };
        }
        ((y as f64) - r).abs() / ulp32(r)
    }

    /// Whether `r` is within 2^-20 ulp of a midpoint between two floats, where
    /// a binary64 reference cannot decide the correct rounding.
    pub fn ambiguous32(r: f64) -> bool {
        if !r.is_finite() {
            return false;
        }
        let d = (r - (r as f32) as f64).abs() / ulp32(r);
        (d - 0.5).abs() < 9.5367431640625e-7
    }

    // ----- double-double (for DetMath) -----

    #[derive(Clone, Copy, Debug)]
    pub struct DD(pub f64, pub f64);

    fn two_sum(a: f64, b: f64) -> DD {
        let s = a + b;
        let bb = s - a;
        DD(s, (a - (s - bb)) + (b - bb))
    }
    fn two_prod(a: f64, b: f64) -> DD {
        let p = a * b;
        DD(p, a.mul_add(b, -p))
    }
    fn add(a: DD, b: DD) -> DD {
        let s = two_sum(a.0, b.0);
        let t = two_sum(a.1, b.1);
        let s = two_sum(s.0, s.1 + t.0);
        two_sum(s.0, s.1 + t.1)
    }
    fn mul(a: DD, b: DD) -> DD {
        let p = two_prod(a.0, b.0);
        two_sum(p.0, p.1 + (a.0 * b.1 + a.1 * b.0))
    }
    fn div_int(a: DD, k: f64) -> DD {
        let q1 = a.0 / k;
        let r = (-q1).mul_add(k, a.0) + a.1;
        two_sum(q1, r / k)
    }

    /// ln 2 to about 160 bits, as three doubles.
    const LN2: [f64; 3] = [
        std::f64::consts::LN_2,
        2.319046813846299558e-17,
        5.707708438416212066e-34,
    ];

    /// e^x as (m, k) with e^x = 2^k·(m.0 + m.1), m a double-double in
    /// [0.7, 1.42] (relative error about 2^-100), for |x| ≤ 746.
    pub fn exp_dd_scaled(x: f64) -> (DD, i32) {
        let k = (x / LN2[0]).round();
        // r = x − k·ln2, with k·LN2[0] exact as a double-double.
        let p = two_prod(k, LN2[0]);
        let r = add(DD(x, 0.0), DD(-p.0, -p.1));
        let r = add(r, DD(-k * LN2[1], -k * LN2[2]));
        // Halve 8 times, Taylor to degree 12 (|r/256| < 0.0014), square back.
        let r = DD(r.0 / 256.0, r.1 / 256.0);
        let mut acc = DD(1.0, 0.0);
        for n in (1..=12).rev() {
            acc = add(DD(1.0, 0.0), div_int(mul(r, acc), n as f64));
        }
        for _ in 0..8 {
            acc = mul(acc, acc);
        }
        (acc, k as i32)
    }

    /// e^x as a double-double (normal results; see exp_dd_scaled).
    pub fn exp_dd(x: f64) -> DD {
        let (m, k) = exp_dd_scaled(x);
        let k1 = k / 2;
        let s = 2f64.powi(k1) * 2f64.powi(k - k1);
        DD(m.0 * s, m.1 * s)
    }

    /// Error of `y` in f64 ulps of 2^k·m (exact also for subnormal y:
    /// compared after scaling y by 2^-k, which is exact).
    pub fn err_ulp64_scaled(y: f64, m: DD, k: i32) -> f64 {
        if y.is_nan() {
            return f64::INFINITY;
        }
        if y.is_infinite() {
            // Correct iff the true value is at least MAX + ulp/2.
            return if (k as f64) + m.0.log2() >= 1024.0 - 2f64.powi(-54) {
                0.0
            } else {
                f64::INFINITY
            };
        }
        let ys = y * 2f64.powi(-(k / 2)) * 2f64.powi(-(k - k / 2));
        let e = m.0.log2().floor() as i32 + k; // exponent of the true value
        let ulp_scaled = 2f64.powi(e.max(-1022) - 52 - k);
        ((ys - m.0) - m.1).abs() / ulp_scaled
    }

    /// ln x as a double-double for finite x > 0: one Newton step
    /// y + (x·e^(−y) − 1) from the platform log (doubling its 2^-52).
    pub fn log_dd(x: f64) -> DD {
        // Scale subnormals up (exactly) so that e^(−y) stays in range.
        let (x, shift) = if x < f64::MIN_POSITIVE {
            (x * 2f64.powi(64), -64.0)
        } else {
            (x, 0.0)
        };
        let y = x.ln();
        let e = exp_dd(-y);
        let t = add(mul(DD(x, 0.0), e), DD(-1.0, 0.0));
        let r = add(DD(y, 0.0), t);
        if shift != 0.0 {
            add(r, mul(DD(shift, 0.0), DD(LN2[0], LN2[1])))
        } else {
            r
        }
    }

    /// The f64 ulp at the magnitude of `r.0`.
    pub fn ulp64(r: f64) -> f64 {
        let a = r.abs();
        if a < f64::MIN_POSITIVE {
            return 2f64.powi(-1074);
        }
        let b = a.to_bits() & 0x7ff0_0000_0000_0000;
        f64::from_bits(b) * 2f64.powi(-52)
    }

    /// Error of `y` in f64 ulps of the double-double reference.
    pub fn err_ulp64(y: f64, r: DD) -> f64 {
        if y.is_nan() || r.0.is_nan() {
            return if y.is_nan() && r.0.is_nan() {
                0.0
            } else {
                f64::INFINITY
            };
        }
        if y.is_infinite() || r.0.is_infinite() {
            return if y == r.0 { 0.0 } else { f64::INFINITY };
        }
        ((y - r.0) - r.1).abs() / ulp64(r.0)
    }
}
