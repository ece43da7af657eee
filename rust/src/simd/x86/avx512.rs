//! Sixteen f32 lanes in an AVX-512 register (the avx512 path). The safety
//! argument of the impl is in `simd/x86/mod.rs`.

use crate::dispatch::KernelPath;
use crate::simd::Lanes;
use std::arch::x86_64::*;

/// Sixteen f32 lanes in an AVX-512 register.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct Avx512(__m512);

// SAFETY: IEEE binary32 arithmetic under an MXCSR with FTZ/DAZ cleared, exact
// bit operations and compares (the argument in full: simd/x86/mod.rs).
unsafe impl Lanes for Avx512 {
    const N: usize = 16;
    const PATH: KernelPath = KernelPath::Avx512;
    // Four binary64 lanes: the CTC recursions are the only double-precision
    // lane kernels and an eight-lane type was not built (AVX2 is enabled
    // in the avx512 trampoline too).
    type F64 = crate::simd::f64_lanes::F64x4;

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
    unsafe fn load_first(p: *const f32, count: usize) -> Self {
        debug_assert!(count <= 16);
        let mask = ((1u32 << count) - 1) as __mmask16;
        // SAFETY: AVX-512 F is enabled inside run_avx512; the masked load
        // reads (and may fault on) only the first `count` lanes, which the
        // caller guarantees are valid.
        unsafe { Avx512(_mm512_maskz_loadu_ps(mask, p)) }
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

    type Mask = __mmask16;

    #[inline(always)]
    unsafe fn and(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe {
            Avx512(_mm512_castsi512_ps(_mm512_and_si512(
                _mm512_castps_si512(self.0),
                _mm512_castps_si512(b.0),
            )))
        }
    }
    #[inline(always)]
    unsafe fn or(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe {
            Avx512(_mm512_castsi512_ps(_mm512_or_si512(
                _mm512_castps_si512(self.0),
                _mm512_castps_si512(b.0),
            )))
        }
    }
    #[inline(always)]
    unsafe fn xor(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe {
            Avx512(_mm512_castsi512_ps(_mm512_xor_si512(
                _mm512_castps_si512(self.0),
                _mm512_castps_si512(b.0),
            )))
        }
    }
    #[inline(always)]
    unsafe fn and_not(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe {
            Avx512(_mm512_castsi512_ps(_mm512_andnot_si512(
                _mm512_castps_si512(b.0),
                _mm512_castps_si512(self.0),
            )))
        }
    }
    #[inline(always)]
    unsafe fn add_i32(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe {
            Avx512(_mm512_castsi512_ps(_mm512_add_epi32(
                _mm512_castps_si512(self.0),
                _mm512_castps_si512(b.0),
            )))
        }
    }
    #[inline(always)]
    unsafe fn sub_i32(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe {
            Avx512(_mm512_castsi512_ps(_mm512_sub_epi32(
                _mm512_castps_si512(self.0),
                _mm512_castps_si512(b.0),
            )))
        }
    }
    #[inline(always)]
    unsafe fn shl_i32<const K: u32>(self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe {
            Avx512(_mm512_castsi512_ps(_mm512_sll_epi32(
                _mm512_castps_si512(self.0),
                _mm_cvtsi32_si128(K as i32),
            )))
        }
    }
    #[inline(always)]
    unsafe fn shr_i32<const K: u32>(self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe {
            Avx512(_mm512_castsi512_ps(_mm512_sra_epi32(
                _mm512_castps_si512(self.0),
                _mm_cvtsi32_si128(K as i32),
            )))
        }
    }
    #[inline(always)]
    unsafe fn shr_u32<const K: u32>(self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe {
            Avx512(_mm512_castsi512_ps(_mm512_srl_epi32(
                _mm512_castps_si512(self.0),
                _mm_cvtsi32_si128(K as i32),
            )))
        }
    }
    #[inline(always)]
    unsafe fn i32_to_f32(self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe { Avx512(_mm512_cvtepi32_ps(_mm512_castps_si512(self.0))) }
    }
    #[inline(always)]
    unsafe fn sqrt(self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe { Avx512(_mm512_sqrt_ps(self.0)) }
    }
    #[inline(always)]
    unsafe fn min(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe { Avx512(_mm512_min_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn max(self, b: Self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe { Avx512(_mm512_max_ps(self.0, b.0)) }
    }
    #[inline(always)]
    unsafe fn lt(self, b: Self) -> __mmask16 {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(self.0, b.0) }
    }
    #[inline(always)]
    unsafe fn le(self, b: Self) -> __mmask16 {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe { _mm512_cmp_ps_mask::<_CMP_LE_OQ>(self.0, b.0) }
    }
    #[inline(always)]
    unsafe fn gt(self, b: Self) -> __mmask16 {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe { _mm512_cmp_ps_mask::<_CMP_GT_OQ>(self.0, b.0) }
    }
    #[inline(always)]
    unsafe fn ge(self, b: Self) -> __mmask16 {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe { _mm512_cmp_ps_mask::<_CMP_GE_OQ>(self.0, b.0) }
    }
    #[inline(always)]
    unsafe fn eq(self, b: Self) -> __mmask16 {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe { _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(self.0, b.0) }
    }
    #[inline(always)]
    unsafe fn is_nan(self) -> __mmask16 {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe { _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(self.0, self.0) }
    }
    #[inline(always)]
    unsafe fn select(m: __mmask16, a: Self, b: Self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512 F/BW/DQ/VL enabled).
        unsafe { Avx512(_mm512_mask_blend_ps(m, b.0, a.0)) }
    }
    #[inline(always)]
    unsafe fn mask_and(a: __mmask16, b: __mmask16) -> __mmask16 {
        a & b
    }
    #[inline(always)]
    unsafe fn mask_or(a: __mmask16, b: __mmask16) -> __mmask16 {
        a | b
    }
    #[inline(always)]
    unsafe fn mask_not(a: __mmask16) -> __mmask16 {
        !a
    }
    #[inline(always)]
    unsafe fn any(m: __mmask16) -> bool {
        m != 0
    }
    #[inline(always)]
    unsafe fn lookup16(table: &[f32; 16], idx: Self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512F enabled); the table
        // is valid for 16 reads; vpermps uses the low 4 index bits.
        unsafe {
            Avx512(_mm512_permutexvar_ps(
                _mm512_castps_si512(idx.0),
                _mm512_loadu_ps(table.as_ptr()),
            ))
        }
    }
    #[inline(always)]
    unsafe fn canonicalize_nan(self) -> Self {
        // SAFETY: called only inside run_avx512 (AVX-512F enabled). NaN ⇔
        // (bits & 0x7fffffff) > 0x7f800000 as i32, tested on the integer bits.
        unsafe {
            let b = _mm512_and_si512(_mm512_castps_si512(self.0), _mm512_set1_epi32(0x7fff_ffff));
            let m = _mm512_cmpgt_epi32_mask(b, _mm512_set1_epi32(0x7f80_0000));
            Avx512(_mm512_mask_blend_ps(
                m,
                self.0,
                _mm512_castsi512_ps(_mm512_set1_epi32(crate::simd::CANONICAL_NAN as i32)),
            ))
        }
    }
    #[inline(always)]
    unsafe fn tree8(v: [Self; 8]) -> [f32; 8] {
        // SAFETY: called only inside run_avx512 (AVX-512F enabled); `out` is
        // valid for 8 writes. Every add below pairs lane i with lane i + s of
        // the same register, lane i first, as the scalar tree does; the
        // shuffles only move lanes (the default's stores and scalar adds
        // would cost ~30 instructions per output, more than a k = 64 dot).
        unsafe {
            // s = 8: [lo256(a) | lo256(b)] + [hi256(a) | hi256(b)] (two
            // eight-lane half-trees per register). Helpers, not closures: a
            // closure is not compiled with the trampoline's target features.
            #[inline(always)]
            unsafe fn q(a: __m512, b: __m512) -> __m512 {
                // SAFETY: inlined into the AVX-512 caller.
                unsafe {
                    _mm512_add_ps(
                        _mm512_shuffle_f32x4::<0b01_00_01_00>(a, b),
                        _mm512_shuffle_f32x4::<0b11_10_11_10>(a, b),
                    )
                }
            }
            let (q01, q23, q45, q67) = (
                q(v[0].0, v[1].0),
                q(v[2].0, v[3].0),
                q(v[4].0, v[5].0),
                q(v[6].0, v[7].0),
            );
            // s = 4: 128-bit block 0 plus block 1 of each half-tree:
            // [r(x0) r(x1) r(y0) r(y1)] (four lanes each) for x = q01, y = q23.
            #[inline(always)]
            unsafe fn r(x: __m512, y: __m512) -> __m512 {
                // SAFETY: inlined into the AVX-512 caller.
                unsafe {
                    _mm512_add_ps(
                        _mm512_shuffle_f32x4::<0b10_00_10_00>(x, y),
                        _mm512_shuffle_f32x4::<0b11_01_11_01>(x, y),
                    )
                }
            }
            // Block b of r0123 holds register b's four partials, of r4567
            // register 4 + b's.
            let (r0123, r4567) = (r(q01, q23), r(q45, q67));
            // s = 2, per 128-bit block b: [p0+p2, p1+p3] of register b, then
            // of register 4 + b.
            let s = _mm512_add_ps(
                _mm512_shuffle_ps::<0b01_00_01_00>(r0123, r4567),
                _mm512_shuffle_ps::<0b11_10_11_10>(r0123, r4567),
            );
            // s = 1: lane 0 + lane 1 and lane 2 + lane 3 of each block:
            // block b = [out(b), out(4 + b), ..].
            let t = _mm512_add_ps(
                _mm512_shuffle_ps::<0b10_00_10_00>(s, s),
                _mm512_shuffle_ps::<0b11_01_11_01>(s, s),
            );
            let t = _mm512_permutexvar_ps(
                _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0),
                t,
            );
            let mut out = [0f32; 8];
            _mm256_storeu_ps(out.as_mut_ptr(), _mm512_castps512_ps256(t));
            out
        }
    }
}
