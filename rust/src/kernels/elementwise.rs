//! Element-wise kernels over strided, broadcast operands, on lane loops.
//!
//! Each output element is one IEEE operation, a compare-and-select, or one
//! of the fixed functions of [`crate::math::fixed`] applied to the input
//! elements at the same logical index. Every operation is written once,
//! generic over [`Lanes`]: a contiguous inner row (output stride 1, each
//! input stride 1 or 0 = broadcast) runs the vector loop of the current
//! kernel path, and its tail is finished by the `f32` (scalar)
//! instantiation of the same code; other inner rows run the scalar
//! instantiation element by element. Because the scalar instantiation is
//! the definition and every lane computes the same operations, neither the
//! path, nor the position of an element in its row, nor the iteration
//! order can change a bit. No multiply-add is ever formed.
//!
//! In exact mode a NaN result is written as the canonical quiet NaN
//! 0x7FC00000 (`Lanes::canonicalize_nan`, a test the optimiser cannot fold); in fast mode NaNs are whatever the hardware makes. The
//! transcendentals are the fixed ones in both modes (they are faster than
//! the platform's scalar libm calls, and erf/gelu must be the fixed ones
//! anyway), so the modes differ only in NaN payloads.
//!
//! These loops run on the calling thread, inside the IEEE floating-point
//! environment (no flush-to-zero).

use crate::dispatch::with_ieee;
use crate::layout::{coalesce, row_count};
use crate::math::fixed;
use crate::simd::{run_on, LaneFn, Lanes, Token};

/// Binary operations `out = op(a, b)`. The backward rules take the incoming
/// gradient as `a` and the saved tensor named in each variant as `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    /// `relu'(x) · g` with `a = g`, `b = x`: g where x > 0, else 0.
    ReluBackward,
    /// torch.maximum: the larger; NaN if either is NaN; max(−0, +0) = +0.
    Maximum,
    /// torch.minimum: the smaller; NaN if either is NaN; min(−0, +0) = −0.
    Minimum,
    /// `a = g`, `b = y = σ(x)`: g·(y·(1 − y)).
    SigmoidBackward,
    /// `a = g`, `b = y = tanh(x)`: g·(1 − y·y).
    TanhBackward,
    /// `a = g`, `b = x`: g·gelu'(x) (fixed slope, recomputed from x).
    GeluBackward,
    /// `a = g`, `b = y = eˣ`: g·y.
    ExpBackward,
    /// `a = g`, `b = x`: g/x.
    LogBackward,
    /// `a = g`, `b = x`: g·(2/√π·e^(−x²)).
    ErfBackward,
    /// `a = g`, `b = y = √x`: g/(y + y).
    SqrtBackward,
    /// `a = g`, `b = x`: g·sign(x), 0 where x = ±0, NaN where x is NaN.
    AbsBackward,
    /// `a = g`, `b = x`: g·(2x) (square's rule, as g·(x + x)).
    SquareBackward,
    /// `a = g`, `b = x`: g·(p·x^(p−1)); 0 when p = 0 (torch's rule).
    PowBackward(f32),
    /// `a = g`, `b = x`: g where lo ≤ x ≤ hi, else 0 (a NaN bound is
    /// ignored, as torch.clamp ignores a missing bound).
    ClampBackward(f32, f32),
}

/// Unary operations `out = op(a)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UnaryOp {
    Neg,
    /// max(x, 0) by compare-and-select; NaN stays NaN (as torch.relu).
    Relu,
    Exp,
    Log,
    Sigmoid,
    Tanh,
    /// x·Φ(x) (erf form, torch's approximate='none').
    Gelu,
    Erf,
    Sqrt,
    Abs,
    Square,
    /// x^p for a scalar p ([`fixed::pow`]).
    Pow(f32),
    /// min(max(x, lo), hi) with torch's rules: NaN x stays NaN; a NaN bound
    /// means no bound on that side.
    Clamp(f32, f32),
    /// The slopes as stand-alone maps (the backward rules multiply by g).
    GeluSlope,
    ErfSlope,
}

