//! The softmax row kernel (softmax and log-softmax over the last dimension
//! of a contiguous `[rows, d]`), forward and backward, on the lane loops of
//! the kernel path, with the fixed exp and log (`crate::math::fixed`) in
//! both modes, as the element-wise kernels use them (the vector forms give
//! the scalar definition's bits, and they are several times faster than a
//! libm call per element).
//!
//! Forward, per row: `m = max x` (first maximum, f32 compares; a NaN
//! propagates through the subtraction), `e_i = exp(x_i − m)`,
//! `S = Σ e_i` in f64 in increasing i. Softmax: `y_i = e_i / S` in f64,
//! rounded once. Log-softmax: `y_i = (x_i − m) − log(f32(S))` in f32.
//!
//! Backward, per row: softmax `dx_i = y_i·(g_i − Σ g_j·y_j)`, log-softmax
//! `dx_i = g_i − exp(y_i)·Σ g_j`; the row sums are f64 in increasing j and
//! each element is evaluated in f64 (a rounded multiply, then a rounded
//! subtract: no fma) and rounded once.
//!
//! Threads take fixed chunks of rows. In exact mode NaN results are written
//! as the canonical NaN.

use super::canonical;
use crate::dispatch::par_chunks_sized;
use crate::math::fixed;
use crate::ptr::Ptr;
use crate::simd::{run_on, LaneFn, Lanes, Token};

const ROWS_PER_CHUNK: usize = 16;

/// Forward of softmax (`log = false`) or log-softmax over rows.
///
/// # Safety
/// `x` and `y` hold rows·d elements (they may be the same buffer).
pub unsafe fn forward(
    token: Token,
    rows: usize,
    d: usize,
    x: *const f32,
    y: *mut f32,
    log: bool,
    exact: bool,
) {
    let (x, y) = (Ptr::new(x, rows * d), Ptr::new(y, rows * d));
    par_chunks_sized(rows.div_ceil(ROWS_PER_CHUNK), rows * d, |chunk| {
        let end = ((chunk + 1) * ROWS_PER_CHUNK).min(rows);
        let mut r = chunk * ROWS_PER_CHUNK;
        let group = group_rows(d).min(end - r);
        let mut e = crate::storage::scratch_vec(group * d, 0f32);
        while r < end {
            let n = group.min(end - r);
            let mut m = [0f32; GROUP];
            for j in 0..n {
                // SAFETY: row r + j lies inside x; the slice ends here.
                let xj = unsafe { x.slice((r + j) * d, d) };
                m[j] = row_max(xj);
                map(token, xj, &mut e[j * d..(j + 1) * d], ExpShifted(m[j]));
            }
            let sum = sums(n, d, |j, i| e[j * d + i] as f64);
            for j in 0..n {
                let ej = &mut e[j * d..(j + 1) * d];
                // The row is read whole into `e` before it is written, so
                // x and y may be one buffer.
                // SAFETY: row r + j lies inside x; the slice ends here.
                finish(
                    token,
                    unsafe { x.slice((r + j) * d, d) },
                    ej,
                    m[j],
                    sum[j],
                    log,
                    exact,
                );
                // SAFETY: row r + j lies inside y and is written by this
                // chunk only.
                unsafe { y.slice_mut((r + j) * d, d) }.copy_from_slice(ej);
            }
            r += n;
        }
    });
}

/// Rows a chunk takes at once: each row's f64 sum is one dependency chain
/// (serial over the row by the contract), so four rows' sums run side by
/// side; each is still added in increasing index.
const GROUP: usize = 4;

/// The rows the forward takes at once for rows of `d`: [`GROUP`] while
/// their exponentials (kept until the sums are done) fit 256 KiB, else one,
/// so that a long row's scratch stays one row.
fn group_rows(d: usize) -> usize {
    if d <= (1 << 14) {
        GROUP
    } else {
        1
    }
}

/// `Σ_i term(j, i)` for rows j < n ≤ GROUP, each from +0 in increasing i,
/// the rows' chains interleaved (rows past n repeat row n − 1 and are
/// dropped).
#[inline(always)]
fn sums(n: usize, d: usize, term: impl Fn(usize, usize) -> f64) -> [f64; GROUP] {
    let row: [usize; GROUP] = std::array::from_fn(|j| j.min(n - 1));
    let mut s = [0f64; GROUP];
    for i in 0..d {
        for j in 0..GROUP {
            s[j] += term(row[j], i);
        }
    }
    s
}

