//! Optimizer kernels: the AdamW / Adam step, the SGD step, and the helpers of
//! gradient clipping (global norm in double precision, scaling, clamping).
//!
//! One AdamW kernel serves both the engine's `onemodel.optim.AdamW` and the
//! crnn-v0 recognizer trainer. Its arithmetic is the recognizer
//! specification's ("scalars in double rounded once; every element operation
//! rounded separately, in PyTorch's single-tensor order"):
//!
//! ```text
//! c1 = 1 − β1ᵗ, c2 = 1 − β2ᵗ        (β^t a running product of doubles)
//! stepSize = f32(lr / c1)   sqrtC2 = f32(sqrt(c2))   decay = f32(1 − lr·wd)
//! p = p * decay
//! m = m + (1 − β1) * (g − m)
//! v = v * β2 + (1 − β2) * (g * g)
//! p = p − stepSize * (m / (sqrt(v) / sqrtC2 + eps))
//! ```
//!
//! with `1 − β1`, `β2`, `1 − β2` and `eps` also computed in double and rounded
//! once. Every step of every element is one IEEE binary32 operation (Rust
//! never contracts `a * b + c` into an fma), so the result does not depend on
//! the instruction set, the thread count or the OS.
//!
//! The tensors of one call are laid end to end and cut every [`CHUNK`]
//! elements (small tensors share a chunk, large ones span several); the
//! chunks go to the library's thread pool together. The work is
//! element-wise, so neither the cut nor the order the chunks run in can
//! change a bit. The loops are written once, as plain
//! scalar Rust, and compiled inside each kernel path's `#[target_feature]`
//! trampoline (through [`crate::simd::run_on`]), where the compiler
//! vectorises them for that instruction set without changing any operation.
//!
//! A NaN written by these kernels is always the canonical quiet NaN
//! (`0x7FC00000`), so NaN payloads cannot differ between paths either.

use super::CANONICAL_NAN;
use crate::dispatch::par_chunks;
use crate::simd::{run_on, LaneFn, Lanes, Token};

/// Elements per unit of work: a constant, so the chunking depends on the
/// tensor sizes alone (and, the work being element-wise, not even on them).
pub const CHUNK: usize = 8192;

#[inline(always)]
fn canon(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(CANONICAL_NAN)
    } else {
        x
    }
}

/// `β^t` as the running double product `((1·β)·β)·…` of `t` factors, the
/// definition of the bias corrections. A caller stepping once per update can
/// keep the product itself (multiply by β each step) and pass it to
/// [`AdamScalars::from_powers`]; both give the same double.
pub fn beta_power(beta: f64, t: u64) -> f64 {
    let mut p = 1.0f64;
    for _ in 0..t {
        p *= beta;
    }
    p
}

/// The per-step scalars of Adam/AdamW, each computed in double and rounded
/// once to binary32, plus the variant flags. Build with [`AdamScalars::new`]
/// (AdamW, seed 002), [`AdamScalars::adam`] (Adam with L2 weight decay) or
/// [`AdamScalars::from_powers`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamScalars {
    /// `f32(lr / (1 − β1ᵗ))`.
    pub step_size: f32,
    /// `f32(sqrt(1 − β2ᵗ))`.
    pub sqrt_c2: f32,
    /// `f32(1 − lr·wd)` for decoupled weight decay, else 1 (`p * 1 = p`).
    pub decay: f32,
    /// `f32(1 − β1)`.
    pub one_minus_beta1: f32,
    /// `f32(β2)`.
    pub beta2: f32,
    /// `f32(1 − β2)`.
    pub one_minus_beta2: f32,
    /// `f32(eps)`.
    pub eps: f32,
    /// Adam's (coupled, L2) weight decay `f32(wd)`: `g = g + wd * p` before
    /// the moments. 0 means none (the addition is skipped, as torch does).
    pub l2: f32,
    /// Negate the gradient first (torch's `maximize`).
    pub maximize: bool,
}

impl AdamScalars {
    /// AdamW's scalars for step `t` (from 1), seed 002's definition: β^t as
    /// running double products, `decay` only for tensors flagged for decay.
    pub fn new(
        lr: f64,
        beta1: f64,
        beta2: f64,
        eps: f64,
        weight_decay: f64,
        step: u64,
        decay: bool,
    ) -> AdamScalars {
        let wd = if decay { weight_decay } else { 0.0 };
        AdamScalars::from_powers(
            lr,
            beta1,
            beta2,
            eps,
            wd,
            true,
            beta_power(beta1, step),
            beta_power(beta2, step),
        )
    }