/// Ternary operations `out = op(a, b, c)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TernaryOp {
    /// torch.where: `b` where `a ≠ 0` (a is the condition as 0.0/1.0), else `c`.
    Where,
    /// The gradient torch.maximum sends to its first input, with `a = g`,
    /// `b` the first input, `c` the second: g where b > c, g/2 where b = c,
    /// else 0. Swap b and c for the second input's gradient.
    MaximumBackward,
    /// As MaximumBackward with b < c.
    MinimumBackward,
}

// ---------------------------------------------------------------------------
// The per-element definitions, generic over the lane type
// ---------------------------------------------------------------------------

impl BinaryOp {
    /// The scalar definition of the operation (exact mode's NaN
    /// canonicalisation is applied by the loops, not here).
    #[inline(always)]
    pub fn apply(self, a: f32, b: f32) -> f32 {
        // SAFETY: the f32 instantiation needs no CPU feature.
        unsafe { self.eval::<f32>(a, b) }
    }

    /// # Safety
    /// Inside [`run_on`] for L's path (any f32 call is safe).
    #[inline(always)]
    pub unsafe fn eval<L: Lanes>(self, a: L, b: L) -> L {
        // SAFETY: forwarded contract.
        unsafe {
            let zero = L::zero();
            let one = L::splat(1.0);
            match self {
                BinaryOp::Add => a.add(b),
                BinaryOp::Sub => a.sub(b),
                BinaryOp::Mul => a.mul(b),
                BinaryOp::Div => a.div(b),
                BinaryOp::ReluBackward => L::select(b.gt(zero), a, zero),
                BinaryOp::Maximum => extremum(a, b, a.gt(b), a.lt(b), a.and(b)),
                BinaryOp::Minimum => extremum(a, b, a.lt(b), a.gt(b), a.or(b)),
                BinaryOp::SigmoidBackward => a.mul(b.mul(one.sub(b))),
                BinaryOp::TanhBackward => a.mul(one.sub(b.mul(b))),
                BinaryOp::GeluBackward => a.mul(fixed::gelu_slope(b)),
                BinaryOp::ExpBackward => a.mul(b),
                BinaryOp::LogBackward => a.div(b),
                BinaryOp::ErfBackward => a.mul(fixed::erf_slope(b)),
                BinaryOp::SqrtBackward => a.div(b.add(b)),
                BinaryOp::AbsBackward => {
                    let s = L::select(b.gt(zero), one, L::select(b.lt(zero), one.neg(), zero));
                    a.mul(L::select(b.is_nan(), b, s))
                }
                BinaryOp::SquareBackward => a.mul(b.add(b)),
                BinaryOp::PowBackward(p) => {
                    if p == 0.0 {
                        a.mul(zero)
                    } else {
                        a.mul(L::splat(p).mul(fixed::pow(b, p - 1.0)))
                    }
                }
                BinaryOp::ClampBackward(lo, hi) => {
                    let inside = L::mask_and(
                        if lo.is_nan() {
                            b.eq(b)
                        } else {
                            b.ge(L::splat(lo))
                        },
                        if hi.is_nan() {
                            b.eq(b)
                        } else {
                            b.le(L::splat(hi))
                        },
                    );
                    L::select(inside, a, zero)
                }
            }
        }
    }
}

/// `pick` where `first` (a wins), `b` where `second`, `tie` where neither
/// (equal, including ±0), and NaN when either input is NaN.
#[inline(always)]
unsafe fn extremum<L: Lanes>(a: L, b: L, first: L::Mask, second: L::Mask, tie: L) -> L {
    // SAFETY: forwarded contract.
    unsafe {
        let r = L::select(first, a, L::select(second, b, tie));
        L::select(L::mask_or(a.is_nan(), b.is_nan()), a.add(b), r)
    }
}

impl UnaryOp {
    /// The scalar definition of the operation.
    #[inline(always)]
    pub fn apply(self, a: f32) -> f32 {
        // SAFETY: the f32 instantiation needs no CPU feature.
        unsafe { self.eval::<f32>(a) }
    }

