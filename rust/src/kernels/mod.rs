//! Kernels over raw strided operands. Each kernel checks nothing about
//! Python objects: the bindings validate shapes, and the callers guarantee
//! that pointers are valid for the strides they pass.

pub mod conv;
pub mod copy;
pub mod ctc;
pub mod double_chain;
pub mod elementwise;
pub mod gather;
pub mod matmul;
pub mod moments;
pub mod norm;
pub mod optim;
pub mod pool;
pub mod reduce;
pub mod resize;
pub mod rnn;
pub mod softmax;
pub mod transpose;

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
