//! 2-D max and average pooling over contiguous `[planes, h, w]` inputs
//! (planes = n·c). Threads take chunks of whole planes (a constant number of
//! planes per chunk); within a plane everything runs in a fixed order.
//!
//! * max: the window is scanned (ky, kx) increasing; a tap replaces the
//!   current winner only if it is strictly greater, or the winner is NaN and
//!   the tap is not. So the first of equal maxima wins and a NaN wins only a
//!   window that holds nothing else. Taps in the padding are skipped.
//!   Backward adds each output gradient to its winner, in output order, one
//!   f32 add each, starting from +0.
//! * average: torch's divisor (count_include_pad counts the padding inside
//!   the padded input; otherwise only real taps; divisor_override wins). The
//!   taps are summed in f64 in (ky, kx) order, divided in f64 and rounded
//!   once. Backward accumulates `g / divisor` (f64) into an f64 plane in
//!   output order and rounds each element once.

use crate::dispatch::par_runs;
use crate::error::{Error, Result};
use crate::ptr::Ptr;
use crate::simd::{run_on, LaneFn, Lanes, Token};

/// Planes per thread chunk.
const PLANES_PER_CHUNK: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pool2d {
    pub planes: usize,
    pub h: usize,
    pub w: usize,
    pub oh: usize,
    pub ow: usize,
    pub kernel: (usize, usize),
    pub stride: (usize, usize),
    pub padding: (usize, usize),
    pub dilation: (usize, usize),
}

/// torch's pooling output size (floor or ceil mode; in ceil mode the last
/// window must start inside the input or the left padding).
pub fn out_size(
    input: usize,
    kernel: usize,
    stride: usize,
    pad: usize,
    dil: usize,
    ceil_mode: bool,
) -> usize {
    let span = dil * (kernel - 1) + 1;
    let padded = input + 2 * pad;
    if padded < span {
        return 0;
    }
    let num = padded - span;
    let mut out = if ceil_mode {
        num.div_ceil(stride) + 1
    } else {
        num / stride + 1
    };
    if ceil_mode && (out - 1) * stride >= input + pad {
        out -= 1;
    }
    out
}

impl Pool2d {
    /// The pooling of `x` [n, c, h, w] into `y` [n, c, oh, ow]; the output
    /// may be smaller than the ceil-mode size, never larger.
    pub fn from_shapes(
        op: &str,
        x: [usize; 4],
        y: [usize; 4],
        kernel: (usize, usize),
        stride: (usize, usize),
        padding: (usize, usize),
        dilation: (usize, usize),
    ) -> Result<Pool2d> {
        let [n, c, h, w] = x;
        let [yn, yc, oh, ow] = y;
        let ok = kernel.0 >= 1
            && kernel.1 >= 1
            && stride.0 >= 1
            && stride.1 >= 1
            && dilation.0 >= 1
            && dilation.1 >= 1
            && yn == n
            && yc == c
            && oh <= out_size(h, kernel.0, stride.0, padding.0, dilation.0, true)
            && ow <= out_size(w, kernel.1, stride.1, padding.1, dilation.1, true);
        if !ok {
            return Err(Error::Value(format!(
                "{op} kernel: inconsistent shapes {x:?} -> {y:?}"
            )));
        }
        Ok(Pool2d {
            planes: n * c,
            h,
            w,
            oh,
            ow,
            kernel,
            stride,
            padding,
            dilation,
        })
    }

    pub fn input_len(&self) -> usize {
        self.planes * self.h * self.w
    }
    pub fn output_len(&self) -> usize {
        self.planes * self.oh * self.ow
    }
}

/// `body(scratch, plane)` for every plane, in runs of [`PLANES_PER_CHUNK`]
/// with one `scratch()` per run; on the
/// calling thread when the call reads and writes fewer than
/// `dispatch::INLINE_WORK` elements (every tap of every output, and the
/// input once).
fn planes_par<S>(
    s: &Pool2d,
    scratch: impl Fn() -> S + Sync + Send,
    body: impl Fn(&mut S, usize) + Sync + Send,
) {
    let window = s.kernel.0.saturating_mul(s.kernel.1);
    let taps = s.output_len().saturating_mul(window);
    let work = taps.saturating_add(s.input_len());
    par_runs(s.planes, PLANES_PER_CHUNK, work, scratch, body);
}

