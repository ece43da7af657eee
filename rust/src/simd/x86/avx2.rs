//! Eight f32 lanes in an AVX register (the avx2 path: AVX2 + FMA). The
//! safety argument of the impl is in `simd/x86/mod.rs`.

use crate::dispatch::KernelPath;
use crate::simd::Lanes;
use std::arch::x86_64::*;

/// Eight f32 lanes in an AVX register (AVX2 + FMA path).
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct Avx2(__m256);

// SAFETY: IEEE binary32 arithmetic under an MXCSR with FTZ/DAZ cleared, exact
// bit operations and compares (the argument in full: simd/x86/mod.rs).
unsafe impl Lanes for Avx2 {
    const N: usize = 8;
    const PATH: KernelPath = KernelPath::Avx2;
    type F64 = crate::simd::f64_lanes::F64x4;

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
    unsafe fn load_first(p: *const f32, count: usize) -> Self {
        debug_assert!(count <= 8);
        // SAFETY: AVX2 is enabled inside run_avx2; the masked load reads
        // (and may fault on) only the lanes whose mask is set, the first
        // `count`, which the caller guarantees are valid.
        unsafe {
            let lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
            let mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(count as i32), lane);
            Avx2(_mm256_maskload_ps(p, mask))
        }
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

    type Mask = Avx2;

