//! The lane loops: every path gives the scalar definition's bits at every
//! length and start offset, on contiguous, broadcast and strided operands;
//! exact mode canonicalises NaN; the operations' own semantics.

use super::*;
use crate::dispatch::{available_paths, KernelPath};
use crate::kernels::CANONICAL_NAN;

fn pool() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        -0.5,
        0.3,
        -2.7,
        7.5,
        -12.0,
        30.0,
        -95.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::from_bits(0xffc0_0001),
        f32::from_bits(1),
        f32::from_bits(0x8000_0007),
        f32::from_bits(0x0040_0000),
        f32::MIN_POSITIVE,
        f32::MAX,
        -f32::MAX,
        1e-20,
        -3e-30,
        0.625,
        1.25,
        -0.25,
        0.875,
    ];
    let mut x = 0x9E37_79B9u32;
    for _ in 0..300 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        // Mostly moderate values, some arbitrary bit patterns.
        v.push(if x % 4 == 0 {
            f32::from_bits(x)
        } else {
            ((x >> 8) as f32 / 16_777_216.0 - 0.5) * 24.0
        });
    }
    v
}

const UNARY: [UnaryOp; 38] = [
    UnaryOp::Neg,
    UnaryOp::Relu,
    UnaryOp::Exp,
    UnaryOp::Log,
    UnaryOp::Sigmoid,
    UnaryOp::Tanh,
    UnaryOp::Gelu,
    UnaryOp::Erf,
    UnaryOp::Sqrt,
    UnaryOp::Abs,
    UnaryOp::Square,
    UnaryOp::Pow(2.5),
    UnaryOp::Pow(-1.0),
    UnaryOp::Pow(3.0),
    UnaryOp::Clamp(-1.0, 2.0),
    UnaryOp::Clamp(f32::NAN, 0.5),
    UnaryOp::Clamp(-0.5, f32::NAN),
    UnaryOp::GeluSlope,
    UnaryOp::ErfSlope,
    UnaryOp::Sin,
    UnaryOp::Cos,
    UnaryOp::Tan,
    UnaryOp::Asin,
    UnaryOp::Acos,
    UnaryOp::Atan,
    UnaryOp::Sinh,
    UnaryOp::Cosh,
    UnaryOp::Asinh,
    UnaryOp::Acosh,
    UnaryOp::Atanh,
    UnaryOp::Expm1,
    UnaryOp::Log1p,
    UnaryOp::Exp2,
    UnaryOp::Log2,
    UnaryOp::Log10,
    UnaryOp::Log1pExp,
    UnaryOp::Erfc,
    UnaryOp::Erfinv,
];

const BINARY: [BinaryOp; 21] = [
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::ReluBackward,
    BinaryOp::Maximum,
    BinaryOp::Minimum,
    BinaryOp::SigmoidBackward,
    BinaryOp::TanhBackward,
    BinaryOp::GeluBackward,
    BinaryOp::ExpBackward,
    BinaryOp::LogBackward,
    BinaryOp::ErfBackward,
    BinaryOp::SqrtBackward,
    BinaryOp::AbsBackward,
    BinaryOp::SquareBackward,
    BinaryOp::PowBackward(2.5),
    BinaryOp::PowBackward(0.0),
    BinaryOp::ClampBackward(-1.0, 2.0),
    BinaryOp::Atan2,
    BinaryOp::Power,
];

const TERNARY: [TernaryOp; 3] = [
    TernaryOp::Where,
    TernaryOp::MaximumBackward,
    TernaryOp::MinimumBackward,
];

/// The expected exact-mode value, canonicalised on the bits of an opaque
/// copy (so the optimiser cannot drop the test; see Lanes::canonicalize_nan).
fn canon(x: f32, exact: bool) -> f32 {
    let x = std::hint::black_box(x);
    if exact && (x.to_bits() & 0x7fff_ffff) > 0x7f80_0000 {
        f32::from_bits(CANONICAL_NAN)
    } else {
        x
    }
}

/// Bits equal, or (fast mode only) both NaN.
fn check(want: f32, got: f32, exact: bool, what: &dyn Fn() -> String) {
    let ok = if exact {
        want.to_bits() == got.to_bits()
    } else {
        want.to_bits() == got.to_bits() || (want.is_nan() && got.is_nan())
    };
    assert!(
        ok,
        "{}: want {want:e} ({:#010x}), got {got:e} ({:#010x})",
        what(),
        want.to_bits(),
        got.to_bits()
    );
}

