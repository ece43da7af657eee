//! Four f32 lanes in an SSE register (the v128 path on x86-64). The safety
//! argument of the impl is in `simd/x86/mod.rs`.

use crate::dispatch::KernelPath;
use crate::simd::Lanes;
use std::arch::x86_64::*;

/// Four f32 lanes in an SSE register (SSE4.1 path). SSE has no fused
/// multiply-add, so `fma` is done per lane in software (`f32::mul_add`),
/// which is correctly rounded and therefore gives the scalar bits.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct V128(__m128);

// SAFETY: IEEE binary32 arithmetic under an MXCSR with FTZ/DAZ cleared, exact
// bit operations and compares (the argument in full: simd/x86/mod.rs).
unsafe impl Lanes for V128 {
    const N: usize = 4;
    const PATH: KernelPath = KernelPath::V128;
    type F64 = crate::simd::f64_lanes::F64x2;

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

    type Mask = V128;

    #[inline(always)]
    unsafe fn and(self, b: Self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_and_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn or(self, b: Self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_or_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_xor_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn and_not(self, b: Self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_andnot_ps(b.0, self.0)) }
    }
    #[inline(always)]
    unsafe fn add_i32(self, b: Self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe {
            V128(_mm_castsi128_ps(_mm_add_epi32(
                _mm_castps_si128(self.0),
                _mm_castps_si128(b.0),
            )))
        }
    }
    #[inline(always)]
    unsafe fn sub_i32(self, b: Self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe {
            V128(_mm_castsi128_ps(_mm_sub_epi32(
                _mm_castps_si128(self.0),
                _mm_castps_si128(b.0),
            )))
        }
    }
    #[inline(always)]
    unsafe fn shl_i32<const K: u32>(self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe {
            V128(_mm_castsi128_ps(_mm_sll_epi32(
                _mm_castps_si128(self.0),
                _mm_cvtsi32_si128(K as i32),
            )))
        }
    }
    #[inline(always)]
    unsafe fn shr_i32<const K: u32>(self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe {
            V128(_mm_castsi128_ps(_mm_sra_epi32(
                _mm_castps_si128(self.0),
                _mm_cvtsi32_si128(K as i32),
            )))
        }
    }
    #[inline(always)]
    unsafe fn shr_u32<const K: u32>(self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe {
            V128(_mm_castsi128_ps(_mm_srl_epi32(
                _mm_castps_si128(self.0),
                _mm_cvtsi32_si128(K as i32),
            )))
        }
    }
    #[inline(always)]
    unsafe fn i32_to_f32(self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_cvtepi32_ps(_mm_castps_si128(self.0))) }
    }
    #[inline(always)]
    unsafe fn sqrt(self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_sqrt_ps(self.0)) }
    }
    #[inline(always)]
    unsafe fn min(self, b: Self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_min_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn max(self, b: Self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_max_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn lt(self, b: Self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_cmplt_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn le(self, b: Self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_cmple_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn gt(self, b: Self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_cmpgt_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn ge(self, b: Self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_cmpge_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn eq(self, b: Self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_cmpeq_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn is_nan(self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_cmpunord_ps(self.0, self.0)) }
    }
    #[inline(always)]
    unsafe fn select(m: Self, a: Self, b: Self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_blendv_ps(b.0, a.0, m.0)) }
    }
    #[inline(always)]
    unsafe fn mask_and(a: Self, b: Self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_and_ps(a.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn mask_or(a: Self, b: Self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_or_ps(a.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn mask_not(a: Self) -> Self {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { V128(_mm_xor_ps(a.0, _mm_castsi128_ps(_mm_set1_epi32(-1)))) }
    }
    #[inline(always)]
    unsafe fn any(m: Self) -> bool {
        // SAFETY: called only inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
        unsafe { _mm_movemask_ps(m.0) != 0 }
    }
    #[inline(always)]
    unsafe fn lookup16(table: &[f32; 16], idx: Self) -> Self {
        // SSE4.1 has no variable permute: read the four indices and gather.
        let mut i = [0u32; 4];
        // SAFETY: `i` is valid for 4 u32 writes; each index is masked to 0..16.
        unsafe {
            _mm_storeu_si128(i.as_mut_ptr().cast(), _mm_castps_si128(idx.0));
            let t = |k: usize| table[(i[k] & 15) as usize];
            V128(_mm_setr_ps(t(0), t(1), t(2), t(3)))
        }
    }
    #[inline(always)]
    unsafe fn canonicalize_nan(self) -> Self {
        // SAFETY: SSE2 integer ops (baseline) and SSE4.1 blendv (enabled in
        // run_v128). NaN ⇔ (bits & 0x7fffffff) > 0x7f800000 as i32, tested on
        // the integer bits (opaque to NaN-payload folding).
        unsafe {
            let b = _mm_and_si128(_mm_castps_si128(self.0), _mm_set1_epi32(0x7fff_ffff));
            let m = _mm_cmpgt_epi32(b, _mm_set1_epi32(0x7f80_0000));
            V128(_mm_blendv_ps(
                self.0,
                _mm_castsi128_ps(_mm_set1_epi32(crate::simd::CANONICAL_NAN as i32)),
                _mm_castsi128_ps(m),
            ))
        }
    }
}
