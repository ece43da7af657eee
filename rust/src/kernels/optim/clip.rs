//! The helpers of gradient clipping: global norms in double precision, and
//! scaling and clamping in place.

use super::{canon, Plan};
use crate::dispatch::par_chunks_sized;
use crate::kernels::double_chain::chain;
use crate::ptr::Ptr;
use crate::simd::{run_on, LaneFn, Lanes, Token};

/// Which vector norm [`norm_term`] accumulates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NormKind {
    /// Σ|x| in double, element order.
    L1,
    /// Σx² in double, element order (x² of a widened f32 is exact).
    L2,
    /// max |x| (NaN if any element is NaN).
    Inf,
    /// Σ|x|^p in double with the platform's `powf`: reproducible on one
    /// machine, not promised across platforms.
    P(f64),
}

/// One tensor's contribution to a global norm: the double sum, in element
/// order from 0, of |x|, x² or |x|^p, or the maximum of |x|. Sequential by
/// definition (the order of a sum is part of its value): the plain chain of
/// `double_chain::chain` (the blocked chain costs more on these terms than
/// it saves: docs/kernels.md, "The double chain").
pub fn norm_term(x: &[f32], kind: NormKind) -> f64 {
    match kind {
        NormKind::L1 => chain(0.0, x.iter().map(|&e| (e as f64).abs())),
        NormKind::L2 => chain(
            0.0,
            x.iter().map(|&e| {
                let d = e as f64;
                d * d
            }),
        ),
        NormKind::Inf => {
            let mut best = 0.0f64;
            for &e in x {
                let a = (e as f64).abs();
                if a.is_nan() {
                    return f64::NAN;
                }
                if a > best {
                    best = a;
                }
            }
            best
        }
        NormKind::P(p) => chain(0.0, x.iter().map(|&e| (e as f64).abs().powf(p))),
    }
}

/// Combine per-tensor terms, in parameter order, into the norm: for the sums
/// the double sum of the terms then the root (`sqrt` for L2), for Inf the
/// maximum. A caller with its own per-tensor sums (the recognizer's dot16
/// squares, say) passes them here.
pub fn combine_norm_terms(terms: impl IntoIterator<Item = f64>, kind: NormKind) -> f64 {
    match kind {
        NormKind::Inf => {
            let mut best = 0.0f64;
            for t in terms {
                if t.is_nan() {
                    return f64::NAN;
                }
                if t > best {
                    best = t;
                }
            }
            best
        }
        _ => {
            let total = chain(0.0, terms.into_iter());
            match kind {
                NormKind::L1 => total,
                NormKind::L2 => total.sqrt(),
                NormKind::P(p) => total.powf(1.0 / p),
                NormKind::Inf => unreachable!(),
            }
        }
    }
}

/// The global norm of several tensors: [`norm_term`] of each (tensors in
/// parallel, each sum on one thread in element order), combined in the
/// order given. The result does not depend on the thread count.
pub fn global_norm(tensors: &[&[f32]], kind: NormKind) -> f64 {
    let terms: Vec<std::sync::atomic::AtomicU64> = tensors
        .iter()
        .map(|_| std::sync::atomic::AtomicU64::new(0))
        .collect();
    let work = tensors.iter().map(|t| t.len()).sum();
    par_chunks_sized(tensors.len(), work, |i| {
        terms[i].store(
            norm_term(tensors[i], kind).to_bits(),
            std::sync::atomic::Ordering::Relaxed,
        );
    });
    combine_norm_terms(
        terms
            .iter()
            .map(|t| f64::from_bits(t.load(std::sync::atomic::Ordering::Relaxed))),
        kind,
    )
}

/// The 2-norm of several tensors (docs/optim.md, "Gradient clipping"), with double
/// per-tensor sums: sqrt of the double sum over tensors, in order, of each
/// tensor's double sum of squares in element order.
pub fn global_norm_f64(tensors: &[&[f32]]) -> f64 {
    global_norm(tensors, NormKind::L2)
}

/// The clipping factor `f32(max_norm / (norm + 1e-6))` (in double, rounded
/// once), or None when `norm` does not exceed `max_norm` (nothing to do).
pub fn clip_coefficient(max_norm: f64, norm: f64) -> Option<f32> {
    if norm > max_norm {
        Some((max_norm / (norm + 1e-6)) as f32)
    } else {
        None
    }
}

/// What [`map_many`] does to each element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ElementMap {
    /// `x * c`.
    Scale(f32),
    /// `min(max(x, lo), hi)`; NaN stays NaN (torch.clamp).
    Clamp(f32, f32),
}

struct MapChunk {
    ptr: Ptr<*mut f32>,
    n: usize,
    op: ElementMap,
}

impl LaneFn for MapChunk {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        // SAFETY: map_many's caller guarantees ptr is valid for n elements
        // that no other chunk touches (the Ptr's extent, asserted in debug
        // builds).
        let x = unsafe { self.ptr.slice_mut(0, self.n) };
        match self.op {
            ElementMap::Scale(c) => x.iter_mut().for_each(|e| *e = canon(*e * c)),
            ElementMap::Clamp(lo, hi) => x.iter_mut().for_each(|e| {
                let v = *e;
                let v = if v < lo { lo } else { v };
                let v = if v > hi { hi } else { v };
                *e = canon(v);
            }),
        }
    }
}

/// Apply `op` in place to every element of every tensor, on the pool.
///
/// # Safety
/// Each `(ptr, len)` must be valid for reads and writes of `len` f32, and no
/// two may overlap.
pub unsafe fn map_many(token: Token, tensors: &[(*mut f32, usize)], op: ElementMap) {
    let ptrs: Vec<Ptr<*mut f32>> = tensors.iter().map(|&(p, n)| Ptr::new(p, n)).collect();
    Plan::new(tensors.iter().map(|t| t.1)).run(|s, a, b| {
        // Inside the caller's valid range; pieces are disjoint.
        let ptr = ptrs[s].offset(a);
        run_on(token, MapChunk { ptr, n: b - a, op });
    });
}

/// Multiply every element by `c` (the clipping of a gradient).
pub fn scale_inplace(token: Token, x: &mut [f32], c: f32) {
    // SAFETY: one exclusive borrow.
    unsafe { map_many(token, &[(x.as_mut_ptr(), x.len())], ElementMap::Scale(c)) }
}

/// Clamp every element to `[lo, hi]`.
pub fn clamp_inplace(token: Token, x: &mut [f32], lo: f32, hi: f32) {
    // SAFETY: one exclusive borrow.
    unsafe {
        map_many(
            token,
            &[(x.as_mut_ptr(), x.len())],
            ElementMap::Clamp(lo, hi),
        )
    }
}