    /// # Safety
    /// Inside [`run_on`] for L's path (any f32 call is safe).
    #[inline(always)]
    pub unsafe fn eval<L: Lanes>(self, a: L) -> L {
        // SAFETY: forwarded contract.
        unsafe {
            let zero = L::zero();
            match self {
                UnaryOp::Neg => a.neg(),
                UnaryOp::Relu => L::select(L::mask_or(a.gt(zero), a.is_nan()), a, zero),
                UnaryOp::Exp => fixed::exp(a),
                UnaryOp::Log => fixed::log(a),
                UnaryOp::Sigmoid => fixed::sigmoid(a),
                UnaryOp::Tanh => fixed::tanh(a),
                UnaryOp::Gelu => fixed::gelu(a),
                UnaryOp::Erf => fixed::erf(a),
                UnaryOp::Sqrt => a.sqrt(),
                UnaryOp::Abs => a.abs(),
                UnaryOp::Square => a.mul(a),
                UnaryOp::Pow(p) => fixed::pow(a, p),
                UnaryOp::Clamp(lo, hi) => {
                    let r = if lo.is_nan() {
                        a
                    } else {
                        L::select(a.lt(L::splat(lo)), L::splat(lo), a)
                    };
                    if hi.is_nan() {
                        r
                    } else {
                        L::select(r.gt(L::splat(hi)), L::splat(hi), r)
                    }
                }
                UnaryOp::GeluSlope => fixed::gelu_slope(a),
                UnaryOp::ErfSlope => fixed::erf_slope(a),
            }
        }
    }
}

impl TernaryOp {
    /// The scalar definition of the operation.
    #[inline(always)]
    pub fn apply(self, a: f32, b: f32, c: f32) -> f32 {
        // SAFETY: the f32 instantiation needs no CPU feature.
        unsafe { self.eval::<f32>(a, b, c) }
    }

    /// # Safety
    /// Inside [`run_on`] for L's path (any f32 call is safe).
    #[inline(always)]
    pub unsafe fn eval<L: Lanes>(self, a: L, b: L, c: L) -> L {
        // SAFETY: forwarded contract.
        unsafe {
            let zero = L::zero();
            match self {
                // a ≠ 0 is true for NaN too (as bool(nan) is in torch).
                TernaryOp::Where => L::select(a.eq(zero), c, b),
                TernaryOp::MaximumBackward => {
                    let half = a.mul(L::splat(0.5));
                    L::select(b.gt(c), a, L::select(b.eq(c), half, zero))
                }
                TernaryOp::MinimumBackward => {
                    let half = a.mul(L::splat(0.5));
                    L::select(b.lt(c), a, L::select(b.eq(c), half, zero))
                }
            }
        }
    }
}

#[inline(always)]
unsafe fn finish<L: Lanes>(r: L, exact: bool) -> L {
    // SAFETY: forwarded contract.
    unsafe {
        if exact {
            r.canonicalize_nan()
        } else {
            r
        }
    }
}

// ---------------------------------------------------------------------------
// The loops
// ---------------------------------------------------------------------------

/// One operand of a row: base pointer and inner stride.
#[derive(Clone, Copy)]
struct Operand {
    p: *const f32,
    stride: isize,
}

impl Operand {
    /// Element j as the scalar instantiation.
    #[inline(always)]
    unsafe fn get(self, j: usize) -> f32 {
        // SAFETY: the caller passes j inside the row.
        unsafe { *self.p.offset(j as isize * self.stride) }
    }
    /// Elements j..j+N: a load (stride 1) or a broadcast (stride 0).
    #[inline(always)]
    unsafe fn lanes<L: Lanes>(self, j: usize) -> L {
        // SAFETY: the caller passes j + N inside the row.
        unsafe {
            if self.stride == 0 {
                L::splat(*self.p)
            } else {
                L::load(self.p.add(j))
            }
        }
    }
    fn vectorizable(self) -> bool {
        self.stride == 0 || self.stride == 1
    }
}

