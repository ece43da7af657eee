//! Kernels over raw strided operands. Each kernel checks nothing about
//! Python objects: the bindings validate shapes, and the callers guarantee
//! that pointers are valid for the strides they pass.

pub mod conv;
pub mod copy;
pub mod ctc;
pub mod elementwise;
pub mod gather;
pub mod matmul;
pub mod norm;
pub mod optim;
pub mod pool;
pub mod reduce;
pub mod resize;
pub mod rnn;
pub mod softmax;

/// The quiet NaN exact mode writes for every NaN result, so that the payload
/// of a NaN (which hardware propagates differently) never differs.
pub const CANONICAL_NAN: u32 = 0x7FC0_0000;

/// In exact mode, replace any NaN by the canonical one.
#[inline(always)]
pub fn canonical(x: f32, exact: bool) -> f32 {
    if exact && x.is_nan() {
        f32::from_bits(CANONICAL_NAN)
    } else {
        x
    }
}