    /// Adam's scalars for step `t`: weight decay is torch's L2 term added to
    /// the gradient, not a decay of the weights.
    pub fn adam(
        lr: f64,
        beta1: f64,
        beta2: f64,
        eps: f64,
        weight_decay: f64,
        step: u64,
    ) -> AdamScalars {
        AdamScalars::from_powers(
            lr,
            beta1,
            beta2,
            eps,
            weight_decay,
            false,
            beta_power(beta1, step),
            beta_power(beta2, step),
        )
    }

    /// The scalars from the running products `beta1_pow = β1ᵗ` and
    /// `beta2_pow = β2ᵗ` (a caller stepping once per update multiplies its
    /// products by β each step). `decoupled`: AdamW's decay of the weights by
    /// `1 − lr·wd` (pass `weight_decay = 0` for a tensor not flagged for
    /// decay: the factor is then exactly 1); otherwise Adam's L2 term
    /// `g + wd·p`.
    #[allow(clippy::too_many_arguments)]
    pub fn from_powers(
        lr: f64,
        beta1: f64,
        beta2: f64,
        eps: f64,
        weight_decay: f64,
        decoupled: bool,
        beta1_pow: f64,
        beta2_pow: f64,
    ) -> AdamScalars {
        let c1 = 1.0 - beta1_pow;
        let c2 = 1.0 - beta2_pow;
        AdamScalars {
            step_size: (lr / c1) as f32,
            sqrt_c2: c2.sqrt() as f32,
            decay: if decoupled {
                (1.0 - lr * weight_decay) as f32
            } else {
                1.0
            },
            one_minus_beta1: (1.0 - beta1) as f32,
            beta2: beta2 as f32,
            one_minus_beta2: (1.0 - beta2) as f32,
            eps: eps as f32,
            l2: if decoupled { 0.0 } else { weight_decay as f32 },
            maximize: false,
        }
    }

    /// The same scalars with torch's `maximize` set or cleared.
    pub fn with_maximize(mut self, maximize: bool) -> AdamScalars {
        self.maximize = maximize;
        self
    }
}

/// One tensor's operands for [`adam_step_many`]: raw pointers so that one
/// call can carry many tensors to the thread pool.
#[derive(Clone, Copy, Debug)]
pub struct AdamSlot {
    pub p: *mut f32,
    pub g: *const f32,
    pub m: *mut f32,
    pub v: *mut f32,
    /// AMSGrad's running maximum of `v` (null: no AMSGrad).
    pub vmax: *mut f32,
    pub len: usize,
    pub scalars: AdamScalars,
}

// SAFETY: a slot is only a description of memory; `adam_step_many`'s caller
// guarantees the pointers are valid and that no two slots overlap in what
// they write, and each chunk writes a disjoint range.
unsafe impl Send for AdamSlot {}
// SAFETY: see Send.
unsafe impl Sync for AdamSlot {}

/// The work of one call: the tensors' elements laid end to end and cut
/// every CHUNK elements. Each chunk is a list of pieces `(slot, first, end)`,
/// so small tensors share a chunk and large ones span several. The cut
/// depends on the sizes alone; the work being element-wise, not even the
/// bits depend on it.
struct Plan {
    pieces: Vec<(usize, usize, usize)>,
    /// Chunk `c` is `pieces[starts[c]..starts[c + 1]]`.
    starts: Vec<usize>,
}

impl Plan {
    fn new(lens: impl Iterator<Item = usize>) -> Plan {
        let mut pieces = Vec::new();
        let mut starts = vec![0];
        let mut room = CHUNK;
        for (s, n) in lens.enumerate() {
            let mut a = 0;
            while a < n {
                let b = n.min(a + room);
                pieces.push((s, a, b));
                room -= b - a;
                a = b;
                if room == 0 {
                    starts.push(pieces.len());
                    room = CHUNK;
                }
            }
        }
        if *starts.last().unwrap() != pieces.len() {
            starts.push(pieces.len());
        }
        Plan { pieces, starts }
    }

    fn chunks(&self) -> usize {
        self.starts.len() - 1
    }

    /// Run `body(slot, first, end)` for every piece, chunks on the pool.
    fn run(&self, body: impl Fn(usize, usize, usize) + Sync + Send) {
        par_chunks(self.chunks(), |c| {
            for &(s, a, b) in &self.pieces[self.starts[c]..self.starts[c + 1]] {
                body(s, a, b);
            }
        });
    }
}

