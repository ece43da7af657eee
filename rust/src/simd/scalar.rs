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
    type F64 = f64;

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
    unsafe fn load_first(p: *const f32, count: usize) -> f32 {
        if count == 0 {
            0.0
        } else {
            // SAFETY: the caller passes a pointer valid for `count` ≥ 1 reads.
            unsafe { p.read_unaligned() }
        }
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

    type Mask = bool;

    #[inline(always)]
    unsafe fn and(self, b: f32) -> f32 {
        f32::from_bits(self.to_bits() & b.to_bits())
    }
    #[inline(always)]
    unsafe fn or(self, b: f32) -> f32 {
        f32::from_bits(self.to_bits() | b.to_bits())
    }
    #[inline(always)]
    unsafe fn xor(self, b: f32) -> f32 {
        f32::from_bits(self.to_bits() ^ b.to_bits())
    }
    #[inline(always)]
    unsafe fn and_not(self, b: f32) -> f32 {
        f32::from_bits(self.to_bits() & !b.to_bits())
    }
    #[inline(always)]
    unsafe fn add_i32(self, b: f32) -> f32 {
        f32::from_bits(self.to_bits().wrapping_add(b.to_bits()))
    }
    #[inline(always)]
    unsafe fn sub_i32(self, b: f32) -> f32 {
        f32::from_bits(self.to_bits().wrapping_sub(b.to_bits()))
    }
    #[inline(always)]
    unsafe fn shl_i32<const K: u32>(self) -> f32 {
        f32::from_bits(self.to_bits() << K)
    }
    #[inline(always)]
    unsafe fn shr_i32<const K: u32>(self) -> f32 {
        f32::from_bits(((self.to_bits() as i32) >> K) as u32)
    }
    #[inline(always)]
    unsafe fn shr_u32<const K: u32>(self) -> f32 {
        f32::from_bits(self.to_bits() >> K)
    }
    #[inline(always)]
    unsafe fn i32_to_f32(self) -> f32 {
        // `as` rounds to nearest even, as cvtdq2ps does under the default MXCSR.
        (self.to_bits() as i32) as f32
    }
    #[inline(always)]
    unsafe fn sqrt(self) -> f32 {
        // IEEE correctly rounded (an intrinsic, not a libm call).
        f32::sqrt(self)
    }
    #[inline(always)]
    unsafe fn min(self, b: f32) -> f32 {
        if self < b {
            self
        } else {
            b
        }
    }
    #[inline(always)]
    unsafe fn max(self, b: f32) -> f32 {
        if self > b {
            self
        } else {
            b
        }
    }
    #[inline(always)]
    unsafe fn lt(self, b: f32) -> bool {
        self < b
    }
    #[inline(always)]
    unsafe fn le(self, b: f32) -> bool {
        self <= b
    }
    #[inline(always)]
    unsafe fn gt(self, b: f32) -> bool {
        self > b
    }
    #[inline(always)]
    unsafe fn ge(self, b: f32) -> bool {
        self >= b
    }
    #[inline(always)]
    unsafe fn eq(self, b: f32) -> bool {
        self == b
    }
    #[inline(always)]
    unsafe fn is_nan(self) -> bool {
        self.is_nan()
    }
    #[inline(always)]
    unsafe fn select(m: bool, a: f32, b: f32) -> f32 {
        if m {
            a
        } else {
            b
        }
    }
    #[inline(always)]
    unsafe fn mask_and(a: bool, b: bool) -> bool {
        a & b
    }
    #[inline(always)]
    unsafe fn mask_or(a: bool, b: bool) -> bool {
        a | b
    }
    #[inline(always)]
    unsafe fn mask_not(a: bool) -> bool {
        !a
    }
    #[inline(always)]
    unsafe fn any(m: bool) -> bool {
        m
    }
    #[inline(always)]
    unsafe fn canonicalize_nan(self) -> f32 {
        // An opaque copy: the optimiser no longer knows where the value came
        // from, so it must keep the test (see the trait's note).
        #[cfg(target_arch = "x86_64")]
        let r = {
            let mut r = self;
            // SAFETY: an empty asm block that only claims to modify `r` in
            // its register; it touches no memory and no flags.
            unsafe {
                std::arch::asm!("/* {0} */", inout(xmm_reg) r, options(pure, nomem, nostack, preserves_flags))
            };
            r
        };
        #[cfg(not(target_arch = "x86_64"))]
        let r = std::hint::black_box(self);
        super::canonical(r, true)
    }
    #[inline(always)]
    unsafe fn lookup16(table: &[f32; 16], idx: f32) -> f32 {
        table[(idx.to_bits() & 15) as usize]
    }
}