/// The first maximum of a row (f32 compares; a NaN propagates).
fn row_max(x: &[f32]) -> f32 {
    let mut m = f32::NEG_INFINITY;
    for &v in x {
        if v > m || v.is_nan() && !m.is_nan() {
            m = v;
        }
    }
    m
}

/// A row's output from its exponentials `out` = exp(x − m) and their sum:
/// log-softmax `(x − m) − log(f32(s))`, softmax `e / s` in f64.
fn finish(token: Token, x: &[f32], out: &mut [f32], m: f32, s: f64, log: bool, exact: bool) {
    if log {
        let ls = crate::math::log(s as f32);
        map(token, x, out, LogOut { m, ls, exact });
    } else {
        for o in out.iter_mut() {
            *o = canonical((*o as f64 / s) as f32, exact);
        }
    }
}

/// `out[i] = f(x[i])` for a lane function `f` over a row: the vector loop
/// of `token`'s path, the tail by the scalar instantiation of the same `f`.
struct Map<'a, F> {
    x: &'a [f32],
    out: &'a mut [f32],
    f: F,
}

/// A function applied lane by lane (the same operations for every `L`).
trait LaneMap: Copy {
    /// # Safety
    /// L's features are enabled.
    unsafe fn apply<L: Lanes>(self, v: L) -> L;
}

impl<F: LaneMap> LaneFn for Map<'_, F> {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        let n = self.x.len().min(self.out.len());
        let body = n / L::N * L::N;
        let (x, out) = (
            Ptr::new(self.x.as_ptr(), n),
            Ptr::new(self.out.as_mut_ptr(), n),
        );
        // SAFETY: every vector access covers elements < body ≤ n of both
        // slices; L's features are enabled (inside run_on).
        unsafe {
            let mut i = 0;
            while i < body {
                self.f
                    .apply(L::load(x.range(i, L::N)))
                    .store(out.range(i, L::N));
                i += L::N;
            }
            for i in body..n {
                out.write(i, self.f.apply(x.read(i)));
            }
        }
    }
}

fn map(token: Token, x: &[f32], out: &mut [f32], f: impl LaneMap) {
    run_on(token, Map { x, out, f });
}

/// `exp(v − m)`.
#[derive(Clone, Copy)]
struct ExpShifted(f32);
impl LaneMap for ExpShifted {
    #[inline(always)]
    unsafe fn apply<L: Lanes>(self, v: L) -> L {
        // SAFETY: forwarded.
        unsafe { fixed::exp(v.sub(L::splat(self.0))) }
    }
}

/// `(v − m) − ls`, the canonical NaN in exact mode.
#[derive(Clone, Copy)]
struct LogOut {
    m: f32,
    ls: f32,
    exact: bool,
}
impl LaneMap for LogOut {
    #[inline(always)]
    unsafe fn apply<L: Lanes>(self, v: L) -> L {
        // SAFETY: forwarded.
        unsafe {
            let r = v.sub(L::splat(self.m)).sub(L::splat(self.ls));
            if self.exact {
                r.canonicalize_nan()
            } else {
                r
            }
        }
    }
}

/// `exp(v)`.
#[derive(Clone, Copy)]
struct Exp;
impl LaneMap for Exp {
    #[inline(always)]
    unsafe fn apply<L: Lanes>(self, v: L) -> L {
        // SAFETY: forwarded.
        unsafe { fixed::exp(v) }
    }
}

/// One row of the forward into `out` (`out` and `x` distinct).
pub fn row_forward(token: Token, x: &[f32], out: &mut [f32], log: bool, exact: bool) {
    let m = row_max(x);
    map(token, x, out, ExpShifted(m));
    let mut s = 0f64;
    for &e in out.iter() {
        s += e as f64;
    }
    finish(token, x, out, m, s, log, exact);
}

/// One row of the backward: `dx` from the output `y` and its gradient `g`.
pub fn row_backward(token: Token, y: &[f32], g: &[f32], dx: &mut [f32], log: bool, exact: bool) {
    let mut s = 0f64;
    if log {
        for &gv in g {
            s += gv as f64;
        }
    } else {
        for (&yv, &gv) in y.iter().zip(g) {
            s += gv as f64 * yv as f64;
        }
    }
    backward_with_sum(token, y, g, dx, s, log, exact);
}