/// The per-element Adam/AdamW update over `[a, b)` of one slot.
struct AdamChunk<'a> {
    slot: &'a AdamSlot,
    a: usize,
    b: usize,
}

impl LaneFn for AdamChunk<'_> {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        let s = self.slot;
        let amsgrad = !s.vmax.is_null();
        let l2 = s.scalars.l2 != 0.0;
        // SAFETY: the caller of adam_step_many guarantees that every pointer
        // of the slot is valid for `len` elements and that what the slots
        // write does not overlap; [a, b) lies inside 0..len and no other
        // chunk touches it.
        unsafe {
            let n = self.b - self.a;
            let p = std::slice::from_raw_parts_mut(s.p.add(self.a), n);
            let g = std::slice::from_raw_parts(s.g.add(self.a), n);
            let m = std::slice::from_raw_parts_mut(s.m.add(self.a), n);
            let v = std::slice::from_raw_parts_mut(s.v.add(self.a), n);
            // One monomorphised loop per variant, so that each is a plain
            // straight-line loop the compiler can vectorise.
            match (s.scalars.maximize, l2, amsgrad) {
                (false, false, false) => adam_loop::<false, false>(&s.scalars, p, g, m, v, None),
                (true, false, false) => adam_loop::<true, false>(&s.scalars, p, g, m, v, None),
                (false, true, false) => adam_loop::<false, true>(&s.scalars, p, g, m, v, None),
                (true, true, false) => adam_loop::<true, true>(&s.scalars, p, g, m, v, None),
                (mx, l, true) => {
                    let vm = std::slice::from_raw_parts_mut(s.vmax.add(self.a), n);
                    match (mx, l) {
                        (false, false) => {
                            adam_loop::<false, false>(&s.scalars, p, g, m, v, Some(vm))
                        }
                        (true, false) => adam_loop::<true, false>(&s.scalars, p, g, m, v, Some(vm)),
                        (false, true) => adam_loop::<false, true>(&s.scalars, p, g, m, v, Some(vm)),
                        (true, true) => adam_loop::<true, true>(&s.scalars, p, g, m, v, Some(vm)),
                    }
                }
            }
        }
    }
}

/// The element update, in torch's single-tensor order, each operation
/// rounded separately. `MAXIMIZE`: negate g. `L2`: Adam's `g + wd * p`.
#[inline(always)]
fn adam_loop<const MAXIMIZE: bool, const L2: bool>(
    s: &AdamScalars,
    p: &mut [f32],
    g: &[f32],
    m: &mut [f32],
    v: &mut [f32],
    vmax: Option<&mut [f32]>,
) {
    let (decay, b1c, b2, b2c, eps, step, sqrt_c2, wd) = (
        s.decay,
        s.one_minus_beta1,
        s.beta2,
        s.one_minus_beta2,
        s.eps,
        s.step_size,
        s.sqrt_c2,
        s.l2,
    );
    let n = p.len();
    let (g, m, v) = (&g[..n], &mut m[..n], &mut v[..n]);
    #[inline(always)]
    fn grad<const MAXIMIZE: bool, const L2: bool>(g: f32, p: f32, wd: f32) -> f32 {
        let g = if MAXIMIZE { -g } else { g };
        if L2 {
            g + wd * p
        } else {
            g
        }
    }
    match vmax {
        None => {
            for i in 0..n {
                let gi = grad::<MAXIMIZE, L2>(g[i], p[i], wd);
                let pi = p[i] * decay;
                let mi = m[i] + b1c * (gi - m[i]);
                let vi = v[i] * b2 + b2c * (gi * gi);
                let pi = pi - step * (mi / (vi.sqrt() / sqrt_c2 + eps));
                p[i] = canon(pi);
                m[i] = canon(mi);
                v[i] = canon(vi);
            }
        }
        Some(vmax) => {
            let vmax = &mut vmax[..n];
            for i in 0..n {
                let gi = grad::<MAXIMIZE, L2>(g[i], p[i], wd);
                let pi = p[i] * decay;
                let mi = m[i] + b1c * (gi - m[i]);
                let vi = v[i] * b2 + b2c * (gi * gi);
                // torch.maximum: NaN if either is NaN.
                let old = vmax[i];
                let vm = if old > vi || old.is_nan() { old } else { vi };
                let pi = pi - step * (mi / (vm.sqrt() / sqrt_c2 + eps));
                p[i] = canon(pi);
                m[i] = canon(mi);
                v[i] = canon(vi);
                vmax[i] = canon(vm);
            }
        }
    }
}

