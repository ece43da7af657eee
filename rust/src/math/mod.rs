//! Fixed transcendental functions: the same bits on every platform, built
//! from IEEE + − × ÷, compare/select and exponent bit manipulation only.
//!
//! * [`fixed`]: the f32 functions (exp, log, tanh, sigmoid, erf, gelu and
//!   the slopes the backward rules use, pow with a scalar exponent), written
//!   once, generic over [`crate::simd::Lanes`].
//! * [`trig`], [`inverse_trig`], [`exp_log`], [`hyperbolic`], [`power`]:
//!   sin cos tan, atan atan2 asin acos, expm1 log1p exp2 log2 log10 and the
//!   softplus core, sinh cosh asinh acosh atanh, pow with scalar and
//!   per-element exponents; [`ff`] holds their float-float blocks.
//! * [`erf_family`]: erfc (its own tail) and erfinv.
//! * [`detmath`]: binary64 exp and log for the CTC recursions.
//!
//! The plain `f32 → f32` functions below are the scalar instantiation: the
//! definition every vector path reproduces. Accuracy: docs/numerics.md.

pub mod detmath;
pub mod erf_family;
pub mod gamma;
pub mod exp_log;
mod ff;
pub mod fixed;
pub mod hyperbolic;
pub mod inverse_trig;
pub mod power;
pub mod trig;

macro_rules! scalar {
    ($path:ident: $($(#[$m:meta])* $name:ident),* $(,)?) => {
        $(
            $(#[$m])*
            #[inline]
            pub fn $name(x: f32) -> f32 {
                // SAFETY: the f32 instantiation needs no CPU feature.
                unsafe { $path::$name::<f32>(x) }
            }
        )*
    };
}

scalar!(fixed:
    /// e^x (scalar definition).
    exp,
    /// ln x (scalar definition).
    log,
    /// tanh x (scalar definition).
    tanh,
    /// 1/(1 + e^−x) (scalar definition).
    sigmoid,
    /// erf x (scalar definition).
    erf,
    /// x·Φ(x) (scalar definition).
    gelu,
    /// d gelu/dx (scalar definition).
    gelu_slope,
    /// d erf/dx = 2/√π·e^(−x²) (scalar definition).
    erf_slope,
);

scalar!(trig: sin, cos, tan);
scalar!(inverse_trig: atan, asin, acos);
scalar!(exp_log: expm1, log1p, exp2, log2, log10, log1pexp);
scalar!(hyperbolic: sinh, cosh, asinh, acosh, atanh);
scalar!(erf_family: erfc, erfinv);

/// atan2(y, x) (scalar definition).
#[inline]
pub fn atan2(y: f32, x: f32) -> f32 {
    // SAFETY: the f32 instantiation needs no CPU feature.
    unsafe { inverse_trig::atan2::<f32>(y, x) }
}

/// x^p with a per-element exponent (scalar definition).
#[inline]
pub fn pow_elementwise(x: f32, p: f32) -> f32 {
    // SAFETY: the f32 instantiation needs no CPU feature.
    unsafe { power::pow_lanes::<f32>(x, p) }
}

/// x^p (scalar definition), see [`power::pow`].
#[inline]
pub fn pow(x: f32, p: f32) -> f32 {
    // SAFETY: the f32 instantiation needs no CPU feature.
    unsafe { fixed::pow::<f32>(x, p) }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_binary;
#[cfg(test)]
mod tests_family;
