//! The per-element definitions of the element-wise operations, generic
//! over the lane type: each variant is one IEEE operation, a
//! compare-and-select, or a fixed function of `crate::math` (the scalar
//! instantiation is the definition; see the loops in the parent module).

use crate::math::{erf_family, exp_log, fixed, hyperbolic, inverse_trig, power, trig};
use crate::simd::Lanes;

/// Binary operations `out = op(a, b)`. The backward rules take the incoming
/// gradient as `a` and the saved tensor named in each variant as `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    /// `relu'(x) · g` with `a = g`, `b = x`: g where x > 0, else 0.
    ReluBackward,
    /// torch.maximum: the larger; NaN if either is NaN; max(−0, +0) = +0.
    Maximum,
    /// torch.minimum: the smaller; NaN if either is NaN; min(−0, +0) = −0.
    Minimum,
    /// `a = g`, `b = y = σ(x)`: g·(y·(1 − y)).
    SigmoidBackward,
    /// `a = g`, `b = y = tanh(x)`: g·(1 − y·y).
    TanhBackward,
    /// `a = g`, `b = x`: g·gelu'(x) (fixed slope, recomputed from x).
    GeluBackward,
    /// `a = g`, `b = y = eˣ`: g·y.
    ExpBackward,
    /// `a = g`, `b = x`: g/x.
    LogBackward,
    /// `a = g`, `b = x`: g·(2/√π·e^(−x²)).
    ErfBackward,
    /// `a = g`, `b = y = √x`: g/(y + y).
    SqrtBackward,
    /// `a = g`, `b = x`: g·sign(x), 0 where x = ±0, NaN where x is NaN.
    AbsBackward,
    /// `a = g`, `b = x`: g·(2x) (square's rule, as g·(x + x)).
    SquareBackward,
    /// `a = g`, `b = x`: g·(p·x^(p−1)); 0 when p = 0 (torch's rule).
    PowBackward(f32),
    /// `a = g`, `b = x`: g where lo ≤ x ≤ hi, else 0 (a NaN bound is
    /// ignored, as torch.clamp ignores a missing bound).
    ClampBackward(f32, f32),
    /// atan2(a, b) = the angle of (b, a) ([`inverse_trig::atan2`]).
    Atan2,
    /// a^b with a per-element exponent ([`power::pow_lanes`]).
    Power,
}

/// Unary operations `out = op(a)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UnaryOp {
    Neg,
    /// max(x, 0) by compare-and-select; NaN stays NaN (as torch.relu).
    Relu,
    Exp,
    Log,
    Sigmoid,
    Tanh,
    /// x·Φ(x) (erf form, torch's approximate='none').
    Gelu,
    Erf,
    Sqrt,
    Abs,
    Square,
    /// x^p for a scalar p ([`fixed::pow`]).
    Pow(f32),
    /// min(max(x, lo), hi) with torch's rules: NaN x stays NaN; a NaN bound
    /// means no bound on that side.
    Clamp(f32, f32),
    /// The slopes as stand-alone maps (the backward rules multiply by g).
    GeluSlope,
    ErfSlope,
    // The math work's fixed functions (crate::math::{trig, inverse_trig,
    // exp_log, hyperbolic}).
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Asinh,
    Acosh,
    Atanh,
    Expm1,
    Log1p,
    Exp2,
    Log2,
    Log10,
    /// ln(1 + e^x), the softplus core.
    Log1pExp,
    /// 1 − erf x with its own tail ([`erf_family::erfc`]).
    Erfc,
    /// The inverse of erf on (−1, 1) ([`erf_family::erfinv`]).
    Erfinv,
}

/// Ternary operations `out = op(a, b, c)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TernaryOp {
    /// torch.where: `b` where `a ≠ 0` (a is the condition as 0.0/1.0), else `c`.
    Where,
    /// The gradient torch.maximum sends to its first input, with `a = g`,
    /// `b` the first input, `c` the second: g where b > c, g/2 where b = c,
    /// else 0. Swap b and c for the second input's gradient.
    MaximumBackward,
    /// As MaximumBackward with b < c.
    MinimumBackward,
}