/// Run the Adam/AdamW update on every slot, all chunks of all slots on the
/// library's thread pool, on the current kernel path.
///
/// # Safety
/// Every pointer of every slot must be valid for `len` f32 (reads for `g`,
/// reads and writes for the others); `p`, `m`, `v` and `vmax` of one slot
/// must not overlap each other (`g` may not overlap them either) nor anything
/// another slot writes.
pub unsafe fn adam_step_many(slots: &[AdamSlot]) {
    let token = Token::current();
    Plan::new(slots.iter().map(|s| s.len)).run(|s, a, b| {
        run_on(
            token,
            AdamChunk {
                slot: &slots[s],
                a,
                b,
            },
        )
    });
}

fn check_len(what: &str, n: usize, got: usize) {
    assert!(
        got == n,
        "{what}: length {got} differs from the parameter's {n}"
    );
}

/// One AdamW (or Adam, per `s`) step of one tensor: the safe entry point for
/// Rust callers such as the recognizer trainer. All slices have one length.
pub fn adamw_step(p: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32], s: &AdamScalars) {
    let n = p.len();
    check_len("adamw_step: gradient", n, g.len());
    check_len("adamw_step: first moment", n, m.len());
    check_len("adamw_step: second moment", n, v.len());
    let slot = AdamSlot {
        p: p.as_mut_ptr(),
        g: g.as_ptr(),
        m: m.as_mut_ptr(),
        v: v.as_mut_ptr(),
        vmax: std::ptr::null_mut(),
        len: n,
        scalars: *s,
    };
    // SAFETY: the borrows guarantee validity and (being &mut) no overlap.
    unsafe { adam_step_many(&[slot]) }
}

/// [`adamw_step`] with AMSGrad's running maximum of the second moment.
pub fn adamw_step_amsgrad(
    p: &mut [f32],
    g: &[f32],
    m: &mut [f32],
    v: &mut [f32],
    vmax: &mut [f32],
    s: &AdamScalars,
) {
    let n = p.len();
    check_len("adamw_step_amsgrad: gradient", n, g.len());
    check_len("adamw_step_amsgrad: first moment", n, m.len());
    check_len("adamw_step_amsgrad: second moment", n, v.len());
    check_len("adamw_step_amsgrad: max second moment", n, vmax.len());
    let slot = AdamSlot {
        p: p.as_mut_ptr(),
        g: g.as_ptr(),
        m: m.as_mut_ptr(),
        v: v.as_mut_ptr(),
        vmax: vmax.as_mut_ptr(),
        len: n,
        scalars: *s,
    };
    // SAFETY: the borrows guarantee validity and (being &mut) no overlap.
    unsafe { adam_step_many(&[slot]) }
}

// ---------------------------------------------------------------------------
// SGD
// ---------------------------------------------------------------------------

/// SGD's scalars (torch's `SGD`), each rounded once from double.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SgdScalars {
    /// `f32(lr)`; the update is `p = p − lr * d`.
    pub lr: f32,
    /// `f32(momentum)`; 0: no momentum buffer.
    pub momentum: f32,
    /// `f32(1 − dampening)`.
    pub one_minus_dampening: f32,
    /// `f32(weight_decay)`; 0: no L2 term.
    pub weight_decay: f32,
    pub nesterov: bool,
    pub maximize: bool,
}

impl SgdScalars {
    pub fn new(
        lr: f64,
        momentum: f64,
        dampening: f64,
        weight_decay: f64,
        nesterov: bool,
        maximize: bool,
    ) -> SgdScalars {
        SgdScalars {
            lr: lr as f32,
            momentum: momentum as f32,
            one_minus_dampening: (1.0 - dampening) as f32,
            weight_decay: weight_decay as f32,
            nesterov,
            maximize,
        }
    }
}

/// One tensor's operands for [`sgd_step_many`].
#[derive(Clone, Copy, Debug)]
pub struct SgdSlot {
    pub p: *mut f32,
    pub g: *const f32,
    /// The momentum buffer (null when momentum is 0).
    pub buf: *mut f32,
    /// The buffer holds nothing yet: this step initialises it with the
    /// (decayed) gradient, as torch's `clone(grad)` does.
    pub first: bool,
    pub len: usize,
    pub scalars: SgdScalars,
}

// SAFETY: as for AdamSlot.
unsafe impl Send for SgdSlot {}
// SAFETY: as for AdamSlot.
unsafe impl Sync for SgdSlot {}

struct SgdChunk<'a> {
    slot: &'a SgdSlot,
    a: usize,
    b: usize,
}

