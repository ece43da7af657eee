//! 2-D resize (torch.nn.functional.interpolate, modes `nearest` and
//! `bilinear`) over contiguous `[planes, h, w]`, in plain f32 arithmetic
//! with torch's source coordinates:
//!
//! * nearest: `src = min(floor(dst · scale), in − 1)` with `scale = in/out`
//!   (or `1/scale_factor` when the caller passes one), computed in f32.
//! * bilinear, align_corners=False: `src = max(scale · (dst + 0.5) − 0.5, 0)`;
//!   align_corners=True: `src = dst · (in − 1)/(out − 1)` (0 when out = 1).
//!   `i0 = min(floor(src), in − 1)`, `i1 = i0 + 1` unless at the last row,
//!   `λ1 = clamp(src − i0, 0, 1)`, `λ0 = 1 − λ1`; the value is
//!   `λy0·(λx0·x00 + λx1·x01) + λy1·(λx0·x10 + λx1·x11)`.
//!
//! Backward accumulates each output gradient times its weights (f64) into an
//! f64 plane in output order and rounds each element once. Threads take
//! chunks of whole planes.

use crate::dispatch::par_runs;
use crate::error::{Error, Result};
use crate::ptr::Ptr;
use crate::storage::{scratch_elems, scratch_vec};

const PLANES_PER_CHUNK: usize = 4;

/// One axis: per output index, the two source indices and weights.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub i0: Vec<usize>,
    pub i1: Vec<usize>,
    pub l0: Vec<f32>,
    pub l1: Vec<f32>,
}

impl Axis {
    /// `output` zero indices and weights (scratch that refuses as
    /// `MemoryError` rather than aborting).
    fn of_len(output: usize) -> Axis {
        Axis {
            i0: scratch_vec(output, 0),
            i1: scratch_vec(output, 0),
            l0: scratch_vec(output, 0.0),
            l1: scratch_vec(output, 0.0),
        }
    }
}

fn scale_of(input: usize, output: usize, scale_factor: Option<f64>) -> f32 {
    match scale_factor {
        Some(s) if s > 0.0 => (1.0 / s) as f32,
        _ => input as f32 / output as f32,
    }
}

/// Source indices of nearest resizing along one axis (weights 1, 0).
pub fn nearest_axis(input: usize, output: usize, scale_factor: Option<f64>) -> Axis {
    let scale = scale_of(input, output, scale_factor);
    let mut a = Axis::of_len(output);
    for (d, i) in a.i0.iter_mut().enumerate() {
        *i = ((d as f32 * scale).floor() as usize).min(input - 1);
    }
    a.i1.copy_from_slice(&a.i0);
    a.l0.fill(1.0);
    a
}

/// Source indices and weights of bilinear resizing along one axis.
pub fn linear_axis(
    input: usize,
    output: usize,
    align_corners: bool,
    scale_factor: Option<f64>,
) -> Axis {
    let scale = if align_corners {
        if output > 1 {
            (input as f32 - 1.0) / (output as f32 - 1.0)
        } else {
            0.0
        }
    } else {
        scale_of(input, output, scale_factor)
    };
    let mut a = Axis::of_len(output);
    for d in 0..output {
        let src = if align_corners {
            scale * d as f32
        } else {
            (scale * (d as f32 + 0.5) - 0.5).max(0.0)
        };
        let i0 = (src.floor() as usize).min(input - 1);
        let l1 = (src - i0 as f32).clamp(0.0, 1.0);
        a.i0[d] = i0;
        a.i1[d] = if i0 < input - 1 { i0 + 1 } else { i0 };
        a.l1[d] = l1;
        a.l0[d] = 1.0 - l1;
    }
    a
}

/// One resize: `planes` planes of h × w to ay.len() × ax.len().
#[derive(Clone, Debug, PartialEq)]
pub struct Resize2d {
    pub planes: usize,
    pub h: usize,
    pub w: usize,
    pub ay: Axis,
    pub ax: Axis,
    pub nearest: bool,
}

impl Resize2d {
    /// The resize of an [n, c, h, w] input to [n, c, oh, ow]: `mode`
    /// "nearest" or "bilinear"; `scales` the caller's scale factors (None:
    /// in/out).
    pub fn new(
        op: &str,
        [n, c, h, w]: [usize; 4],
        (oh, ow): (usize, usize),
        mode: &str,
        align_corners: bool,
        (scale_h, scale_w): (Option<f64>, Option<f64>),
    ) -> Result<Resize2d> {
        if h == 0 || w == 0 || oh == 0 || ow == 0 {
            return Err(Error::Value(format!(
                "{op}: input {:?} and output size {:?} must be non-empty",
                [n, c, h, w],
                (oh, ow)
            )));
        }
        let nearest = match mode {
            "nearest" => true,
            "bilinear" => false,
            other => return Err(Error::Value(format!("{op}: unknown mode {other:?}"))),
        };
        let (ay, ax) = if nearest {
            (nearest_axis(h, oh, scale_h), nearest_axis(w, ow, scale_w))
        } else {
            (
                linear_axis(h, oh, align_corners, scale_h),
                linear_axis(w, ow, align_corners, scale_w),
            )
        };
        Ok(Resize2d {
            planes: n * c,
            h,
            w,
            ay,
            ax,
            nearest,
        })
    }

