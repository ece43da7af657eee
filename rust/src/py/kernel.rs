//! Running a kernel with the GIL released, a refused scratch allocation
//! coming back as `MemoryError`.
//!
//! The kernels that allocate scratch from the pool deep inside their
//! parallel loops (GEMM packs, convolution's padded planes and columns, the
//! recurrent layers' work buffers) report a refusal by unwinding with a
//! [`ScratchRefused`] payload (`Buffer::new`). [`detach`] catches exactly
//! that payload and makes it the Python `MemoryError` the tensor storage
//! gives; any other panic goes on unwinding (PyO3 makes it a
//! `PanicException`, a bug to report). The output tensor such a kernel was
//! writing is a fresh one the exception discards, so nothing half-written
//! reaches Python.

use crate::error::Error;
use crate::storage::ScratchRefused;
use pyo3::marker::Ungil;
use pyo3::prelude::*;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// `py.detach(f)`, with a refused scratch allocation as `MemoryError`.
pub fn detach<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    F: Ungil + Send + FnOnce() -> T,
    // Send: the caught result crosses back with the panic payload's type
    // (`Result<T, Box<dyn Any + Send>>` must be Ungil, which is Send here).
    T: Ungil + Send,
{
    // AssertUnwindSafe: on a refusal the kernel's outputs are discarded by
    // the caller (the error propagates), and the pool's own state is
    // updated atomically per buffer, so nothing observed later is broken.
    match py.detach(|| catch_unwind(AssertUnwindSafe(f))) {
        Ok(v) => Ok(v),
        Err(payload) => match payload.downcast::<ScratchRefused>() {
            Ok(refused) => {
                let ScratchRefused(e) = *refused;
                Err(scratch_error(e).into())
            }
            Err(other) => resume_unwind(other),
        },
    }
}

fn scratch_error(e: Error) -> Error {
    match e {
        Error::Memory(m) => Error::Memory(format!("kernel scratch: {m}")),
        other => other,
    }
}
