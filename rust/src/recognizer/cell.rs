//! The LSTM cell update of one step of one line, on the lanes of the
//! current kernel path: with z the gate pre-activations (input projection
//! plus bias) and rec the recurrent product,
//!   z = z + rec;  i = σ(z_i), f = σ(z_f), g = tanh(z_g), o = σ(z_o);
//!   c = f·cPrev + i·g;  tc = tanh(c);  h = o·tc
//! every operation rounded separately (no fma), σ and tanh the fixed ones
//! (crate::math::fixed), whose vector forms are the scalar definition lane
//! by lane. The hidden units that do not fill a register are done by the
//! same code on one lane (`f32`), so every path gives the scalar bits.

use crate::math::fixed::{sigmoid, tanh};
use crate::simd::{run_on, LaneFn, Lanes, Token};

/// One step's cell update for one line (`h` hidden units).
pub struct CellForward<'a> {
    /// `[4H]`: pre-activations in, activated gates i, f, g, o out.
    pub z: &'a mut [f32],
    /// `[4H]`: the recurrent product dot16(h, W_hh[g]).
    pub rec: &'a [f32],
    /// `[H]`: the cell state, cPrev in, c out.
    pub c: &'a mut [f32],
    /// `[H]`: the hidden state, h out.
    pub h: &'a mut [f32],
    /// `[H]`: copies of c, tanh(c) and h for the stored forward state.
    pub c_out: &'a mut [f32],
    pub tc_out: &'a mut [f32],
    pub h_out: &'a mut [f32],
}

impl CellForward<'_> {
    /// On the current kernel path.
    pub fn run_here(self, token: Token) {
        let hn = self.c.len();
        assert!(self.z.len() >= 4 * hn && self.rec.len() >= 4 * hn);
        assert!(self.h.len() >= hn && self.c_out.len() >= hn);
        assert!(self.tc_out.len() >= hn && self.h_out.len() >= hn);
        run_on(token, self)
    }

    /// Units `j..j + L::N`.
    ///
    /// # Safety
    /// `j + L::N ≤ H` (the lengths checked by `run_here`) and L's features
    /// are enabled.
    #[inline(always)]
    unsafe fn units<L: Lanes>(&mut self, j: usize) {
        let hn = self.c.len();
        debug_assert!(
            j + L::N <= hn,
            "cell: units {j}..{} past H = {hn}",
            j + L::N
        );
        // SAFETY: every offset is below the lengths checked by run_here.
        unsafe {
            let z = self.z.as_mut_ptr();
            let rec = self.rec.as_ptr();
            // z + rec of gate q (a helper, not a closure: a closure is not
            // compiled with the trampoline's target features).
            #[inline(always)]
            unsafe fn gate<L: Lanes>(z: *const f32, rec: *const f32, at: usize) -> L {
                // SAFETY: forwarded under the caller's guarantees.
                unsafe { L::load(z.add(at)).add(L::load(rec.add(at))) }
            }
            let i = sigmoid(gate::<L>(z, rec, j));
            let f = sigmoid(gate::<L>(z, rec, hn + j));
            let g = tanh(gate::<L>(z, rec, 2 * hn + j));
            let o = sigmoid(gate::<L>(z, rec, 3 * hn + j));
            i.store(z.add(j));
            f.store(z.add(hn + j));
            g.store(z.add(2 * hn + j));
            o.store(z.add(3 * hn + j));
            let c = f.mul(L::load(self.c.as_ptr().add(j))).add(i.mul(g));
            let tc = tanh(c);
            let h = o.mul(tc);
            c.store(self.c.as_mut_ptr().add(j));
            h.store(self.h.as_mut_ptr().add(j));
            c.store(self.c_out.as_mut_ptr().add(j));
            tc.store(self.tc_out.as_mut_ptr().add(j));
            h.store(self.h_out.as_mut_ptr().add(j));
        }
    }
}

impl LaneFn for CellForward<'_> {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(mut self) {
        let hn = self.c.len();
        let full = hn / L::N * L::N;
        // SAFETY: inside L's path (run_on); every chunk lies below H.
        unsafe {
            let mut j = 0;
            while j < full {
                self.units::<L>(j);
                j += L::N;
            }
            while j < hn {
                self.units::<f32>(j);
                j += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::available_paths;

    #[test]
    fn every_path_gives_the_scalar_cell() {
        for hn in [1usize, 7, 16, 24, 37, 128] {
            let val = |i: usize| {
                ((i * 7919 % 1000) as f32 / 100.0 - 5.0) * if i % 11 == 0 { 9.0 } else { 1.0 }
            };
            let z0: Vec<f32> = (0..4 * hn).map(val).collect();
            let rec: Vec<f32> = (0..4 * hn).map(|i| val(i + 3)).collect();
            let c0: Vec<f32> = (0..hn).map(|i| val(i + 5)).collect();
            let mut want = None;
            for path in available_paths() {
                let (mut z, mut c, mut h) = (z0.clone(), c0.clone(), vec![0f32; hn]);
                let (mut co, mut tco, mut ho) = (vec![0f32; hn], vec![0f32; hn], vec![0f32; hn]);
                let cell = CellForward {
                    z: &mut z,
                    rec: &rec,
                    c: &mut c,
                    h: &mut h,
                    c_out: &mut co,
                    tc_out: &mut tco,
                    h_out: &mut ho,
                };
                run_on(Token::new(path).unwrap(), cell);
                // The written-out scalar update.
                for j in 0..hn {
                    let g = |q: usize| z0[q * hn + j] + rec[q * hn + j];
                    let (i, f, gg, o) = (
                        crate::math::sigmoid(g(0)),
                        crate::math::sigmoid(g(1)),
                        crate::math::tanh(g(2)),
                        crate::math::sigmoid(g(3)),
                    );
                    let cv = f * c0[j] + i * gg;
                    let tc = crate::math::tanh(cv);
                    assert_eq!(z[j].to_bits(), i.to_bits(), "{path:?} {hn} {j}");
                    assert_eq!(z[3 * hn + j].to_bits(), o.to_bits(), "{path:?}");
                    assert_eq!(c[j].to_bits(), cv.to_bits(), "{path:?}");
                    assert_eq!(tco[j].to_bits(), tc.to_bits(), "{path:?}");
                    assert_eq!(h[j].to_bits(), (o * tc).to_bits(), "{path:?}");
                    assert_eq!(ho[j].to_bits(), h[j].to_bits());
                    assert_eq!(co[j].to_bits(), c[j].to_bits());
                }
                let all: Vec<u32> = z.iter().chain(&c).chain(&h).map(|v| v.to_bits()).collect();
                assert_eq!(*want.get_or_insert(all.clone()), all, "{path:?}");
            }
        }
    }
}
