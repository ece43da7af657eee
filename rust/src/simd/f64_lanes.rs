//! Double-precision lanes: the few binary64 operations the CTC recursions
//! run several cells at a time ([`crate::kernels::ctc`]), one type per
//! instruction set, reached from a [`Lanes`](super::Lanes) type as its
//! `Lanes::F64` (so the f32 trampolines of `run_on` compile them too).
//!
//! `f64` itself is the one-lane definition. As for the f32 lanes, only
//! correctly rounded IEEE operations (add, sub, mul, div), exact bit
//! operations, 64-bit integer add/sub/shift on the bit patterns, ordered
//! compares and blends appear, so every type gives, lane by lane, the bits
//! of the `f64` instantiation. There is no fma here at all.

/// One register of `N` binary64 lanes. A mask is a value of the same type
/// whose lanes are all-ones or all-zeros (`f64`'s is a `bool`).
///
/// # Safety
/// Implementors promise that every method computes, per lane, exactly the
/// IEEE binary64 result of the named operation rounded to nearest even, and
/// exact bit, integer and compare results. Callers must only call the
/// methods where the implementor's CPU features are enabled (inside
/// [`run_on`](super::run_on), through `Lanes::F64`) and must pass pointers
/// valid for `N` f64 reads or writes (no alignment required).
pub unsafe trait F64Lanes: Copy {
    /// Lanes per register.
    const N: usize;
    type Mask: Copy;

    unsafe fn splat(x: f64) -> Self;
    /// Every lane the binary64 whose bits are `bits`.
    unsafe fn splat_bits(bits: u64) -> Self;
    unsafe fn load(p: *const f64) -> Self;
    unsafe fn store(self, p: *mut f64);

    unsafe fn add(self, b: Self) -> Self;
    unsafe fn sub(self, b: Self) -> Self;
    unsafe fn mul(self, b: Self) -> Self;
    unsafe fn div(self, b: Self) -> Self;

    /// The sign bit flipped (−x, also for zeros and NaN).
    unsafe fn neg(self) -> Self;
    /// Bitwise and of the patterns.
    unsafe fn and(self, b: Self) -> Self;
    /// Wrapping 64-bit integer sum of the patterns.
    unsafe fn add_u64(self, b: Self) -> Self;
    /// Wrapping 64-bit integer difference of the patterns.
    unsafe fn sub_u64(self, b: Self) -> Self;
    /// Logical shifts of the patterns by `K < 64` bits.
    unsafe fn shl_u64<const K: i32>(self) -> Self;
    unsafe fn shr_u64<const K: i32>(self) -> Self;

    /// Ordered compares: false where either operand is NaN.
    unsafe fn ge(self, b: Self) -> Self::Mask;
    unsafe fn lt(self, b: Self) -> Self::Mask;
    unsafe fn eq(self, b: Self) -> Self::Mask;
    unsafe fn is_nan(self) -> Self::Mask;