// ---------------------------------------------------------------------------
// The per-element definitions, generic over the lane type
// ---------------------------------------------------------------------------

impl BinaryOp {
    /// The scalar definition of the operation (exact mode's NaN
    /// canonicalisation is applied by the loops, not here).
    #[inline(always)]
    pub fn apply(self, a: f32, b: f32) -> f32 {
        // SAFETY: the f32 instantiation needs no CPU feature.
        unsafe { self.eval::<f32>(a, b) }
    }

    /// # Safety
    /// Inside [`run_on`] for L's path (any f32 call is safe).
    #[inline(always)]
    pub unsafe fn eval<L: Lanes>(self, a: L, b: L) -> L {
        // SAFETY: forwarded contract.
        unsafe {
            let zero = L::zero();
            let one = L::splat(1.0);
            match self {
                BinaryOp::Add => a.add(b),
                BinaryOp::Sub => a.sub(b),
                BinaryOp::Mul => a.mul(b),
                BinaryOp::Div => a.div(b),
                BinaryOp::ReluBackward => L::select(b.gt(zero), a, zero),
                BinaryOp::Maximum => extremum(a, b, a.gt(b), a.lt(b), a.and(b)),
                BinaryOp::Minimum => extremum(a, b, a.lt(b), a.gt(b), a.or(b)),
                BinaryOp::SigmoidBackward => a.mul(b.mul(one.sub(b))),
                BinaryOp::TanhBackward => a.mul(one.sub(b.mul(b))),
                BinaryOp::GeluBackward => a.mul(fixed::gelu_slope(b)),
                BinaryOp::ExpBackward => a.mul(b),
                BinaryOp::LogBackward => a.div(b),
                BinaryOp::ErfBackward => a.mul(fixed::erf_slope(b)),
                BinaryOp::SqrtBackward => a.div(b.add(b)),
                BinaryOp::AbsBackward => {
                    let s = L::select(b.gt(zero), one, L::select(b.lt(zero), one.neg(), zero));
                    a.mul(L::select(b.is_nan(), b, s))
                }
                BinaryOp::SquareBackward => a.mul(b.add(b)),
                BinaryOp::PowBackward(p) => {
                    if p == 0.0 {
                        a.mul(zero)
                    } else {
                        a.mul(L::splat(p).mul(fixed::pow(b, p - 1.0)))
                    }
                }
                BinaryOp::ClampBackward(lo, hi) => {
                    let inside = L::mask_and(
                        if lo.is_nan() {
                            b.eq(b)
                        } else {
                            b.ge(L::splat(lo))
                        },
                        if hi.is_nan() {
                            b.eq(b)
                        } else {
                            b.le(L::splat(hi))
                        },
                    );
                    L::select(inside, a, zero)
                }
                BinaryOp::Atan2 => inverse_trig::atan2(a, b),
                BinaryOp::Power => power::pow_lanes(a, b),
            }
        }
    }
}

/// `pick` where `first` (a wins), `b` where `second`, `tie` where neither
/// (equal, including ±0), and NaN when either input is NaN.
#[inline(always)]
unsafe fn extremum<L: Lanes>(a: L, b: L, first: L::Mask, second: L::Mask, tie: L) -> L {
    // SAFETY: forwarded contract.
    unsafe {
        let r = L::select(first, a, L::select(second, b, tie));
        L::select(L::mask_or(a.is_nan(), b.is_nan()), a.add(b), r)
    }
}

impl UnaryOp {
    /// The scalar definition of the operation.
    #[inline(always)]
    pub fn apply(self, a: f32) -> f32 {
        // SAFETY: the f32 instantiation needs no CPU feature.
        unsafe { self.eval::<f32>(a) }
    }

