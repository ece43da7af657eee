//! Sums in double precision: each output widens its terms to f64, adds them
//! in increasing element order starting from 0, and rounds once to f32.
//!
//! "Element order" is the row-major order of the input's logical indices
//! restricted to the reduced dimensions, so the result depends only on the
//! values, never on strides, threads or kernel path. Threads split outputs,
//! in chunks of a fixed number of outputs.

use super::canonical;
use super::copy::reach;
use super::double_chain::{self, add_terms};
use crate::dispatch::par_chunks_sized;
use crate::error::{Error, Result};
use crate::ptr::Ptr;
use crate::simd::Token;
use crate::storage::{scratch_elems, scratch_vec};

/// Terms per thread chunk: a chunk holds as many outputs as make about this
/// many terms (at least one, at most 64), so chunking depends on the shape
/// only — and a bias gradient of 64 channels still spreads over threads
/// (`Reduction::per_chunk`).
const TERMS_PER_CHUNK: usize = 1 << 16;

/// The reduce mask of `dims` over a tensor of `shape`, and the number of
/// outputs (the product of the kept sizes).
pub fn reduce_mask(op: &str, shape: &[usize], dims: &[usize]) -> Result<(Vec<bool>, usize)> {
    let mut reduce = vec![false; shape.len()];
    for &d in dims {
        if d >= reduce.len() {
            return Err(Error::Index(format!(
                "{op}: dim {d} out of range for shape {shape:?}"
            )));
        }
        reduce[d] = true;
    }
    let kept = (0..shape.len())
        .filter(|&d| !reduce[d])
        .map(|d| shape[d])
        .product();
    Ok((reduce, kept))
}

/// Sum `input` (shape `shape`, strides `strides`) over the dimensions where
/// `reduce[d]` is true, writing the kept dimensions row-major into `out`.
/// With `mean`, the f64 sum is divided by the number of terms before the one
/// rounding.
///
/// # Safety
/// `input` must be valid for every offset the strides reach; `out` must be
/// valid for writes of the product of the kept dimensions.
pub unsafe fn sum(
    token: Token,
    shape: &[usize],
    input: *const f32,
    strides: &[isize],
    reduce: &[bool],
    mean: bool,
    exact: bool,
    out: *mut f32,
) {
    let r = Reduction::new(shape, strides, reduce);
    let plan = Terms {
        run_starts: &r.run_starts,
        run_len: r.run_len,
        run_stride: r.run_stride,
        // Every offset a term reaches lies in the view's reach (asserted
        // in debug builds).
        input: Ptr::new(input, reach(shape, strides)),
    };
    let out = Ptr::new(out, r.outputs);
    par_chunks_sized(r.chunks(), r.outputs * r.terms, |chunk| {
        let first = chunk * r.per_chunk;
        let last = (first + r.per_chunk).min(r.outputs);
        let finish = |o: usize, mut acc: f64| {
            if mean {
                acc /= r.terms as f64;
            }
            // SAFETY: o < outputs, and out is valid for `outputs` writes;
            // chunks write disjoint ranges.
            unsafe { out.write(o, canonical(acc as f32, exact)) };
        };
        let mut o = first;
        if r.blocked {
            for o in first..last {
                // SAFETY: the caller's contract (every term is an element).
                finish(o, unsafe { r.chain(token, plan.input, r.base(o)) });
            }
            o = last;
        }
        while o + GROUP <= last {
            let bases: [isize; GROUP] = std::array::from_fn(|j| r.base(o + j));
            // SAFETY: every offset reached is one of the input's elements.
            let acc = unsafe { plan.sums(&bases) };
            for (j, a) in acc.into_iter().enumerate() {
                finish(o + j, a);
            }
            o += GROUP;
        }
        for o in o..last {
            // SAFETY: as above.
            let [acc] = unsafe { plan.sums(&[r.base(o)]) };
            finish(o, acc);
        }
    });
}

/// Where the terms of every output of a reduction sit, the same for every
/// output relative to its first term: the innermost reduced dimension is a
/// run (length, stride), the outer reduced dimensions give the runs'
/// starts, in element order; the kept dimensions give each output's first
/// term. Shared by `sum` and `moments::moments`.
pub(super) struct Reduction {
    kept_shape: Vec<usize>,
    kept_strides: Vec<isize>,
    /// Terms per output, and outputs (the kept dimensions, row-major).
    pub terms: usize,
    pub outputs: usize,
    pub run_len: usize,
    pub run_stride: isize,
    pub run_starts: Vec<isize>,
    /// The runs are consecutive elements, long enough for the blocked chain
    /// (`double_chain::add_terms`: the same chain, faster).
    pub blocked: bool,
    /// Outputs per thread chunk: as many as make about TERMS_PER_CHUNK
    /// terms (at least one, at most 64), a function of the shape only.
    pub per_chunk: usize,
}

