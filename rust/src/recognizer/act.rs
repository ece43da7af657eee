//! The transcendentals the recognizer uses, in one place: the fixed f32
//! sigmoid and tanh (crate::math) and DetMath's f64 exp and log.
//!
//! TEMPORARY: until the fixed transcendentals land on main these forward to
//! stand-ins; the real ones replace them on the merge.

#[inline]
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

#[inline]
pub fn tanh(x: f32) -> f32 {
    x.tanh()
}

#[inline]
pub fn dexp(x: f64) -> f64 {
    x.exp()
}

#[inline]
pub fn dlog(x: f64) -> f64 {
    crate::math::detmath::log(x)
}
