//! The scalar instantiation: `f32` is a one-lane register. This is the
//! definition every vector path must reproduce.

use super::Lanes;
use crate::dispatch::KernelPath;

// SAFETY: plain Rust f32 arithmetic is IEEE binary32 with round-to-nearest-even
// (Rust never contracts `a * b + c` into an fma); `f32::mul_add` is the
// correctly rounded fused multiply-add on every platform.
unsafe impl Lanes for f32 {
    const N: usize = 1;
    const PATH: KernelPath = KernelPath::Scalar;

    #[inline(always)]
    unsafe fn splat(x: f32) -> f32 {
        x
    }
    #[inline(always)]
    unsafe fn zero() -> f32 {
        0.0
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> f32 {
        // SAFETY: the caller passes a pointer valid for one read.
        unsafe { p.read_unaligned() }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        // SAFETY: the caller passes a pointer valid for one write.
        unsafe { p.write_unaligned(self) }
    }
    #[inline(always)]
    unsafe fn add(self, b: f32) -> f32 {
        self + b
    }
    #[inline(always)]
    unsafe fn sub(self, b: f32) -> f32 {
        self - b
    }
    #[inline(always)]
    unsafe fn mul(self, b: f32) -> f32 {
        self * b
    }
    #[inline(always)]
    unsafe fn div(self, b: f32) -> f32 {
        self / b
    }
    #[inline(always)]
    unsafe fn fma(self, b: f32, c: f32) -> f32 {
        self.mul_add(b, c)
    }
}