    #[inline(always)]
    unsafe fn and(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { Avx2(_mm256_and_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn or(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { Avx2(_mm256_or_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { Avx2(_mm256_xor_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn and_not(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { Avx2(_mm256_andnot_ps(b.0, self.0)) }
    }
    #[inline(always)]
    unsafe fn add_i32(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe {
            Avx2(_mm256_castsi256_ps(_mm256_add_epi32(
                _mm256_castps_si256(self.0),
                _mm256_castps_si256(b.0),
            )))
        }
    }
    #[inline(always)]
    unsafe fn sub_i32(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe {
            Avx2(_mm256_castsi256_ps(_mm256_sub_epi32(
                _mm256_castps_si256(self.0),
                _mm256_castps_si256(b.0),
            )))
        }
    }
    #[inline(always)]
    unsafe fn shl_i32<const K: u32>(self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe {
            Avx2(_mm256_castsi256_ps(_mm256_sll_epi32(
                _mm256_castps_si256(self.0),
                _mm_cvtsi32_si128(K as i32),
            )))
        }
    }
    #[inline(always)]
    unsafe fn shr_i32<const K: u32>(self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe {
            Avx2(_mm256_castsi256_ps(_mm256_sra_epi32(
                _mm256_castps_si256(self.0),
                _mm_cvtsi32_si128(K as i32),
            )))
        }
    }
    #[inline(always)]
    unsafe fn shr_u32<const K: u32>(self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe {
            Avx2(_mm256_castsi256_ps(_mm256_srl_epi32(
                _mm256_castps_si256(self.0),
                _mm_cvtsi32_si128(K as i32),
            )))
        }
    }
    #[inline(always)]
    unsafe fn i32_to_f32(self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { Avx2(_mm256_cvtepi32_ps(_mm256_castps_si256(self.0))) }
    }
    #[inline(always)]
    unsafe fn sqrt(self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { Avx2(_mm256_sqrt_ps(self.0)) }
    }
    #[inline(always)]
    unsafe fn min(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { Avx2(_mm256_min_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn max(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { Avx2(_mm256_max_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn lt(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { Avx2(_mm256_cmp_ps::<_CMP_LT_OQ>(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn le(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { Avx2(_mm256_cmp_ps::<_CMP_LE_OQ>(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn gt(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { Avx2(_mm256_cmp_ps::<_CMP_GT_OQ>(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn ge(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { Avx2(_mm256_cmp_ps::<_CMP_GE_OQ>(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn eq(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { Avx2(_mm256_cmp_ps::<_CMP_EQ_OQ>(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn is_nan(self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { Avx2(_mm256_cmp_ps::<_CMP_UNORD_Q>(self.0, self.0)) }
    }
    #[inline(always)]
    unsafe fn select(m: Self, a: Self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { Avx2(_mm256_blendv_ps(b.0, a.0, m.0)) }
    }
    #[inline(always)]
    unsafe fn mask_and(a: Self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { Avx2(_mm256_and_ps(a.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn mask_or(a: Self, b: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { Avx2(_mm256_or_ps(a.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn mask_not(a: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe {
            Avx2(_mm256_xor_ps(
                a.0,
                _mm256_castsi256_ps(_mm256_set1_epi32(-1)),
            ))
        }
    }
    #[inline(always)]
    unsafe fn any(m: Self) -> bool {
        // SAFETY: called only inside run_avx2 (AVX2 enabled).
        unsafe { _mm256_movemask_ps(m.0) != 0 }
    }
    #[inline(always)]
    unsafe fn lookup16(table: &[f32; 16], idx: Self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled); the table is
        // valid for 16 reads. Each half is an 8-entry permute on the low 3
        // index bits; bit 3 (moved to the sign) picks the half.
        unsafe {
            let i = _mm256_castps_si256(idx.0);
            let lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(table.as_ptr()), i);
            let hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(table.as_ptr().add(8)), i);
            let pick_hi = _mm256_castsi256_ps(_mm256_slli_epi32::<28>(i));
            Avx2(_mm256_blendv_ps(lo, hi, pick_hi))
        }
    }
    #[inline(always)]
    unsafe fn tree8(v: [Self; 8]) -> [f32; 8] {
        // SAFETY: called only inside run_avx2 (AVX2 enabled); `out` is valid
        // for 8 writes. Every add below pairs lane i with lane i + s of the
        // same register, lane i first, as the scalar tree does.
        unsafe {
            // s = 4: [lo(a) | lo(b)] + [hi(a) | hi(b)] = [q(a) | q(b)].
            // (Helpers, not closures: a closure is not compiled with the
            // trampoline's target features.)
            #[inline(always)]
            unsafe fn q(a: __m256, b: __m256) -> __m256 {
                // SAFETY: inlined into the AVX2 caller.
                unsafe {
                    _mm256_add_ps(
                        _mm256_permute2f128_ps::<0x20>(a, b),
                        _mm256_permute2f128_ps::<0x31>(a, b),
                    )
                }
            }
            let (q01, q23, q45, q67) = (
                q(v[0].0, v[1].0),
                q(v[2].0, v[3].0),
                q(v[4].0, v[5].0),
                q(v[6].0, v[7].0),
            );
            // s = 2: per 128-bit half, (q0, q1) of x and y plus their (q2, q3):
            // [r(0) r(2) | r(1) r(3)] for x = q01, y = q23 (two lanes each).
            #[inline(always)]
            unsafe fn r(x: __m256, y: __m256) -> __m256 {
                // SAFETY: inlined into the AVX2 caller.
                unsafe {
                    _mm256_add_ps(
                        _mm256_shuffle_ps::<0b01_00_01_00>(x, y),
                        _mm256_shuffle_ps::<0b11_10_11_10>(x, y),
                    )
                }
            }
            let (r0123, r4567) = (r(q01, q23), r(q45, q67));
            // s = 1: even lanes plus odd lanes: [t0 t2 t4 t6 | t1 t3 t5 t7].
            let t = _mm256_add_ps(
                _mm256_shuffle_ps::<0b10_00_10_00>(r0123, r4567),
                _mm256_shuffle_ps::<0b11_01_11_01>(r0123, r4567),
            );
            let t = _mm256_permutevar8x32_ps(t, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            let mut out = [0f32; 8];
            _mm256_storeu_ps(out.as_mut_ptr(), t);
            out
        }
    }
    #[inline(always)]
    unsafe fn canonicalize_nan(self) -> Self {
        // SAFETY: called only inside run_avx2 (AVX2 enabled). NaN ⇔
        // (bits & 0x7fffffff) > 0x7f800000 as i32, tested on the integer bits.
        unsafe {
            let b = _mm256_and_si256(_mm256_castps_si256(self.0), _mm256_set1_epi32(0x7fff_ffff));
            let m = _mm256_cmpgt_epi32(b, _mm256_set1_epi32(0x7f80_0000));
            Avx2(_mm256_blendv_ps(
                self.0,
                _mm256_castsi256_ps(_mm256_set1_epi32(crate::simd::CANONICAL_NAN as i32)),
                _mm256_castsi256_ps(m),
            ))
        }
    }
}
