//! AdamW per seed 002 (Loshchilov & Hutter 2019, algorithm 2) on fp32
//! masters, each operation rounded separately, in PyTorch's single-tensor
//! order. TEMPORARY private copy: replaced by the shared kernel
//! (kernels::optim) once it lands; both follow seed 002 exactly.

/// The per-step binary32 scalars, computed in double and rounded once.
#[derive(Clone, Copy, Debug)]
pub struct Scalars {
    pub step_size: f32,
    pub sqrt_c2: f32,
    pub decay: f32,
    pub one_minus_b1: f32,
    pub b2: f32,
    pub one_minus_b2: f32,
    pub eps: f32,
}

impl Scalars {
    /// `b1_pow`, `b2_pow` are the running double products β1ᵗ, β2ᵗ.
    pub fn new(lr: f64, b1: f64, b2: f64, eps: f64, wd: f64, b1_pow: f64, b2_pow: f64) -> Scalars {
        let c1 = 1.0 - b1_pow;
        let c2 = 1.0 - b2_pow;
        Scalars {
            step_size: (lr / c1) as f32,
            sqrt_c2: c2.sqrt() as f32,
            decay: (1.0 - lr * wd) as f32,
            one_minus_b1: (1.0 - b1) as f32,
            b2: b2 as f32,
            one_minus_b2: (1.0 - b2) as f32,
            eps: eps as f32,
        }
    }
}

/// One AdamW step over a tensor; `decay` says whether weight decay applies.
pub fn update(p: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32], s: &Scalars, decay: bool) {
    for i in 0..p.len() {
        let mut pi = p[i];
        if decay {
            pi *= s.decay;
        }
        let gi = g[i];
        let mi = m[i] + s.one_minus_b1 * (gi - m[i]);
        let vi = v[i] * s.b2 + s.one_minus_b2 * (gi * gi);
        pi -= s.step_size * (mi / (vi.sqrt() / s.sqrt_c2 + s.eps));
        p[i] = pi;
        m[i] = mi;
        v[i] = vi;
    }
}