    pub fn input_len(&self) -> usize {
        self.planes * self.h * self.w
    }

    pub fn output_len(&self) -> usize {
        self.planes * self.ay.i0.len() * self.ax.i0.len()
    }
}

/// `out[pl] = resize(x[pl])`; nearest when both axes have zero λ1 weights
/// is simply the bilinear formula with (1, 0) weights, which is exact.
///
/// # Safety
/// `x` holds planes·h·w, `out` planes·ay.len()·ax.len() elements.
pub unsafe fn forward(r: &Resize2d, x: *const f32, out: *mut f32) {
    let Resize2d { planes, h, w, ref ay, ref ax, nearest } = *r;
    let (oh, ow) = (ay.i0.len(), ax.i0.len());
    let (x, out) = (Ptr::new(x, planes * h * w), Ptr::new(out, planes * oh * ow));
    // Four taps per output.
    let work = (planes * oh * ow).saturating_mul(4);
    par_runs(planes, PLANES_PER_CHUNK, work, || (), |_, pl| {
        // SAFETY: the plane slices lie inside the buffers; each output
        // plane is written by one chunk.
        let (src, dst) = unsafe {
            (
                x.slice(pl * h * w, h * w),
                out.slice_mut(pl * oh * ow, oh * ow),
            )
        };
        for oy in 0..oh {
            let (r0, r1) = (ay.i0[oy] * w, ay.i1[oy] * w);
            for ox in 0..ow {
                let (c0, c1) = (ax.i0[ox], ax.i1[ox]);
                dst[oy * ow + ox] = if nearest {
                    src[r0 + c0]
                } else {
                    let top = ax.l0[ox] * src[r0 + c0] + ax.l1[ox] * src[r0 + c1];
                    let bottom = ax.l0[ox] * src[r1 + c0] + ax.l1[ox] * src[r1 + c1];
                    ay.l0[oy] * top + ay.l1[oy] * bottom
                };
            }
        }
    });
}

/// Backward of [`forward`]: `dx` (planes·h·w) is overwritten.
///
/// # Safety
/// As [`forward`], `g` shaped like its output.
pub unsafe fn backward(r: &Resize2d, g: *const f32, dx: *mut f32) {
    let Resize2d { planes, h, w, ref ay, ref ax, nearest } = *r;
    let (oh, ow) = (ay.i0.len(), ax.i0.len());
    let (g, dx) = (Ptr::new(g, planes * oh * ow), Ptr::new(dx, planes * h * w));
    let acc = || scratch_vec(scratch_elems(&[h, w]), 0f64);
    // Four taps per output gradient, then the input plane written once.
    let work = (planes * oh * ow).saturating_mul(4).saturating_add(planes * h * w);
    par_runs(planes, PLANES_PER_CHUNK, work, acc, |acc: &mut Vec<f64>, pl| {
        // A slice, so that the inner loop keeps its pointer and length.
        let acc = acc.as_mut_slice();
        acc.fill(0.0);
        // SAFETY: the plane slices lie inside the buffers; each input
        // plane is written by one chunk.
        let (gp, dst) = unsafe {
            (
                g.slice(pl * oh * ow, oh * ow),
                dx.slice_mut(pl * h * w, h * w),
            )
        };
        for oy in 0..oh {
            let (r0, r1) = (ay.i0[oy] * w, ay.i1[oy] * w);
            let (wy0, wy1) = (ay.l0[oy] as f64, ay.l1[oy] as f64);
            for ox in 0..ow {
                let gv = gp[oy * ow + ox] as f64;
                let (c0, c1) = (ax.i0[ox], ax.i1[ox]);
                if nearest {
                    acc[r0 + c0] += gv;
                } else {
                    let (wx0, wx1) = (ax.l0[ox] as f64, ax.l1[ox] as f64);
                    acc[r0 + c0] += gv * wy0 * wx0;
                    acc[r0 + c1] += gv * wy0 * wx1;
                    acc[r1 + c0] += gv * wy1 * wx0;
                    acc[r1 + c1] += gv * wy1 * wx1;
                }
            }
        }
        for (d, a) in dst.iter_mut().zip(acc.iter()) {
            *d = *a as f32;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torch_coordinates() {
        let a = nearest_axis(3, 5, None);
        assert_eq!(a.i0, vec![0, 0, 1, 1, 2]);
        let b = linear_axis(2, 4, false, None); // src = -0.25→0, 0.25, 0.75, 1.25
        assert_eq!(b.i0, vec![0, 0, 0, 1]);
        assert_eq!(b.i1, vec![1, 1, 1, 1]);
        assert_eq!(b.l1, vec![0.0, 0.25, 0.75, 0.25]); // the last row repeats i0 = i1
        let c = linear_axis(3, 5, true, None); // src = 0, .5, 1, 1.5, 2
        assert_eq!(c.i0, vec![0, 0, 1, 1, 2]);
        assert_eq!(c.l1, vec![0.0, 0.5, 0.0, 0.5, 0.0]);
    }
}