    /// # Safety
    /// Inside [`run_on`] for L's path (any f32 call is safe).
    #[inline(always)]
    pub unsafe fn eval<L: Lanes>(self, a: L) -> L {
        // SAFETY: forwarded contract.
        unsafe {
            let zero = L::zero();
            match self {
                UnaryOp::Neg => a.neg(),
                UnaryOp::Relu => L::select(L::mask_or(a.gt(zero), a.is_nan()), a, zero),
                UnaryOp::Exp => fixed::exp(a),
                UnaryOp::Log => fixed::log(a),
                UnaryOp::Sigmoid => fixed::sigmoid(a),
                UnaryOp::Tanh => fixed::tanh(a),
                UnaryOp::Gelu => fixed::gelu(a),
                UnaryOp::Erf => fixed::erf(a),
                UnaryOp::Sqrt => a.sqrt(),
                UnaryOp::Abs => a.abs(),
                UnaryOp::Square => a.mul(a),
                UnaryOp::Pow(p) => fixed::pow(a, p),
                UnaryOp::Clamp(lo, hi) => {
                    let r = if lo.is_nan() {
                        a
                    } else {
                        L::select(a.lt(L::splat(lo)), L::splat(lo), a)
                    };
                    if hi.is_nan() {
                        r
                    } else {
                        L::select(r.gt(L::splat(hi)), L::splat(hi), r)
                    }
                }
                UnaryOp::GeluSlope => fixed::gelu_slope(a),
                UnaryOp::ErfSlope => fixed::erf_slope(a),
                UnaryOp::Sin => trig::sin(a),
                UnaryOp::Cos => trig::cos(a),
                UnaryOp::Tan => trig::tan(a),
                UnaryOp::Asin => inverse_trig::asin(a),
                UnaryOp::Acos => inverse_trig::acos(a),
                UnaryOp::Atan => inverse_trig::atan(a),
                UnaryOp::Sinh => hyperbolic::sinh(a),
                UnaryOp::Cosh => hyperbolic::cosh(a),
                UnaryOp::Asinh => hyperbolic::asinh(a),
                UnaryOp::Acosh => hyperbolic::acosh(a),
                UnaryOp::Atanh => hyperbolic::atanh(a),
                UnaryOp::Expm1 => exp_log::expm1(a),
                UnaryOp::Log1p => exp_log::log1p(a),
                UnaryOp::Exp2 => exp_log::exp2(a),
                UnaryOp::Log2 => exp_log::log2(a),
                UnaryOp::Log10 => exp_log::log10(a),
                UnaryOp::Log1pExp => exp_log::log1pexp(a),
                UnaryOp::Erfc => erf_family::erfc(a),
                UnaryOp::Erfinv => erf_family::erfinv(a),
            }
        }
    }
}

impl TernaryOp {
    /// The scalar definition of the operation.
    #[inline(always)]
    pub fn apply(self, a: f32, b: f32, c: f32) -> f32 {
        // SAFETY: the f32 instantiation needs no CPU feature.
        unsafe { self.eval::<f32>(a, b, c) }
    }

    /// # Safety
    /// Inside [`run_on`] for L's path (any f32 call is safe).
    #[inline(always)]
    pub unsafe fn eval<L: Lanes>(self, a: L, b: L, c: L) -> L {
        // SAFETY: forwarded contract.
        unsafe {
            let zero = L::zero();
            match self {
                // a ≠ 0 is true for NaN too (as bool(nan) is in torch).
                TernaryOp::Where => L::select(a.eq(zero), c, b),
                TernaryOp::MaximumBackward => {
                    let half = a.mul(L::splat(0.5));
                    L::select(b.gt(c), a, L::select(b.eq(c), half, zero))
                }
                TernaryOp::MinimumBackward => {
                    let half = a.mul(L::splat(0.5));
                    L::select(b.lt(c), a, L::select(b.eq(c), half, zero))
                }
            }
        }
    }
}

