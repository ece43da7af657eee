//! The errors the core reports to its callers. Each kind says what went
//! wrong, not which language reports it: the Python bindings map each kind
//! to one exception class in one place (`py/error.rs`), and Rust callers
//! (tests, examples) print the message.

use std::fmt;

/// What went wrong, with a message that names the operation and the sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// An argument (a shape, a size, an option) the operation cannot take.
    Value(String),
    /// An argument of the wrong kind (a tensor of the wrong dtype).
    Type(String),
    /// An index outside the range it indexes.
    Index(String),
    /// A size the machine cannot allocate.
    Memory(String),
    /// A non-finite loss or gradient stopped a training step.
    NonFinite(String),
    /// This CPU or build cannot do what was asked.
    Unsupported(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// [`Error::Value`] of a message.
    pub fn value(m: impl Into<String>) -> Error {
        Error::Value(m.into())
    }

    pub fn message(&self) -> &str {
        match self {
            Error::Value(m)
            | Error::Type(m)
            | Error::Index(m)
            | Error::Memory(m)
            | Error::NonFinite(m)
            | Error::Unsupported(m) => m,
        }
    }

    /// The same error with `op: ` before its message.
    pub fn context(self, op: &str) -> Error {
        let with = |m: String| format!("{op}: {m}");
        match self {
            Error::Value(m) => Error::Value(with(m)),
            Error::Type(m) => Error::Type(with(m)),
            Error::Index(m) => Error::Index(with(m)),
            Error::Memory(m) => Error::Memory(with(m)),
            Error::NonFinite(m) => Error::NonFinite(with(m)),
            Error::Unsupported(m) => Error::Unsupported(with(m)),
        }
    }
}

/// An unknown path name is a bad argument; a path this CPU lacks is
/// something this machine cannot do.
impl From<crate::dispatch::PathError> for Error {
    fn from(e: crate::dispatch::PathError) -> Error {
        match e {
            crate::dispatch::PathError::Unknown(_) => Error::Value(e.to_string()),
            crate::dispatch::PathError::Missing { .. } => Error::Unsupported(e.to_string()),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Error {}

/// A tensor of `what` must hold `want` elements: the check every binding
/// makes of a flat buffer against the size its kernel will touch.
pub fn expect_len(op: &str, what: &str, got: usize, want: usize) -> Result<()> {
    if got != want {
        return Err(Error::Value(format!(
            "{op}: {what} must hold {want} elements, got {got}"
        )));
    }
    Ok(())
}

/// `shape` must equal `want`.
pub fn expect_shape(op: &str, what: &str, shape: &[usize], want: &[usize]) -> Result<()> {
    if shape != want {
        return Err(Error::Value(format!(
            "{op}: {what} must have shape {want:?}, got {shape:?}"
        )));
    }
    Ok(())
}