/// The outputs `lo..hi` along one axis whose whole window lies inside the
/// input (no tap in the padding or past the end): `o·stride ≥ pad` and
/// `o·stride − pad + (k − 1)·dil < input`. Empty (`lo == hi`) when none does.
fn inside(
    out: usize,
    input: usize,
    k: usize,
    stride: usize,
    pad: usize,
    dil: usize,
) -> (usize, usize) {
    let last_tap = (k - 1) * dil;
    if input + pad <= last_tap {
        return (0, 0);
    }
    let hi = ((input + pad - last_tap - 1) / stride + 1).min(out);
    let lo = pad.div_ceil(stride).min(hi);
    (lo, hi)
}

/// Whether tap `v` replaces the current winner `best` (the module docs'
/// rule): strictly greater, or `best` is NaN and `v` is not. Written with
/// `&`/`|` so that the callers may compile it to a select.
#[inline(always)]
fn beats(v: f32, best: f32) -> bool {
    (v > best) | (best.is_nan() & !v.is_nan())
}

/// The winner of the window of output (oy, ox): its value and flat index in
/// the plane (−1 if no tap is inside). Taps in (ky, kx) order; see the
/// module docs for the rule.
#[inline(always)]
fn window_max(s: &Pool2d, plane: Ptr<*const f32>, oy: usize, ox: usize) -> (f32, i64) {
    let mut best = f32::NEG_INFINITY;
    let mut at: i64 = -1;
    for ky in 0..s.kernel.0 {
        let iy = (oy * s.stride.0 + ky * s.dilation.0) as isize - s.padding.0 as isize;
        if iy < 0 || iy >= s.h as isize {
            continue;
        }
        for kx in 0..s.kernel.1 {
            let ix = (ox * s.stride.1 + kx * s.dilation.1) as isize - s.padding.1 as isize;
            if ix < 0 || ix >= s.w as isize {
                continue;
            }
            let i = iy as usize * s.w + ix as usize;
            // SAFETY: (iy, ix) lies inside the plane.
            let v = unsafe { plane.read(i) };
            if at < 0 || beats(v, best) {
                best = v;
                at = i as i64;
            }
        }
    }
    (best, at)
}

/// Scratch of one run of planes for [`InsideWindows`], at input
/// resolution: the winner of every input column's vertical taps, then the
/// winner of every window start, each as a value and the winner's offset
/// from the window's first tap (`ky·dil_y·w + kx·dil_x`). The offsets are
/// integers held as f32, exact below 2^24 ([`OFFSET_LIMIT`]), so that they
/// ride in the lanes beside the values.
#[derive(Default)]
struct Winners {
    col_v: Vec<f32>,
    col_at: Vec<f32>,
    win_v: Vec<f32>,
    win_at: Vec<f32>,
}

impl Winners {
    /// Every buffer at least `n` long (grown only: a run's planes share it).
    fn fit(&mut self, n: usize) {
        for b in [
            &mut self.col_v,
            &mut self.col_at,
            &mut self.win_v,
            &mut self.win_at,
        ] {
            if b.len() < n {
                b.resize(n, 0.0);
            }
        }
    }
}

/// Windows whose last tap lies this far or farther from their first are
/// scanned by [`window_max`]: an f32 holds every integer offset below it.
const OFFSET_LIMIT: usize = 1 << 24;

/// The module's rule on lanes: `v` replaces `best` if strictly greater, or
/// `best` is NaN and `v` is not.
#[inline(always)]
unsafe fn beats_lanes<V: Lanes>(v: V, best: V) -> V::Mask {
    // SAFETY: V's features are enabled (the caller runs inside run_on).
    unsafe {
        V::mask_or(
            v.gt(best),
            V::mask_and(best.is_nan(), V::mask_not(v.is_nan())),
        )
    }
}

