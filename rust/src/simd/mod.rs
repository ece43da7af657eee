//! The lane abstraction: every SIMD kernel is written once, generic over
//! [`Lanes`], and instantiated per instruction set.
//!
//! The pattern follows memchr's `Vector` trait: each ISA has one type whose
//! methods are `#[inline(always)] unsafe fn`s over `std::arch` intrinsics,
//! and the `#[target_feature]` attribute sits only on the outer entry point
//! ([`run_on`]'s per-ISA trampolines). Once the generic kernel is inlined
//! into a trampoline the intrinsics compile with that ISA enabled.
//!
//! `f32` itself is the scalar instantiation (one lane). Every vector type must
//! give, lane by lane, the bits the `f32` instantiation gives: only IEEE
//! operations that are correctly rounded (add, sub, mul, div, sqrt, fma)
//! appear here, so this holds by construction. `fma` is the correctly rounded
//! fused multiply-add everywhere, in software on a path without one.
//!
//! Safety model: constructing a [`Token`] proves the CPU supports its path;
//! [`run_on`] only dispatches to a trampoline whose features were checked.

use crate::dispatch::KernelPath;

mod f64_lanes;
mod scalar;
#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(target_arch = "x86_64")]
pub use x86::{Avx2, Avx512, V128};

pub use f64_lanes::F64Lanes;

/// The quiet NaN exact mode writes for every NaN result, so that the payload
/// of a NaN (which hardware propagates differently) never differs.
pub const CANONICAL_NAN: u32 = 0x7FC0_0000;

/// In exact mode, replace any NaN by the canonical one.
///
/// The test is on the bits, not `x.is_nan()`: LLVM may fold
/// `select(isnan(x), qNaN, x)` to `x` (any NaN may stand for any other under
/// its floating-point semantics), which let other NaN payloads through in the
/// lane loops. An integer comparison cannot be folded that way.
#[inline(always)]
pub fn canonical(x: f32, exact: bool) -> f32 {
    if exact && (x.to_bits() & 0x7FFF_FFFF) > 0x7F80_0000 {
        f32::from_bits(CANONICAL_NAN)
    } else {
        x
    }
}

