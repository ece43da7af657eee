//! Matrix products in the canonical order: every output has one accumulator
//! that starts at +0 and adds its terms in increasing k. Exact mode: each term
//! is a rounded multiply followed by a rounded add. Fast mode: each term is
//! one fma.
//!
//! The work is done by the blocked SIMD GEMM in [`crate::gemm`] (packing,
//! register tiles per kernel path, threads over output tiles; one entry
//! point, `gemm::gemm`, for every product); this module holds the batched
//! product's shape check.

use crate::error::{Error, Result};

/// (batch, m, k, n) of the batched product `a [B, M, K] · b [B, K, N] →
/// out [B, M, N]`.
pub fn batched_dims(
    a: &[usize],
    b: &[usize],
    out: &[usize],
) -> Result<(usize, usize, usize, usize)> {
    match (a, b) {
        (&[bt, m, k], &[bt2, k2, n]) if bt2 == bt && k2 == k && out == [bt, m, n] => {
            Ok((bt, m, k, n))
        }
        _ => Err(Error::Value(format!(
            "matmul kernel: shapes {a:?} @ {b:?} -> {out:?} do not agree"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use crate::dispatch::Mode;
    use crate::gemm::{gemm, MatRef, Product};
    use crate::simd::Token;

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
            let ar = MatRef {
                ptr: a.as_ptr(),
                rows: m,
                cols: k,
                rs: k as isize,
                cs: 1,
            };
            let br = MatRef {
                ptr: b.as_ptr(),
                rows: k,
                cols: n,
                rs: n as isize,
                cs: 1,
            };
            // SAFETY: the views lie inside a and b; c holds m × n.
            unsafe {
                gemm(
                    Token::current(),
                    mode,
                    &Product::views(ar, br, c.as_mut_ptr(), n),
                )
            };
            for i in 0..m * n {
                assert!((c[i] as f64 - want[i]).abs() < 1e-5);
            }
            // (Bᵀ Aᵀ)ᵀ = A B, through transposed views.
            let mut ct = vec![0f32; n * m];
            // SAFETY: the transposed views lie inside b and a; ct holds n × m.
            unsafe {
                gemm(
                    Token::current(),
                    mode,
                    &Product::views(br.t(), ar.t(), ct.as_mut_ptr(), m),
                )
            };
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
        let a = MatRef {
            ptr: [0f32; 0].as_ptr(),
            rows: 2,
            cols: 0,
            rs: 0,
            cs: 1,
        };
        let b = MatRef {
            ptr: [0f32; 0].as_ptr(),
            rows: 0,
            cols: 2,
            rs: 2,
            cs: 1,
        };
        // SAFETY: k = 0: nothing is read; c holds 2 × 2.
        unsafe {
            gemm(
                Token::current(),
                Mode::Exact,
                &Product::views(a, b, c.as_mut_ptr(), 2),
            )
        };
        assert!(c.iter().all(|x| x.to_bits() == 0));
    }
}