/// The row kernel: `out[j] = f(inputs[j])` for j < n.
trait RowOp: Copy {
    const ARITY: usize;
    /// The variant's index (0..32), used to specialise the loop per variant.
    fn tag(self) -> u8;
    unsafe fn eval<L: Lanes>(self, x: [L; 3]) -> L;
}

/// `O` known to be variant `V`: `eval` tells the optimiser so, which folds
/// the per-element `match` away and lets it hoist the constants out of the
/// loop. Only constructed after checking `op.tag() == V`.
#[derive(Clone, Copy)]
struct Spec<O, const V: u8>(O);

impl<O: RowOp, const V: u8> RowOp for Spec<O, V> {
    const ARITY: usize = O::ARITY;
    #[inline(always)]
    fn tag(self) -> u8 {
        V
    }
    #[inline(always)]
    unsafe fn eval<L: Lanes>(self, x: [L; 3]) -> L {
        // SAFETY: a Spec<O, V> is only made for an op whose tag is V.
        unsafe {
            std::hint::assert_unchecked(self.0.tag() == V);
            self.0.eval(x)
        }
    }
}

impl RowOp for UnaryOp {
    const ARITY: usize = 1;
    #[inline(always)]
    fn tag(self) -> u8 {
        use UnaryOp::*;
        match self {
            Neg => 0,
            Relu => 1,
            Exp => 2,
            Log => 3,
            Sigmoid => 4,
            Tanh => 5,
            Gelu => 6,
            Erf => 7,
            Sqrt => 8,
            Abs => 9,
            Square => 10,
            Pow(_) => 11,
            Clamp(..) => 12,
            GeluSlope => 13,
            ErfSlope => 14,
        }
    }
    #[inline(always)]
    unsafe fn eval<L: Lanes>(self, x: [L; 3]) -> L {
        // SAFETY: forwarded contract.
        unsafe { UnaryOp::eval(self, x[0]) }
    }
}
impl RowOp for BinaryOp {
    const ARITY: usize = 2;
    #[inline(always)]
    fn tag(self) -> u8 {
        use BinaryOp::*;
        match self {
            Add => 0,
            Sub => 1,
            Mul => 2,
            Div => 3,
            ReluBackward => 4,
            Maximum => 5,
            Minimum => 6,
            SigmoidBackward => 7,
            TanhBackward => 8,
            GeluBackward => 9,
            ExpBackward => 10,
            LogBackward => 11,
            ErfBackward => 12,
            SqrtBackward => 13,
            AbsBackward => 14,
            SquareBackward => 15,
            PowBackward(_) => 16,
            ClampBackward(..) => 17,
        }
    }
    #[inline(always)]
    unsafe fn eval<L: Lanes>(self, x: [L; 3]) -> L {
        // SAFETY: forwarded contract.
        unsafe { BinaryOp::eval(self, x[0], x[1]) }
    }
}
impl RowOp for TernaryOp {
    const ARITY: usize = 3;
    #[inline(always)]
    fn tag(self) -> u8 {
        match self {
            TernaryOp::Where => 0,
            TernaryOp::MaximumBackward => 1,
            TernaryOp::MinimumBackward => 2,
        }
    }
    #[inline(always)]
    unsafe fn eval<L: Lanes>(self, x: [L; 3]) -> L {
        // SAFETY: forwarded contract.
        unsafe { TernaryOp::eval(self, x[0], x[1], x[2]) }
    }
}

/// One row on lane type L; the tail and non-unit strides on f32.
#[inline(always)]
unsafe fn row<L: Lanes, O: RowOp>(
    op: O,
    exact: bool,
    n: usize,
    out: *mut f32,
    so: isize,
    ins: [Operand; 3],
) {
    // SAFETY: the caller guarantees every offset of the row is valid; the
    // vector loop reads/writes j..j+N only while j + N ≤ n.
    unsafe {
        let mut j = 0usize;
        if so == 1 && ins[..O::ARITY].iter().all(|o| o.vectorizable()) {
            while j + L::N <= n {
                let x = [
                    ins[0].lanes::<L>(j),
                    ins[1].lanes::<L>(j),
                    ins[2].lanes::<L>(j),
                ];
                finish(op.eval(x), exact).store(out.add(j));
                j += L::N;
            }
        }
        while j < n {
            let x = [ins[0].get(j), ins[1].get(j), ins[2].get(j)];
            *out.offset(j as isize * so) = finish::<f32>(op.eval(x), exact);
            j += 1;
        }
    }
}

