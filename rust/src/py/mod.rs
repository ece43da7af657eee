//! The `onemodel._core` extension module: thin bindings over the Rust core.
//!
//! One module here per kernel module (`conv` binds `kernels::conv`, ...),
//! plus the binding layer every binding uses: `operand` (typed tensor
//! arguments) and `error` (the core's errors as Python exceptions). How to
//! add a binding: docs/architecture.md.

mod compute;
mod conv;
mod copy;
mod ctc;
mod elementwise;
mod error;
mod fused;
mod gather;
mod geometry;
mod kernel;
mod matmul;
mod norm;
mod operand;
mod optim;
mod pool;
mod random;
mod recognizer;
mod reduce;
mod resize;
mod rnn;
mod softmax;
mod storage;

use crate::dispatch::{self, Mode};
use crate::simd::Token;
use pyo3::prelude::*;

/// The kernel path and the arithmetic mode of a kernel call: a binding reads
/// both here, before it releases the GIL, and passes them to the kernel, so
/// that a kernel's bits are a function of its arguments (no kernel reads the
/// process settings itself).
fn settings() -> (Token, Mode) {
    (Token::current(), dispatch::mode())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<storage::Storage>()?;
    m.add_class::<random::Generator>()?;
    copy::register(m)?;
    elementwise::register(m)?;
    reduce::register(m)?;
    matmul::register(m)?;
    conv::register(m)?;
    geometry::register(m)?;
    pool::register(m)?;
    resize::register(m)?;
    norm::register(m)?;
    softmax::register(m)?;
    gather::register(m)?;
    rnn::register(m)?;
    ctc::register(m)?;
    optim::register(m)?;
    compute::register(m)?;
    recognizer::register(m)?;
    fused::register(m)?;
    Ok(())
}