impl LaneFn for SgdChunk<'_> {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        let s = self.slot;
        let k = s.scalars;
        let n = self.b - self.a;
        // SAFETY: as in AdamChunk: valid, disjoint [a, b) of one slot.
        unsafe {
            let p = std::slice::from_raw_parts_mut(s.p.add(self.a), n);
            let g = std::slice::from_raw_parts(s.g.add(self.a), n);
            let mut buf = if s.buf.is_null() {
                None
            } else {
                Some(std::slice::from_raw_parts_mut(s.buf.add(self.a), n))
            };
            let wd = k.weight_decay != 0.0;
            for i in 0..n {
                // torch's single-tensor order; every operation rounded.
                let mut d = if k.maximize { -g[i] } else { g[i] };
                if wd {
                    d += k.weight_decay * p[i];
                }
                if let Some(buf) = buf.as_deref_mut() {
                    let b = if s.first {
                        d
                    } else {
                        buf[i] * k.momentum + k.one_minus_dampening * d
                    };
                    buf[i] = canon(b);
                    d = if k.nesterov { d + k.momentum * b } else { b };
                }
                p[i] = canon(p[i] - k.lr * d);
            }
        }
    }
}

/// Run the SGD update on every slot, on the thread pool.
///
/// # Safety
/// As [`adam_step_many`]: valid pointers for `len` elements, no overlap
/// between what any slot writes and anything else.
pub unsafe fn sgd_step_many(slots: &[SgdSlot]) {
    let token = Token::current();
    Plan::new(slots.iter().map(|s| s.len)).run(|s, a, b| {
        run_on(
            token,
            SgdChunk {
                slot: &slots[s],
                a,
                b,
            },
        )
    });
}

/// One SGD step of one tensor. `buf` is the momentum buffer (None when
/// momentum is 0); `first` says it is still empty.
pub fn sgd_step(p: &mut [f32], g: &[f32], buf: Option<&mut [f32]>, first: bool, s: &SgdScalars) {
    let n = p.len();
    check_len("sgd_step: gradient", n, g.len());
    let buf = match buf {
        Some(b) => {
            check_len("sgd_step: momentum buffer", n, b.len());
            b.as_mut_ptr()
        }
        None => std::ptr::null_mut(),
    };
    let slot = SgdSlot {
        p: p.as_mut_ptr(),
        g: g.as_ptr(),
        buf,
        first,
        len: n,
        scalars: *s,
    };
    // SAFETY: the borrows guarantee validity and no overlap.
    unsafe { sgd_step_many(&[slot]) }
}

