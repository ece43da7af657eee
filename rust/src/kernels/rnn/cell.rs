//! The LSTM cell of one step of one row, forward and backward, on the lanes
//! of the current kernel path. One row is one batch element of
//! `kernels::rnn` or one line of the recognizer (`recognizer::lstm`): both
//! run this code, and differ only in what is around it (the products, the
//! bias rule and the layouts; docs/architecture.md, "What the recognizer
//! shares with the engine").
//!
//! Forward, with z the input side of the gate pre-activations and rec the
//! recurrent side (the engine: z = xp + b_ih, rec = hp + b_hh; the
//! recognizer: z = x·W_ih + b, rec = h·W_hh):
//!   z = z + rec;  i = σ(z_i), f = σ(z_f), g = tanh(z_g), o = σ(z_o);
//!   c = f·cPrev + i·g;  tc = tanh(c);  h = o·tc
//! Backward (docs/recurrent.md, "lstm_layer and gru_layer"), with dh the
//! gradient of h from above plus the recurrent one, dc that of the next
//! step's cPrev:
//!   dh = dh_out + dh_rec;  dtc = dh·o;  d_o = dh·tc;
//!   dc = dc + dtc·(1 − tc·tc);  di = dc·g;  dg = dc·i;  df = dc·cPrev;
//!   dc_prev = dc·f;
//!   dz = (di·(i·(1 − i)), df·(f·(1 − f)), dg·(1 − g·g), d_o·(o·(1 − o)))
//! Every operation is rounded separately (no fma), σ and tanh are the fixed
//! ones (crate::math::fixed), whose vector forms are the scalar definition
//! lane by lane. The hidden units that do not fill a register are done by
//! the same code on one lane (`f32`), so every path gives the scalar bits.
//! In exact mode the activations' NaNs are canonical, as the element-wise
//! kernels write them (`Lanes::canonicalize_nan`). The caller runs this
//! inside the IEEE floating-point environment (`dispatch::with_ieee`).

use crate::math::fixed::{sigmoid, tanh};
use crate::simd::{run_on, LaneFn, Lanes, Token};

/// One step's forward cell update for one row (`H` hidden units).
pub struct CellForward<'a> {
    /// `[4H]`: the input side of the pre-activations in, the activated
    /// gates i, f, g, o out.
    pub z: &'a mut [f32],
    /// `[4H]`: the recurrent side of the pre-activations.
    pub rec: &'a [f32],
    /// `[H]`: the cell state, cPrev in, c out.
    pub c: &'a mut [f32],
    /// `[H]`: the hidden state, h out.
    pub h: &'a mut [f32],
    /// `[H]` each, if given: copies of c, tanh(c) and h (the stored
    /// forward state, the layer's output).
    pub c_out: Option<&'a mut [f32]>,
    pub tc_out: Option<&'a mut [f32]>,
    pub h_out: Option<&'a mut [f32]>,
    /// Canonical NaNs out of σ and tanh (the engine's exact mode).
    pub exact: bool,
}

/// A length the cell needs, checked before anything is read or written.
fn check(what: &str, len: usize, want: usize) {
    assert!(
        len >= want,
        "lstm cell: {what} holds {len} of {want} elements"
    );
}

impl CellForward<'_> {
    /// On the current kernel path.
    pub fn run_here(self, token: Token) {
        let hn = self.c.len();
        check("z", self.z.len(), 4 * hn);
        check("rec", self.rec.len(), 4 * hn);
        check("h", self.h.len(), hn);
        for (what, v) in [
            ("c_out", &self.c_out),
            ("tc_out", &self.tc_out),
            ("h_out", &self.h_out),
        ] {
            if let Some(v) = v {
                check(what, v.len(), hn);
            }
        }
        run_on(token, self)
    }

    /// Units `j..j + L::N` ([`Units::units`], whose contract applies).
    #[inline(always)]
    unsafe fn units<L: Lanes, const EXACT: bool>(&mut self, j: usize) {
        let hn = self.c.len();
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
            let i = finish::<L, EXACT>(sigmoid(gate::<L>(z, rec, j)));
            let f = finish::<L, EXACT>(sigmoid(gate::<L>(z, rec, hn + j)));
            let g = finish::<L, EXACT>(tanh(gate::<L>(z, rec, 2 * hn + j)));
            let o = finish::<L, EXACT>(sigmoid(gate::<L>(z, rec, 3 * hn + j)));
            i.store(z.add(j));
            f.store(z.add(hn + j));
            g.store(z.add(2 * hn + j));
            o.store(z.add(3 * hn + j));
            let c = f.mul(L::load(self.c.as_ptr().add(j))).add(i.mul(g));
            let tc = finish::<L, EXACT>(tanh(c));
            let h = o.mul(tc);
            c.store(self.c.as_mut_ptr().add(j));
            h.store(self.h.as_mut_ptr().add(j));
            if let Some(v) = self.c_out.as_deref_mut() {
                c.store(v.as_mut_ptr().add(j));
            }
            if let Some(v) = self.tc_out.as_deref_mut() {
                tc.store(v.as_mut_ptr().add(j));
            }
            if let Some(v) = self.h_out.as_deref_mut() {
                h.store(v.as_mut_ptr().add(j));
            }
        }
    }
}

/// An activation's result as the element-wise kernels write it: NaN made
/// canonical in exact mode.
#[inline(always)]
unsafe fn finish<L: Lanes, const EXACT: bool>(v: L) -> L {
    if EXACT {
        // SAFETY: inside L's path (the callers' guarantee).
        unsafe { v.canonicalize_nan() }
    } else {
        v
    }
}