/// The backward of a row given its sum (Σ g for log-softmax, Σ g·y for
/// softmax).
fn backward_with_sum(
    token: Token,
    y: &[f32],
    g: &[f32],
    dx: &mut [f32],
    s: f64,
    log: bool,
    exact: bool,
) {
    if log {
        // exp(y) on the lanes into dx, then the f64 rule element by element.
        map(token, y, dx, Exp);
        for (d, &gv) in dx.iter_mut().zip(g) {
            *d = canonical((gv as f64 - *d as f64 * s) as f32, exact);
        }
    } else {
        for ((d, &yv), &gv) in dx.iter_mut().zip(y).zip(g) {
            *d = canonical((yv as f64 * (gv as f64 - s)) as f32, exact);
        }
    }
}

/// Backward over rows.
///
/// # Safety
/// `y`, `g`, `dx` hold rows·d elements; `dx` overlaps neither input.
#[allow(clippy::too_many_arguments)]
pub unsafe fn backward(
    token: Token,
    rows: usize,
    d: usize,
    y: *const f32,
    g: *const f32,
    dx: *mut f32,
    log: bool,
    exact: bool,
) {
    let (y, g) = (Ptr::new(y, rows * d), Ptr::new(g, rows * d));
    let dx = Ptr::new(dx, rows * d);
    par_chunks_sized(rows.div_ceil(ROWS_PER_CHUNK), rows * d, |chunk| {
        let end = ((chunk + 1) * ROWS_PER_CHUNK).min(rows);
        let mut r = chunk * ROWS_PER_CHUNK;
        while r < end {
            let n = GROUP.min(end - r);
            // SAFETY: rows r .. r + n lie inside y and g.
            let (yr, gr) = unsafe { (y.slice(r * d, n * d), g.slice(r * d, n * d)) };
            let sum = if log {
                sums(n, d, |j, i| gr[j * d + i] as f64)
            } else {
                sums(n, d, |j, i| gr[j * d + i] as f64 * yr[j * d + i] as f64)
            };
            for j in 0..n {
                let row = j * d..(j + 1) * d;
                // SAFETY: row r + j lies inside dx, which overlaps neither
                // input, and is written by this chunk only.
                let dxj = unsafe { dx.slice_mut((r + j) * d, d) };
                backward_with_sum(token, &yr[row.clone()], &gr[row], dxj, sum[j], log, exact);
            }
            r += n;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::available_paths;

    /// The definition: the scalar rules with the scalar fixed functions.
    fn forward_definition(x: &[f32], log: bool, exact: bool) -> Vec<f32> {
        let mut m = f32::NEG_INFINITY;
        for &v in x {
            if v > m || v.is_nan() && !m.is_nan() {
                m = v;
            }
        }
        let e: Vec<f32> = x.iter().map(|&v| crate::math::exp(v - m)).collect();
        let s: f64 = e.iter().fold(0.0, |s, &v| s + v as f64);
        if log {
            let ls = crate::math::log(s as f32);
            x.iter().map(|&v| canonical((v - m) - ls, exact)).collect()
        } else {
            e.iter()
                .map(|&v| canonical((v as f64 / s) as f32, exact))
                .collect()
        }
    }

    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits()
    }

    #[test]
    fn rows_sum_to_one_and_log_matches() {
        let token = Token::current();
        let x = [1.0f32, 2.0, 3.0, -1.0, 1000.0, 1000.0];
        let (mut y, mut l) = ([0f32; 6], [0f32; 6]);
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe {
            forward(token, 2, 3, x.as_ptr(), y.as_mut_ptr(), false, false);
            forward(token, 2, 3, x.as_ptr(), l.as_mut_ptr(), true, false);
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
                token,
                2,
                3,
                y.as_ptr(),
                [1f32; 6].as_ptr(),
                dx.as_mut_ptr(),
                false,
                false,
            )
        };
        assert!(dx.iter().all(|v| v.abs() < 1e-6));
    }

    /// Over many rows (groups of four, the rows left over, several chunks
    /// of 16, rows too long to group), in place and out of place, `forward` and `backward` give
    /// each row the bits of `row_forward` / `row_backward`, whose bits the
    /// test above ties to the definition.
    #[test]
    fn rows_taken_four_at_a_time_keep_each_rows_bits() {
        let mut state = 0x0f0f_1234_5555_aaaau64;
        let mut next = || {
            state = state.wrapping_add(crate::splitmix::GAMMA);
            ((crate::splitmix::mix(state) >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 30.0
        };
        for path in available_paths() {
            let token = Token::new(path).unwrap();
            for (rows, d) in [
                (1, 5),
                (3, 1),
                (4, 17),
                (5, 8),
                (9, 33),
                (16, 3),
                (37, 12),
                (3, 16_385),
            ] {
                let x: Vec<f32> = (0..rows * d).map(|_| next()).collect();
                let g: Vec<f32> = (0..rows * d).map(|_| next() / 30.0).collect();
                for log in [false, true] {
                    for exact in [false, true] {
                        let mut want = vec![0f32; rows * d];
                        let mut want_dx = vec![0f32; rows * d];
                        for r in 0..rows {
                            let row = r * d..(r + 1) * d;
                            row_forward(token, &x[row.clone()], &mut want[row.clone()], log, exact);
                            row_backward(
                                token,
                                &want[row.clone()],
                                &g[row.clone()],
                                &mut want_dx[row],
                                log,
                                exact,
                            );
                        }
                        let mut y = vec![0f32; rows * d];
                        let mut in_place = x.clone();
                        let mut dx = vec![0f32; rows * d];
                        // SAFETY: every buffer holds rows·d elements; dx
                        // overlaps neither input.
                        unsafe {
                            forward(token, rows, d, x.as_ptr(), y.as_mut_ptr(), log, exact);
                            let p = in_place.as_mut_ptr();
                            forward(token, rows, d, p, p, log, exact);
                            backward(
                                token,
                                rows,
                                d,
                                y.as_ptr(),
                                g.as_ptr(),
                                dx.as_mut_ptr(),
                                log,
                                exact,
                            );
                        }
                        for i in 0..rows * d {
                            let at =
                                format!("{path:?} rows {rows} d {d} log {log} exact {exact} [{i}]");
                            assert!(same(y[i], want[i]), "y {at}: {} vs {}", y[i], want[i]);
                            assert!(same(in_place[i], want[i]), "in place {at}");
                            assert!(
                                same(dx[i], want_dx[i]),
                                "dx {at}: {} vs {}",
                                dx[i],
                                want_dx[i]
                            );
                        }
                    }
                }
            }
        }
    }

    /// Every path gives the scalar definition's bits, forward and log
    /// backward, on rows of every length 1..40 (vector bodies and tails),
    /// with special values (NaN, ±inf, −0, subnormals, huge) in some rows.
    #[test]
    fn every_path_gives_the_definition_bits() {
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            state = state.wrapping_add(crate::splitmix::GAMMA);
            crate::splitmix::mix(state)
        };
        for d in 1..40 {
            for special in [false, true] {
                let x: Vec<f32> = (0..d)
                    .map(|i| {
                        let r = next();
                        match (special, r % 9) {
                            (true, 0) => f32::NAN,
                            (true, 1) => f32::INFINITY,
                            (true, 2) => f32::NEG_INFINITY,
                            (true, 3) => -0.0,
                            (true, 4) => 1e-41,
                            (true, 5) => 3e38,
                            _ => {
                                ((r >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 40.0
                                    + i as f32 * 0.01
                            }
                        }
                    })
                    .collect();
                let g: Vec<f32> = (0..d)
                    .map(|_| ((next() >> 40) as f32 / (1u64 << 24) as f32) - 0.5)
                    .collect();
                for log in [false, true] {
                    for exact in [false, true] {
                        let want = forward_definition(&x, log, exact);
                        let want_dx: Vec<f32> = if log {
                            let s: f64 = g.iter().fold(0.0, |s, &v| s + v as f64);
                            want.iter()
                                .zip(&g)
                                .map(|(&yv, &gv)| {
                                    canonical(
                                        (gv as f64 - crate::math::exp(yv) as f64 * s) as f32,
                                        exact,
                                    )
                                })
                                .collect()
                        } else {
                            Vec::new()
                        };
                        for path in available_paths() {
                            let token = Token::new(path).unwrap();
                            let mut y = vec![0f32; d];
                            row_forward(token, &x, &mut y, log, exact);
                            for i in 0..d {
                                assert!(
                                    same(y[i], want[i])
                                        || !exact && y[i].is_nan() && want[i].is_nan(),
                                    "{path:?} d {d} log {log} exact {exact} y[{i}]: {} vs {}",
                                    y[i],
                                    want[i]
                                );
                            }
                            if log {
                                let mut dx = vec![0f32; d];
                                row_backward(token, &want, &g, &mut dx, true, exact);
                                for i in 0..d {
                                    assert!(
                                        same(dx[i], want_dx[i])
                                            || !exact && dx[i].is_nan() && want_dx[i].is_nan(),
                                        "{path:?} d {d} exact {exact} dx[{i}]: {} vs {}",
                                        dx[i],
                                        want_dx[i]
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