// ---------------------------------------------------------------------------
// Gradient clipping
// ---------------------------------------------------------------------------

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
/// definition (the order of a sum is part of its value).
pub fn norm_term(x: &[f32], kind: NormKind) -> f64 {
    match kind {
        NormKind::L1 => x.iter().fold(0.0f64, |acc, &e| acc + (e as f64).abs()),
        NormKind::L2 => x.iter().fold(0.0f64, |acc, &e| {
            let d = e as f64;
            acc + d * d
        }),
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
        NormKind::P(p) => x
            .iter()
            .fold(0.0f64, |acc, &e| acc + (e as f64).abs().powf(p)),
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
            let total = terms.into_iter().fold(0.0f64, |acc, t| acc + t);
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
    par_chunks(tensors.len(), |i| {
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

/// The 2-norm of several tensors, seed 002's definition with double
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
    ptr: *mut f32,
    n: usize,
    op: ElementMap,
}

impl LaneFn for MapChunk {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        // SAFETY: map_many's caller guarantees ptr is valid for n elements
        // that no other chunk touches.
        let x = unsafe { std::slice::from_raw_parts_mut(self.ptr, self.n) };
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
pub unsafe fn map_many(tensors: &[(*mut f32, usize)], op: ElementMap) {
    let token = Token::current();
    let addrs: Vec<usize> = tensors.iter().map(|t| t.0 as usize).collect();
    Plan::new(tensors.iter().map(|t| t.1)).run(|s, a, b| {
        // SAFETY: inside the caller's valid range; pieces are disjoint.
        let ptr = unsafe { (addrs[s] as *mut f32).add(a) };
        run_on(token, MapChunk { ptr, n: b - a, op });
    });
}

/// Multiply every element by `c` (the clipping of a gradient).
pub fn scale_inplace(x: &mut [f32], c: f32) {
    // SAFETY: one exclusive borrow.
    unsafe { map_many(&[(x.as_mut_ptr(), x.len())], ElementMap::Scale(c)) }
}

/// Clamp every element to `[lo, hi]`.
pub fn clamp_inplace(x: &mut [f32], lo: f32, hi: f32) {
    // SAFETY: one exclusive borrow.
    unsafe { map_many(&[(x.as_mut_ptr(), x.len())], ElementMap::Clamp(lo, hi)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::{available_paths, set_kernel_path, set_threads, KernelPath};
    use std::sync::Mutex;

    // Tests that change the process-wide path or thread count take this.
    static SETTINGS: Mutex<()> = Mutex::new(());

    fn values(n: usize, seed: u32, scale: f32) -> Vec<f32> {
        let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(12345);
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                ((x >> 8) as f32 / (1u32 << 24) as f32 - 0.5) * scale
            })
            .collect()
    }

    /// Seed 002's element update written out directly (no slices, no
    /// chunks, no variants): the definition the kernel must reproduce.
    fn reference_adamw(p: f32, g: f32, m: f32, v: f32, s: &AdamScalars) -> (f32, f32, f32) {
        let p1 = p * s.decay;
        let m1 = m + s.one_minus_beta1 * (g - m);
        let v1 = v * s.beta2 + s.one_minus_beta2 * (g * g);
        let p2 = p1 - s.step_size * (m1 / (v1.sqrt() / s.sqrt_c2 + s.eps));
        (p2, m1, v1)
    }

    #[test]
    fn scalars_are_doubles_rounded_once() {
        let s = AdamScalars::new(1e-3, 0.9, 0.999, 1e-8, 0.01, 3, true);
        let b1 = 0.9f64 * 0.9 * 0.9;
        let b2 = 0.999f64 * 0.999 * 0.999;
        assert_eq!(s.step_size, (1e-3 / (1.0 - b1)) as f32);
        assert_eq!(s.sqrt_c2, (1.0 - b2).sqrt() as f32);
        assert_eq!(s.decay, (1.0 - 1e-3 * 0.01) as f32);
        assert_eq!(s.one_minus_beta1, 0.1f32);
        assert_eq!(s.beta2, 0.999f32);
        assert_eq!(s.one_minus_beta2, (1.0f64 - 0.999) as f32);
        assert_eq!(s.eps, 1e-8f32);
        assert_eq!(s.l2, 0.0);
        let nd = AdamScalars::new(1e-3, 0.9, 0.999, 1e-8, 0.01, 3, false);
        assert_eq!(nd.decay, 1.0);
        let a = AdamScalars::adam(1e-3, 0.9, 0.999, 1e-8, 0.01, 3);
        assert_eq!((a.decay, a.l2), (1.0, 0.01f32));
        // The running product is the one a step-by-step caller keeps.
        let mut run = 1.0f64;
        for t in 1..=50u64 {
            run *= 0.999;
            assert_eq!(beta_power(0.999, t).to_bits(), run.to_bits());
        }
    }

    #[test]
    fn adamw_matches_the_written_out_definition() {
        let _g = SETTINGS.lock().unwrap_or_else(|e| e.into_inner());
        let n = 3 * CHUNK + 77;
        let g = values(n, 1, 2e-2);
        let mut p = values(n, 2, 1.0);
        let (mut m, mut v) = (vec![0f32; n], vec![0f32; n]);
        let (mut rp, mut rm, mut rv) = (p.clone(), m.clone(), v.clone());
        for t in 1..=3 {
            let s = AdamScalars::new(1e-2, 0.9, 0.999, 1e-8, 0.05, t, true);
            adamw_step(&mut p, &g, &mut m, &mut v, &s);
            for i in 0..n {
                (rp[i], rm[i], rv[i]) = reference_adamw(rp[i], g[i], rm[i], rv[i], &s);
            }
        }
        for i in 0..n {
            assert_eq!(p[i].to_bits(), rp[i].to_bits(), "p[{i}]");
            assert_eq!(m[i].to_bits(), rm[i].to_bits(), "m[{i}]");
            assert_eq!(v[i].to_bits(), rv[i].to_bits(), "v[{i}]");
        }
    }

    /// Special values: every path and thread count gives the same bits,
    /// NaNs canonical.
    #[test]
    fn every_path_and_thread_count_gives_the_same_bits() {
        let _g = SETTINGS.lock().unwrap_or_else(|e| e.into_inner());
        let mut g = values(2 * CHUNK + 31, 3, 1.0);
        let specials = [
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::from_bits(1),
            f32::from_bits(0x8000_0001),
            f32::MAX,
            1e-38,
            3e-39,
        ];
        for (i, &x) in specials.iter().enumerate() {
            g[i * 7] = x;
        }
        let p0 = values(g.len(), 4, 4.0);
        let run_all = || {
            let mut outs = Vec::new();
            for (maximize, amsgrad, adam) in [
                (false, false, false),
                (true, true, false),
                (false, true, true),
                (true, false, true),
            ] {
                let mut p = p0.clone();
                let (mut m, mut v, mut vm) = (
                    vec![0f32; p.len()],
                    vec![0f32; p.len()],
                    vec![0f32; p.len()],
                );
                for t in 1..=2 {
                    let s = if adam {
                        AdamScalars::adam(1e-2, 0.8, 0.99, 1e-6, 0.1, t)
                    } else {
                        AdamScalars::new(1e-2, 0.8, 0.99, 1e-6, 0.1, t, true)
                    }
                    .with_maximize(maximize);
                    if amsgrad {
                        adamw_step_amsgrad(&mut p, &g, &mut m, &mut v, &mut vm, &s);
                    } else {
                        adamw_step(&mut p, &g, &mut m, &mut v, &s);
                    }
                }
                let mut buf = vec![0f32; p.len()];
                let ss = SgdScalars::new(0.1, 0.9, 0.1, 0.01, false, maximize);
                sgd_step(&mut p, &g, Some(&mut buf), true, &ss);
                sgd_step(&mut p, &g, Some(&mut buf), false, &ss);
                scale_inplace(&mut p, 0.75);
                clamp_inplace(&mut m, -0.5, 0.5);
                outs.push((p, m, v, vm, buf));
            }
            outs
        };
        set_kernel_path(Some(KernelPath::Scalar)).unwrap();
        set_threads(1).unwrap();
        let want = run_all();
        for path in available_paths() {
            for threads in [1, 3] {
                set_kernel_path(Some(path)).unwrap();
                set_threads(threads).unwrap();
                let got = run_all();
                for (w, g) in want.iter().zip(&got) {
                    for (a, b) in [
                        (&w.0, &g.0),
                        (&w.1, &g.1),
                        (&w.2, &g.2),
                        (&w.3, &g.3),
                        (&w.4, &g.4),
                    ] {
                        assert!(
                            a.iter()
                                .zip(b.iter())
                                .all(|(x, y)| x.to_bits() == y.to_bits()),
                            "{path:?} x{threads}"
                        );
                    }
                }
            }
        }
        set_kernel_path(None).unwrap();
        for (p, m, v, vm, buf) in &want {
            for x in p.iter().chain(m).chain(v).chain(vm).chain(buf) {
                assert!(!x.is_nan() || x.to_bits() == CANONICAL_NAN);
            }
        }
    }

    #[test]
    fn every_nan_written_is_the_canonical_one() {
        // NaNs with payloads in g, in m, in v and from inf − inf, spread over
        // several chunks; with and without AMSGrad.
        let n = 3 * CHUNK + 5;
        for amsgrad in [false, true] {
            let mut p = values(n, 1, 1.0);
            let mut g = values(n, 2, 1e-2);
            let mut m = values(n, 3, 1e-3);
            let mut v: Vec<f32> = values(n, 4, 1e-3).iter().map(|x| x * x).collect();
            let mut vmax = v.clone();
            g[7] = f32::from_bits(0x7FA0_0001);
            g[CHUNK + 1] = f32::from_bits(0xFFC1_2345);
            m[2 * CHUNK + 3] = f32::from_bits(0x7FC0_0F00);
            v[n - 1] = f32::from_bits(0xFF80_0001);
            (g[40], m[40]) = (f32::INFINITY, f32::INFINITY);
            let s = AdamScalars::new(1e-3, 0.9, 0.999, 1e-8, 0.01, 1, true);
            if amsgrad {
                adamw_step_amsgrad(&mut p, &g, &mut m, &mut v, &mut vmax, &s);
            } else {
                adamw_step(&mut p, &g, &mut m, &mut v, &s);
            }
            let mut nans = 0;
            for x in p
                .iter()
                .chain(&m)
                .chain(&v)
                .chain(if amsgrad { &vmax[..] } else { &[] })
            {
                if x.is_nan() {
                    nans += 1;
                    assert_eq!(x.to_bits(), CANONICAL_NAN, "amsgrad {amsgrad}");
                }
            }
            assert!(nans >= 5 * 2, "amsgrad {amsgrad}: only {nans} NaNs");
            for i in [7, CHUNK + 1, 2 * CHUNK + 3, n - 1, 40] {
                assert!(p[i].is_nan(), "element {i}");
            }
        }
    }

    #[test]
    fn amsgrad_keeps_the_maximum_and_maximize_negates() {
        let s = AdamScalars::new(0.1, 0.9, 0.999, 1e-8, 0.0, 1, true);
        let (mut p, mut m, mut v, mut vm) = ([1.0f32], [0.0f32], [0.0f32], [5.0f32]);
        adamw_step_amsgrad(&mut p, &[1.0], &mut m, &mut v, &mut vm, &s);
        assert_eq!(vm[0], 5.0);
        assert!(v[0] < 5.0);
        let (mut p2, mut m2, mut v2) = ([1.0f32], [0.0f32], [0.0f32]);
        adamw_step(&mut p2, &[1.0], &mut m2, &mut v2, &s.with_maximize(true));
        assert!(p2[0] > 1.0 && m2[0] < 0.0);
    }

    #[test]
    fn sgd_matches_torch_recurrence() {
        // Two steps, momentum 0.9, dampening 0.5, nesterov off, wd 0.1.
        let s = SgdScalars::new(0.5, 0.9, 0.5, 0.1, false, false);
        let (mut p, g, mut b) = ([2.0f32], [1.0f32], [0.0f32]);
        sgd_step(&mut p, &g, Some(&mut b), true, &s);
        // d = 1 + 0.1*2 = 1.2; buf = d; p = 2 - 0.5*1.2 = 1.4
        assert_eq!(b[0], 1.0f32 + 0.1f32 * 2.0f32);
        assert_eq!(p[0], 2.0f32 - 0.5f32 * b[0]);
        let (p1, b1) = (p[0], b[0]);
        sgd_step(&mut p, &g, Some(&mut b), false, &s);
        let d = 1.0f32 + 0.1f32 * p1;
        let nb = b1 * 0.9f32 + 0.5f32 * d;
        assert_eq!(b[0], nb);
        assert_eq!(p[0], p1 - 0.5f32 * nb);
    }

    #[test]
    fn plan_cuts_every_chunk_elements_end_to_end() {
        let plan = Plan::new([3, 0, CHUNK, 2 * CHUNK + 1].into_iter());
        let mut covered = [vec![], vec![], vec![], vec![]];
        for c in 0..plan.chunks() {
            let pieces = &plan.pieces[plan.starts[c]..plan.starts[c + 1]];
            assert!(pieces.iter().map(|p| p.2 - p.1).sum::<usize>() <= CHUNK);
            for &(s, a, b) in pieces {
                covered[s].push((a, b));
            }
        }
        assert_eq!(plan.chunks(), 4);
        assert_eq!(covered[0], vec![(0, 3)]);
        assert!(covered[1].is_empty());
        assert_eq!(covered[2], vec![(0, CHUNK - 3), (CHUNK - 3, CHUNK)]);
        assert_eq!(
            covered[3],
            vec![
                (0, CHUNK - 3),
                (CHUNK - 3, 2 * CHUNK - 3),
                (2 * CHUNK - 3, 2 * CHUNK + 1)
            ]
        );
        assert_eq!(Plan::new([0usize; 3].into_iter()).chunks(), 0);
    }

    #[test]
    fn norms_are_double_sums_in_order() {
        let a = values(1000, 5, 3.0);
        let b = values(17, 6, 1.0);
        let want_a: f64 = a.iter().fold(0.0, |s, &x| s + (x as f64) * (x as f64));
        let want_b: f64 = b.iter().fold(0.0, |s, &x| s + (x as f64) * (x as f64));
        assert_eq!(
            global_norm_f64(&[&a, &b]).to_bits(),
            (want_a + want_b).sqrt().to_bits()
        );
        let inf = global_norm(&[&a, &b], NormKind::Inf);
        assert_eq!(
            inf,
            a.iter().chain(&b).fold(0.0f32, |m, &x| m.max(x.abs())) as f64
        );
        assert!(global_norm(&[&[1.0, f32::NAN][..]], NormKind::Inf).is_nan());
        assert_eq!(global_norm(&[&[3.0, -4.0][..]], NormKind::L1), 7.0);
        assert_eq!(clip_coefficient(1.0, 0.5), None);
        assert_eq!(
            clip_coefficient(1.0, 4.0),
            Some((1.0f64 / (4.0 + 1e-6)) as f32)
        );
        let mut x = vec![1.0f32, -3.0, f32::NAN, 0.25];
        clamp_inplace(&mut x, -0.5, 0.5);
        assert_eq!(&x[..2], &[0.5, -0.5]);
        assert!(x[2].is_nan() && x[3] == 0.25);
    }
}
