//! The transcendentals the recognizer uses, in one place: the fixed f32
//! sigmoid and tanh of crate::math (the same bits on every path, ≤ 2 ulp)
//! and DetMath's f64 exp and log for CTC.

#[inline]
pub fn sigmoid(x: f32) -> f32 {
    crate::math::sigmoid(x)
}

#[inline]
pub fn tanh(x: f32) -> f32 {
    crate::math::tanh(x)
}

#[inline]
pub fn dexp(x: f64) -> f64 {
    crate::math::detmath::exp(x)
}

#[inline]
pub fn dlog(x: f64) -> f64 {
    crate::math::detmath::log(x)
}