/// The forward cell with its NaN rule fixed at compile time.
struct Forward<'c, 'a, const EXACT: bool>(&'c mut CellForward<'a>);

impl<const EXACT: bool> Units for Forward<'_, '_, EXACT> {
    fn h(&self) -> usize {
        self.0.c.len()
    }
    #[inline(always)]
    unsafe fn units<L: Lanes>(&mut self, j: usize) {
        // SAFETY: forwarded contract.
        unsafe { self.0.units::<L, EXACT>(j) }
    }
}

impl LaneFn for CellForward<'_> {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(mut self) {
        // SAFETY: inside L's path (run_on), lengths checked by run_here.
        unsafe {
            if self.exact {
                each_unit::<L>(&mut Forward::<true>(&mut self))
            } else {
                each_unit::<L>(&mut Forward::<false>(&mut self))
            }
        }
    }
}

/// A cell update done a register of hidden units at a time.
trait Units {
    /// H, the number of hidden units.
    fn h(&self) -> usize;
    /// Units `j..j + L::N`.
    ///
    /// # Safety
    /// `j + L::N ≤ H` (the lengths checked by `run_here`) and L's features
    /// are enabled.
    unsafe fn units<L: Lanes>(&mut self, j: usize);
}

/// Every unit: whole registers of L, then the rest one lane (`f32`) at a
/// time, by the same code.
///
/// # Safety
/// Inside L's path (`run_on`), with the lengths checked by `run_here`.
#[inline(always)]
unsafe fn each_unit<L: Lanes>(cell: &mut impl Units) {
    let hn = cell.h();
    let full = hn / L::N * L::N;
    let mut j = 0;
    // SAFETY: every chunk lies below H (the caller's lengths).
    unsafe {
        while j < full {
            cell.units::<L>(j);
            j += L::N;
        }
        while j < hn {
            cell.units::<f32>(j);
            j += 1;
        }
    }
}

/// One step's backward cell update for one row (`H` hidden units).
pub struct CellBackward<'a> {
    /// `[4H]`: the activated gates i, f, g, o the forward stored.
    pub gates: &'a [f32],
    /// `[H]`: tanh(c) of the step.
    pub tc: &'a [f32],
    /// `[H]`: the cell state the step started from; None for zeros (the
    /// first step without an initial state).
    pub c_prev: Option<&'a [f32]>,
    /// `[H]`: the gradient of the step's h from above (the layer's output).
    pub dh_out: &'a [f32],
    /// `[H]`: the gradient of the step's h through the later step.
    pub dh_rec: &'a [f32],
    /// `[H]`: the gradient of c in (through the later step), of cPrev out.
    pub dc: &'a mut [f32],
    /// `[4H]`: the gradients of the gate pre-activations, out.
    pub dz: &'a mut [f32],
}

impl CellBackward<'_> {
    /// On the current kernel path.
    pub fn run_here(self, token: Token) {
        let hn = self.dc.len();
        check("gates", self.gates.len(), 4 * hn);
        check("dz", self.dz.len(), 4 * hn);
        check("tc", self.tc.len(), hn);
        check("dh_out", self.dh_out.len(), hn);
        check("dh_rec", self.dh_rec.len(), hn);
        if let Some(c) = self.c_prev {
            check("c_prev", c.len(), hn);
        }
        run_on(token, self)
    }
}

impl Units for CellBackward<'_> {
    fn h(&self) -> usize {
        self.dc.len()
    }

    #[inline(always)]
    unsafe fn units<L: Lanes>(&mut self, j: usize) {
        let hn = self.dc.len();
        // SAFETY: every offset is below the lengths checked by run_here.
        unsafe {
            let gates = self.gates.as_ptr();
            let (i, f) = (L::load(gates.add(j)), L::load(gates.add(hn + j)));
            let (g, o) = (
                L::load(gates.add(2 * hn + j)),
                L::load(gates.add(3 * hn + j)),
            );
            let tc = L::load(self.tc.as_ptr().add(j));
            let cp = match self.c_prev {
                Some(c) => L::load(c.as_ptr().add(j)),
                None => L::zero(),
            };
            let one = L::splat(1.0);
            let dh = L::load(self.dh_out.as_ptr().add(j)).add(L::load(self.dh_rec.as_ptr().add(j)));
            let dtc = dh.mul(o);
            let d_o = dh.mul(tc);
            let dc = L::load(self.dc.as_ptr().add(j)).add(dtc.mul(one.sub(tc.mul(tc))));
            let di = dc.mul(g);
            let dg = dc.mul(i);
            let df = dc.mul(cp);
            dc.mul(f).store(self.dc.as_mut_ptr().add(j));
            let dz = self.dz.as_mut_ptr();
            di.mul(i.mul(one.sub(i))).store(dz.add(j));
            df.mul(f.mul(one.sub(f))).store(dz.add(hn + j));
            dg.mul(one.sub(g.mul(g))).store(dz.add(2 * hn + j));
            d_o.mul(o.mul(one.sub(o))).store(dz.add(3 * hn + j));
        }
    }
}

impl LaneFn for CellBackward<'_> {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(mut self) {
        // SAFETY: inside L's path (run_on), lengths checked by run_here.
        unsafe { each_unit::<L>(&mut self) }
    }
}

#[cfg(test)]
mod tests;
