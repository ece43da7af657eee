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

pub use crate::simd::{canonical, CANONICAL_NAN};