impl Reduction {
    pub fn new(shape: &[usize], strides: &[isize], reduce: &[bool]) -> Reduction {
        let kept: Vec<usize> = (0..shape.len()).filter(|&d| !reduce[d]).collect();
        let red: Vec<usize> = (0..shape.len()).filter(|&d| reduce[d]).collect();
        let kept_shape: Vec<usize> = kept.iter().map(|&d| shape[d]).collect();
        let kept_strides: Vec<isize> = kept.iter().map(|&d| strides[d]).collect();
        let terms: usize = red.iter().map(|&d| shape[d]).product();
        let red_dims = coalesce(red.iter().map(|&d| (shape[d], strides[d])));
        let (run_len, run_stride) = red_dims.last().copied().unwrap_or((1, 0));
        let outer = &red_dims[..red_dims.len().saturating_sub(1)];
        let run_starts = if terms == 0 {
            Vec::new()
        } else {
            row_major_offsets(outer.iter().copied())
        };
        let outputs = kept_shape.iter().product();
        Reduction {
            kept_shape,
            kept_strides,
            terms,
            outputs,
            run_len,
            run_stride,
            run_starts,
            blocked: run_stride == 1 && run_len >= double_chain::BLOCK,
            per_chunk: (TERMS_PER_CHUNK / terms.max(1)).clamp(1, 64),
        }
    }

    /// Thread chunks of outputs.
    pub fn chunks(&self) -> usize {
        self.outputs.div_ceil(self.per_chunk)
    }

    /// Offset of output o's first term.
    #[inline]
    pub fn base(&self, o: usize) -> isize {
        let (mut b, mut r) = (0isize, o);
        for d in (0..self.kept_shape.len()).rev() {
            b += (r % self.kept_shape[d]) as isize * self.kept_strides[d];
            r /= self.kept_shape[d];
        }
        b
    }

    /// The double chain, from +0 in element order, of the terms of the
    /// output whose first term is at `base`, run by run through the blocked
    /// chain (only where `blocked`).
    ///
    /// # Safety
    /// Every term must be an element of `input`.
    pub unsafe fn chain(&self, token: Token, input: Ptr<*const f32>, base: isize) -> f64 {
        debug_assert!(self.blocked);
        let mut acc = 0f64;
        for &start in &self.run_starts {
            // SAFETY: the run's run_len consecutive elements are elements of
            // the input (the caller's contract).
            let run = unsafe { input.slice((base + start) as usize, self.run_len) };
            acc = add_terms(token, acc, run);
        }
        acc
    }
}

/// Outputs summed side by side: their chains are independent, so the CPU
/// overlaps them instead of waiting out the latency of one f64 add per term.
const GROUP: usize = 8;

/// `dims` (extent, stride), outer first, without extent-1 dimensions and
/// with each dimension merged into the one before it where their walk is
/// one stride (`stride_outer = stride_inner · extent_inner`): the same
/// offsets in the same order, in fewer, longer runs.
pub(super) fn coalesce(dims: impl Iterator<Item = (usize, isize)>) -> Vec<(usize, isize)> {
    let mut out: Vec<(usize, isize)> = Vec::new();
    for (n, st) in dims.filter(|&(n, _)| n != 1) {
        match out.last_mut() {
            Some(last) if last.1 == st * n as isize => *last = (last.0 * n, st),
            _ => out.push((n, st)),
        }
    }
    out
}

/// Offsets of the row-major walk over `dims` (extent, stride), first to last.
pub(super) fn row_major_offsets(dims: impl Iterator<Item = (usize, isize)>) -> Vec<isize> {
    let dims: Vec<(usize, isize)> = dims.collect(); // one per dimension
    let sizes: Vec<usize> = dims.iter().map(|&(n, _)| n).collect();
    let mut offs = scratch_vec(scratch_elems(&sizes), 0isize);
    if offs.is_empty() {
        return offs;
    }
    // Expand in place, each block written from the back: block i of the
    // next dimension starts at i·n >= i, past every entry still to be read.
    let mut filled = 1;
    for (n, st) in dims {
        for i in (0..filled).rev() {
            let o = offs[i];
            for j in (0..n).rev() {
                offs[i * n + j] = o + j as isize * st;
            }
        }
        filled *= n;
    }
    offs
}

/// Where one output's terms are, relative to its first term.
struct Terms<'a> {
    run_starts: &'a [isize],
    run_len: usize,
    run_stride: isize,
    /// Read at the offsets of the terms (the caller's contract: every
    /// offset reached is an element of the input, inside the extent).
    input: Ptr<*const f32>,
}

