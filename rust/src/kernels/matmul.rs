//! Matrix products in the canonical order: every output has one accumulator
//! that starts at +0 and adds its terms in increasing k. Exact mode: each term
//! is a rounded multiply followed by a rounded add. Fast mode: each term is
//! one fma. Threads split output rows in chunks whose size depends on the
//! shape only.
//!
//! This is the straightforward kernel; the blocked SIMD GEMM (issue 3)
//! replaces the body of [`gemm`] and keeps this interface and this order.

use crate::dispatch::{par_chunks, Mode};

/// A read-only strided matrix: element (i, j) is at `ptr + i*rs + j*cs`.
#[derive(Clone, Copy, Debug)]
pub struct MatRef {
    pub ptr: *const f32,
    pub rows: usize,
    pub cols: usize,
    pub rs: isize,
    pub cs: isize,
}

// SAFETY: a MatRef is a read-only view; the callers of `gemm` guarantee the
// memory stays valid and unmodified for the duration of the call.
unsafe impl Send for MatRef {}
// SAFETY: see Send.
unsafe impl Sync for MatRef {}

impl MatRef {
    /// # Safety
    /// (i, j) must lie inside the view.
    #[inline(always)]
    pub unsafe fn at(&self, i: usize, j: usize) -> f32 {
        // SAFETY: guaranteed by the caller.
        unsafe { *self.ptr.offset(i as isize * self.rs + j as isize * self.cs) }
    }

    /// The transposed view (no copy).
    pub fn t(self) -> MatRef {
        MatRef { ptr: self.ptr, rows: self.cols, cols: self.rows, rs: self.cs, cs: self.rs }
    }
}

/// Rows of C per thread chunk.
const ROWS_PER_CHUNK: usize = 16;

/// `C = A · B` with A m×k, B k×n, C m×n written row-major with row stride
/// `ldc` (C is overwritten, never read).
///
/// # Safety
/// A and B must be valid for their views; C valid for m rows of n writes at
/// row stride `ldc`, not overlapping A or B.
pub unsafe fn gemm(mode: Mode, a: MatRef, b: MatRef, c: *mut f32, ldc: usize) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    debug_assert_eq!(b.rows, k);
    let c = c as usize;
    par_chunks(m.div_ceil(ROWS_PER_CHUNK), |chunk| {
        let rows = chunk * ROWS_PER_CHUNK..((chunk + 1) * ROWS_PER_CHUNK).min(m);
        for i in rows {
            for j in 0..n {
                let mut acc = 0.0f32;
                for p in 0..k {
                    // SAFETY: i < m, p < k, j < n lie inside the views.
                    let (x, y) = unsafe { (a.at(i, p), b.at(p, j)) };
                    acc = match mode {
                        Mode::Exact => acc + x * y,
                        Mode::Fast => x.mul_add(y, acc),
                    };
                }
                // SAFETY: C is valid for row i < m, column j < n.
                unsafe { *(c as *mut f32).add(i * ldc + j) = acc };
            }
        }
    });
}

/// `C[i] = A[i] · B[i]` for `batch` products. The batch strides (elements)
/// may be 0 to broadcast one operand; C's batch stride is `m * ldc`.
///
/// # Safety
/// As [`gemm`] for every batch item.
pub unsafe fn gemm_batched(mode: Mode, batch: usize, a: MatRef, a_bs: isize, b: MatRef, b_bs: isize, c: *mut f32, ldc: usize) {
    for i in 0..batch {
        let ai = MatRef { ptr: unsafe { a.ptr.offset(i as isize * a_bs) }, ..a };
        let bi = MatRef { ptr: unsafe { b.ptr.offset(i as isize * b_bs) }, ..b };
        // SAFETY: guaranteed by the caller for each batch item.
        unsafe { gemm(mode, ai, bi, c.add(i * a.rows * ldc), ldc) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f64> {
        let mut c = vec![0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                for p in 0..k {
                    c[i * n + j] += a[i * k + p] as f64 * b[p * n + j] as f64;
                }
            }
        }
        c
    }

    #[test]
    fn small_product_matches_f64_and_transposed_views() {
        let (m, k, n) = (5, 7, 3);
        let a: Vec<f32> = (0..m * k).map(|v| (v as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..k * n).map(|v| (v as f32 * 0.11).cos()).collect();
        let want = naive(&a, &b, m, k, n);
        for mode in [Mode::Exact, Mode::Fast] {
            let mut c = vec![0f32; m * n];
            let ar = MatRef { ptr: a.as_ptr(), rows: m, cols: k, rs: k as isize, cs: 1 };
            let br = MatRef { ptr: b.as_ptr(), rows: k, cols: n, rs: n as isize, cs: 1 };
            unsafe { gemm(mode, ar, br, c.as_mut_ptr(), n) };
            for i in 0..m * n {
                assert!((c[i] as f64 - want[i]).abs() < 1e-5);
            }
            // (Bᵀ Aᵀ)ᵀ = A B, through transposed views.
            let mut ct = vec![0f32; n * m];
            unsafe { gemm(mode, br.t(), ar.t(), ct.as_mut_ptr(), m) };
            for i in 0..m {
                for j in 0..n {
                    assert!((ct[j * m + i] as f64 - want[i * n + j]).abs() < 1e-5);
                }
            }
        }
    }

    #[test]
    fn empty_k_gives_positive_zero() {
        let mut c = [f32::NAN; 4];
        let a = MatRef { ptr: [0f32; 0].as_ptr(), rows: 2, cols: 0, rs: 0, cs: 1 };
        let b = MatRef { ptr: [0f32; 0].as_ptr(), rows: 0, cols: 2, rs: 2, cs: 1 };
        unsafe { gemm(Mode::Exact, a, b, c.as_mut_ptr(), 2) };
        assert!(c.iter().all(|x| x.to_bits() == 0));
    }
}