fn tokens() -> Vec<Token> {
    available_paths()
        .into_iter()
        .map(|p| Token::new(p).unwrap())
        .collect()
}

#[test]
fn contiguous_rows_every_length_and_offset_on_every_path() {
    let p = pool();
    let n = p.len();
    let b_of = |i: usize| p[(i * 7 + 3) % n];
    let c_of = |i: usize| p[(i * 13 + 5) % n];
    for token in tokens() {
        for exact in [false, true] {
            for len in 1..=150usize {
                for off in [0usize, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17] {
                    let a: Vec<f32> = (0..off + len).map(|i| p[i % n]).collect();
                    let b: Vec<f32> = (0..off + len).map(b_of).collect();
                    let c: Vec<f32> = (0..off + len).map(c_of).collect();
                    let mut out = vec![0f32; off + len];
                    for op in UNARY {
                        // SAFETY: every buffer holds off + len elements and the call reads and writes len of them from off, stride 1.
                        unsafe {
                            unary(
                                token,
                                op,
                                exact,
                                &[len],
                                out[off..].as_mut_ptr(),
                                &[1],
                                a[off..].as_ptr(),
                                &[1],
                            )
                        };
                        for j in 0..len {
                            let w = canon(op.apply(a[off + j]), exact);
                            check(w, out[off + j], exact, &|| {
                                format!(
                                    "{op:?} {:?} exact={exact} len={len} off={off} j={j} x={:e}",
                                    token.path(),
                                    a[off + j]
                                )
                            });
                        }
                    }
                    for op in BINARY {
                        // SAFETY: every buffer holds off + len elements and the call reads and writes len of them from off, stride 1.
                        unsafe {
                            binary(
                                token,
                                op,
                                exact,
                                &[len],
                                out[off..].as_mut_ptr(),
                                &[1],
                                a[off..].as_ptr(),
                                &[1],
                                b[off..].as_ptr(),
                                &[1],
                            )
                        };
                        for j in 0..len {
                            let w = canon(op.apply(a[off + j], b[off + j]), exact);
                            check(w, out[off + j], exact, &|| {
                                format!("{op:?} {:?} len={len} off={off} j={j}", token.path())
                            });
                        }
                    }
                    for op in TERNARY {
                        // SAFETY: every buffer holds off + len elements and the call reads and writes len of them from off, stride 1.
                        unsafe {
                            ternary(
                                token,
                                op,
                                exact,
                                &[len],
                                out[off..].as_mut_ptr(),
                                &[1],
                                a[off..].as_ptr(),
                                &[1],
                                b[off..].as_ptr(),
                                &[1],
                                c[off..].as_ptr(),
                                &[1],
                            )
                        };
                        for j in 0..len {
                            let w = canon(op.apply(a[off + j], b[off + j], c[off + j]), exact);
                            check(w, out[off + j], exact, &|| {
                                format!("{op:?} {:?} len={len} off={off} j={j}", token.path())
                            });
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn broadcast_and_strided_operands_on_every_path() {
    // a: [R, C] transposed view of a [C, R] buffer (strides [1, R]);
    // b: a row vector broadcast over rows (strides [0, 1]) or a column
    // broadcast over columns (strides [1, 0]); out written with a step of 2.
    let p = pool();
    let n = p.len();
    for token in tokens() {
        for (rows, cols) in [(1usize, 1usize), (3, 17), (5, 40), (2, 150), (9, 1)] {
            let abuf: Vec<f32> = (0..rows * cols).map(|i| p[(i * 3 + 1) % n]).collect();
            let bbuf: Vec<f32> = (0..rows.max(cols)).map(|i| p[(i * 11 + 2) % n]).collect();
            let a_str = [1isize, rows as isize];
            for (b_str, b_at) in [([0isize, 1isize], 0usize), ([1, 0], 1)] {
                let mut out = vec![0f32; rows * cols * 2];
                let o_str = [(cols * 2) as isize, 2];
                for exact in [false, true] {
                    for op in BINARY {
                        // SAFETY: each buffer holds every element its shape and strides address (the sizes the test allocates above).
                        unsafe {
                            binary(
                                token,
                                op,
                                exact,
                                &[rows, cols],
                                out.as_mut_ptr(),
                                &o_str,
                                abuf.as_ptr(),
                                &a_str,
                                bbuf.as_ptr(),
                                &b_str,
                            )
                        };
                        for i in 0..rows {
                            for j in 0..cols {
                                let a = abuf[j * rows + i];
                                let b = bbuf[if b_at == 0 { j } else { i }];
                                let w = canon(op.apply(a, b), exact);
                                check(w, out[i * cols * 2 + j * 2], exact, &|| {
                                    format!(
                                        "{op:?} {:?} {rows}x{cols} b{b_str:?} ({i},{j})",
                                        token.path()
                                    )
                                });
                            }
                        }
                    }
                    for op in UNARY {
                        // SAFETY: each buffer holds every element its shape and strides address (the sizes the test allocates above).
                        unsafe {
                            unary(
                                token,
                                op,
                                exact,
                                &[rows, cols],
                                out.as_mut_ptr(),
                                &o_str,
                                abuf.as_ptr(),
                                &a_str,
                            )
                        };
                        for i in 0..rows {
                            for j in 0..cols {
                                let w = canon(op.apply(abuf[j * rows + i]), exact);
                                check(w, out[i * cols * 2 + j * 2], exact, &|| {
                                    format!("{op:?} {:?} ({i},{j})", token.path())
                                });
                            }
                        }
                    }
                }
                // A contiguous output with a broadcast operand takes the lane
                // loop (splat): same bits as the scalar definition.
                let mut out = vec![0f32; rows * cols];
                let a_c: Vec<f32> = (0..rows * cols).map(|i| p[(i * 5 + 4) % n]).collect();
                for op in BINARY {
                    // SAFETY: each buffer holds every element its shape and strides address (the sizes the test allocates above).
                    unsafe {
                        binary(
                            token,
                            op,
                            true,
                            &[rows, cols],
                            out.as_mut_ptr(),
                            &[cols as isize, 1],
                            a_c.as_ptr(),
                            &[cols as isize, 1],
                            bbuf.as_ptr(),
                            &b_str,
                        )
                    };
                    for i in 0..rows {
                        for j in 0..cols {
                            let b = bbuf[if b_at == 0 { j } else { i }];
                            let w = canon(op.apply(a_c[i * cols + j], b), true);
                            check(w, out[i * cols + j], true, &|| {
                                format!("{op:?} splat {:?} ({i},{j})", token.path())
                            });
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn exact_mode_writes_the_canonical_nan() {
    let x = [
        f32::from_bits(0x7fc0_1234),
        f32::from_bits(0xffc0_0000),
        -1.0,
        f32::NAN,
        0.0,
        f32::INFINITY,
    ];
    for token in tokens() {
        let mut out = [0f32; 6];
        // SAFETY: each array holds every element the shape and strides address.
        unsafe {
            unary(
                token,
                UnaryOp::Log,
                true,
                &[6],
                out.as_mut_ptr(),
                &[1],
                x.as_ptr(),
                &[1],
            )
        };
        for (i, &o) in out.iter().enumerate() {
            if i < 4 {
                assert_eq!(o.to_bits(), CANONICAL_NAN, "{:?} {i}", token.path());
            }
        }
        // inf − inf and 0·inf in a binary op.
        let a = [f32::INFINITY, 0.0];
        let b = [f32::INFINITY, f32::INFINITY];
        let mut o2 = [0f32; 2];
        // SAFETY: each array holds every element the shape and strides address.
        unsafe {
            binary(
                token,
                BinaryOp::Sub,
                true,
                &[1],
                o2.as_mut_ptr(),
                &[1],
                a.as_ptr(),
                &[1],
                b.as_ptr(),
                &[1],
            )
        };
        // SAFETY: each array holds every element the shape and strides address.
        unsafe {
            binary(
                token,
                BinaryOp::Mul,
                true,
                &[1],
                o2[1..].as_mut_ptr(),
                &[1],
                a[1..].as_ptr(),
                &[1],
                b[1..].as_ptr(),
                &[1],
            )
        };
        assert_eq!(o2[0].to_bits(), CANONICAL_NAN);
        assert_eq!(o2[1].to_bits(), CANONICAL_NAN);
    }
}

#[test]
fn broadcast_add_and_exact_nan() {
    let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2x3
    let b = [10.0f32, f32::from_bits(0x7FC0_1234), 30.0]; // 3, broadcast over rows
    let mut out = [0f32; 6];
    // SAFETY: each array holds every element the shape and strides address.
    unsafe {
        binary(
            Token::current(),
            BinaryOp::Add,
            true,
            &[2, 3],
            out.as_mut_ptr(),
            &[3, 1],
            a.as_ptr(),
            &[3, 1],
            b.as_ptr(),
            &[0, 1],
        );
    }
    assert_eq!(out[0], 11.0);
    assert_eq!(out[1].to_bits(), 0x7FC0_0000);
    assert_eq!(out[5], 36.0);
}

#[test]
fn relu_and_its_backward() {
    let x = [-1.0f32, 0.0, -0.0, 2.0, f32::NAN];
    let mut y = [9f32; 5];
    // SAFETY: each array holds every element the shape and strides address.
    unsafe {
        unary(
            Token::current(),
            UnaryOp::Relu,
            false,
            &[5],
            y.as_mut_ptr(),
            &[1],
            x.as_ptr(),
            &[1],
        )
    };
    assert_eq!(&y[..4], &[0.0, 0.0, 0.0, 2.0]);
    assert!(y[4].is_nan());
    let g = [1.0f32; 5];
    // SAFETY: each array holds every element the shape and strides address.
    unsafe {
        binary(
            Token::current(),
            BinaryOp::ReluBackward,
            false,
            &[5],
            y.as_mut_ptr(),
            &[1],
            g.as_ptr(),
            &[1],
            x.as_ptr(),
            &[1],
        );
    }
    assert_eq!(y, [0.0, 0.0, 0.0, 1.0, 0.0]);
}

#[test]
fn selection_semantics() {
    let nan = f32::NAN;
    assert_eq!(BinaryOp::Maximum.apply(-0.0, 0.0).to_bits(), 0);
    assert_eq!(BinaryOp::Maximum.apply(0.0, -0.0).to_bits(), 0);
    assert_eq!(BinaryOp::Minimum.apply(0.0, -0.0).to_bits(), 0x8000_0000);
    assert_eq!(BinaryOp::Minimum.apply(-0.0, 0.0).to_bits(), 0x8000_0000);
    assert!(BinaryOp::Maximum.apply(nan, 1.0).is_nan());
    assert!(BinaryOp::Maximum.apply(1.0, nan).is_nan());
    assert!(BinaryOp::Minimum.apply(1.0, nan).is_nan());
    assert_eq!(BinaryOp::Maximum.apply(1.0, 2.0), 2.0);
    assert_eq!(BinaryOp::Minimum.apply(1.0, 2.0), 1.0);
    // torch.maximum's gradient splits ties evenly.
    assert_eq!(TernaryOp::MaximumBackward.apply(4.0, 1.0, 1.0), 2.0);
    assert_eq!(TernaryOp::MaximumBackward.apply(4.0, 2.0, 1.0), 4.0);
    assert_eq!(TernaryOp::MaximumBackward.apply(4.0, 0.0, 1.0), 0.0);
    assert_eq!(TernaryOp::MinimumBackward.apply(4.0, 0.0, 1.0), 4.0);
    assert_eq!(TernaryOp::Where.apply(1.0, 5.0, 6.0), 5.0);
    assert_eq!(TernaryOp::Where.apply(0.0, 5.0, 6.0), 6.0);
    assert_eq!(UnaryOp::Clamp(-1.0, 1.0).apply(3.0), 1.0);
    assert_eq!(UnaryOp::Clamp(-1.0, 1.0).apply(-3.0), -1.0);
    assert!(UnaryOp::Clamp(-1.0, 1.0).apply(nan).is_nan());
    assert_eq!(UnaryOp::Clamp(nan, 1.0).apply(-3.0), -3.0);
    assert_eq!(BinaryOp::ClampBackward(-1.0, 1.0).apply(5.0, 1.0), 5.0);
    assert_eq!(BinaryOp::ClampBackward(-1.0, 1.0).apply(5.0, 1.5), 0.0);
    assert_eq!(BinaryOp::AbsBackward.apply(3.0, -2.0), -3.0);
    assert_eq!(BinaryOp::AbsBackward.apply(3.0, 0.0), 0.0);
    assert_eq!(BinaryOp::PowBackward(0.0).apply(3.0, 2.0), 0.0);
    assert_eq!(
        BinaryOp::SigmoidBackward.apply(2.0, 0.25),
        2.0 * (0.25 * 0.75)
    );
    assert_eq!(BinaryOp::TanhBackward.apply(2.0, 0.5), 1.5);
    let _ = KernelPath::Scalar;
}
