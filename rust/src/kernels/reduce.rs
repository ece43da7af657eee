//! Sums in double precision: each output widens its terms to f64, adds them
//! in increasing element order starting from 0, and rounds once to f32.
//!
//! "Element order" is the row-major order of the input's logical indices
//! restricted to the reduced dimensions, so the result depends only on the
//! values, never on strides, threads or kernel path. Threads split outputs,
//! in chunks of a fixed number of outputs.

use super::canonical;
use crate::dispatch::par_chunks;

/// Outputs per thread chunk: a constant, so chunking depends on shape only.
const OUTPUTS_PER_CHUNK: usize = 64;

/// Sum `input` (shape `shape`, strides `strides`) over the dimensions where
/// `reduce[d]` is true, writing the kept dimensions row-major into `out`.
/// With `mean`, the f64 sum is divided by the number of terms before the one
/// rounding.
///
/// # Safety
/// `input` must be valid for every offset the strides reach; `out` must be
/// valid for writes of the product of the kept dimensions.
pub unsafe fn sum(shape: &[usize], input: *const f32, strides: &[isize], reduce: &[bool], mean: bool, exact: bool, out: *mut f32) {
    let kept: Vec<usize> = (0..shape.len()).filter(|&d| !reduce[d]).collect();
    let red: Vec<usize> = (0..shape.len()).filter(|&d| reduce[d]).collect();
    let kept_shape: Vec<usize> = kept.iter().map(|&d| shape[d]).collect();
    let kept_strides: Vec<isize> = kept.iter().map(|&d| strides[d]).collect();
    let red_shape: Vec<usize> = red.iter().map(|&d| shape[d]).collect();
    let red_strides: Vec<isize> = red.iter().map(|&d| strides[d]).collect();
    let outputs: usize = kept_shape.iter().product();
    let terms: usize = red_shape.iter().product();
    let input = input as usize;
    let out = out as usize;
    let chunks = outputs.div_ceil(OUTPUTS_PER_CHUNK);
    par_chunks(chunks, |chunk| {
        let first = chunk * OUTPUTS_PER_CHUNK;
        let last = (first + OUTPUTS_PER_CHUNK).min(outputs);
        let mut red_idx = vec![0usize; red_shape.len()];
        for o in first..last {
            // Offset of this output's first term.
            let mut base = 0isize;
            let mut r = o;
            for d in (0..kept_shape.len()).rev() {
                base += (r % kept_shape[d]) as isize * kept_strides[d];
                r /= kept_shape[d];
            }
            let mut acc = 0f64;
            red_idx.iter_mut().for_each(|i| *i = 0);
            let mut off = base;
            for _ in 0..terms {
                // SAFETY: the caller guarantees every reached offset is valid.
                acc += unsafe { *(input as *const f32).offset(off) } as f64;
                for d in (0..red_shape.len()).rev() {
                    red_idx[d] += 1;
                    off += red_strides[d];
                    if red_idx[d] < red_shape[d] {
                        break;
                    }
                    off -= red_strides[d] * red_shape[d] as isize;
                    red_idx[d] = 0;
                }
            }
            if mean {
                acc /= terms as f64;
            }
            // SAFETY: o < outputs, and out is valid for `outputs` writes;
            // chunks write disjoint ranges.
            unsafe { *(out as *mut f32).add(o) = canonical(acc as f32, exact) };
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_in_double_and_rounds_once() {
        // 1 + 1e-8 * 4 in f32 steps would stay 1; in f64 it rounds to 1.0000001.
        let x = [1.0f32, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8];
        let mut out = [0f32];
        unsafe { sum(&[11], x.as_ptr(), &[1], &[true], false, false, out.as_mut_ptr()) };
        assert_eq!(out[0], (1.0f64 + 10.0 * (1e-8f32 as f64)) as f32);
        assert!(out[0] > 1.0);
    }

    #[test]
    fn sum_over_dims_and_mean() {
        let x: Vec<f32> = (0..24).map(|v| v as f32).collect(); // 2x3x4
        let mut out = [0f32; 3];
        unsafe { sum(&[2, 3, 4], x.as_ptr(), &[12, 4, 1], &[true, false, true], false, false, out.as_mut_ptr()) };
        // middle index j: sum over i, k of 12i + 4j + k
        for j in 0..3 {
            let want: f32 = (0..2).flat_map(|i| (0..4).map(move |k| (12 * i + 4 * j + k) as f32)).sum();
            assert_eq!(out[j], want);
        }
        let mut m = [0f32; 1];
        unsafe { sum(&[2, 3, 4], x.as_ptr(), &[12, 4, 1], &[true, true, true], true, false, m.as_mut_ptr()) };
        assert_eq!(m[0], 11.5);
    }
}
