//! The softmax row kernel (softmax and log-softmax over the last dimension
//! of a contiguous `[rows, d]`), forward and backward, with the mode's
//! `exp`/`log` passed in (the fixed functions in exact mode).
//!
//! Forward, per row: `m = max x` (first maximum, f32 compares; a NaN
//! propagates through the subtraction), `e_i = exp(x_i − m)`,
//! `S = Σ e_i` in f64 in increasing i. Softmax: `y_i = e_i / S` in f64,
//! rounded once. Log-softmax: `y_i = (x_i − m) − log(f32(S))` in f32.
//!
//! Backward, per row: softmax `dx_i = y_i·(g_i − Σ g_j·y_j)`, log-softmax
//! `dx_i = g_i − exp(y_i)·Σ g_j`; the row sums are f64 in increasing j and
//! each element is evaluated in f64 and rounded once.
//!
//! Threads take fixed chunks of rows. In exact mode NaN results are written
//! as the canonical NaN.

use super::canonical;
use crate::dispatch::{par_chunks_sized, Mode};
use crate::ptr::Ptr;

const ROWS_PER_CHUNK: usize = 16;

/// The transcendental pair of one arithmetic mode.
#[derive(Clone, Copy)]
pub struct Fns {
    pub exp: fn(f32) -> f32,
    pub log: fn(f32) -> f32,
    pub exact: bool,
}

impl Fns {
    /// The pair of `mode`: the platform's exp/log in fast mode, the fixed
    /// ones (`crate::math`) in exact mode.
    pub fn of(mode: Mode) -> Fns {
        match mode {
            Mode::Fast => Fns {
                exp: f32::exp,
                log: f32::ln,
                exact: false,
            },
            Mode::Exact => Fns {
                exp: crate::math::exp,
                log: crate::math::log,
                exact: true,
            },
        }
    }
}

/// Forward of softmax (`log = false`) or log-softmax over rows.
///
/// # Safety
/// `x` and `y` hold rows·d elements (they may be the same buffer).
pub unsafe fn forward(rows: usize, d: usize, x: *const f32, y: *mut f32, log: bool, f: Fns) {
    let (x, y) = (Ptr::new(x, rows * d), Ptr::new(y, rows * d));
    par_chunks_sized(rows.div_ceil(ROWS_PER_CHUNK), rows * d, |chunk| {
        let mut e = crate::storage::scratch_vec(d, 0f32);
        for r in chunk * ROWS_PER_CHUNK..((chunk + 1) * ROWS_PER_CHUNK).min(rows) {
            // The row is read whole into `e` before it is written, so x and
            // y may be one buffer.
            // SAFETY: row r lies inside x.
            row_forward(unsafe { x.slice(r * d, d) }, &mut e, log, f);
            // SAFETY: row r lies inside y and is written by this chunk only.
            let yr = unsafe { y.slice_mut(r * d, d) };
            for (o, v) in yr.iter_mut().zip(&e) {
                *o = *v;
            }
        }
    });
}

/// One row of the forward into `out` (used by attention too).
pub fn row_forward(x: &[f32], out: &mut [f32], log: bool, f: Fns) {
    let mut m = f32::NEG_INFINITY;
    for &v in x {
        if v > m || v.is_nan() && !m.is_nan() {
            m = v;
        }
    }
    let mut s = 0f64;
    for (o, &v) in out.iter_mut().zip(x) {
        *o = (f.exp)(v - m);
        s += *o as f64;
    }
    if log {
        let ls = (f.log)(s as f32);
        for (o, &v) in out.iter_mut().zip(x) {
            *o = canonical((v - m) - ls, f.exact);
        }
    } else {
        for o in out.iter_mut() {
            *o = canonical((*o as f64 / s) as f32, f.exact);
        }
    }
}

/// One row of the backward: `dx` from the output `y` and its gradient `g`.
pub fn row_backward(y: &[f32], g: &[f32], dx: &mut [f32], log: bool, f: Fns) {
    let mut s = 0f64;
    if log {
        for &gv in g {
            s += gv as f64;
        }
        for ((d, &yv), &gv) in dx.iter_mut().zip(y).zip(g) {
            *d = canonical((gv as f64 - (f.exp)(yv) as f64 * s) as f32, f.exact);
        }
    } else {
        for (&yv, &gv) in y.iter().zip(g) {
            s += gv as f64 * yv as f64;
        }
        for ((d, &yv), &gv) in dx.iter_mut().zip(y).zip(g) {
            *d = canonical((yv as f64 * (gv as f64 - s)) as f32, f.exact);
        }
    }
}

/// Backward over rows.
///
/// # Safety
/// `y`, `g`, `dx` hold rows·d elements; `dx` overlaps neither input.
pub unsafe fn backward(
    rows: usize,
    d: usize,
    y: *const f32,
    g: *const f32,
    dx: *mut f32,
    log: bool,
    f: Fns,
) {
    let (y, g) = (Ptr::new(y, rows * d), Ptr::new(g, rows * d));
    let dx = Ptr::new(dx, rows * d);
    par_chunks_sized(rows.div_ceil(ROWS_PER_CHUNK), rows * d, |chunk| {
        for r in chunk * ROWS_PER_CHUNK..((chunk + 1) * ROWS_PER_CHUNK).min(rows) {
            // SAFETY: row r lies inside the buffers; dx overlaps neither
            // input and its row is written by this chunk only.
            unsafe {
                row_backward(
                    y.slice(r * d, d),
                    g.slice(r * d, d),
                    dx.slice_mut(r * d, d),
                    log,
                    f,
                )
            };
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIBM: Fns = Fns {
        exp: f32::exp,
        log: f32::ln,
        exact: false,
    };

    #[test]
    fn rows_sum_to_one_and_log_matches() {
        let x = [1.0f32, 2.0, 3.0, -1.0, 1000.0, 1000.0];
        let (mut y, mut l) = ([0f32; 6], [0f32; 6]);
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe {
            forward(2, 3, x.as_ptr(), y.as_mut_ptr(), false, LIBM);
            forward(2, 3, x.as_ptr(), l.as_mut_ptr(), true, LIBM);
        }
        assert!((y[0] + y[1] + y[2] - 1.0).abs() < 1e-6);
        assert_eq!(y[4], 0.5);
        for i in 0..6 {
            assert!((l[i].exp() - y[i]).abs() < 1e-6);
        }
        // softmax backward of g = y-independent constant is zero.
        let mut dx = [9f32; 6];
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe {
            backward(
                2,
                3,
                y.as_ptr(),
                [1f32; 6].as_ptr(),
                dx.as_mut_ptr(),
                false,
                LIBM,
            )
        };
        assert!(dx.iter().all(|v| v.abs() < 1e-6));
    }
}
