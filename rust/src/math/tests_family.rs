//! Tests of the math work's fixed functions (trig, inverse_trig, exp_log,
//! hyperbolic, power): every path gives the scalar definition's bits
//! (special values, subnormals, huge arguments included), the special
//! values are IEEE's/C99's, and a sampled accuracy check against binary64
//! references holds each function's bound (the exhaustive measurement is
//! tools/accuracy.rs, docs/numerics.md).

use super::tests::{inputs, same};
use super::*;
use crate::dispatch::available_paths;
use crate::kernels::elementwise::{map2_on, map_on, BinaryOp, UnaryOp};
use crate::simd::Token;

#[path = "../../../tools/reference.rs"]
mod reference_file;
use reference_file::reference as r;

type Case = (&'static str, UnaryOp, fn(f32) -> f32, fn(f32) -> f64, f64);

/// Every new unary function: op, scalar definition, reference, ulp bound.
const CASES: [Case; 19] = [
    ("sin", UnaryOp::Sin, sin, r::sin, 1.0),
    ("cos", UnaryOp::Cos, cos, r::cos, 1.0),
    ("tan", UnaryOp::Tan, tan, r::tan, 2.0),
    ("asin", UnaryOp::Asin, asin, r::asin, 1.0),
    ("acos", UnaryOp::Acos, acos, r::acos, 1.0),
    ("atan", UnaryOp::Atan, atan, r::atan, 1.0),
    ("sinh", UnaryOp::Sinh, sinh, r::sinh, 2.0),
    ("cosh", UnaryOp::Cosh, cosh, r::cosh, 2.0),
    ("asinh", UnaryOp::Asinh, asinh, r::asinh_, 2.0),
    ("acosh", UnaryOp::Acosh, acosh, r::acosh_, 2.0),
    ("atanh", UnaryOp::Atanh, atanh, r::atanh_, 2.0),
    ("expm1", UnaryOp::Expm1, expm1, r::expm1_, 1.0),
    ("log1p", UnaryOp::Log1p, log1p, r::log1p_, 1.0),
    ("exp2", UnaryOp::Exp2, exp2, r::exp2, 1.0),
    ("log2", UnaryOp::Log2, log2, r::log2, 1.0),
    ("log10", UnaryOp::Log10, log10, r::log10, 1.0),
    ("log1pexp", UnaryOp::Log1pExp, log1pexp, r::log1pexp, 2.0),
    ("erfc", UnaryOp::Erfc, erfc, r::erfc_, 2.0),
    ("erfinv", UnaryOp::Erfinv, erfinv, r::erfinv_, 2.0),
];

/// Large arguments for the trigonometric reduction: every power of two and
/// its neighbours up to 2^127, the Cody–Waite/Payne–Hanek boundary, and
/// values known to lie close to multiples of π/2.
fn huge() -> Vec<f32> {
    let mut v = vec![
        6399.999_5,
        6400.0,
        6400.000_5,
        6433.0,
        f32::MAX,
        -f32::MAX,
        1.0e38,
        16_367_173.0 * 2f32.powi(72),
        f32::from_bits(0x5922_aa80),
        f32::from_bits(0x4b9f_2b9b),
        f32::from_bits(0x7e1d_7e5b),
        f32::from_bits(0x6f1b_1bf6),
        2.0 * 10_680_707.0,
        3.355_443_2e7,
        1.0e10,
        1.0e20,
        1.0e30,
    ];
    for e in 0..128 {
        let p = 2f32.powi(e);
        for b in [p.to_bits() - 1, p.to_bits(), p.to_bits() + 1] {
            v.push(f32::from_bits(b));
            v.push(-f32::from_bits(b));
        }
    }
    // Multiples of π/2 rounded to binary32, and their neighbours.
    for k in 1..4096u32 {
        let m = (k as f64 * std::f64::consts::FRAC_PI_2) as f32;
        v.push(f32::from_bits(m.to_bits() - 1));
        v.push(m);
        v.push(f32::from_bits(m.to_bits() + 1));
    }
    v
}

fn all_inputs() -> Vec<f32> {
    let mut x = inputs(20_000);
    x.extend(huge());
    x
}

#[test]
fn every_path_gives_the_scalar_definition_bit_for_bit() {
    let x = all_inputs();
    for (name, op, f, _, _) in CASES {
        let want: Vec<f32> = x.iter().map(|&v| f(v)).collect();
        for (i, &v) in x.iter().enumerate() {
            assert!(same(op.apply(v), want[i]), "{name}: op and scalar function differ at {v:e}");
        }
        for path in available_paths() {
            let mut got = vec![0f32; x.len()];
            map_on(Token::new(path).unwrap(), op, false, &x, &mut got);
            for i in 0..x.len() {
                assert!(
                    same(want[i], got[i]),
                    "{name} on {path:?}: x = {:e} ({:#010x}): {:e} vs {:e}",
                    x[i],
                    x[i].to_bits(),
                    want[i],
                    got[i]
                );
            }
        }
    }
}

fn pairs() -> (Vec<f32>, Vec<f32>) {
    let x = inputs(3_000);
    let n = x.len();
    let mut a = Vec::new();
    let mut b = Vec::new();
    for i in 0..n {
        for j in [0usize, 1, 2, 3, 5, 8, 13, 21, 34, 55] {
            a.push(x[i]);
            b.push(x[(i * 31 + j * 7 + 1) % n]);
        }
    }
    for &s in &[0.0f32, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, 3.0, -3.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
        for &t in &[0.0f32, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, 3.0, -3.0, 2.5, -0.5, f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
            a.push(s);
            b.push(t);
        }
    }
    (a, b)
}

#[test]
fn binary_functions_give_the_same_bits_on_every_path() {
    let (a, b) = pairs();
    for op in [BinaryOp::Atan2, BinaryOp::Power] {
        let want: Vec<f32> = a.iter().zip(&b).map(|(&x, &y)| op.apply(x, y)).collect();
        for path in available_paths() {
            let mut got = vec![0f32; a.len()];
            map2_on(Token::new(path).unwrap(), op, false, &a, &b, &mut got);
            for i in 0..a.len() {
                assert!(same(want[i], got[i]), "{op:?} on {path:?} at ({:e}, {:e})", a[i], b[i]);
            }
        }
    }
}

#[test]
fn special_values_are_ieee_and_c99_ones() {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    let neg0 = 0x8000_0000u32;
    for f in [sin, tan, asin, atan, sinh, asinh, atanh, expm1, log1p] {
        assert_eq!(f(0.0).to_bits(), 0);
        assert_eq!(f(-0.0).to_bits(), neg0);
        assert!(f(nan).is_nan());
    }
    for f in [sin, cos, tan] {
        assert!(f(inf).is_nan() && f(-inf).is_nan());
    }
    assert_eq!(cos(0.0), 1.0);
    assert_eq!(cos(-0.0), 1.0);
    assert_eq!(atan(inf), std::f32::consts::FRAC_PI_2);
    assert_eq!(atan(-inf), -std::f32::consts::FRAC_PI_2);
    assert_eq!(asin(1.0), std::f32::consts::FRAC_PI_2);
    assert_eq!(asin(-1.0), -std::f32::consts::FRAC_PI_2);
    assert!(asin(1.000_000_1).is_nan() && acos(-1.000_000_1).is_nan());
    assert_eq!(acos(1.0).to_bits(), 0);
    assert_eq!(acos(-1.0), std::f32::consts::PI);
    assert_eq!(sinh(inf), inf);
    assert_eq!(sinh(-inf), -inf);
    assert_eq!(cosh(-inf), inf);
    assert_eq!(cosh(0.0), 1.0);
    assert_eq!(asinh(-inf), -inf);
    assert_eq!(acosh(1.0).to_bits(), 0);
    assert_eq!(acosh(inf), inf);
    assert!(acosh(0.5).is_nan());
    assert_eq!(atanh(1.0), inf);
    assert_eq!(atanh(-1.0), -inf);
    assert!(atanh(1.5).is_nan());
    assert_eq!(expm1(inf), inf);
    assert_eq!(expm1(-inf), -1.0);
    assert_eq!(log1p(-1.0), -inf);
    assert!(log1p(-2.0).is_nan());
    assert_eq!(log1p(inf), inf);
    assert_eq!(exp2(-inf).to_bits(), 0);
    assert_eq!(exp2(inf), inf);
    for e in -149i32..128 {
        // 2^e from its bits (powi underflows in its intermediate products).
        let p = if e >= -126 {
            f32::from_bits(((e + 127) as u32) << 23)
        } else {
            f32::from_bits(1u32 << (e + 149))
        };
        assert_eq!(exp2(e as f32), p, "exp2({e})");
        assert_eq!(log2(p), e as f32, "log2(2^{e})");
    }
    assert_eq!(log10(1000.0), 3.0);
    assert_eq!(log2(0.0), -inf);
    assert!(log10(-1.0).is_nan());
    assert_eq!(log1pexp(-inf).to_bits(), 0);
    assert_eq!(erfc(0.0), 1.0);
    assert_eq!(erfc(-0.0), 1.0);
    assert_eq!(erfc(inf).to_bits(), 0);
    assert_eq!(erfc(-inf), 2.0);
    assert_eq!(erfc(10.06).to_bits(), 0);
    assert!(erfc(9.9) > 0.0 && erfc(nan).is_nan());
    assert_eq!(erfinv(1.0), inf);
    assert_eq!(erfinv(-1.0), -inf);
    assert_eq!(erfinv(0.0).to_bits(), 0);
    assert_eq!(erfinv(-0.0).to_bits(), neg0);
    assert!(erfinv(1.000_000_1).is_nan() && erfinv(-inf).is_nan() && erfinv(nan).is_nan());
    assert_eq!(log1pexp(inf), inf);
    // atan2 (C99 Annex F).
    let pi = std::f32::consts::PI;
    let h = std::f32::consts::FRAC_PI_2;
    let q = std::f32::consts::FRAC_PI_4;
    let cases: [(f32, f32, f32); 14] = [
        (0.0, 0.0, 0.0),
        (-0.0, 0.0, -0.0),
        (0.0, -0.0, pi),
        (-0.0, -0.0, -pi),
        (0.0, -1.0, pi),
        (-0.0, -1.0, -pi),
        (1.0, 0.0, h),
        (-1.0, -0.0, -h),
        (1.0, inf, 0.0),
        (1.0, -inf, pi),
        (inf, 1.0, h),
        (inf, inf, q),
        (-inf, -inf, -3.0 * q),
        (1.0, 1.0, q),
    ];
    for (y, x, want) in cases {
        let got = atan2(y, x);
        assert_eq!(got.to_bits(), want.to_bits(), "atan2({y}, {x}) = {got}");
    }
    assert!(atan2(nan, 1.0).is_nan() && atan2(1.0, nan).is_nan());
    // pow with a per-element exponent: C99's special cases and the scalar
    // exponent's values.
    for p in [1.5f32, -2.5, 3.0, -3.0, 4.0, 0.5, -0.5, 2.0, 0.0, 1.0, -1.0, inf, -inf, nan] {
        for x in [0.0f32, -0.0, inf, -inf, nan, 1.0, -1.0, 2.0, -2.0, 0.25, -0.25] {
            let want = (x as f64).powf(p as f64);
            let got = pow_elementwise(x, p);
            assert!(
                same(got, want as f32) || r::err_ulp32(got, want) <= 1.0,
                "pow({x}, {p}) = {got:e} vs {want:e}"
            );
        }
    }
}

#[test]
fn accuracy_on_a_sampled_subset() {
    let x = all_inputs();
    let mut x2 = inputs(1_000_000);
    x2.extend(x);
    for (name, _, f, rf, bound) in CASES {
        let mut worst = (0.0f64, 0.0f32);
        for &v in &x2 {
            let e = r::err_ulp32(f(v), rf(v));
            if e > worst.0 {
                worst = (e, v);
            }
        }
        assert!(worst.0 <= bound, "{name}: {} ulp at {:e} ({:#010x})", worst.0, worst.1, worst.1.to_bits());
    }
    // atan2 on its whole domain (tests_binary.rs adds the subnormal
    // sweep); pow where its bound holds: outside |p·ln x| ≤ 1 its error is
    // known and documented (docs/numerics.md, "Not met": its logarithm has
    // binary32 accuracy, which p amplifies).
    let (a, b) = pairs();
    let all = |_: f32, _: f32| true;
    let pow_ok = |x: f32, p: f32| ((p as f64) * (x.abs() as f64).ln()).abs() <= 1.0 || !x.is_finite() || !p.is_finite() || x == 0.0;
    let checks: [(&str, fn(f32, f32) -> f32, fn(f32, f32) -> f64, &dyn Fn(f32, f32) -> bool); 2] =
        [("atan2", atan2, r::atan2, &all), ("pow", pow_elementwise, r::pow2, &pow_ok)];
    for (name, f, rf, keep) in checks {
        let mut worst = (0.0f64, 0.0f32, 0.0f32);
        for (&y, &x) in a.iter().zip(&b) {
            if !keep(y, x) {
                continue;
            }
            let e = r::err_ulp32(f(y, x), rf(y, x));
            if e > worst.0 {
                worst = (e, y, x);
            }
        }
        assert!(worst.0 <= 2.0, "{name}: {} ulp at ({:e}, {:e})", worst.0, worst.1, worst.2);
    }
}
