//! The SGD step (torch's `SGD`: momentum, dampening, Nesterov, L2 decay).

use super::{canon, check_len, Plan};
use crate::ptr::Ptr;
use crate::simd::{run_on, LaneFn, Lanes, Token};

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
            // Extents: the slot's len (asserted in debug builds).
            let p = Ptr::new(s.p, s.len).slice_mut(self.a, n);
            let g = Ptr::new(s.g, s.len).slice(self.a, n);
            let mut buf = if s.buf.is_null() {
                None
            } else {
                Some(Ptr::new(s.buf, s.len).slice_mut(self.a, n))
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
pub unsafe fn sgd_step_many(token: Token, slots: &[SgdSlot]) {
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
pub fn sgd_step(
    token: Token,
    p: &mut [f32],
    g: &[f32],
    buf: Option<&mut [f32]>,
    first: bool,
    s: &SgdScalars,
) {
    let n = p.len();
    check_len("sgd_step", "gradient", n, g.len());
    let buf = match buf {
        Some(b) => {
            check_len("sgd_step", "momentum buffer", n, b.len());
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
    unsafe { sgd_step_many(token, &[slot]) }
}
