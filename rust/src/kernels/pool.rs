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

use crate::dispatch::par_chunks;
use crate::error::{Error, Result};
use crate::ptr::Ptr;

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

fn planes_par(planes: usize, body: impl Fn(usize) + Sync + Send) {
    par_chunks(planes.div_ceil(PLANES_PER_CHUNK), |chunk| {
        for pl in chunk * PLANES_PER_CHUNK..((chunk + 1) * PLANES_PER_CHUNK).min(planes) {
            body(pl);
        }
    });
}

/// Max pooling: `out` and the winner's flat index within its plane (−1 if
/// the window holds no input element, which the size rule excludes).
///
/// # Safety
/// `x` holds planes·h·w, `out` and `idx` planes·oh·ow elements.
pub unsafe fn max_forward(s: &Pool2d, x: *const f32, out: *mut f32, idx: *mut i64) {
    let x = Ptr::new(x, s.input_len());
    let (out, idx) = (Ptr::new(out, s.output_len()), Ptr::new(idx, s.output_len()));
    planes_par(s.planes, |pl| {
        let plane = x.offset(pl * s.h * s.w);
        for oy in 0..s.oh {
            for ox in 0..s.ow {
                let mut best = f32::NEG_INFINITY;
                let mut at: i64 = -1;
                for ky in 0..s.kernel.0 {
                    let iy = (oy * s.stride.0 + ky * s.dilation.0) as isize - s.padding.0 as isize;
                    if iy < 0 || iy >= s.h as isize {
                        continue;
                    }
                    for kx in 0..s.kernel.1 {
                        let ix =
                            (ox * s.stride.1 + kx * s.dilation.1) as isize - s.padding.1 as isize;
                        if ix < 0 || ix >= s.w as isize {
                            continue;
                        }
                        let i = iy as usize * s.w + ix as usize;
                        // SAFETY: (iy, ix) lies inside the plane.
                        let v = unsafe { plane.read(i) };
                        if at < 0 || v > best || (best.is_nan() && !v.is_nan()) {
                            best = v;
                            at = i as i64;
                        }
                    }
                }
                let o = (pl * s.oh + oy) * s.ow + ox;
                // SAFETY: o < planes·oh·ow; planes are written by one chunk.
                unsafe {
                    out.write(o, best);
                    idx.write(o, at);
                }
            }
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
    planes_par(s.planes, |pl| {
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
    });
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
    planes_par(s.planes, |pl| {
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
    });
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
    planes_par(s.planes, |pl| {
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
    });
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let x = [1.0f32, 3.0, 3.0, f32::NAN];
        let (mut out, mut idx) = ([0f32], [0i64]);
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe { max_forward(&s, x.as_ptr(), out.as_mut_ptr(), idx.as_mut_ptr()) };
        assert_eq!((out[0], idx[0]), (3.0, 1));
        let x = [f32::NAN, f32::NAN, -1.0, f32::NAN];
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe { max_forward(&s, x.as_ptr(), out.as_mut_ptr(), idx.as_mut_ptr()) };
        assert_eq!((out[0], idx[0]), (-1.0, 2));
        let mut dx = [9f32; 4];
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe { max_backward(&s, [2.5f32].as_ptr(), idx.as_ptr(), dx.as_mut_ptr()) };
        assert_eq!(dx, [0.0, 0.0, 2.5, 0.0]);
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
