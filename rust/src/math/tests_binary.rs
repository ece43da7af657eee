//! atan2 and pow against binary64 references where the first math work
//! failed: atan2 with a subnormal (or tiny) smaller operand (bound 2 ulp);
//! pow with a large |p·ln x| (huge and integer exponents, x near 1,
//! negative bases, subnormal bases and results: 2 ulp), torch's special
//! values of pow, and the scalar-exponent pow (torch.pow(tensor, number))
//! against the per-element one.

use super::tests::same;
use super::*;
use crate::dispatch::available_paths;
use crate::kernels::elementwise::{map2_on, BinaryOp};
use crate::simd::Token;

#[path = "../../../tools/reference.rs"]
mod reference_file;
use reference_file::reference as r;

/// xorshift64* (fixed seed).
fn next(s: &mut u64) -> u64 {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    s.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

fn uniform(s: &mut u64) -> f64 {
    (next(s) >> 11) as f64 / (1u64 << 53) as f64
}

/// The worst of f against rf over the pairs, checked on every path too.
fn worst(op: BinaryOp, f: fn(f32, f32) -> f32, rf: fn(f32, f32) -> f64, a: &[f32], b: &[f32]) -> (f64, f32, f32) {
    let mut w = (0.0f64, 0.0f32, 0.0f32);
    let want: Vec<f32> = a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect();
    for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
        let e = r::err_ulp32(want[i], rf(x, y));
        if e > w.0 {
            w = (e, x, y);
        }
    }
    for path in available_paths() {
        let mut got = vec![0f32; a.len()];
        map2_on(Token::new(path).unwrap(), op, false, a, b, &mut got);
        for i in 0..a.len() {
            assert!(same(want[i], got[i]), "{op:?} on {path:?} at ({:e}, {:e})", a[i], b[i]);
        }
    }
    w
}

#[test]
fn atan2_with_a_subnormal_or_tiny_operand() {
    let mut s = 0x1234_5678_9abc_def0u64;
    let (mut ys, mut xs) = (Vec::new(), Vec::new());
    // The reported worst case, then every subnormal magnitude against
    // larger operands from 2^−126 to 2^40, both orders and all signs.
    ys.push(2.04e-42f32);
    xs.push(3.572_255_7e-8f32);
    for i in 0..200_000u64 {
        let small = f32::from_bits((next(&mut s) as u32) & 0x007f_ffff | 1);
        let e = (next(&mut s) % 167) as i32 - 126; // 2^−126 .. 2^40
        let big = f32::from_bits((((e + 127) as u32) << 23) | (next(&mut s) as u32 & 0x007f_ffff));
        let (sy, sx) = (if i & 1 == 0 { 1.0 } else { -1.0 }, if i & 2 == 0 { 1.0 } else { -1.0 });
        if i & 4 == 0 {
            ys.push(sy * small);
            xs.push(sx * big);
        } else {
            ys.push(sy * big);
            xs.push(sx * small);
        }
    }
    // Both subnormal, and one tiny normal against the rest of the range.
    for _ in 0..100_000 {
        ys.push(f32::from_bits((next(&mut s) as u32) & 0x807f_ffff));
        xs.push(f32::from_bits((next(&mut s) as u32) & 0x807f_ffff));
        let e = (next(&mut s) % 60) as i32 - 126;
        ys.push(f32::from_bits((((e + 127) as u32) << 23) | (next(&mut s) as u32 & 0x807f_ffff)));
        xs.push(f32::from_bits(next(&mut s) as u32 & 0x7fff_ffff));
    }
    let w = worst(BinaryOp::Atan2, atan2, r::atan2, &ys, &xs);
    assert!(w.0 <= 2.0, "atan2: {} ulp at ({:e}, {:e})", w.0, w.1, w.2);
}

