//! The Adam / AdamW step (the module comment of `kernels::optim` gives its
//! arithmetic).

use super::{canon, check_len, Plan};
use crate::ptr::Ptr;
use crate::simd::{run_on, LaneFn, Lanes, Token};

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
/// (AdamW, docs/optim.md, "Arithmetic"), [`AdamScalars::adam`] (Adam with
/// L2 weight decay) or [`AdamScalars::from_powers`].
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
    /// AdamW's scalars for step `t` (from 1), as docs/optim.md, "Arithmetic"
    /// defines them: β^t as running double products, `decay` only for
    /// tensors flagged for decay.
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
            // Each operand's extent is the slot's len (asserted in debug
            // builds).
            let p = Ptr::new(s.p, s.len).slice_mut(self.a, n);
            let g = Ptr::new(s.g, s.len).slice(self.a, n);
            let m = Ptr::new(s.m, s.len).slice_mut(self.a, n);
            let v = Ptr::new(s.v, s.len).slice_mut(self.a, n);
            // One monomorphised loop per variant, so that each is a plain
            // straight-line loop the compiler can vectorise.
            match (s.scalars.maximize, l2, amsgrad) {
                (false, false, false) => adam_loop::<false, false>(&s.scalars, p, g, m, v, None),
                (true, false, false) => adam_loop::<true, false>(&s.scalars, p, g, m, v, None),
                (false, true, false) => adam_loop::<false, true>(&s.scalars, p, g, m, v, None),
                (true, true, false) => adam_loop::<true, true>(&s.scalars, p, g, m, v, None),
                (mx, l, true) => {
                    let vm = Ptr::new(s.vmax, s.len).slice_mut(self.a, n);
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
/// library's thread pool, on `token`'s kernel path.
///
/// # Safety
/// Every pointer of every slot must be valid for `len` f32 (reads for `g`,
/// reads and writes for the others); `p`, `m`, `v` and `vmax` of one slot
/// must not overlap each other (`g` may not overlap them either) nor anything
/// another slot writes.
pub unsafe fn adam_step_many(token: Token, slots: &[AdamSlot]) {
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

/// One AdamW (or Adam, per `s`) step of one tensor: the safe entry point for
/// Rust callers such as the recognizer trainer. All slices have one length.
pub fn adamw_step(
    token: Token,
    p: &mut [f32],
    g: &[f32],
    m: &mut [f32],
    v: &mut [f32],
    s: &AdamScalars,
) {
    step_one(token, "adamw_step", (p, g, m, v), None, s)
}

/// [`adamw_step`] with AMSGrad's running maximum of the second moment.
pub fn adamw_step_amsgrad(
    token: Token,
    p: &mut [f32],
    g: &[f32],
    m: &mut [f32],
    v: &mut [f32],
    vmax: &mut [f32],
    s: &AdamScalars,
) {
    step_one(token, "adamw_step_amsgrad", (p, g, m, v), Some(vmax), s)
}

/// What both safe entry points do: check every length against `p`'s and
/// step the one slot (`vmax` None: no AMSGrad maximum).
fn step_one(
    token: Token,
    op: &str,
    (p, g, m, v): (&mut [f32], &[f32], &mut [f32], &mut [f32]),
    vmax: Option<&mut [f32]>,
    s: &AdamScalars,
) {
    let n = p.len();
    check_len(op, "gradient", n, g.len());
    check_len(op, "first moment", n, m.len());
    check_len(op, "second moment", n, v.len());
    if let Some(vmax) = &vmax {
        check_len(op, "max second moment", n, vmax.len());
    }
    let slot = AdamSlot {
        p: p.as_mut_ptr(),
        g: g.as_ptr(),
        m: m.as_mut_ptr(),
        v: v.as_mut_ptr(),
        vmax: vmax.map_or(std::ptr::null_mut(), |x| x.as_mut_ptr()),
        len: n,
        scalars: *s,
    };
    // SAFETY: the borrows guarantee validity and (being &mut) no overlap.
    unsafe { adam_step_many(token, &[slot]) }
}