/// The whole strided iteration, instantiated per path by [`run_on`].
struct Loop<'a, O: RowOp> {
    op: O,
    exact: bool,
    shape: &'a [usize],
    out: *mut f32,
    out_strides: &'a [isize],
    ins: [(*const f32, &'a [isize]); 3],
}

impl<O: RowOp> LaneFn for Loop<'_, O> {
    type Output = ();
    // One specialised copy of the loop per variant (the `match` on the op
    // is taken once per call, not per element).
    #[inline(always)]
    fn run<L: Lanes>(self) {
        macro_rules! by_tag {
            ($($v:literal)*) => {
                match self.op.tag() {
                    $($v => walk::<L, O, Spec<O, $v>>(&self, Spec(self.op)),)*
                    _ => unreachable!("op tags are below 18"),
                }
            };
        }
        by_tag!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17)
    }
}

/// The row walk, written out (no closures) so that the whole loop, `row`
/// included, is inlined into the path's #[target_feature] trampoline.
#[inline(always)]
fn walk<L: Lanes, O: RowOp, K: RowOp>(lp: &Loop<'_, O>, op: K) {
    let l = lp;
    {
        let k = O::ARITY;
        let mut strides: Vec<&[isize]> = vec![l.out_strides];
        strides.extend(l.ins[..k].iter().map(|i| i.1));
        let c = coalesce(l.shape, &strides);
        let nd = c.shape.len();
        let inner = c.shape[nd - 1];
        let so = c.strides[0][nd - 1];
        let mut inner_strides = [0isize; 3];
        for (t, s) in inner_strides.iter_mut().zip(&c.strides[1..]) {
            *t = s[nd - 1];
        }
        let outer = &c.shape[..nd - 1];
        let mut idx = vec![0usize; outer.len()];
        let mut offs = vec![0isize; k + 1];
        for _ in 0..row_count(&c) {
            let mut ops = [Operand {
                p: l.ins[0].0,
                stride: 0,
            }; 3];
            for i in 0..k {
                // SAFETY: the caller of the public function guarantees every
                // reached offset is valid.
                ops[i] = Operand {
                    p: unsafe { l.ins[i].0.offset(offs[i + 1]) },
                    stride: inner_strides[i],
                };
            }
            // SAFETY: as above; `row` only touches offsets of this row; the
            // lane type matches the path run_on instantiated.
            unsafe { row::<L, K>(op, l.exact, inner, l.out.offset(offs[0]), so, ops) };
            // Next row (row-major odometer over the outer dimensions).
            for d in (0..outer.len()).rev() {
                idx[d] += 1;
                for (o, s) in offs.iter_mut().zip(&c.strides) {
                    *o += s[d];
                }
                if idx[d] < outer[d] {
                    break;
                }
                for (o, s) in offs.iter_mut().zip(&c.strides) {
                    *o -= s[d] * outer[d] as isize;
                }
                idx[d] = 0;
            }
        }
    }
}

fn run_loop<O: RowOp>(token: Token, l: Loop<'_, O>) {
    if l.shape.contains(&0) {
        return;
    }
    with_ieee(|| run_on(token, l));
}

/// `out[i] = op(a[i], b[i])` over `shape`, every operand strided (stride 0 for
/// a broadcast dimension), on the current kernel path. `out` may alias `a` or
/// `b` element for element (in-place operations).
///
/// # Safety
/// Pointers must be valid for every offset their strides reach over `shape`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn binary(
    op: BinaryOp,
    exact: bool,
    shape: &[usize],
    out: *mut f32,
    out_strides: &[isize],
    a: *const f32,
    a_strides: &[isize],
    b: *const f32,
    b_strides: &[isize],
) {
    // SAFETY: forwarded contract.
    unsafe {
        binary_on(
            Token::current(),
            op,
            exact,
            shape,
            out,
            out_strides,
            a,
            a_strides,
            b,
            b_strides,
        )
    }
}