/// The windows of one plane that lie wholly inside it (rows `ys`, columns
/// `xs` of the output, see [`inside`]), in two contiguous passes on the
/// lanes instead of one scan per window. A scan's data-dependent select is
/// compiled to a branch that real data mispredicts half the time; here
/// every step is a compare and a blend over whole registers.
///
/// 1. Column winners: for every input column x under the windows, the taps
///    (0, x), (1, x), … in ky order by the module's rule, giving the
///    column's value and offset.
/// 2. Window winners (skipped when kw = 1): for every window start j (at
///    input resolution), its kw column winners in kx order; a column
///    replaces the current one if it beats it by the rule, or is equal to
///    it at a smaller offset.
/// 3. Each output takes the window starting at its stride's column.
///
/// Step 2 gives the scan's winner. The scan (ky, kx) keeps the first tap,
/// in row-major order, of the window's largest non-NaN value (the first
/// tap if all are NaN). A column's winner is its first such tap in ky
/// order. Offsets grow in row-major order (a row's taps span less than
/// the plane's width, rows are dil_y·w apart), so among the columns that
/// hold the largest value the scan's tap is the one at the smallest
/// offset, which the equal-and-smaller rule in kx order keeps. A column of
/// NaNs (winner ky 0) never replaces anything and is replaced by any
/// number, as the scan's NaN is; if every column is NaN the first column's
/// ky 0 stands, the scan's first tap.
struct InsideWindows<'a> {
    s: &'a Pool2d,
    plane: Ptr<*const f32>,
    /// Index of the plane (for the output offsets).
    pl: usize,
    ys: (usize, usize),
    xs: (usize, usize),
    out: Ptr<*mut f32>,
    idx: Ptr<*mut i64>,
    scratch: &'a mut Winners,
}

impl LaneFn for InsideWindows<'_> {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        let s = self.s;
        let (xs, ys) = (self.xs, self.ys);
        let (kh, kw) = s.kernel;
        let (tap_y, d1) = (s.dilation.0 * s.w, s.dilation.1);
        // Input columns x0..x0 + n under the windows; window starts 0..m
        // relative to x0 (every column a window of this row could start
        // at, the stride's ones among them).
        let x0 = xs.0 * s.stride.1 - s.padding.1;
        let m = (xs.1 - 1 - xs.0) * s.stride.1 + 1;
        let n = m + (kw - 1) * d1;
        self.scratch.fit(n);
        let w = &mut *self.scratch;
        let col_v = Ptr::new(w.col_v.as_mut_ptr(), n);
        let col_at = Ptr::new(w.col_at.as_mut_ptr(), n);
        let (win_v, win_at) = if kw == 1 {
            (col_v, col_at)
        } else {
            (
                Ptr::new(w.win_v.as_mut_ptr(), m),
                Ptr::new(w.win_at.as_mut_ptr(), m),
            )
        };
        for oy in ys.0..ys.1 {
            let iy0 = oy * s.stride.0 - s.padding.0;
            let first = iy0 * s.w + x0;
            let row = self.plane.offset(first);
            // SAFETY: the taps of rows ys and columns x0..x0 + n lie inside
            // the plane (`inside`); the scratch holds n (columns) and m
            // (window starts) elements; L's features are enabled (inside
            // run_on), and f32 needs none.
            unsafe {
                let mut i = 0;
                while i + L::N <= n {
                    column_step::<L>(row, tap_y, kh, i, col_v, col_at);
                    i += L::N;
                }
                while i < n {
                    column_step::<f32>(row, tap_y, kh, i, col_v, col_at);
                    i += 1;
                }
                if kw > 1 {
                    let cols = (col_v.as_const(), col_at.as_const());
                    let mut j = 0;
                    while j + L::N <= m {
                        window_step::<L>(cols, d1, kw, j, win_v, win_at);
                        j += L::N;
                    }
                    while j < m {
                        window_step::<f32>(cols, d1, kw, j, win_v, win_at);
                        j += 1;
                    }
                }
                let o_row = (self.pl * s.oh + oy) * s.ow;
                for ox in xs.0..xs.1 {
                    let j = (ox - xs.0) * s.stride.1;
                    // The offset is an integer in 0..OFFSET_LIMIT (the
                    // caller's guard), so the conversion is exact.
                    let at = first + j + win_at.read(j).to_int_unchecked::<u32>() as usize;
                    self.out.write(o_row + ox, win_v.read(j));
                    self.idx.write(o_row + ox, at as i64);
                }
            }
        }
    }
}

