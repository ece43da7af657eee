//! Tests of the fixed f32 functions: the paths agree bit for bit, the special
//! values are IEEE's/libm's, and a fast subset of the exhaustive accuracy
//! check (tools/accuracy.rs) holds the contract's bounds.

use super::*;
use crate::dispatch::available_paths;
use crate::kernels::elementwise::{map_on, UnaryOp};
use crate::simd::Token;

#[path = "../../../tools/reference.rs"]
mod reference_file;
use reference_file::reference as r;

/// Special values, every exponent boundary (both signs, the powers of two and
/// their neighbours), and pseudo-random bit patterns.
pub(super) fn inputs(random: usize) -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7fc0_1234),
        f32::from_bits(0x7f80_0001),
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::from_bits(0x007f_ffff),
        88.72283,
        88.72284,
        89.0,
        -87.33654,
        -87.33655,
        -103.97208,
        -103.97209,
        -104.0,
        0.625,
        0.875,
        1.25,
        -0.25,
        3.92,
        9.01,
        10.0,
        -10.0,
        -13.2,
        16.0,
        -16.0,
    ];
    for e in 0u32..256 {
        for s in [0u32, 0x8000_0000] {
            let b = (e << 23) | s;
            v.push(f32::from_bits(b));
            v.push(f32::from_bits(b | 1));
            if e > 0 {
                v.push(f32::from_bits(b - 1));
            }
        }
    }
    let mut x = 0x1234_5678_9abc_def0u64;
    for _ in 0..random {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        v.push(f32::from_bits(
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32,
        ));
    }
    v
}

const OPS: [UnaryOp; 17] = [
    UnaryOp::Exp,
    UnaryOp::Log,
    UnaryOp::Tanh,
    UnaryOp::Sigmoid,
    UnaryOp::Erf,
    UnaryOp::Gelu,
    UnaryOp::GeluSlope,
    UnaryOp::ErfSlope,
    UnaryOp::Pow(0.5),
    UnaryOp::Pow(-0.5),
    UnaryOp::Pow(1.5),
    UnaryOp::Pow(-2.5),
    UnaryOp::Pow(3.0),
    UnaryOp::Pow(7.0),
    UnaryOp::Pow(-3.0),
    UnaryOp::Pow(4.0),
    UnaryOp::Pow(0.3333),
];

pub(super) fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn every_path_gives_the_scalar_definition_bit_for_bit() {
    let x = inputs(20_000);
    for op in OPS {
        let want: Vec<f32> = x.iter().map(|&v| op.apply(v)).collect();
        for path in available_paths() {
            let mut got = vec![0f32; x.len()];
            map_on(Token::new(path).unwrap(), op, false, &x, &mut got);
            for i in 0..x.len() {
                assert!(
                    same(want[i], got[i]),
                    "{op:?} on {path:?}: x = {:e} ({:#010x}): {:e} vs {:e}",
                    x[i],
                    x[i].to_bits(),
                    want[i],
                    got[i]
                );
            }
        }
    }
}

#[test]
fn constants_have_the_documented_bits() {
    assert_eq!(std::f32::consts::LOG2_E.to_bits(), 0x3fb8_aa3b);
    assert_eq!(std::f32::consts::FRAC_2_SQRT_PI.to_bits(), 0x3f90_6ebb);
    assert_eq!(std::f64::consts::LOG2_E.to_bits(), 0x3ff7_1547_652b_82fe);
}

