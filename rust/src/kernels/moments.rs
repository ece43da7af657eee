//! Second-moment reductions in double precision: variance, standard
//! deviation and the Euclidean norm (docs/tensor.md).
//!
//! Each output reads its terms in increasing element order (the row-major
//! order of the reduced dimensions' logical indices, as `reduce::sum`), and
//! every sum is one f64 chain from +0, rounded once to f32 at the end:
//!
//! * `Var { correction, std }`: `mean = (Σ x) / n` (the chain of
//!   `reduce::sum`, through the blocked chain where the run allows), then
//!   `Σ (x − mean)²` (each term one f64 subtract and multiply), divided by
//!   `max(0, n − correction)`; `std` takes the f64 square root before the
//!   rounding. `n − correction ≤ 0` divides by 0 (±inf, or NaN for 0/0), as
//!   torch.
//! * `Norm2`: `√(Σ x²)`, each square exact in f64 (a product of two f32 has
//!   at most 48 significant bits), so an f32 square never overflows.
//!
//! Threads split outputs in chunks fixed by the shape; no sum crosses
//! threads, so the bits depend on neither the thread count nor the path.

use super::canonical;
use super::copy::reach;
use super::reduce::Reduction;
use crate::dispatch::par_chunks_sized;
use crate::ptr::Ptr;
use crate::simd::Token;

/// What each output is (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Moment {
    Var { correction: f64, std: bool },
    Norm2,
}

/// Reduce `input` (shape `shape`, strides `strides`) over the dimensions
/// where `reduce[d]` is true, writing the kept dimensions row-major into
/// `out`.
///
/// # Safety
/// `input` must be valid for every offset the strides reach; `out` must be
/// valid for writes of the product of the kept dimensions.
pub unsafe fn moments(
    token: Token,
    shape: &[usize],
    input: *const f32,
    strides: &[isize],
    reduce: &[bool],
    moment: Moment,
    exact: bool,
    out: *mut f32,
) {
    let r = Reduction::new(shape, strides, reduce);
    let (terms, run_len, run_stride) = (r.terms, r.run_len, r.run_stride);
    // Every term lies in the view's reach (asserted in debug builds).
    let x = Ptr::new(input, reach(shape, strides));
    let out = Ptr::new(out, r.outputs);
    par_chunks_sized(r.chunks(), r.outputs * terms, |chunk| {
        let first = chunk * r.per_chunk;
        let last = (first + r.per_chunk).min(r.outputs);
        for o in first..last {
            let b = r.base(o);
            // Every term of output o, in element order, folded from `init`.
            let fold = |init: f64, f: &dyn Fn(f64, f32) -> f64| {
                let mut acc = init;
                for &start in &r.run_starts {
                    let mut off = b + start;
                    for _ in 0..run_len {
                        // SAFETY: every offset reached is an element of the
                        // input (the caller's contract).
                        acc = f(acc, unsafe { x.read(off as usize) });
                        off += run_stride;
                    }
                }
                acc
            };
            let value = match moment {
                Moment::Var { correction, std } => {
                    let sum = if r.blocked {
                        // SAFETY: the caller's contract (every term is an element).
                        unsafe { r.chain(token, x, b) }
                    } else {
                        fold(0.0, &|a, v| a + v as f64)
                    };
                    let mean = sum / terms as f64;
                    let ss = fold(0.0, &|a, v| {
                        let d = v as f64 - mean;
                        a + d * d
                    });
                    let var = ss / (terms as f64 - correction).max(0.0);
                    if std {
                        var.sqrt()
                    } else {
                        var
                    }
                }
                Moment::Norm2 => fold(0.0, &|a, v| a + (v as f64) * (v as f64)).sqrt(),
            };
            // SAFETY: o < outputs; chunks write disjoint outputs.
            unsafe { out.write(o, canonical(value as f32, exact)) };
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, written out: element-order f64 chains over the
    /// reduced dims of a [a, b] row-major input, per output.
    fn reference(rows: &[Vec<f32>], moment: Moment) -> Vec<f32> {
        rows.iter()
            .map(|r| {
                let n = r.len() as f64;
                match moment {
                    Moment::Var { correction, std } => {
                        let mean = r.iter().fold(0f64, |a, &v| a + v as f64) / n;
                        let ss = r
                            .iter()
                            .fold(0f64, |a, &v| a + (v as f64 - mean) * (v as f64 - mean));
                        let var = ss / (n - correction).max(0.0);
                        (if std { var.sqrt() } else { var }) as f32
                    }
                    Moment::Norm2 => {
                        r.iter().fold(0f64, |a, &v| a + v as f64 * v as f64).sqrt() as f32
                    }
                }
            })
            .collect()
    }

    fn data(n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| ((i as f32 * 0.618).sin() * 1e3 + 1e4) * if i % 5 == 0 { 1e-3 } else { 1.0 })
            .collect()
    }

    #[test]
    fn rows_and_columns_equal_the_written_out_chains() {
        // [3, 150]: rows are contiguous runs (blocked first pass), columns
        // strided ones; both against the definition, bit for bit.
        let (a, b) = (3usize, 150usize);
        let x = data(a * b);
        for moment in [
            Moment::Var {
                correction: 1.0,
                std: false,
            },
            Moment::Var {
                correction: 0.0,
                std: true,
            },
            Moment::Norm2,
        ] {
            let rows: Vec<Vec<f32>> = (0..a).map(|i| x[i * b..(i + 1) * b].to_vec()).collect();
            let cols: Vec<Vec<f32>> = (0..b)
                .map(|j| (0..a).map(|i| x[i * b + j]).collect())
                .collect();
            for (reduce, groups, what) in [([false, true], rows, "rows"), ([true, false], cols, "cols")] {
                let mut got = vec![0f32; groups.len()];
                // SAFETY: the test's buffers hold every element the call reaches.
                unsafe {
                    moments(
                        Token::current(),
                        &[a, b],
                        x.as_ptr(),
                        &[b as isize, 1],
                        &reduce,
                        moment,
                        true,
                        got.as_mut_ptr(),
                    )
                };
                let want = reference(&groups, moment);
                assert_eq!(
                    got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    "{moment:?} {what}"
                );
            }
        }
    }

    #[test]
    fn one_term_with_correction_is_nan_and_large_values_do_not_overflow() {
        let x = [3.0f32];
        let mut v = [0f32];
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe {
            moments(
                Token::current(),
                &[1],
                x.as_ptr(),
                &[1],
                &[true],
                Moment::Var {
                    correction: 1.0,
                    std: false,
                },
                true,
                v.as_mut_ptr(),
            )
        };
        assert_eq!(v[0].to_bits(), 0x7FC0_0000);
        let big = [3e20f32, 4e20];
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe {
            moments(
                Token::current(),
                &[2],
                big.as_ptr(),
                &[1],
                &[true],
                Moment::Norm2,
                true,
                v.as_mut_ptr(),
            )
        };
        assert_eq!(v[0], 5e20);
    }
}