    /// `a` where `m` is set, else `b`.
    unsafe fn select(m: Self::Mask, a: Self, b: Self) -> Self;
    unsafe fn mask_and(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    unsafe fn mask_or(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    unsafe fn mask_not(a: Self::Mask) -> Self::Mask;
    /// Whether any lane of `m` is set.
    unsafe fn any(m: Self::Mask) -> bool;
}

// SAFETY: plain Rust f64 arithmetic is IEEE binary64 with round-to-nearest-
// even and Rust never contracts a product and a sum into an fma; the bit and
// integer operations work on `to_bits` patterns, exactly.
unsafe impl F64Lanes for f64 {
    const N: usize = 1;
    type Mask = bool;

    #[inline(always)]
    unsafe fn splat(x: f64) -> f64 {
        x
    }
    #[inline(always)]
    unsafe fn splat_bits(bits: u64) -> f64 {
        f64::from_bits(bits)
    }
    #[inline(always)]
    unsafe fn load(p: *const f64) -> f64 {
        // SAFETY: the caller passes a pointer valid for one read.
        unsafe { p.read_unaligned() }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f64) {
        // SAFETY: the caller passes a pointer valid for one write.
        unsafe { p.write_unaligned(self) }
    }
    #[inline(always)]
    unsafe fn add(self, b: f64) -> f64 {
        self + b
    }
    #[inline(always)]
    unsafe fn sub(self, b: f64) -> f64 {
        self - b
    }
    #[inline(always)]
    unsafe fn mul(self, b: f64) -> f64 {
        self * b
    }
    #[inline(always)]
    unsafe fn div(self, b: f64) -> f64 {
        self / b
    }
    #[inline(always)]
    unsafe fn neg(self) -> f64 {
        -self
    }
    #[inline(always)]
    unsafe fn and(self, b: f64) -> f64 {
        f64::from_bits(self.to_bits() & b.to_bits())
    }
    #[inline(always)]
    unsafe fn add_u64(self, b: f64) -> f64 {
        f64::from_bits(self.to_bits().wrapping_add(b.to_bits()))
    }
    #[inline(always)]
    unsafe fn sub_u64(self, b: f64) -> f64 {
        f64::from_bits(self.to_bits().wrapping_sub(b.to_bits()))
    }
    #[inline(always)]
    unsafe fn shl_u64<const K: i32>(self) -> f64 {
        f64::from_bits(self.to_bits() << K)
    }
    #[inline(always)]
    unsafe fn shr_u64<const K: i32>(self) -> f64 {
        f64::from_bits(self.to_bits() >> K)
    }
    #[inline(always)]
    unsafe fn ge(self, b: f64) -> bool {
        self >= b
    }
    #[inline(always)]
    unsafe fn lt(self, b: f64) -> bool {
        self < b
    }
    #[inline(always)]
    unsafe fn eq(self, b: f64) -> bool {
        self == b
    }
    #[inline(always)]
    unsafe fn is_nan(self) -> bool {
        self.is_nan()
    }
    #[inline(always)]
    unsafe fn select(m: bool, a: f64, b: f64) -> f64 {
        if m {
            a
        } else {
            b
        }
    }
    #[inline(always)]
    unsafe fn mask_and(a: bool, b: bool) -> bool {
        a && b
    }
    #[inline(always)]
    unsafe fn mask_or(a: bool, b: bool) -> bool {
        a || b
    }
    #[inline(always)]
    unsafe fn mask_not(a: bool) -> bool {
        !a
    }
    #[inline(always)]
    unsafe fn any(m: bool) -> bool {
        m
    }
}

#[cfg(target_arch = "x86_64")]
pub use x86::{F64x2, F64x4};

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! Two lanes in an SSE register (the v128 path, SSE4.1) and four in an
    //! AVX register (the avx2 and avx512 paths). The argument that these
    //! instructions are the IEEE operations under the library's MXCSR is
    //! the one in `simd/x86/mod.rs`.

    use super::F64Lanes;
    use std::arch::x86_64::*;

    /// Two binary64 lanes (SSE4.1).
    #[derive(Clone, Copy, Debug)]
    #[repr(transparent)]
    pub struct F64x2(__m128d);

    /// Four binary64 lanes (AVX2).
    #[derive(Clone, Copy, Debug)]
    #[repr(transparent)]
    pub struct F64x4(__m256d);

    // SAFETY: addpd/subpd/mulpd/divpd are IEEE binary64 operations rounded
    // to nearest even (MXCSR unchanged, FTZ/DAZ cleared); and/paddq/psubq/
    // psllq/psrlq are exact on the patterns; cmppd with the ordered
    // predicates is false for NaN like Rust's compares; blendvpd picks by
    // the sign bit of all-ones/all-zeros masks. Every method is called only
    // inside run_v128 (SSE4.1 enabled; SSE2 is baseline).
    unsafe impl F64Lanes for F64x2 {
        const N: usize = 2;
        type Mask = F64x2;

        #[inline(always)]
        unsafe fn splat(x: f64) -> Self {
            // SAFETY: SSE2 (baseline).
            unsafe { F64x2(_mm_set1_pd(x)) }
        }
        #[inline(always)]
        unsafe fn splat_bits(bits: u64) -> Self {
            // SAFETY: SSE2 (baseline).
            unsafe { F64x2(_mm_castsi128_pd(_mm_set1_epi64x(bits as i64))) }
        }
        #[inline(always)]
        unsafe fn load(p: *const f64) -> Self {
            // SAFETY: the caller passes a pointer valid for 2 reads.
            unsafe { F64x2(_mm_loadu_pd(p)) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f64) {
            // SAFETY: the caller passes a pointer valid for 2 writes.
            unsafe { _mm_storeu_pd(p, self.0) }
        }
        #[inline(always)]
        unsafe fn add(self, b: Self) -> Self {
            // SAFETY: SSE2 (baseline).
            unsafe { F64x2(_mm_add_pd(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn sub(self, b: Self) -> Self {
            // SAFETY: SSE2 (baseline).
            unsafe { F64x2(_mm_sub_pd(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn mul(self, b: Self) -> Self {
            // SAFETY: SSE2 (baseline).
            unsafe { F64x2(_mm_mul_pd(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn div(self, b: Self) -> Self {
            // SAFETY: SSE2 (baseline).
            unsafe { F64x2(_mm_div_pd(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn neg(self) -> Self {
            // SAFETY: SSE2 (baseline).
            unsafe { F64x2(_mm_xor_pd(self.0, _mm_set1_pd(-0.0))) }
        }
        #[inline(always)]
        unsafe fn and(self, b: Self) -> Self {
            // SAFETY: SSE2 (baseline).
            unsafe { F64x2(_mm_and_pd(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn add_u64(self, b: Self) -> Self {
            // SAFETY: SSE2 (baseline).
            unsafe {
                F64x2(_mm_castsi128_pd(_mm_add_epi64(
                    _mm_castpd_si128(self.0),
                    _mm_castpd_si128(b.0),
                )))
            }
        }
        #[inline(always)]
        unsafe fn sub_u64(self, b: Self) -> Self {
            // SAFETY: SSE2 (baseline).
            unsafe {
                F64x2(_mm_castsi128_pd(_mm_sub_epi64(
                    _mm_castpd_si128(self.0),
                    _mm_castpd_si128(b.0),
                )))
            }
        }
        #[inline(always)]
        unsafe fn shl_u64<const K: i32>(self) -> Self {
            // SAFETY: SSE2 (baseline).
            unsafe {
                F64x2(_mm_castsi128_pd(_mm_slli_epi64::<K>(_mm_castpd_si128(
                    self.0,
                ))))
            }
        }
        #[inline(always)]
        unsafe fn shr_u64<const K: i32>(self) -> Self {
            // SAFETY: SSE2 (baseline).
            unsafe {
                F64x2(_mm_castsi128_pd(_mm_srli_epi64::<K>(_mm_castpd_si128(
                    self.0,
                ))))
            }
        }
        #[inline(always)]
        unsafe fn ge(self, b: Self) -> Self {
            // SAFETY: SSE2 (baseline); cmpgepd is ordered (false on NaN).
            unsafe { F64x2(_mm_cmpge_pd(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn lt(self, b: Self) -> Self {
            // SAFETY: SSE2 (baseline); cmpltpd is ordered.
            unsafe { F64x2(_mm_cmplt_pd(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn eq(self, b: Self) -> Self {
            // SAFETY: SSE2 (baseline); cmpeqpd is ordered.
            unsafe { F64x2(_mm_cmpeq_pd(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn is_nan(self) -> Self {
            // SAFETY: SSE2 (baseline).
            unsafe { F64x2(_mm_cmpunord_pd(self.0, self.0)) }
        }
        #[inline(always)]
        unsafe fn select(m: Self, a: Self, b: Self) -> Self {
            // SAFETY: SSE4.1 enabled inside run_v128.
            unsafe { F64x2(_mm_blendv_pd(b.0, a.0, m.0)) }
        }
        #[inline(always)]
        unsafe fn mask_and(a: Self, b: Self) -> Self {
            // SAFETY: SSE2 (baseline).
            unsafe { F64x2(_mm_and_pd(a.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn mask_or(a: Self, b: Self) -> Self {
            // SAFETY: SSE2 (baseline).
            unsafe { F64x2(_mm_or_pd(a.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn mask_not(a: Self) -> Self {
            // SAFETY: SSE2 (baseline).
            unsafe { F64x2(_mm_xor_pd(a.0, _mm_castsi128_pd(_mm_set1_epi64x(-1)))) }
        }
        #[inline(always)]
        unsafe fn any(m: Self) -> bool {
            // SAFETY: SSE2 (baseline).
            unsafe { _mm_movemask_pd(m.0) != 0 }
        }
    }

    // SAFETY: as for F64x2, with the 256-bit forms; every method is called
    // only inside run_avx2 or run_avx512 (AVX2 enabled in both).
    unsafe impl F64Lanes for F64x4 {
        const N: usize = 4;
        type Mask = F64x4;

        #[inline(always)]
        unsafe fn splat(x: f64) -> Self {
            // SAFETY: AVX enabled (see the impl's SAFETY).
            unsafe { F64x4(_mm256_set1_pd(x)) }
        }
        #[inline(always)]
        unsafe fn splat_bits(bits: u64) -> Self {
            // SAFETY: AVX enabled.
            unsafe { F64x4(_mm256_castsi256_pd(_mm256_set1_epi64x(bits as i64))) }
        }
        #[inline(always)]
        unsafe fn load(p: *const f64) -> Self {
            // SAFETY: the caller passes a pointer valid for 4 reads.
            unsafe { F64x4(_mm256_loadu_pd(p)) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f64) {
            // SAFETY: the caller passes a pointer valid for 4 writes.
            unsafe { _mm256_storeu_pd(p, self.0) }
        }
        #[inline(always)]
        unsafe fn add(self, b: Self) -> Self {
            // SAFETY: AVX enabled.
            unsafe { F64x4(_mm256_add_pd(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn sub(self, b: Self) -> Self {
            // SAFETY: AVX enabled.
            unsafe { F64x4(_mm256_sub_pd(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn mul(self, b: Self) -> Self {
            // SAFETY: AVX enabled.
            unsafe { F64x4(_mm256_mul_pd(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn div(self, b: Self) -> Self {
            // SAFETY: AVX enabled.
            unsafe { F64x4(_mm256_div_pd(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn neg(self) -> Self {
            // SAFETY: AVX enabled.
            unsafe { F64x4(_mm256_xor_pd(self.0, _mm256_set1_pd(-0.0))) }
        }
        #[inline(always)]
        unsafe fn and(self, b: Self) -> Self {
            // SAFETY: AVX enabled.
            unsafe { F64x4(_mm256_and_pd(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn add_u64(self, b: Self) -> Self {
            // SAFETY: AVX2 enabled.
            unsafe {
                F64x4(_mm256_castsi256_pd(_mm256_add_epi64(
                    _mm256_castpd_si256(self.0),
                    _mm256_castpd_si256(b.0),
                )))
            }
        }
        #[inline(always)]
        unsafe fn sub_u64(self, b: Self) -> Self {
            // SAFETY: AVX2 enabled.
            unsafe {
                F64x4(_mm256_castsi256_pd(_mm256_sub_epi64(
                    _mm256_castpd_si256(self.0),
                    _mm256_castpd_si256(b.0),
                )))
            }
        }
        #[inline(always)]
        unsafe fn shl_u64<const K: i32>(self) -> Self {
            // SAFETY: AVX2 enabled.
            unsafe {
                F64x4(_mm256_castsi256_pd(_mm256_slli_epi64::<K>(
                    _mm256_castpd_si256(self.0),
                )))
            }
        }
        #[inline(always)]
        unsafe fn shr_u64<const K: i32>(self) -> Self {
            // SAFETY: AVX2 enabled.
            unsafe {
                F64x4(_mm256_castsi256_pd(_mm256_srli_epi64::<K>(
                    _mm256_castpd_si256(self.0),
                )))
            }
        }
        #[inline(always)]
        unsafe fn ge(self, b: Self) -> Self {
            // SAFETY: AVX enabled; GE_OQ is ordered (false on NaN).
            unsafe { F64x4(_mm256_cmp_pd::<_CMP_GE_OQ>(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn lt(self, b: Self) -> Self {
            // SAFETY: AVX enabled; LT_OQ is ordered.
            unsafe { F64x4(_mm256_cmp_pd::<_CMP_LT_OQ>(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn eq(self, b: Self) -> Self {
            // SAFETY: AVX enabled; EQ_OQ is ordered.
            unsafe { F64x4(_mm256_cmp_pd::<_CMP_EQ_OQ>(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn is_nan(self) -> Self {
            // SAFETY: AVX enabled.
            unsafe { F64x4(_mm256_cmp_pd::<_CMP_UNORD_Q>(self.0, self.0)) }
        }
        #[inline(always)]
        unsafe fn select(m: Self, a: Self, b: Self) -> Self {
            // SAFETY: AVX enabled.
            unsafe { F64x4(_mm256_blendv_pd(b.0, a.0, m.0)) }
        }
        #[inline(always)]
        unsafe fn mask_and(a: Self, b: Self) -> Self {
            // SAFETY: AVX enabled.
            unsafe { F64x4(_mm256_and_pd(a.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn mask_or(a: Self, b: Self) -> Self {
            // SAFETY: AVX enabled.
            unsafe { F64x4(_mm256_or_pd(a.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn mask_not(a: Self) -> Self {
            // SAFETY: AVX enabled.
            unsafe {
                F64x4(_mm256_xor_pd(
                    a.0,
                    _mm256_castsi256_pd(_mm256_set1_epi64x(-1)),
                ))
            }
        }
        #[inline(always)]
        unsafe fn any(m: Self) -> bool {
            // SAFETY: AVX enabled.
            unsafe { _mm256_movemask_pd(m.0) != 0 }
        }
    }
}