/// Step 1 of [`InsideWindows`] for columns `i..i + V::N` of the row block
/// starting at `row` (rows `tap_y` apart).
///
/// # Safety
/// The kh rows' columns and the outputs' elements are in bounds; V's
/// features are enabled.
#[inline(always)]
unsafe fn column_step<V: Lanes>(
    row: Ptr<*const f32>,
    tap_y: usize,
    kh: usize,
    i: usize,
    col_v: Ptr<*mut f32>,
    col_at: Ptr<*mut f32>,
) {
    // SAFETY: guaranteed by the caller.
    unsafe {
        let mut best = V::load(row.range(i, V::N));
        let mut at = V::zero();
        for k in 1..kh {
            let v = V::load(row.range(k * tap_y + i, V::N));
            let take = beats_lanes(v, best);
            best = V::select(take, v, best);
            at = V::select(take, V::splat((k * tap_y) as f32), at);
        }
        best.store(col_v.range(i, V::N));
        at.store(col_at.range(i, V::N));
    }
}

/// Step 2 of [`InsideWindows`] for window starts `j..j + V::N`: the column
/// winners `d1` apart, in kx order.
///
/// # Safety
/// Columns up to `j + V::N + (kw − 1)·d1` and the window starts are in
/// bounds; V's features are enabled.
#[inline(always)]
unsafe fn window_step<V: Lanes>(
    (col_v, col_at): (Ptr<*const f32>, Ptr<*const f32>),
    d1: usize,
    kw: usize,
    j: usize,
    win_v: Ptr<*mut f32>,
    win_at: Ptr<*mut f32>,
) {
    // SAFETY: guaranteed by the caller.
    unsafe {
        let mut best = V::load(col_v.range(j, V::N));
        let mut at = V::load(col_at.range(j, V::N));
        for k in 1..kw {
            let c = j + k * d1;
            let v = V::load(col_v.range(c, V::N));
            // Integers below OFFSET_LIMIT: the sum is exact.
            let v_at = V::load(col_at.range(c, V::N)).add(V::splat((k * d1) as f32));
            let take = V::mask_or(beats_lanes(v, best), V::mask_and(v.eq(best), v_at.lt(at)));
            best = V::select(take, v, best);
            at = V::select(take, v_at, at);
        }
        best.store(win_v.range(j, V::N));
        at.store(win_at.range(j, V::N));
    }
}