impl Terms<'_> {
    /// The f64 sums, in element order from +0, of the outputs whose first
    /// terms are at `bases`.
    ///
    /// # Safety
    /// Every base plus every term offset must be an element of the input.
    #[inline(always)]
    unsafe fn sums<const G: usize>(&self, bases: &[isize; G]) -> [f64; G] {
        let mut acc = [0f64; G];
        for &start in self.run_starts {
            let mut off = start;
            for _ in 0..self.run_len {
                for j in 0..G {
                    // SAFETY: guaranteed by the caller.
                    acc[j] += unsafe { self.input.read((bases[j] + off) as usize) } as f64;
                }
                off += self.run_stride;
            }
        }
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_in_double_and_rounds_once() {
        // 1 + 1e-8 * 4 in f32 steps would stay 1; in f64 it rounds to 1.0000001.
        let x = [
            1.0f32, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8, 1e-8,
        ];
        let mut out = [0f32];
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe {
            sum(
                Token::current(),
                &[11],
                x.as_ptr(),
                &[1],
                &[true],
                false,
                false,
                out.as_mut_ptr(),
            )
        };
        assert_eq!(out[0], (1.0f64 + 10.0 * (1e-8f32 as f64)) as f32);
        assert!(out[0] > 1.0);
    }

    #[test]
    fn sum_over_dims_and_mean() {
        let x: Vec<f32> = (0..24).map(|v| v as f32).collect(); // 2x3x4
        let mut out = [0f32; 3];
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe {
            sum(
                Token::current(),
                &[2, 3, 4],
                x.as_ptr(),
                &[12, 4, 1],
                &[true, false, true],
                false,
                false,
                out.as_mut_ptr(),
            )
        };
        // middle index j: sum over i, k of 12i + 4j + k
        for j in 0..3 {
            let want: f32 = (0..2)
                .flat_map(|i| (0..4).map(move |k| (12 * i + 4 * j + k) as f32))
                .sum();
            assert_eq!(out[j], want);
        }
        let mut m = [0f32; 1];
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe {
            sum(
                Token::current(),
                &[2, 3, 4],
                x.as_ptr(),
                &[12, 4, 1],
                &[true, true, true],
                true,
                false,
                m.as_mut_ptr(),
            )
        };
        assert_eq!(m[0], 11.5);
    }

    /// Every reduction mask over `shape` (4-D) read through `strides`: the
    /// bits equal the plain element-order loop written from the definition.
    fn check_every_mask(shape: [usize; 4], strides: [isize; 4], data: &[f32]) {
        let n: usize = shape.iter().product();
        for mask in 0..16u32 {
            let reduce: Vec<bool> = (0..4).map(|d| mask & (1 << d) != 0).collect();
            let kept: Vec<usize> = (0..4).filter(|&d| !reduce[d]).collect();
            let outputs: usize = kept.iter().map(|&d| shape[d]).product();
            let mut want = vec![0f64; outputs];
            // Walk logical indices row-major; each term lands on its output
            // in increasing element order.
            for flat in 0..n {
                let mut idx = [0usize; 4];
                let mut r = flat;
                for d in (0..4).rev() {
                    idx[d] = r % shape[d];
                    r /= shape[d];
                }
                let o = kept.iter().fold(0, |acc, &d| acc * shape[d] + idx[d]);
                let off: isize = (0..4).map(|d| idx[d] as isize * strides[d]).sum();
                want[o] += data[off as usize] as f64;
            }
            let mut got = vec![0f32; outputs];
            // SAFETY: the test's buffers hold every element the call reaches.
            unsafe {
                sum(
                    Token::current(),
                    &shape,
                    data.as_ptr(),
                    &strides,
                    &reduce,
                    false,
                    true,
                    got.as_mut_ptr(),
                )
            };
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(g.to_bits(), (*w as f32).to_bits(), "mask {mask:04b}");
            }
        }
    }

    /// Values whose f64 sums depend on the order.
    fn order_sensitive(n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| ((i as f32 * 1.37).sin() * 1e4).powi(3) * if i % 7 == 0 { 1e-9 } else { 1.0 })
            .collect()
    }

    /// A permuted (non-contiguous) view: memory holds [19, 5, 1, 3]
    /// row-major, the logical dims are permuted.
    #[test]
    fn every_mask_and_layout_gives_the_element_order_sum() {
        check_every_mask([3, 1, 5, 19], [1, 3, 3, 15], &order_sensitive(285));
    }

    /// Contiguous runs long enough for the blocked chain (`add_terms`), with
    /// a tail, and outputs spread over several chunks.
    #[test]
    fn long_runs_give_the_element_order_sum() {
        let shape = [3usize, 2, 5, 203];
        let data = order_sensitive(shape.iter().product());
        check_every_mask(shape, [2030, 1015, 203, 1], &data);
        // Terms with a mean: chains that round within one binade.
        let data: Vec<f32> = (0..data.len())
            .map(|i| ((i as f32 * 0.731).sin() + 1.5) * 3.3)
            .collect();
        check_every_mask(shape, [2030, 1015, 203, 1], &data);
    }
}