/// One register of `N` f32 lanes.
///
/// # Safety
/// Implementors promise that every method computes, per lane, exactly the
/// IEEE binary32 result of the named operation with round-to-nearest-even
/// (and `fma` with a single rounding), so that a kernel generic over `Lanes`
/// gives the same bits for every implementor. Callers of the `unsafe`
/// methods must only do so where the implementor's CPU features are enabled
/// (inside [`run_on`]) and must pass pointers valid for `N` f32 reads or
/// writes (no alignment required).
pub unsafe trait Lanes: Copy + Send + Sync + 'static {
    /// Lanes per register.
    const N: usize;
    /// The path this instantiation belongs to.
    const PATH: KernelPath;
    /// This path's binary64 lanes (f64_lanes.rs), for the few kernels that
    /// compute in double precision.
    type F64: F64Lanes;

    unsafe fn splat(x: f32) -> Self;
    unsafe fn zero() -> Self;
    /// Unaligned load of `N` consecutive f32.
    unsafe fn load(p: *const f32) -> Self;
    /// Unaligned store of `N` consecutive f32.
    unsafe fn store(self, p: *mut f32);
    /// The first `count ≤ N` lanes loaded from `p` (only those elements
    /// are read, so `p` need be valid for `count` reads), the others +0.0.
    /// The default goes through a zeroed buffer; the AVX paths override it
    /// with a masked load, which has no store for the load to wait on.
    #[inline(always)]
    unsafe fn load_first(p: *const f32, count: usize) -> Self {
        debug_assert!(count <= Self::N && Self::N <= 16);
        let mut buf = [0f32; 16];
        // SAFETY: the caller passes a pointer valid for `count` reads;
        // buf holds 16 ≥ N elements.
        unsafe {
            std::ptr::copy_nonoverlapping(p, buf.as_mut_ptr(), count);
            Self::load(buf.as_ptr())
        }
    }
    unsafe fn add(self, b: Self) -> Self;
    unsafe fn sub(self, b: Self) -> Self;
    unsafe fn mul(self, b: Self) -> Self;
    unsafe fn div(self, b: Self) -> Self;
    /// `self * b + c` with one rounding.
    unsafe fn fma(self, b: Self, c: Self) -> Self;

    // ----- Everything below is what the fixed transcendentals (crate::math)
    // and the element-wise loops need: compare → mask, select, bit
    // operations, integer arithmetic on the lanes' bit patterns, and the
    // remaining exactly specified IEEE operations. Each is exact or correctly
    // rounded, so it too gives the same bits on every implementor. -----

    /// The result of a lane comparison: one flag per lane.
    type Mask: Copy;

    /// Every lane set to the f32 whose bit pattern is `bits`.
    #[inline(always)]
    unsafe fn splat_bits(bits: u32) -> Self {
        // SAFETY: forwarded to splat under the caller's guarantees.
        unsafe { Self::splat(f32::from_bits(bits)) }
    }
    /// Bitwise and of the lanes' bit patterns.
    unsafe fn and(self, b: Self) -> Self;
    /// Bitwise or.
    unsafe fn or(self, b: Self) -> Self;
    /// Bitwise exclusive or.
    unsafe fn xor(self, b: Self) -> Self;
    /// `self & !b`, bitwise.
    unsafe fn and_not(self, b: Self) -> Self;
    /// The lanes' bit patterns as i32, added with wrap-around.
    unsafe fn add_i32(self, b: Self) -> Self;
    /// The lanes' bit patterns as i32, subtracted with wrap-around.
    unsafe fn sub_i32(self, b: Self) -> Self;
    /// Bit patterns shifted left by `K` (< 32).
    unsafe fn shl_i32<const K: u32>(self) -> Self;
    /// Bit patterns as i32 shifted right by `K` (< 32), sign-filling.
    unsafe fn shr_i32<const K: u32>(self) -> Self;
    /// Bit patterns as u32 shifted right by `K` (< 32), zero-filling.
    unsafe fn shr_u32<const K: u32>(self) -> Self;
    /// The lanes' bit patterns read as i32 and converted to f32, rounded to
    /// nearest even (exact for |i| ≤ 2^24).
    unsafe fn i32_to_f32(self) -> Self;
    /// Correctly rounded square root.
    unsafe fn sqrt(self) -> Self;
    /// `if self < b { self } else { b }` per lane: the second operand when
    /// either is NaN or both are zeros (the x86 `minps` rule).
    unsafe fn min(self, b: Self) -> Self;
    /// `if self > b { self } else { b }` per lane (the x86 `maxps` rule).
    unsafe fn max(self, b: Self) -> Self;
    /// Ordered comparisons: false when either lane is NaN.
    unsafe fn lt(self, b: Self) -> Self::Mask;
    unsafe fn le(self, b: Self) -> Self::Mask;
    unsafe fn gt(self, b: Self) -> Self::Mask;
    unsafe fn ge(self, b: Self) -> Self::Mask;
    unsafe fn eq(self, b: Self) -> Self::Mask;
    /// True where the lane is NaN.
    unsafe fn is_nan(self) -> Self::Mask;
    /// `a` where `m` is set, else `b`, per lane.
    unsafe fn select(m: Self::Mask, a: Self, b: Self) -> Self;
    unsafe fn mask_and(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    unsafe fn mask_or(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    unsafe fn mask_not(a: Self::Mask) -> Self::Mask;
    /// Whether any lane of `m` is set.
    unsafe fn any(m: Self::Mask) -> bool;
    /// `table[i]` per lane, where the lane's bit pattern is the integer
    /// i ∈ 0..16 (data movement only, exact). Lanes outside 0..16 are the
    /// caller's error (implementations may use only the low 4 bits).
    unsafe fn lookup16(table: &[f32; 16], idx: Self) -> Self;

    /// Every NaN lane replaced by the canonical quiet NaN 0x7FC00000, other
    /// lanes unchanged. The test is made where the optimiser cannot see
    /// through it: Rust (like LLVM) treats the payload of an arithmetic NaN
    /// as unspecified and folds `if r.is_nan() { C } else { r }` to `r` when
    /// it can see that `r` came from arithmetic, which would let the
    /// hardware's payload through.
    unsafe fn canonicalize_nan(self) -> Self;

    /// The fixed pairwise tree over the lanes of each of eight registers:
    /// `out[r]` is register r's lanes `p` summed as, for s = N/2, N/4, …, 1,
    /// `p[i] = p[i] + p[i + s]` for i < s, result `p[0]` (the lower lane is
    /// always the first operand). The default stores each register and adds
    /// on scalars, which is the definition; an implementation may instead
    /// transpose across the eight registers so that each tree level is one
    /// vertical add for all of them (same additions, same operand order,
    /// hence the same bits, NaN payloads included).
    #[inline(always)]
    unsafe fn tree8(v: [Self; 8]) -> [f32; 8] {
        let mut out = [0f32; 8];
        let mut p = [0f32; 64];
        for (r, x) in v.iter().enumerate() {
            // SAFETY: `p` holds 64 ≥ N floats (N ≤ 16); forwarded under the
            // caller's guarantees.
            unsafe { x.store(p.as_mut_ptr()) };
            let mut s = Self::N / 2;
            while s > 0 {
                for i in 0..s {
                    p[i] += p[i + s];
                }
                s /= 2;
            }
            out[r] = p[0];
        }
        out
    }

    /// Sign flipped (exact, NaN payload kept).
    #[inline(always)]
    unsafe fn neg(self) -> Self {
        // SAFETY: forwarded under the caller's guarantees.
        unsafe { self.xor(Self::splat_bits(0x8000_0000)) }
    }
    /// Sign cleared (exact).
    #[inline(always)]
    unsafe fn abs(self) -> Self {
        // SAFETY: forwarded under the caller's guarantees.
        unsafe { self.and_not(Self::splat_bits(0x8000_0000)) }
    }
}

/// A computation generic over the lane type, run by [`run_on`] with the
/// instantiation for a kernel path. Implement `run` with `#[inline(always)]`
/// so that it is compiled inside the path's `#[target_feature]` trampoline.
pub trait LaneFn {
    type Output;
    fn run<L: Lanes>(self) -> Self::Output;
}

/// Proof that the CPU supports a kernel path: only [`Token::new`] makes one,
/// and only after run-time detection succeeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token(KernelPath);

impl Token {
    /// `Some` only when this CPU has every feature `path` needs.
    pub fn new(path: KernelPath) -> Option<Token> {
        if path.is_available() {
            Some(Token(path))
        } else {
            None
        }
    }

    /// The token for the path the process settings select now (always
    /// available). Only the bindings (and tests) read it: a kernel takes its
    /// token as an argument.
    pub fn current() -> Token {
        Token(crate::dispatch::kernel_path())
    }

    pub fn path(self) -> KernelPath {
        self.0
    }
}

/// Run `f` with the lane type of `token`'s path.
#[inline]
pub fn run_on<F: LaneFn>(token: Token, f: F) -> F::Output {
    match token.0 {
        KernelPath::Scalar => f.run::<f32>(),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the token proves SSE4.1 is available.
        KernelPath::V128 => unsafe { x86::run_v128(f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the token proves AVX2 and FMA are available.
        KernelPath::Avx2 => unsafe { x86::run_avx2(f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the token proves AVX-512 F/BW/DQ/VL are available.
        KernelPath::Avx512 => unsafe { x86::run_avx512(f) },
        #[cfg(not(target_arch = "x86_64"))]
        _ => f.run::<f32>(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `out[i] = a[i] * b[i] + c[i]` three ways: mul-then-add, fma, div.
    struct Probe<'a> {
        a: &'a [f32],
        b: &'a [f32],
        out: &'a mut [f32],
    }

    impl LaneFn for Probe<'_> {
        type Output = ();
        #[inline(always)]
        fn run<L: Lanes>(self) {
            let n = self.a.len();
            let mut i = 0;
            // SAFETY: i + L::N <= n for the vector loop; the tail uses f32.
            unsafe {
                while i + L::N <= n {
                    let a = L::load(self.a.as_ptr().add(i));
                    let b = L::load(self.b.as_ptr().add(i));
                    let r = a
                        .mul(b)
                        .add(a)
                        .sub(b)
                        .div(b)
                        .fma(a, L::splat(0.5))
                        .add(L::zero());
                    r.store(self.out.as_mut_ptr().add(i));
                    i += L::N;
                }
                while i < n {
                    let a = self.a[i];
                    let b = self.b[i];
                    self.out[i] = <f32 as Lanes>::fma(
                        <f32 as Lanes>::div(
                            <f32 as Lanes>::sub(
                                <f32 as Lanes>::add(<f32 as Lanes>::mul(a, b), a),
                                b,
                            ),
                            b,
                        ),
                        a,
                        0.5,
                    );
                    i += 1;
                }
            }
        }
    }

    fn specials() -> Vec<f32> {
        let mut v = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::from_bits(1),
            f32::from_bits(0x807f_ffff),
            f32::MAX,
            f32::MIN_POSITIVE,
            3.0e-39,
            1.0e38,
        ];
        let mut x = 0x1234_5678u32;
        for _ in 0..200 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            v.push(f32::from_bits(x));
        }
        v
    }

    #[test]
    fn every_path_matches_scalar_bit_for_bit() {
        let a = specials();
        let mut b = a.clone();
        b.rotate_left(7);
        let mut want = vec![0.0f32; a.len()];
        run_on(
            Token::new(KernelPath::Scalar).unwrap(),
            Probe {
                a: &a,
                b: &b,
                out: &mut want,
            },
        );
        for path in crate::dispatch::available_paths() {
            let mut got = vec![0.0f32; a.len()];
            run_on(
                Token::new(path).unwrap(),
                Probe {
                    a: &a,
                    b: &b,
                    out: &mut got,
                },
            );
            for i in 0..a.len() {
                let (w, g) = (want[i], got[i]);
                assert!(
                    w.to_bits() == g.to_bits() || (w.is_nan() && g.is_nan()),
                    "{path:?} lane {i}: {w:e} vs {g:e}"
                );
            }
        }
    }

    struct TreeProbe<'a> {
        data: &'a [f32],
        out: &'a mut [f32; 8],
    }

    impl LaneFn for TreeProbe<'_> {
        type Output = usize;
        #[inline(always)]
        fn run<L: Lanes>(self) -> usize {
            // SAFETY: inside L's path; data holds 8 × 16 ≥ 8 × N floats.
            unsafe {
                let mut v = [L::zero(); 8];
                for (r, x) in v.iter_mut().enumerate() {
                    *x = L::load(self.data.as_ptr().add(r * 16));
                }
                *self.out = L::tree8(v);
            }
            L::N
        }
    }

    /// The definition, written out: for s = n/2, …, 1, p[i] += p[i + s].
    fn written_tree(lanes: &[f32]) -> f32 {
        let mut p = lanes.to_vec();
        let mut s = p.len() / 2;
        while s > 0 {
            for i in 0..s {
                p[i] += p[i + s];
            }
            s /= 2;
        }
        p[0]
    }

    /// `Lanes::tree8` on every path against the written-out tree of the
    /// same lane count (NaN results: any NaN, as in the other tables).
    fn check_tree8(data: &[f32], what: &str) {
        for path in crate::dispatch::available_paths() {
            let mut got = [0f32; 8];
            let probe = TreeProbe {
                data,
                out: &mut got,
            };
            let n = run_on(Token::new(path).unwrap(), probe);
            for (r, &g) in got.iter().enumerate() {
                let w = written_tree(&data[r * 16..][..n]);
                assert!(
                    w.to_bits() == g.to_bits() || (w.is_nan() && g.is_nan()),
                    "{path:?} register {r} ({what}): {w:e} vs {g:e}"
                );
            }
        }
    }

    #[test]
    fn tree8_is_the_pairwise_tree_on_every_path() {
        let vals = specials();
        for start in [0, 5, 13, 40, 77, 120] {
            let data: Vec<f32> = (0..128)
                .map(|i| vals[(start + i * 3) % vals.len()])
                .collect();
            check_tree8(&data, &format!("specials from {start}"));
        }
        // Ordinary values where the pairing matters (1 + 2^-24 + 2^-24 …).
        let data: Vec<f32> = (0..128)
            .map(|i| {
                if i % 3 == 0 {
                    1.0
                } else {
                    2f32.powi(-24) * (1 + i % 5) as f32
                }
            })
            .collect();
        check_tree8(&data, "rounding-sensitive values");
    }

    /// `load_first(p, count)` stored back: lanes 0..N.
    struct FirstProbe<'a> {
        data: &'a [f32],
        out: &'a mut [f32; 16],
    }

    impl LaneFn for FirstProbe<'_> {
        type Output = usize;
        #[inline(always)]
        fn run<L: Lanes>(self) -> usize {
            let count = self.data.len().min(L::N);
            // SAFETY: inside L's path; data holds ≥ count floats, out 16 ≥ N.
            unsafe { L::load_first(self.data.as_ptr(), count).store(self.out.as_mut_ptr()) };
            L::N
        }
    }

    #[test]
    fn load_first_reads_the_first_lanes_and_zeroes_the_rest_on_every_path() {
        let vals = specials();
        for path in crate::dispatch::available_paths() {
            for count in 0..=16 {
                // Exactly `count` elements, so that a read past them would
                // fault or show up in the debug build's checks of the caller.
                let data: Vec<f32> = (0..count)
                    .map(|i| vals[(3 * i + count) % vals.len()])
                    .collect();
                let mut out = [f32::NAN; 16];
                let n = run_on(
                    Token::new(path).unwrap(),
                    FirstProbe {
                        data: &data,
                        out: &mut out,
                    },
                );
                if count > n {
                    continue;
                }
                for (l, &got) in out[..n].iter().enumerate() {
                    let want = if l < count { data[l] } else { 0.0 };
                    assert_eq!(
                        got.to_bits(),
                        want.to_bits(),
                        "{path:?} count {count} lane {l}"
                    );
                }
            }
        }
    }

    #[test]
    fn tokens_exist_only_for_available_paths() {
        for p in KernelPath::ALL {
            assert_eq!(Token::new(p).is_some(), p.is_available());
        }
    }
}

#[cfg(test)]
mod canonical_tests {
    use super::*;

    #[test]
    fn every_nan_becomes_the_canonical_one_in_exact_mode_only() {
        for bits in [
            0x7FC0_0000u32,
            0xFFC0_0000,
            0x7F80_0001,
            0xFFFF_FFFF,
            0x7FC0_1234,
            0xFFA0_0000,
        ] {
            let x = std::hint::black_box(f32::from_bits(bits));
            assert_eq!(canonical(x, true).to_bits(), CANONICAL_NAN, "{bits:#x}");
            assert_eq!(canonical(x, false).to_bits(), bits, "{bits:#x}");
        }
        for x in [
            0.0f32,
            -0.0,
            1.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::from_bits(1),
        ] {
            assert_eq!(canonical(x, true).to_bits(), x.to_bits());
        }
    }
}
