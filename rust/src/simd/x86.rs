//! x86-64 lane types: 128-bit SSE4.1, 256-bit AVX2 (+FMA), 512-bit AVX-512.

use super::{LaneFn, Lanes};
use crate::dispatch::KernelPath;
use std::arch::x86_64::*;

/// Four f32 lanes in an SSE register (SSE4.1 path). SSE has no fused
/// multiply-add, so `fma` is done per lane in software (`f32::mul_add`),
/// which is correctly rounded and therefore gives the scalar bits.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct V128(__m128);

/// Eight f32 lanes in an AVX register (AVX2 + FMA path).
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct Avx2(__m256);

/// Sixteen f32 lanes in an AVX-512 register.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct Avx512(__m512);

// SAFETY (for the three impls below): the SSE/AVX/AVX-512 add, sub, mul, div
// and fmadd instructions are IEEE binary32 operations rounded to nearest even
// under the MXCSR rounding mode, which the library never changes; kernels run
// with flush-to-zero and denormals-are-zero cleared (dispatch::FpEnvGuard), so
// subnormals behave as in the scalar instantiation.
unsafe impl Lanes for V128 {
    const N: usize = 4;
    const PATH: KernelPath = KernelPath::V128;

    #[inline(always)]
    unsafe fn splat(x: f32) -> Self {
        // SAFETY: SSE is baseline on x86-64.
        unsafe { V128(_mm_set1_ps(x)) }
    }
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: SSE is baseline on x86-64.
        unsafe { V128(_mm_setzero_ps()) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: the caller passes a pointer valid for 4 reads.
        unsafe { V128(_mm_loadu_ps(p)) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        // SAFETY: the caller passes a pointer valid for 4 writes.
        unsafe { _mm_storeu_ps(p, self.0) }
    }
    #[inline(always)]
    unsafe fn add(self, b: Self) -> Self {
        // SAFETY: SSE is baseline on x86-64.
        unsafe { V128(_mm_add_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn sub(self, b: Self) -> Self {
        // SAFETY: SSE is baseline on x86-64.
        unsafe { V128(_mm_sub_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn mul(self, b: Self) -> Self {
        // SAFETY: SSE is baseline on x86-64.
        unsafe { V128(_mm_mul_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn div(self, b: Self) -> Self {
        // SAFETY: SSE is baseline on x86-64.
        unsafe { V128(_mm_div_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn fma(self, b: Self, c: Self) -> Self {
        let (mut x, mut y, mut z) = ([0f32; 4], [0f32; 4], [0f32; 4]);
        // SAFETY: the arrays are valid for 4 writes and reads each.
        unsafe {
            _mm_storeu_ps(x.as_mut_ptr(), self.0);
            _mm_storeu_ps(y.as_mut_ptr(), b.0);
            _mm_storeu_ps(z.as_mut_ptr(), c.0);
            for i in 0..4 {
                x[i] = x[i].mul_add(y[i], z[i]);
            }
            V128(_mm_loadu_ps(x.as_ptr()))
        }
    }
}

unsafe impl Lanes for Avx2 {
    const N: usize = 8;
    const PATH: KernelPath = KernelPath::Avx2;

    #[inline(always)]
    unsafe fn splat(x: f32) -> Self {
        // SAFETY: called only inside run_avx2 (AVX enabled).
        unsafe { Avx2(_mm256_set1_ps(x)) }
    }
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: called only inside run_avx2 (AVX enabled).
        unsafe { Avx2(_mm256_setzero_ps()) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: the caller passes a pointer valid for 8 reads.
        unsafe { Avx2(_mm256_loadu_ps(p)) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        // SAFETY: the caller passes a pointer valid for 8 writes.
        unsafe { _mm256_storeu_ps(p, self.0) }
    }
    #[inline(always)]
    unsafe fn add(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX enabled).
        unsafe { Avx2(_mm256_add_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn sub(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX enabled).
        unsafe { Avx2(_mm256_sub_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn mul(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX enabled).
        unsafe { Avx2(_mm256_mul_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn div(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX enabled).
        unsafe { Avx2(_mm256_div_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn fma(self, b: Self, c: Self) -> Self {
        // SAFETY: called only inside run_avx2 (FMA enabled).
        unsafe { Avx2(_mm256_fmadd_ps(self.0, b.0, c.0)) }
    }
}

unsafe impl Lanes for Avx512 {
    const N: usize = 16;
    const PATH: KernelPath = KernelPath::Avx512;

    #[inline(always)]
    unsafe fn splat(x: f32) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512F enabled).
        unsafe { Avx512(_mm512_set1_ps(x)) }
    }
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512F enabled).
        unsafe { Avx512(_mm512_setzero_ps()) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: the caller passes a pointer valid for 16 reads.
        unsafe { Avx512(_mm512_loadu_ps(p)) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        // SAFETY: the caller passes a pointer valid for 16 writes.
        unsafe { _mm512_storeu_ps(p, self.0) }
    }
    #[inline(always)]
    unsafe fn add(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512F enabled).
        unsafe { Avx512(_mm512_add_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn sub(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512F enabled).
        unsafe { Avx512(_mm512_sub_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn mul(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512F enabled).
        unsafe { Avx512(_mm512_mul_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn div(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512F enabled).
        unsafe { Avx512(_mm512_div_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn fma(self, b: Self, c: Self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512F enabled).
        unsafe { Avx512(_mm512_fmadd_ps(self.0, b.0, c.0)) }
    }
}

// The trampolines: the only places with #[target_feature]. The generic body
// `f.run::<L>()` is #[inline(always)], so it is compiled with these features.

/// # Safety
/// The CPU must support SSE4.1.
#[target_feature(enable = "sse4.1")]
pub(super) unsafe fn run_v128<F: LaneFn>(f: F) -> F::Output {
    f.run::<V128>()
}

/// # Safety
/// The CPU must support AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn run_avx2<F: LaneFn>(f: F) -> F::Output {
    f.run::<Avx2>()
}

/// # Safety
/// The CPU must support AVX-512 F, BW, DQ and VL.
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]
pub(super) unsafe fn run_avx512<F: LaneFn>(f: F) -> F::Output {
    f.run::<Avx512>()
}