/// Pairs whose result is in (or near) the binary32 range: p·log2|x| drawn
/// up to ±160, x from every binade, near 1, negative with integer p.
fn pow_pairs() -> (Vec<f32>, Vec<f32>) {
    let mut s = 0x0f1e_2d3c_4b5a_6978u64;
    let (mut xs, mut ps) = (Vec::new(), Vec::new());
    for i in 0..600_000u64 {
        let kind = i % 6;
        let (x, p) = match kind {
            // x any positive float, p so that |p·log2 x| ≤ 160.
            0 | 1 => {
                let x = f32::from_bits((next(&mut s) as u32) & 0x7f7f_ffff | 1);
                let l = (x as f64).log2();
                let t = (uniform(&mut s) * 2.0 - 1.0) * 160.0;
                (x, if l == 0.0 { t as f32 } else { (t / l) as f32 })
            }
            // x near 1 (|x − 1| < 2^−10), huge p.
            2 => {
                let x = 1.0 + (uniform(&mut s) * 2.0 - 1.0) / 1024.0;
                let p = (uniform(&mut s) * 2.0 - 1.0) * 1.0e6;
                (x as f32, p as f32)
            }
            // negative bases with integer p (odd and even).
            3 => {
                let x = -(uniform(&mut s) * 8.0) as f32;
                let p = ((uniform(&mut s) * 2.0 - 1.0) * 60.0).round() as f32;
                (x, p)
            }
            // x in (0, 8), p up to ±40 (the reported 9.1-ulp region).
            4 => ((uniform(&mut s) * 8.0) as f32, ((uniform(&mut s) * 2.0 - 1.0) * 40.0) as f32),
            // subnormal bases.
            _ => {
                let x = f32::from_bits((next(&mut s) as u32) & 0x007f_ffff | 1);
                (x, ((uniform(&mut s) * 2.0 - 1.0) * 1.1) as f32)
            }
        };
        xs.push(x);
        ps.push(p);
    }
    (xs, ps)
}

#[test]
fn pow_on_a_dense_sample() {
    let (xs, ps) = pow_pairs();
    // Every path the same bits on all pairs (`worst` checks that), and
    // within 2 ulp at every |p·ln x| (the float-float logarithm keeps p's
    // amplification of its error below 2^−36 · 104 relative).
    let w = worst(BinaryOp::Power, pow_elementwise, r::pow2, &xs, &ps);
    assert!(w.0 <= 2.0, "pow: {} ulp at ({:e}, {:e})", w.0, w.1, w.2);
    // The scalar exponent: the same function for every p of a grid.
    for &p in &[2.5f32, -2.5, 25.1, -13.3, 7.0, -7.0, 1.0e-3, 123.456, -88.0] {
        for (i, &x) in xs.iter().enumerate().step_by(7) {
            let x = if i % 2 == 0 { x } else { -x };
            let (y, rf) = (pow(x, p), r::pow2(x, p));
            assert!(r::err_ulp32(y, rf) <= 2.0, "pow({x:e}, {p}) = {y:e} vs {rf:e}");
            assert!(same(y, pow_elementwise(x, p)), "pow({x:e}, {p}) scalar vs tensor exponent");
        }
    }
}

#[test]
fn pow_special_values_are_torch_ones() {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    // x^0 = 1 and 1^p = 1 even for NaN; -0 and 0 with odd/even negative p.
    let cases: [(f32, f32, f32); 22] = [
        (nan, 0.0, 1.0),
        (nan, -0.0, 1.0),
        (1.0, nan, 1.0),
        (1.0, inf, 1.0),
        (-1.0, inf, 1.0),
        (-1.0, -inf, 1.0),
        (-0.0, -3.0, -inf),
        (0.0, -3.0, inf),
        (-0.0, -2.0, inf),
        (-0.0, 3.0, -0.0),
        (-0.0, 2.0, 0.0),
        (-0.0, -2.5, inf),
        (-inf, 3.0, -inf),
        (-inf, -3.0, -0.0),
        (-inf, 2.0, inf),
        (-2.0, 1.0e30, inf),
        (-2.0, -1.0e30, 0.0),
        (-0.5, 1.0e30, 0.0),
        (-2.0, 16_777_215.0, -inf),
        (2.0, 0.5, std::f32::consts::SQRT_2),
        (0.5, inf, 0.0),
        (2.0, -inf, 0.0),
    ];
    for (x, p, want) in cases {
        let got = pow_elementwise(x, p);
        assert_eq!(got.to_bits(), want.to_bits(), "pow({x:e}, {p:e}) = {got:e}");
        if p.is_finite() {
            let gs = pow(x, p);
            assert_eq!(gs.to_bits(), want.to_bits(), "scalar pow({x:e}, {p:e}) = {gs:e}");
        }
    }
    assert!(pow_elementwise(-2.0, 0.5).is_nan() && pow_elementwise(nan, 2.0).is_nan());
    assert!(pow_elementwise(2.0, nan).is_nan());
}
