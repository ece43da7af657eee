//! onemodel's Rust core: pooled storage, kernel-path dispatch, the lane
//! abstraction and the kernels. Everything here is Python-free; the PyO3
//! bindings live in `py` behind the `python` feature and only convert
//! arguments and release the GIL around calls into this crate.

pub mod dispatch;
pub mod error;
pub mod gemm;
pub mod geometry;
pub mod kernels;
pub mod layout;
pub mod line_alloc;
pub mod math;
pub mod ptr;
pub mod recognizer;
pub mod simd;
pub mod splitmix;
pub mod storage;

#[cfg(feature = "python")]
mod py;

/// Large allocations on a cache line (`line_alloc`): the kernels' scratch
/// and the recognizer's buffers are `Vec`s, and rows that start mid-line
/// make every other vector load cross one.
#[global_allocator]
static GLOBAL: line_alloc::LineAlloc = line_alloc::LineAlloc;
