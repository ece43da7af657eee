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

#[cfg(debug_assertions)]
use super::copy::reach;
use crate::dispatch::with_ieee;
use crate::layout::{coalesce, row_count};
use crate::simd::{run_on, LaneFn, Lanes, Token};

mod ops;

pub use ops::{BinaryOp, TernaryOp, UnaryOp};

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

/// The tag of every variant that has no specialised copy of the loop.
const GENERIC: u8 = u8::MAX;

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
            // The rest share one unspecialised loop (see `Loop::run`).
            _ => GENERIC,
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
            _ => GENERIC,
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
                    // The fixed functions added later share one loop (their
                    // evaluation dwarfs the per-element match).
                    _ => walk::<L, O, O>(&self, self.op),
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
        // Debug builds: each operand's reach over the shape, that every row
        // must stay inside (release builds compute nothing).
        #[cfg(debug_assertions)]
        let reaches: Vec<usize> = std::iter::once(l.out_strides)
            .chain(l.ins[..k].iter().map(|i| i.1))
            .map(|st| reach(l.shape, st))
            .collect();
        for _ in 0..row_count(&c) {
            #[cfg(debug_assertions)]
            for (i, &r) in reaches.iter().enumerate() {
                let st = if i == 0 { so } else { inner_strides[i - 1] };
                debug_assert!(
                    offs[i] >= 0 && (offs[i] as usize + (inner - 1) * st as usize) < r,
                    "elementwise: row of {inner} at {} (stride {st}) outside a reach of {r}",
                    offs[i]
                );
            }
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

/// The strided walk of `op` over `shape` (what [`unary`], [`binary`] and
/// [`ternary`] share): `out` with its strides, each input as (pointer,
/// strides), the unused ones repeating an operand.
fn run_loop<O: RowOp>(
    token: Token,
    op: O,
    exact: bool,
    shape: &[usize],
    (out, out_strides): (*mut f32, &[isize]),
    ins: [(*const f32, &[isize]); 3],
) {
    if shape.contains(&0) {
        return;
    }
    let l = Loop { op, exact, shape, out, out_strides, ins };
    with_ieee(|| run_on(token, l));
}

/// `out[i] = op(a[i], b[i])` over `shape`, every operand strided (stride 0 for
/// a broadcast dimension), on the path of `token`. `out` may alias `a` or
/// `b` element for element (in-place operations).
///
/// # Safety
/// Pointers must be valid for every offset their strides reach over `shape`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn binary(
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
    let ins = [(a, a_strides), (b, b_strides), (a, a_strides)];
    run_loop(token, op, exact, shape, (out, out_strides), ins);
}

/// One contiguous row of a binary op, `out[j] = op(a[j], b[j])` for j < n:
/// each input is `(pointer, step)` with step 1 (contiguous) or 0 (one value
/// repeated). The row of [`binary`]'s walk without the walk (no shape
/// coalescing, no odometer, no allocation): the small-op path of the
/// bindings (`py/fused.rs`) calls it, and as it runs the very same `row`,
/// the bits are those of [`binary`] on the same operands.
///
/// # Safety
/// `out` must be valid for n writes, and each input for n reads at step 1
/// (one read at step 0); `out` may equal an input.
pub unsafe fn binary_row(
    token: Token,
    op: BinaryOp,
    exact: bool,
    n: usize,
    out: *mut f32,
    a: (*const f32, isize),
    b: (*const f32, isize),
) {
    struct Row {
        op: BinaryOp,
        exact: bool,
        n: usize,
        out: *mut f32,
        ins: [Operand; 3],
    }
    impl LaneFn for Row {
        type Output = ();
        #[inline(always)]
        fn run<L: Lanes>(self) {
            let Row { op, exact, n, out, ins } = self;
            debug_assert!(ins.iter().all(|o| o.vectorizable()));
            // SAFETY: the caller's contract; the lane type is the one
            // run_on instantiated for the token's path.
            unsafe {
                match op.tag() {
                    0 => row::<L, _>(Spec::<_, 0>(op), exact, n, out, 1, ins),
                    1 => row::<L, _>(Spec::<_, 1>(op), exact, n, out, 1, ins),
                    2 => row::<L, _>(Spec::<_, 2>(op), exact, n, out, 1, ins),
                    3 => row::<L, _>(Spec::<_, 3>(op), exact, n, out, 1, ins),
                    _ => row::<L, _>(op, exact, n, out, 1, ins),
                }
            }
        }
    }
    if n == 0 {
        return;
    }
    let (a, b) = (Operand { p: a.0, stride: a.1 }, Operand { p: b.0, stride: b.1 });
    with_ieee(|| run_on(token, Row { op, exact, n, out, ins: [a, b, a] }));
}

/// `out[i] = op(a[i])` over `shape`, strided operands, on the path of `token`.
///
/// # Safety
/// Pointers must be valid for every offset their strides reach over `shape`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn unary(
    token: Token,
    op: UnaryOp,
    exact: bool,
    shape: &[usize],
    out: *mut f32,
    out_strides: &[isize],
    a: *const f32,
    a_strides: &[isize],
) {
    let ins = [(a, a_strides), (a, a_strides), (a, a_strides)];
    run_loop(token, op, exact, shape, (out, out_strides), ins);
}

/// `out[i] = op(x[i])` for contiguous slices of equal length, on the path of
/// `token` (the accuracy tool and the tests use it to compare paths).
pub fn map_on(token: Token, op: UnaryOp, exact: bool, x: &[f32], out: &mut [f32]) {
    assert_eq!(x.len(), out.len(), "map_on: length mismatch");
    // SAFETY: both slices are valid for x.len() contiguous elements.
    unsafe {
        unary(
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

/// `out[i] = op(a[i], b[i])` for contiguous slices of equal length, on the
/// path of `token` (the accuracy tool and the tests compare paths with it).
pub fn map2_on(token: Token, op: BinaryOp, exact: bool, a: &[f32], b: &[f32], out: &mut [f32]) {
    assert!(a.len() == out.len() && b.len() == out.len(), "map2_on: length mismatch");
    // SAFETY: the three slices are valid for out.len() contiguous elements.
    unsafe {
        binary(
            token,
            op,
            exact,
            &[out.len()],
            out.as_mut_ptr(),
            &[1],
            a.as_ptr(),
            &[1],
            b.as_ptr(),
            &[1],
        )
    }
}

/// `out[i] = op(a[i], b[i], c[i])` over `shape`, strided operands, on the
/// path of `token`.
///
/// # Safety
/// Pointers must be valid for every offset their strides reach over `shape`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn ternary(
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
    let ins = [(a, a_strides), (b, b_strides), (c, c_strides)];
    run_loop(token, op, exact, shape, (out, out_strides), ins);
}

#[cfg(test)]
mod tests;
