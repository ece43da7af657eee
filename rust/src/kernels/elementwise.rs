//! Element-wise kernels over strided, broadcast operands.
//!
//! Each output element is one IEEE operation (or a compare-and-select) of the
//! input elements at the same logical index, so neither the iteration order
//! nor the threading can change a bit. In exact mode a NaN result is written
//! as the canonical quiet NaN. These loops run on the calling thread.

use super::canonical;
use crate::layout::{coalesce, for_each_row, row_count};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    /// `relu'(x) · g` with `a = g`, `b = x`: g where x > 0, else 0.
    ReluBackward,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    /// max(x, 0) by compare-and-select; NaN stays NaN (as torch.relu).
    Relu,
}

impl BinaryOp {
    #[inline(always)]
    pub fn apply(self, a: f32, b: f32) -> f32 {
        match self {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
            BinaryOp::ReluBackward => {
                if b > 0.0 {
                    a
                } else {
                    0.0
                }
            }
        }
    }
}

impl UnaryOp {
    #[inline(always)]
    pub fn apply(self, a: f32) -> f32 {
        match self {
            UnaryOp::Neg => -a,
            UnaryOp::Relu => {
                if a > 0.0 || a.is_nan() {
                    a
                } else {
                    0.0
                }
            }
        }
    }
}

/// `out[i] = op(a[i], b[i])` over `shape`, every operand strided (stride 0 for
/// a broadcast dimension). `out` may alias `a` or `b` element for element
/// (in-place operations).
///
/// # Safety
/// Pointers must be valid for every offset their strides reach over `shape`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn binary(
    op: BinaryOp,
    exact: bool,
    shape: &[usize],
    out: *mut f32,
    out_strides: &[isize],
    a: *const f32,
    a_strides: &[isize],
    b: *const f32,
    b_strides: &[isize],
) {
    if shape.iter().any(|&n| n == 0) {
        return;
    }
    let c = coalesce(shape, &[out_strides, a_strides, b_strides]);
    let inner = *c.shape.last().unwrap();
    let (so, sa, sb) = (
        *c.strides[0].last().unwrap(),
        *c.strides[1].last().unwrap(),
        *c.strides[2].last().unwrap(),
    );
    for_each_row(&c, 0, row_count(&c), |o| {
        // SAFETY: the caller guarantees every reached offset is valid.
        unsafe {
            let (po, pa, pb) = (out.offset(o[0]), a.offset(o[1]), b.offset(o[2]));
            for j in 0..inner as isize {
                let r = op.apply(*pa.offset(j * sa), *pb.offset(j * sb));
                *po.offset(j * so) = canonical(r, exact);
            }
        }
    });
}

/// `out[i] = op(a[i])` over `shape`, strided operands.
///
/// # Safety
/// Pointers must be valid for every offset their strides reach over `shape`.
pub unsafe fn unary(op: UnaryOp, exact: bool, shape: &[usize], out: *mut f32, out_strides: &[isize], a: *const f32, a_strides: &[isize]) {
    if shape.iter().any(|&n| n == 0) {
        return;
    }
    let c = coalesce(shape, &[out_strides, a_strides]);
    let inner = *c.shape.last().unwrap();
    let (so, sa) = (*c.strides[0].last().unwrap(), *c.strides[1].last().unwrap());
    for_each_row(&c, 0, row_count(&c), |o| {
        // SAFETY: the caller guarantees every reached offset is valid.
        unsafe {
            let (po, pa) = (out.offset(o[0]), a.offset(o[1]));
            for j in 0..inner as isize {
                *po.offset(j * so) = canonical(op.apply(*pa.offset(j * sa)), exact);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_add_and_exact_nan() {
        let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2x3
        let b = [10.0f32, f32::from_bits(0x7FC0_1234), 30.0]; // 3, broadcast over rows
        let mut out = [0f32; 6];
        unsafe {
            binary(BinaryOp::Add, true, &[2, 3], out.as_mut_ptr(), &[3, 1], a.as_ptr(), &[3, 1], b.as_ptr(), &[0, 1]);
        }
        assert_eq!(out[0], 11.0);
        assert_eq!(out[1].to_bits(), 0x7FC0_0000);
        assert_eq!(out[5], 36.0);
    }

    #[test]
    fn relu_and_its_backward() {
        let x = [-1.0f32, 0.0, -0.0, 2.0, f32::NAN];
        let mut y = [9f32; 5];
        unsafe { unary(UnaryOp::Relu, false, &[5], y.as_mut_ptr(), &[1], x.as_ptr(), &[1]) };
        assert_eq!(&y[..4], &[0.0, 0.0, 0.0, 2.0]);
        assert!(y[4].is_nan());
        let g = [1.0f32; 5];
        unsafe {
            binary(BinaryOp::ReluBackward, false, &[5], y.as_mut_ptr(), &[1], g.as_ptr(), &[1], x.as_ptr(), &[1]);
        }
        assert_eq!(y, [0.0, 0.0, 0.0, 1.0, 0.0]);
    }
}
