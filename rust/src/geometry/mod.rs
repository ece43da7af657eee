//! Geometry: the output sizes and argument checks of the shape-changing
//! operators (convolution, transposed convolution, pooling, adaptive
//! pooling, resize over any number of spatial dimensions) and of CTC loss,
//! computed once, here, in checked arithmetic.
//!
//! Each constructor takes the shapes and options a user gave and returns
//! `Result`: either every size of the call (fitting `usize` and, for a
//! tensor, `isize::MAX` bytes) or an [`Error::Value`] naming the operator
//! and the shapes. The Python operators allocate their outputs from these
//! sizes (through `py/geometry.rs`) and the kernels' own geometry structs
//! check the buffers against the same numbers. The 3-D convolution and
//! pools (compositions in python/onemodel/ops/volumetric.py) take their
//! sizes from the N-d rules here (`spatial::pool_sizes`,
//! `spatial::conv_sizes`), the same per-axis rule as the 2-D ones. The
//! recurrent layers' layout is `kernels::rnn::Layout`.

pub mod ctc;
pub mod spatial;

use crate::error::{Error, Result};

/// A shape as Python prints a tuple: `(2, 3)`, `(4,)`, `()`.
pub fn tuple(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A float as Python's `repr` prints it: `2.0`, `-1.5`, `nan`, `inf`.
pub fn py_float(f: f64) -> String {
    match f {
        f if f.is_nan() => "nan".into(),
        f if f.is_infinite() => (if f > 0.0 { "inf" } else { "-inf" }).into(),
        f => format!("{f:?}"),
    }
}

/// The element count of `shape` for a tensor of `itemsize`-byte elements,
/// or an error naming `op` when it (or its byte size) passes `isize::MAX`.
pub fn numel(op: &str, what: &str, shape: &[usize], itemsize: usize) -> Result<usize> {
    let n = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    match n {
        Some(n) if n.checked_mul(itemsize).is_some_and(|b| b <= isize::MAX as usize) => Ok(n),
        _ => Err(Error::Value(format!(
            "{op}: the {what} of shape {} holds more than the largest possible tensor (2**63 - 1 bytes)",
            tuple(shape)
        ))),
    }
}

/// `a · b + c` in checked arithmetic, or an error naming `op` and `what`.
pub fn mul_add(op: &str, what: &str, a: usize, b: usize, c: usize) -> Result<usize> {
    a.checked_mul(b)
        .and_then(|p| p.checked_add(c))
        .ok_or_else(|| Error::Value(format!("{op}: {what} ({a} * {b} + {c}) overflows")))
}

/// User-given sizes (Python ints, which may be negative or past `usize`)
/// as `usize`, or an error naming `op` and the argument.
pub fn sizes<const N: usize>(op: &str, what: &str, values: [i128; N]) -> Result<[usize; N]> {
    let mut out = [0usize; N];
    for (o, &v) in out.iter_mut().zip(&values) {
        *o = usize::try_from(v).map_err(|_| {
            Error::Value(format!(
                "{op}: {what} {values:?} must hold sizes in 0..2**64"
            ))
        })?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuples_print_as_python_does() {
        assert_eq!(tuple(&[]), "()");
        assert_eq!(tuple(&[4]), "(4,)");
        assert_eq!(tuple(&[1, 2, 3]), "(1, 2, 3)");
        assert_eq!((py_float(-1.0), py_float(0.5), py_float(f64::NAN), py_float(f64::NEG_INFINITY)), ("-1.0".into(), "0.5".into(), "nan".into(), "-inf".into()));
    }

    #[test]
    fn sizes_past_isize_max_are_refused() {
        assert_eq!(numel("op", "x", &[2, 3], 4), Ok(6));
        assert!(numel("op", "x", &[1 << 31, 1 << 31], 4).is_err());
        assert!(numel("op", "x", &[usize::MAX, 2], 1).is_err());
        assert_eq!(numel("op", "x", &[usize::MAX, 0], 4), Ok(0));
        assert!(mul_add("op", "x", usize::MAX, 2, 0).is_err());
        assert_eq!(mul_add("op", "x", 3, 4, 5), Ok(17));
    }
}
