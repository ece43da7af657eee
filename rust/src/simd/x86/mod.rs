//! x86-64 lane types: 128-bit SSE4.1 ([`V128`], `v128.rs`), 256-bit AVX2
//! (+FMA) ([`Avx2`], `avx2.rs`), 512-bit AVX-512 ([`Avx512`], `avx512.rs`),
//! and the trampolines that compile a generic kernel for each.

// SAFETY (the argument for the three `Lanes` impls of the submodules): the
// SSE/AVX/AVX-512 add, sub, mul, div, sqrt, cvtdq2ps and fmadd instructions are IEEE binary32 operations rounded to nearest even
// under the MXCSR rounding mode, which the library never changes; kernels run
// with flush-to-zero and denormals-are-zero cleared (dispatch::FpEnvGuard), so
// subnormals behave as in the scalar instantiation. Bit operations, integer
// add/sub/shift, ordered/unordered compares, min/max (the `a < b ? a : b`
// rule) and blends are exact and match scalar.rs lane by lane. A V128 or Avx2
// mask is a vector whose lanes are all-ones or all-zeros; an Avx512 mask is a
// k-register.

mod avx2;
mod avx512;
mod v128;

pub use avx2::Avx2;
pub use avx512::Avx512;
pub use v128::V128;

use super::LaneFn;

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
