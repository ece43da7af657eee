//! Fixed transcendental functions: the same bits on every platform, built
//! from IEEE + − × ÷, compare/select and exponent bit manipulation only.
//!
//! * [`fixed`]: the f32 functions (exp, log, tanh, sigmoid, erf, gelu and
//!   the slopes the backward rules use, pow with a scalar exponent), written
//!   once, generic over [`crate::simd::Lanes`].
//! * [`detmath`]: binary64 exp and log for the CTC recursions.
//!
//! The plain `f32 → f32` functions below are the scalar instantiation: the
//! definition every vector path reproduces. Accuracy: docs/numerics.md.

pub mod detmath;
pub mod fixed;

macro_rules! scalar {
    ($($(#[$m:meta])* $name:ident),* $(,)?) => {
        $(
            $(#[$m])*
            #[inline]
            pub fn $name(x: f32) -> f32 {
                // SAFETY: the f32 instantiation needs no CPU feature.
                unsafe { fixed::$name::<f32>(x) }
            }
        )*
    };
}

scalar!(
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

/// x^p (scalar definition), see [`fixed::pow`].
#[inline]
pub fn pow(x: f32, p: f32) -> f32 {
    // SAFETY: the f32 instantiation needs no CPU feature.
    unsafe { fixed::pow::<f32>(x, p) }
}

#[cfg(test)]
mod tests;
