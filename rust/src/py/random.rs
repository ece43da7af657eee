//! A counter-based random generator whose stream is a pure function of the
//! seed and the position, so values never depend on threads or platform.
//!
//! Draw i of seed s is SplitMix64(s + (i + 1)·γ) (Steele, Lea and Flood
//! 2014, γ = 0x9E3779B97F4A7C15). Uniform floats take the top 24 bits;
//! normals use Marsaglia's polar method in double precision with the DetMath
//! log and IEEE sqrt, rounded once to f32.

use super::operand::{In, StridedOut};
use crate::error::Error;
use crate::math::{detmath, gamma};
use crate::splitmix::{mix, GAMMA};
use pyo3::prelude::*;

#[pyclass(module = "onemodel._core")]
pub struct Generator {
    seed: u64,
    counter: u64,
}

impl Generator {
    fn next_u64(&mut self) -> u64 {
        self.counter = self.counter.wrapping_add(1);
        mix(self.seed.wrapping_add(self.counter.wrapping_mul(GAMMA)))
    }
    /// Uniform in [0, 1) with 53 random bits.
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform in (0, 1].
    fn next_f64_open(&mut self) -> f64 {
        1.0 - self.next_f64()
    }
    /// Gamma(alpha, 1): Marsaglia and Tsang (2000), with the boost
    /// G(α + 1)·U^(1/α) below α = 1; binary64, DetMath log and exp.
    fn standard_gamma(&mut self, alpha: f64) -> f64 {
        if alpha.is_nan() || alpha <= 0.0 {
            return f64::NAN;
        }
        if alpha == f64::INFINITY {
            return alpha;
        }
        if alpha < 1.0 {
            let g = self.standard_gamma(alpha + 1.0);
            let u = self.next_f64_open();
            return g * detmath::exp(detmath::log(u) / alpha);
        }
        let d = alpha - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let (x, _) = self.next_normal_pair();
            let v = 1.0 + c * x;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u = self.next_f64_open();
            let x2 = x * x;
            if u < 1.0 - 0.0331 * x2 * x2 {
                return d * v;
            }
            if detmath::log(u) < 0.5 * x2 + d * (1.0 - v + detmath::log(v)) {
                return d * v;
            }
        }
    }
    /// Poisson(lam): multiplication of uniforms below 10 (Knuth), else
    /// Hörmann's PTRS (1993), as NumPy; binary64, DetMath log and exp and
    /// onemodel's lgamma.
    fn poisson(&mut self, lam: f64) -> f64 {
        if lam.is_nan() || lam < 0.0 {
            return f64::NAN;
        }
        if lam == 0.0 {
            return 0.0;
        }
        if lam < 10.0 {
            let limit = detmath::exp(-lam);
            let (mut k, mut p) = (0.0, 1.0);
            loop {
                p *= self.next_f64();
                if p <= limit {
                    return k;
                }
                k += 1.0;
            }
        }
        let slam = lam.sqrt();
        let loglam = detmath::log(lam);
        let b = 0.931 + 2.53 * slam;
        let a = -0.059 + 0.02483 * b;
        let invalpha = 1.1239 + 1.1328 / (b - 3.4);
        let vr = 0.9277 - 3.6224 / (b - 2.0);
        loop {
            let u = self.next_f64() - 0.5;
            let v = self.next_f64();
            let us = 0.5 - u.abs();
            let k = ((2.0 * a / us + b) * u + lam + 0.43).floor();
            if us >= 0.07 && v <= vr {
                return k;
            }
            if k < 0.0 || (us < 0.013 && v > us) {
                continue;
            }
            if v > 0.0
                && detmath::log(v) + detmath::log(invalpha) - detmath::log(a / (us * us) + b)
                    <= -lam + k * loglam - gamma::lgamma(k + 1.0)
            {
                return k;
            }
        }
    }
    /// `out` in row-major order, element i drawn by `draw` with parameter
    /// `params[i]` (contiguous, as many elements as `out`).
    fn fill_per_element(
        &mut self,
        op: &str,
        out: StridedOut<f32>,
        params: In<f32>,
        mut draw: impl FnMut(&mut Self, f64) -> f32,
    ) -> PyResult<()> {
        if params.numel() != out.numel() {
            let (p, n) = (params.numel(), out.numel());
            return Err(Error::Value(format!("{op}: {p} parameters for {n} draws")).into());
        }
        let mut values = params.as_slice().iter();
        fill_f32(&out, || {
            draw(self, *values.next().unwrap_or(&f32::NAN) as f64)
        })
    }
    fn next_normal_pair(&mut self) -> (f64, f64) {
        loop {
            let u = 2.0 * self.next_f64() - 1.0;
            let v = 2.0 * self.next_f64() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                let f = (-2.0 * detmath::log(s) / s).sqrt();
                return (u * f, v * f);
            }
        }
    }
}