/// [`binary`] on the path of `token`.
///
/// # Safety
/// As [`binary`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn binary_on(
    token: Token,
    op: BinaryOp,
    exact: bool,
    shape: &[usize],
    out: *mut f32,
    out_strides: &[isize],
    a: *const f32,
    a_strides: &[isize],
    b: *const f32,
    b_strides: &[isize],
) {
    run_loop(
        token,
        Loop {
            op,
            exact,
            shape,
            out,
            out_strides,
            ins: [(a, a_strides), (b, b_strides), (a, a_strides)],
        },
    );
}

/// `out[i] = op(a[i])` over `shape`, strided operands, on the current path.
///
/// # Safety
/// Pointers must be valid for every offset their strides reach over `shape`.
pub unsafe fn unary(
    op: UnaryOp,
    exact: bool,
    shape: &[usize],
    out: *mut f32,
    out_strides: &[isize],
    a: *const f32,
    a_strides: &[isize],
) {
    // SAFETY: forwarded contract.
    unsafe {
        unary_on(
            Token::current(),
            op,
            exact,
            shape,
            out,
            out_strides,
            a,
            a_strides,
        )
    }
}

/// [`unary`] on the path of `token`.
///
/// # Safety
/// As [`unary`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn unary_on(
    token: Token,
    op: UnaryOp,
    exact: bool,
    shape: &[usize],
    out: *mut f32,
    out_strides: &[isize],
    a: *const f32,
    a_strides: &[isize],
) {
    run_loop(
        token,
        Loop {
            op,
            exact,
            shape,
            out,
            out_strides,
            ins: [(a, a_strides), (a, a_strides), (a, a_strides)],
        },
    );
}

/// `out[i] = op(x[i])` for contiguous slices of equal length, on the path of
/// `token` (the accuracy tool and the tests use it to compare paths).
pub fn map_on(token: Token, op: UnaryOp, exact: bool, x: &[f32], out: &mut [f32]) {
    assert_eq!(x.len(), out.len(), "map_on: length mismatch");
    // SAFETY: both slices are valid for x.len() contiguous elements.
    unsafe {
        unary_on(
            token,
            op,
            exact,
            &[x.len()],
            out.as_mut_ptr(),
            &[1],
            x.as_ptr(),
            &[1],
        )
    }
}

/// `out[i] = op(a[i], b[i], c[i])` over `shape`, strided operands, on the
/// current path.
///
/// # Safety
/// Pointers must be valid for every offset their strides reach over `shape`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn ternary(
    op: TernaryOp,
    exact: bool,
    shape: &[usize],
    out: *mut f32,
    out_strides: &[isize],
    a: *const f32,
    a_strides: &[isize],
    b: *const f32,
    b_strides: &[isize],
    c: *const f32,
    c_strides: &[isize],
) {
    // SAFETY: forwarded contract.
    unsafe {
        ternary_on(
            Token::current(),
            op,
            exact,
            shape,
            out,
            out_strides,
            a,
            a_strides,
            b,
            b_strides,
            c,
            c_strides,
        )
    }
}

/// [`ternary`] on the path of `token`.
///
/// # Safety
/// As [`ternary`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn ternary_on(
    token: Token,
    op: TernaryOp,
    exact: bool,
    shape: &[usize],
    out: *mut f32,
    out_strides: &[isize],
    a: *const f32,
    a_strides: &[isize],
    b: *const f32,
    b_strides: &[isize],
    c: *const f32,
    c_strides: &[isize],
) {
    run_loop(
        token,
        Loop {
            op,
            exact,
            shape,
            out,
            out_strides,
            ins: [(a, a_strides), (b, b_strides), (c, c_strides)],
        },
    );
}

#[cfg(test)]
mod tests;