#[test]
fn special_values_are_ieee_and_libm_ones() {
    let inf = f32::INFINITY;
    assert_eq!(exp(f32::NEG_INFINITY).to_bits(), 0);
    assert_eq!(exp(inf), inf);
    assert!(exp(f32::NAN).is_nan());
    assert_eq!(exp(0.0), 1.0);
    assert_eq!(exp(-0.0), 1.0);
    assert_eq!(exp(89.0), inf);
    assert_eq!(exp(-104.0).to_bits(), 0);
    assert_eq!(log(0.0), f32::NEG_INFINITY);
    assert_eq!(log(-0.0), f32::NEG_INFINITY);
    assert!(log(-1.0).is_nan());
    assert!(log(-f32::from_bits(1)).is_nan());
    assert!(log(f32::NEG_INFINITY).is_nan());
    assert_eq!(log(inf), inf);
    assert!(log(f32::NAN).is_nan());
    assert_eq!(log(1.0).to_bits(), 0);
    assert_eq!(tanh(inf), 1.0);
    assert_eq!(tanh(-inf), -1.0);
    assert_eq!(tanh(0.0).to_bits(), 0);
    assert_eq!(tanh(-0.0).to_bits(), 0x8000_0000);
    assert!(tanh(f32::NAN).is_nan());
    assert_eq!(sigmoid(inf), 1.0);
    assert_eq!(sigmoid(-inf).to_bits(), 0);
    assert_eq!(sigmoid(0.0), 0.5);
    assert_eq!(sigmoid(-0.0), 0.5);
    assert!(sigmoid(f32::NAN).is_nan());
    assert_eq!(erf(inf), 1.0);
    assert_eq!(erf(-inf), -1.0);
    assert_eq!(erf(-0.0).to_bits(), 0x8000_0000);
    assert!(erf(f32::NAN).is_nan());
    assert_eq!(gelu(inf), inf);
    assert_eq!(gelu(-inf), 0.0);
    assert_eq!(gelu(0.0).to_bits(), 0);
    assert_eq!(gelu(-0.0).to_bits(), 0x8000_0000);
    assert!(gelu(f32::NAN).is_nan());
    // pow follows C99's pow on the special cases, except torch's sqrt/rsqrt
    // for the exponents ±0.5.
    for p in [1.5f32, -2.5, 3.0, -3.0, 4.0, 0.5, -0.5, 2.0] {
        for x in [
            0.0f32,
            -0.0,
            inf,
            -inf,
            f32::NAN,
            1.0,
            -1.0,
            2.0,
            -2.0,
            0.25,
        ] {
            // ±0.5 are torch's sqrt and rsqrt (−0 and −inf differ from C's pow).
            let want = match p {
                0.5 => (x as f64).sqrt() as f32,
                -0.5 => (1.0 / (x as f64).sqrt()) as f32,
                _ => (x as f64).powf(p as f64) as f32,
            };
            let got = pow(x, p);
            assert!(
                same(want, got) || (r::err_ulp32(got, want as f64) <= 1.0),
                "pow({x}, {p}) = {got} vs {want}"
            );
        }
    }
    assert_eq!(pow(f32::NAN, 0.0), 1.0);
}

/// Max error in ulps of the scalar definition over `x`, skipping `skip`.
fn max_ulp(
    f: fn(f32) -> f32,
    rf: fn(f32) -> f64,
    x: &[f32],
    keep: impl Fn(f32, f64) -> bool,
) -> (f64, f32) {
    let mut worst = (0.0, 0.0);
    for &v in x {
        let want = rf(v);
        if !keep(v, want) {
            continue;
        }
        let e = r::err_ulp32(f(v), want);
        if e > worst.0 {
            worst = (e, v);
        }
    }
    worst
}

#[test]
fn accuracy_on_a_fast_subset() {
    // Two million random inputs plus every exponent boundary; the whole 2^32
    // is tools/accuracy.rs (docs/numerics.md).
    let x = inputs(2_000_000);
    let all = |_: f32, _: f64| true;
    let checks: [(&str, fn(f32) -> f32, fn(f32) -> f64, f64); 5] = [
        ("exp", exp, r::exp, 1.0),
        ("log", log, r::log, 1.0),
        ("tanh", tanh, r::tanh, 2.0),
        ("sigmoid", sigmoid, r::sigmoid, 2.0),
        ("erf", erf, r::erf_, 2.0),
    ];
    for (name, f, rf, bound) in checks {
        let (e, at) = max_ulp(f, rf, &x, all);
        assert!(
            e <= bound,
            "{name}: {e} ulp at {at:e} ({:#010x})",
            at.to_bits()
        );
    }
    // gelu: ≤ 2 ulp on normal results with |x| ≤ 10 …
    let (e, at) = max_ulp(gelu, r::gelu, &x, |v, w| {
        v.abs() <= 10.0 && w.abs() >= f32::MIN_POSITIVE as f64
    });
    assert!(e <= 2.0, "gelu: {e} ulp at {at:e}");
    // … and an absolute error ≤ 1e-37 on subnormal and zero results.
    for &v in &x {
        let w = r::gelu(v);
        if v.is_finite() && w.abs() < f32::MIN_POSITIVE as f64 {
            assert!(((gelu(v) as f64) - w).abs() <= 1e-37, "gelu({v:e})");
        }
    }
}