fn fill_f32(out: &StridedOut<f32>, mut f: impl FnMut() -> f32) -> PyResult<()> {
    let shape = out.shape();
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    // Row-major traversal of a possibly strided destination.
    let mut idx = vec![0usize; shape.len()];
    let base = out.mut_ptr();
    for _ in 0..n {
        let off: isize = idx
            .iter()
            .zip(out.strides())
            .map(|(&i, &s)| i as isize * s)
            .sum();
        // SAFETY: the view was checked to lie inside its storage.
        unsafe { *base.offset(off) = f() };
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(())
}

#[pymethods]
impl Generator {
    #[new]
    #[pyo3(signature = (seed=0))]
    fn new(seed: u64) -> Generator {
        Generator { seed, counter: 0 }
    }

    /// Restart the stream from `seed`.
    fn manual_seed(&mut self, seed: u64) {
        self.seed = seed;
        self.counter = 0;
    }

    fn initial_seed(&self) -> u64 {
        self.seed
    }

    /// (seed, counter): the whole state.
    fn get_state(&self) -> (u64, u64) {
        (self.seed, self.counter)
    }

    fn set_state(&mut self, state: (u64, u64)) {
        self.seed = state.0;
        self.counter = state.1;
    }

    /// Fill a float32 tensor with N(mean, std²) draws in row-major order.
    fn normal_(&mut self, out: StridedOut<f32>, mean: f64, std: f64) -> PyResult<()> {
        let o = out;
        let mut pending: Option<f64> = None;
        fill_f32(&o, || {
            let z = match pending.take() {
                Some(z) => z,
                None => {
                    let (a, b) = self.next_normal_pair();
                    pending = Some(b);
                    a
                }
            };
            (mean + std * z) as f32
        })
    }

    /// Fill a float32 tensor with U[low, high) draws in row-major order.
    fn uniform_(&mut self, out: StridedOut<f32>, low: f64, high: f64) -> PyResult<()> {
        let o = out;
        fill_f32(&o, || {
            let u = self.next_f64();
            let v = (low + (high - low) * u) as f32;
            // Rounding may reach `high`; keep the interval half-open.
            if v as f64 >= high && high > low {
                (high as f32).next_down_compat()
            } else {
                v
            }
        })
    }

    /// Fill a float32 tensor with Gamma(alpha, 1) draws in row-major order,
    /// `alpha` (contiguous, as many elements) giving each one's shape; a
    /// draw below binary32's least normal is raised to it (as torch does,
    /// so that Dirichlet's normalisation never divides 0 by 0).
    fn standard_gamma_(&mut self, out: StridedOut<f32>, alpha: In<f32>) -> PyResult<()> {
        self.fill_per_element("standard_gamma_", out, alpha, |g, a| {
            let x = g.standard_gamma(a) as f32;
            // NaN (an invalid shape) stays NaN.
            if x < f32::MIN_POSITIVE {
                f32::MIN_POSITIVE
            } else {
                x
            }
        })
    }

    /// Fill a float32 tensor with Poisson(rate) draws in row-major order.
    fn poisson_(&mut self, out: StridedOut<f32>, rate: In<f32>) -> PyResult<()> {
        self.fill_per_element("poisson_", out, rate, |g, r| g.poisson(r) as f32)
    }

    /// A uniform integer in [low, high) (for permutations and randint).
    fn randint(&mut self, low: i64, high: i64) -> i64 {
        // The span in u64: any int64 range [low, high) fits it (high − low
        // would overflow i64 for a range wider than 2**63); an empty range
        // gives low, as before.
        let span = if high > low {
            high.wrapping_sub(low) as u64
        } else {
            1
        };
        // Lemire's unbiased bounded integer.
        loop {
            let x = self.next_u64();
            let m = (x as u128) * (span as u128);
            let l = m as u64;
            if l >= span.wrapping_neg() % span {
                return low.wrapping_add((m >> 64) as i64);
            }
        }
    }
}

trait NextDown {
    fn next_down_compat(self) -> f32;
}

impl NextDown for f32 {
    fn next_down_compat(self) -> f32 {
        if self.is_nan() || self == f32::NEG_INFINITY {
            return self;
        }
        if self == 0.0 {
            return -f32::from_bits(1);
        }
        let b = self.to_bits();
        f32::from_bits(if self > 0.0 { b - 1 } else { b + 1 })
    }
}