/// Max pooling: `out` and the winner's flat index within its plane (−1 if
/// the window holds no input element, which the size rule excludes).
/// Windows wholly inside the plane take [`InsideWindows`] (the pooling of
/// every CNN layer away from its borders) on `token`'s lanes, the others
/// [`window_max`]; both give the same winner, so which one ran never shows
/// in the result, and no path changes a bit (compares and blends only).
///
/// # Safety
/// `x` holds planes·h·w, `out` and `idx` planes·oh·ow elements.
pub unsafe fn max_forward(token: Token, s: &Pool2d, x: *const f32, out: *mut f32, idx: *mut i64) {
    let x = Ptr::new(x, s.input_len());
    let (out, idx) = (Ptr::new(out, s.output_len()), Ptr::new(idx, s.output_len()));
    let (k, st, pad, dil) = (s.kernel, s.stride, s.padding, s.dilation);
    let ys = inside(s.oh, s.h, k.0, st.0, pad.0, dil.0);
    let xs = inside(s.ow, s.w, k.1, st.1, pad.1, dil.1);
    // The inside windows go to the lanes unless their offsets could
    // outgrow an f32's integers (then every window is scanned).
    let lanes = (k.0 - 1) * dil.0 * s.w + (k.1 - 1) * dil.1 < OFFSET_LIMIT;
    planes_par(s, Winners::default, |scratch, pl| {
        let plane = x.offset(pl * s.h * s.w);
        for oy in 0..s.oh {
            let o_row = (pl * s.oh + oy) * s.ow;
            let scan = |ox: usize| {
                let (best, at) = window_max(s, plane, oy, ox);
                // SAFETY: o_row + ox < planes·oh·ow; planes are written by
                // one chunk.
                unsafe {
                    out.write(o_row + ox, best);
                    idx.write(o_row + ox, at);
                }
            };
            if !lanes || oy < ys.0 || oy >= ys.1 {
                (0..s.ow).for_each(scan);
            } else {
                (0..xs.0).for_each(scan);
                (xs.1..s.ow).for_each(scan);
            }
        }
        if lanes && xs.0 < xs.1 && ys.0 < ys.1 {
            let windows = InsideWindows {
                s,
                plane,
                pl,
                ys,
                xs,
                out,
                idx,
                scratch,
            };
            run_on(token, windows);
        }
    });
}

/// Max pooling backward: `dx` (planes·h·w) is overwritten.
///
/// # Safety
/// As [`max_forward`]; `idx` as it wrote it.
pub unsafe fn max_backward(s: &Pool2d, g: *const f32, idx: *const i64, dx: *mut f32) {
    let (g, idx) = (Ptr::new(g, s.output_len()), Ptr::new(idx, s.output_len()));
    let dx = Ptr::new(dx, s.input_len());
    let (hw, p) = (s.h * s.w, s.oh * s.ow);
    planes_par(
        s,
        || (),
        |_, pl| {
            // SAFETY: the plane's slices lie inside the buffers; each plane is
            // written by one chunk.
            let (d, gp, ip) = unsafe {
                (
                    dx.slice_mut(pl * hw, hw),
                    g.slice(pl * p, p),
                    idx.slice(pl * p, p),
                )
            };
            d.fill(0.0);
            for (&at, &gv) in ip.iter().zip(gp) {
                if at >= 0 {
                    // An index below h·w: the caller's contract (checked by
                    // the binding), asserted by the slice index.
                    d[at as usize] += gv;
                }
            }
        },
    );
}

/// The window of output (oy, ox) clipped to the padded input, as torch's
/// avg_pool2d computes it, and its divisor.
fn avg_window(
    s: &Pool2d,
    oy: usize,
    ox: usize,
    count_include_pad: bool,
    divisor_override: Option<usize>,
) -> ((isize, isize, isize, isize), f64) {
    let (h, w) = (s.h as isize, s.w as isize);
    let (ph, pw) = (s.padding.0 as isize, s.padding.1 as isize);
    let mut y0 = (oy * s.stride.0) as isize - ph;
    let mut x0 = (ox * s.stride.1) as isize - pw;
    let mut y1 = (y0 + s.kernel.0 as isize).min(h + ph);
    let mut x1 = (x0 + s.kernel.1 as isize).min(w + pw);
    let pool_size = (y1 - y0) * (x1 - x0);
    y0 = y0.max(0);
    x0 = x0.max(0);
    y1 = y1.min(h);
    x1 = x1.min(w);
    let div = match divisor_override {
        Some(d) => d as f64,
        None if count_include_pad => pool_size as f64,
        None => ((y1 - y0) * (x1 - x0)) as f64,
    };
    ((y0, y1, x0, x1), div)
}

