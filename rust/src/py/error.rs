//! The one place where the core's errors become Python exceptions: a
//! binding returns `PyResult` and lets `?` convert a [`crate::error::Error`]
//! through this impl.

use crate::error::Error;
use pyo3::exceptions::{
    PyFloatingPointError, PyIndexError, PyMemoryError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::PyErr;

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        match e {
            Error::Value(m) => PyValueError::new_err(m),
            Error::Type(m) => PyTypeError::new_err(m),
            Error::Index(m) => PyIndexError::new_err(m),
            Error::Memory(m) => PyMemoryError::new_err(m),
            Error::NonFinite(m) => PyFloatingPointError::new_err(m),
            Error::Unsupported(m) => PyRuntimeError::new_err(m),
        }
    }
}