/// Average pooling forward.
///
/// # Safety
/// `x` holds planes·h·w, `out` planes·oh·ow elements.
pub unsafe fn avg_forward(
    s: &Pool2d,
    x: *const f32,
    out: *mut f32,
    count_include_pad: bool,
    divisor_override: Option<usize>,
) {
    let (x, out) = (Ptr::new(x, s.input_len()), Ptr::new(out, s.output_len()));
    planes_par(
        s,
        || (),
        |_, pl| {
            // SAFETY: the plane lies inside x.
            let plane = unsafe { x.slice(pl * s.h * s.w, s.h * s.w) };
            for oy in 0..s.oh {
                for ox in 0..s.ow {
                    let ((y0, y1, x0, x1), div) =
                        avg_window(s, oy, ox, count_include_pad, divisor_override);
                    let mut acc = 0f64;
                    for iy in y0..y1 {
                        for ix in x0..x1 {
                            acc += plane[iy as usize * s.w + ix as usize] as f64;
                        }
                    }
                    // SAFETY: inside out; each plane is written by one chunk.
                    unsafe { out.write((pl * s.oh + oy) * s.ow + ox, (acc / div) as f32) };
                }
            }
        },
    );
}

/// Average pooling backward: `dx` (planes·h·w) is overwritten.
///
/// # Safety
/// As [`avg_forward`], `g` shaped like its output.
pub unsafe fn avg_backward(
    s: &Pool2d,
    g: *const f32,
    dx: *mut f32,
    count_include_pad: bool,
    divisor_override: Option<usize>,
) {
    let (g, dx) = (Ptr::new(g, s.output_len()), Ptr::new(dx, s.input_len()));
    let hw = s.h * s.w;
    planes_par(
        s,
        || (),
        |_, pl| {
            let mut acc = crate::storage::scratch_vec(hw, 0f64);
            for oy in 0..s.oh {
                for ox in 0..s.ow {
                    let ((y0, y1, x0, x1), div) =
                        avg_window(s, oy, ox, count_include_pad, divisor_override);
                    // SAFETY: inside g.
                    let gv = unsafe { g.read((pl * s.oh + oy) * s.ow + ox) } as f64 / div;
                    for iy in y0..y1 {
                        for ix in x0..x1 {
                            acc[iy as usize * s.w + ix as usize] += gv;
                        }
                    }
                }
            }
            // SAFETY: the plane lies inside dx and is written by this chunk only.
            let d = unsafe { dx.slice_mut(pl * hw, hw) };
            for (o, a) in d.iter_mut().zip(&acc) {
                *o = *a as f32;
            }
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::available_paths;

    fn geom(h: usize, w: usize, k: usize, st: usize, pad: usize, ceil: bool) -> Pool2d {
        Pool2d {
            planes: 1,
            h,
            w,
            oh: out_size(h, k, st, pad, 1, ceil),
            ow: out_size(w, k, st, pad, 1, ceil),
            kernel: (k, k),
            stride: (st, st),
            padding: (pad, pad),
            dilation: (1, 1),
        }
    }

    #[test]
    fn max_first_of_equals_wins_and_nan_never_wins() {
        let s = geom(2, 2, 2, 2, 0, false);
        let (mut out, mut idx) = ([0f32], [0i64]);
        for path in available_paths() {
            let token = Token::new(path).unwrap();
            let x = [1.0f32, 3.0, 3.0, f32::NAN];
            // SAFETY: the test's buffers hold every element the call reaches.
            unsafe { max_forward(token, &s, x.as_ptr(), out.as_mut_ptr(), idx.as_mut_ptr()) };
            assert_eq!((out[0], idx[0]), (3.0, 1), "{path:?}");
            let x = [f32::NAN, f32::NAN, -1.0, f32::NAN];
            // SAFETY: the test's buffers hold every element the call reaches.
            unsafe { max_forward(token, &s, x.as_ptr(), out.as_mut_ptr(), idx.as_mut_ptr()) };
            assert_eq!((out[0], idx[0]), (-1.0, 2), "{path:?}");
        }
        let mut dx = [9f32; 4];
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe { max_backward(&s, [2.5f32].as_ptr(), idx.as_ptr(), dx.as_mut_ptr()) };
        assert_eq!(dx, [0.0, 0.0, 2.5, 0.0]);
    }

    /// The forward on every path against the definition (every window
    /// through the bounds-tested scan) over strides, paddings, dilations,
    /// ceil mode, ties, NaNs, signed zeros and infinities, on planes wide
    /// enough for whole registers and their tails: the inside windows'
    /// two passes give the same winners.
    #[test]
    fn max_forward_matches_the_window_definition() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for case in 0..400 {
            let (kh, kw) = (1 + (next() % 4) as usize, 1 + (next() % 4) as usize);
            let st = (1 + (next() % 3) as usize, 1 + (next() % 3) as usize);
            let dil = (1 + (next() % 2) as usize, 1 + (next() % 2) as usize);
            let pad = (
                (next() % (kh as u64 / 2 + 1)) as usize,
                (next() % (kw as u64 / 2 + 1)) as usize,
            );
            let (h, w) = (1 + (next() % 9) as usize, 1 + (next() % 53) as usize);
            let ceil = case % 2 == 1;
            let (oh, ow) = (
                out_size(h, kh, st.0, pad.0, dil.0, ceil),
                out_size(w, kw, st.1, pad.1, dil.1, ceil),
            );
            let s = Pool2d {
                planes: 2,
                h,
                w,
                oh,
                ow,
                kernel: (kh, kw),
                stride: st,
                padding: pad,
                dilation: dil,
            };
            // Few distinct values (ties), NaNs, signed zeros, infinities;
            // a third of the cases all but free of NaNs and ties.
            let specials = [f32::NAN, 0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY];
            let x: Vec<f32> = (0..s.input_len())
                .map(|_| match (case % 3, next() % 12) {
                    (0, _) => (next() % 1000) as f32,
                    (_, r @ 0..=4) => specials[r as usize],
                    (_, r) => (r % 4) as f32 - 1.0,
                })
                .collect();
            for path in available_paths() {
                let token = Token::new(path).unwrap();
                let (mut out, mut idx) = (vec![0f32; s.output_len()], vec![0i64; s.output_len()]);
                // SAFETY: the buffers hold the input and output lengths of `s`.
                unsafe { max_forward(token, &s, x.as_ptr(), out.as_mut_ptr(), idx.as_mut_ptr()) };
                check_against_scan(&s, &x, &out, &idx, &format!("case {case}, {path:?}"));
            }
        }
    }

    /// Every output of a forward against [`window_max`]'s scan, bit for bit.
    fn check_against_scan(s: &Pool2d, x: &[f32], out: &[f32], idx: &[i64], what: &str) {
        let (h, w, oh, ow) = (s.h, s.w, s.oh, s.ow);
        for pl in 0..s.planes {
            let plane = Ptr::new(x[pl * h * w..].as_ptr(), h * w);
            for oy in 0..oh {
                for ox in 0..ow {
                    let (best, at) = window_max(s, plane, oy, ox);
                    let o = (pl * oh + oy) * ow + ox;
                    assert_eq!(
                        (out[o].to_bits(), idx[o]),
                        (best.to_bits(), at),
                        "{what}: {s:?} at {pl},{oy},{ox}"
                    );
                }
            }
        }
    }

    #[test]
    fn sizes_and_avg_divisors_follow_torch() {
        assert_eq!(out_size(5, 2, 2, 0, 1, false), 2);
        assert_eq!(out_size(5, 2, 2, 0, 1, true), 3);
        assert_eq!(out_size(4, 3, 2, 1, 1, true), 3);
        assert_eq!(out_size(2, 1, 2, 0, 1, true), 1); // the last window would start past the input
        let s = geom(3, 3, 2, 2, 1, false); // 2×2 out, corners see one real tap
        let x = [1f32; 9];
        let mut out = [0f32; 4];
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe { avg_forward(&s, x.as_ptr(), out.as_mut_ptr(), true, None) };
        assert_eq!(out, [0.25, 0.5, 0.5, 1.0]);
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe { avg_forward(&s, x.as_ptr(), out.as_mut_ptr(), false, None) };
        assert_eq!(out, [1.0; 4]);
    }
}
