//! One convolution block of crnn-v0: 3×3 convolution (padding 1, stride 1,
//! taps in (ky, kx, c) order, weight rows padded with zeros to a multiple of
//! 16), then ReLU fused into max pooling that records each window's winner.
//! Activations are channels-last `[H][W][C]`.

use super::dot16::{
    gemm_nt, gemm_nt_one_channel, gemm_nt_tap_planes, gemm_nt_taps, pad_input, padding_finite,
    rowsum16, tap_planes, TapPlanes, Taps3x3,
};
use super::dot16_nn::{gemm_nn, gemm_nn_taps};
#[cfg(test)]
use crate::kernels::transpose::transpose;
use crate::ptr::Ptr;
use crate::simd::{run_on, LaneFn, Lanes, Token};

/// No positive value in the window: the pooled output is 0 and passes no
/// gradient.
pub const NONE: u32 = u32::MAX;

/// Geometry of one block for one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geom {
    pub h: usize,
    pub w: usize,
    pub c: usize,
    pub o: usize,
    pub ph: usize,
    pub pw: usize,
}

impl Geom {
    /// Real taps per output channel.
    pub fn k(&self) -> usize {
        9 * self.c
    }
    /// Taps padded to a multiple of 16 (the weight row length).
    pub fn kp(&self) -> usize {
        self.k().div_ceil(16) * 16
    }
    pub fn positions(&self) -> usize {
        self.h * self.w
    }
    pub fn out_h(&self) -> usize {
        self.h / self.ph
    }
    pub fn out_w(&self) -> usize {
        self.w / self.pw
    }
}

/// `col[p][k]` (row length `kp`, padding zero): the input window of output
/// position p. Every element is written (a tap outside the image and the
/// row's padding as zeros), so the buffer is only sized, never cleared.
pub fn im2col(g: &Geom, x: &[f32], col: &mut Vec<f32>) {
    let (h, w, c, k, kp) = (g.h, g.w, g.c, g.k(), g.kp());
    super::reuse(col, h * w * kp, 0.0);
    for oy in 0..h {
        for ox in 0..w {
            let row = &mut col[(oy * w + ox) * kp..][..kp];
            for ky in 0..3 {
                let iy = oy as isize + ky as isize - 1;
                for kx in 0..3 {
                    let ix = ox as isize + kx as isize - 1;
                    let dst = &mut row[(ky * 3 + kx) * c..][..c];
                    let inside = iy >= 0 && iy < h as isize && ix >= 0 && ix < w as isize;
                    if c == 1 {
                        // One channel (the first block): a plain store, not
                        // a copy call per tap.
                        dst[0] = if inside {
                            x[iy as usize * w + ix as usize]
                        } else {
                            0.0
                        };
                    } else if inside {
                        dst.copy_from_slice(&x[(iy as usize * w + ix as usize) * c..][..c]);
                    } else {
                        dst.fill(0.0);
                    }
                }
            }
            row[k..].fill(0.0);
        }
    }
}

/// The forward pass's window workspace, kept by the caller across steps:
/// the im2col matrix, or, for channels in whole 16-element steps, the
/// zero-padded input its rows are read from in place and the table of
/// their step offsets.
#[derive(Default)]
pub struct Windows {
    col: Vec<f32>,
    steps: Vec<usize>,
}

/// `colT[k][p]` for the real taps k < 9C (the transposed window matrix):
/// the reference that the weight gradient's in-place reads
/// (`dot16::TapPlanes`) are tested against. The input is first made planar
/// (`planes[c][p]`, one transpose), so that every row of `colT` is, per
/// output row, a shifted copy of a plane row with zeros where the tap falls
/// outside the image.
#[cfg(test)]
pub fn im2col_t(token: Token, g: &Geom, x: &[f32], planes: &mut Vec<f32>, colt: &mut Vec<f32>) {
    let (h, w, c) = (g.h, g.w, g.c);
    let p = h * w;
    super::reuse(planes, c * p, 0.0);
    transpose(token, &x[..p * c], p, c, planes);
    super::reuse(colt, g.k() * p, 0.0);
    for ky in 0..3 {
        for kx in 0..3 {
            // Output columns whose tap column ox + kx − 1 lies inside [0, w).
            let lo = usize::from(kx == 0).min(w);
            let hi = if kx == 2 { w.saturating_sub(1) } else { w };
            for ci in 0..c {
                let plane = &planes[ci * p..][..p];
                let dst = &mut colt[((ky * 3 + kx) * c + ci) * p..][..p];
                for oy in 0..h {
                    let seg = &mut dst[oy * w..][..w];
                    let iy = oy as isize + ky as isize - 1;
                    if iy < 0 || iy >= h as isize || lo >= hi {
                        seg.fill(0.0);
                        continue;
                    }
                    seg[..lo].fill(0.0);
                    seg[hi..].fill(0.0);
                    let src = iy as usize * w + lo + kx - 1;
                    seg[lo..hi].copy_from_slice(&plane[src..src + (hi - lo)]);
                }
            }
        }
    }
}

/// Forward: `conv[p][o] = dot16(col[p], W[o]) + b[o]`; then the pooled
/// output `y[py][px][o]` = the running maximum over the window (rows, then
/// columns) starting from 0 and replaced only when strictly greater, and
/// `win[...]` = the winner's flat index `p * O + o` in the convolution
/// output, or [`NONE`]. Trailing partial windows are dropped. `conv`
/// receives the product without the bias: the pooling adds it (the same
/// one rounding per element) as it reads each value, since nothing else
/// reads the convolution output. `wt`, the weight transposed (`[KP][O]`)
/// when the caller has it, serves the channels in whole 16-element steps
/// with the output channels on the lanes (the same sums).
#[allow(clippy::too_many_arguments)]
pub fn forward(
    token: Token,
    g: &Geom,
    x: &[f32],
    w: &[f32],
    wt: Option<&[f32]>,
    b: &[f32],
    windows: &mut Windows,
    conv: &mut Vec<f32>,
    y: &mut Vec<f32>,
    win: &mut Vec<u32>,
) {
    let Windows { col, steps } = windows;
    let (o, kp, p) = (g.o, g.kp(), g.positions());
    super::reuse(conv, p * o, 0.0);
    if g.c % 16 == 0 {
        // Channels in whole 16-element steps: the window rows are read in
        // place from a zero-padded copy of the input (`col` holds it), the
        // same elements in the same order as the im2col rows.
        pad_input(x, g.h, g.w, g.c, col);
        let taps = Taps3x3::new(g.h, g.w, g.c, steps);
        match wt {
            // The output channels on the lanes: a tile reads a panel of
            // Wᵀ that stays in cache, against gemm_nt's rows of W and
            // per-output tree (16 × 128 × 32 → 64: 39.8 against 32.1
            // GFMA/s, docs/performance.md, "2026-12-07, evening").
            Some(wt) => gemm_nn_taps(token, taps, col, o, wt, o, conv, o),
            None => gemm_nt_taps(token, taps, col, o, w, kp, conv, o),
        }
    } else if g.c == 1 && padding_finite(w, o, kp) {
        // One channel (the first block): nine taps, so each output's dot16
        // is one fma per partial and the tree, computed with the channels
        // on the lanes from the padded input (the same bits as below).
        pad_input(x, g.h, g.w, 1, col);
        gemm_nt_one_channel(token, g.h, g.w, col, o, w, kp, conv, o);
    } else {
        im2col(g, x, col);
        gemm_nt(token, p, o, kp, col, kp, w, kp, conv, o);
    }
    let n = g.out_h() * g.out_w() * o;
    super::reuse(y, n, 0.0);
    super::reuse(win, n, NONE);
    run_on(
        token,
        PoolForward {
            g: *g,
            conv: Ptr::new(conv.as_ptr(), p * o),
            b: Ptr::new(b.as_ptr(), o),
            y: Ptr::new(y.as_mut_ptr(), n),
            // The winners travel as the bit patterns of f32 lanes (select
            // and store move bits, never values).
            win: Ptr::new(win.as_mut_ptr().cast::<f32>(), n),
        },
    );
}

/// Max pooling with ReLU and the bias of [`forward`], channels on the
/// lanes: per window position a vector compare (strictly greater, so a
/// NaN or an equal value never wins) and two selects, the scalar rule
/// lane by lane.
struct PoolForward {
    g: Geom,
    conv: Ptr<*const f32>,
    b: Ptr<*const f32>,
    y: Ptr<*mut f32>,
    win: Ptr<*mut f32>,
}

/// 0, 1, …, 15 as bit patterns: lane l's channel offset.
static LANE_BITS: [u32; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

impl LaneFn for PoolForward {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        let g = self.g;
        let (o, ow) = (g.o, g.out_w());
        let vec_end = o / L::N * L::N;
        // SAFETY: every index is < P·O for conv and < out_h·out_w·O for y
        // and win (the window lies inside the image; channels < O); L's
        // features are enabled (inside run_on).
        unsafe {
            let lanes = L::load(LANE_BITS.as_ptr().cast::<f32>());
            for py in 0..g.out_h() {
                for px in 0..ow {
                    let out = (py * ow + px) * o;
                    let first = (py * g.ph * g.w + px * g.pw) * o;
                    let mut ch = 0;
                    while ch < vec_end {
                        let bias = L::load(self.b.range(ch, L::N));
                        let (mut best, mut at) = (L::zero(), L::splat_bits(NONE));
                        for dy in 0..g.ph {
                            for dx in 0..g.pw {
                                let idx = first + (dy * g.w + dx) * o + ch;
                                let v = L::load(self.conv.range(idx, L::N)).add(bias);
                                let m = v.gt(best);
                                best = L::select(m, v, best);
                                at = L::select(m, L::splat_bits(idx as u32).add_i32(lanes), at);
                            }
                        }
                        best.store(self.y.range(out + ch, L::N));
                        at.store(self.win.range(out + ch, L::N));
                        ch += L::N;
                    }
                    for ch in vec_end..o {
                        let bias = self.b.read(ch);
                        let (mut best, mut at) = (0.0f32, NONE);
                        for dy in 0..g.ph {
                            for dx in 0..g.pw {
                                let idx = first + (dy * g.w + dx) * o + ch;
                                let v = self.conv.read(idx) + bias;
                                if v > best {
                                    best = v;
                                    at = idx as u32;
                                }
                            }
                        }
                        self.y.write(out + ch, best);
                        self.win.write(out + ch, f32::from_bits(at));
                    }
                }
            }
        }
    }
}

/// Workspace of one block's backward pass.
#[derive(Default)]
pub struct BackScratch {
    /// `[O][P]`: the gradient of the convolution output, transposed.
    pub dct: Vec<f32>,
    /// The three shifted planar copies of the input (`dot16::tap_planes`).
    pub shifted: Vec<f32>,
    pub planes: Vec<f32>,
    pub dcol: Vec<f32>,
}

/// Backward of one block. `dy` is the gradient of the pooled output, `x`
/// the block's input, `w` the block's weight (`[O][KP]`),
/// `dw` (`[O][KP]`, padding written as zero) and `db` are overwritten; when
/// `dx` is given it receives the input gradient (the gather).
#[allow(clippy::too_many_arguments)]
pub fn backward(
    token: Token,
    g: &Geom,
    x: &[f32],
    win: &[u32],
    dy: &[f32],
    w: &[f32],
    dw: &mut [f32],
    db: &mut [f32],
    dx: Option<&mut [f32]>,
    s: &mut BackScratch,
) {
    let (o, k, kp, p) = (g.o, g.k(), g.kp(), g.positions());
    // Pool backward: the gradient goes to the winner (windows are
    // disjoint), written straight into the transposed layout dCᵀ[o][p]
    // that the bias, weight and input gradients read.
    // Its rows are `ldp` apart, not P: the input gradient reads dCᵀ down
    // its columns, 64 rows per tile, which at a P of a power of two (P·4
    // bytes a multiple of 4 KiB) all fall in one L1 set.
    let ldp = p.div_ceil(16) * 16 + 16;
    s.dct.clear();
    super::reuse(&mut s.dct, o * ldp, 0.0);
    scatter_winners_t(g, win, dy, &mut s.dct, ldp);
    for ch in 0..o {
        db[ch] = rowsum16(&s.dct[ch * ldp..][..p]);
    }
    // dW[o][k] = dot16_p(dCᵀ[o], row k of the transposed window matrix),
    // the rows read in place from three shifted planar copies of x.
    let t = TapPlanes::new(g.h, g.w, g.c);
    tap_planes(token, t, x, &mut s.planes, &mut s.shifted);
    // The product writes the real taps; the padding columns are zero.
    for row in dw.chunks_exact_mut(kp) {
        row[k..].fill(0.0);
    }
    gemm_nt_tap_planes(token, o, &s.dct, ldp, t, &s.shifted, dw, kp);
    if let Some(dx) = dx {
        // dcol[p][k] = dot16_o(dC[p][o], W[o][k]): dC read down dCᵀ's
        // columns, W's rows as they lie, the outputs on the lanes
        // (`gemm_nn`; at k = O, a short sum, the fastest form). One image
        // row at a time into a ring of three rows, each input row gathered
        // as soon as the rows below and above it are made: the ring (three
        // rows of 9C values per position, 432 KiB at 128 positions × 288)
        // fits in L2, and a line keeps 0.4 MiB per block where the whole
        // matrix took 2.25 MiB for crnn-v0's second block (the speed is
        // level: docs/performance.md, "2026-12-07, night").
        let (wd, held) = (g.w, g.h.min(3));
        let row = wd * k;
        super::reuse(&mut s.dcol, held * row, 0.0);
        for r in 0..=g.h {
            if r < g.h {
                let ring = &mut s.dcol[(r % held) * row..][..row];
                gemm_nn(token, wd, k, o, &s.dct[r * wd..], 1, ldp, w, kp, ring, k);
            }
            if r > 0 {
                gather(token, g, &s.dcol, held, r - 1..r, dx);
            }
        }
    }
}

/// `dct[o·ldp + p] = dy[i]` for every pooled output i = (py·out_w + px)·O + o
/// that has a winner at flat index `win[i]` = p·O + o of the convolution
/// output; `dct` is zero elsewhere (the caller zeroes it).
fn scatter_winners_t(g: &Geom, win: &[u32], dy: &[f32], dct: &mut [f32], ldp: usize) {
    let (o, p) = (g.o, g.positions());
    let n = g.out_h() * g.out_w() * o;
    assert!(
        win.len() >= n && dy.len() >= n,
        "conv backward: win or dy too short"
    );
    assert!(
        ldp >= p && dct.len() >= o * ldp,
        "conv backward: dCᵀ too short"
    );
    // at = position·O + ch, so the position is the exact quotient
    // (at − ch)/O. An integer division per element costs more than the
    // rest of the scatter; the product with 1/O in f64 is within 2⁻²⁰ of
    // the quotient (< 2³² with a relative error < 2⁻⁵²), so adding ½ and
    // truncating gives the quotient exactly (`f64::round` is a call on the
    // baseline x86-64 target).
    let inv = 1.0 / o as f64;
    for (wins, dys) in win[..n].chunks_exact(o).zip(dy[..n].chunks_exact(o)) {
        for (ch, (&at, &d)) in wins.iter().zip(dys).enumerate() {
            if at != NONE {
                let pos = ((at as usize - ch) as f64 * inv + 0.5) as usize;
                dct[ch * ldp + pos] = d;
            }
        }
    }
}

/// `dx[iy][ix][c]` = Σ over the taps (ky ascending, then kx) whose window
/// covers the element of `dcol[(iy + 1 − ky, ix + 1 − kx)][(ky·3 + kx)·C + c]`,
/// from +0 with plain additions: the channels on the lanes, each element's
/// sum in a register (the same adds in the same order as a scalar loop).
/// For the input rows `rows` only; `dcol` holds the rows of `held` image
/// rows, image row y at row slot y mod `held` (`held` = h: the whole
/// matrix; 3: a ring holding rows iy − 1 ..= iy + 1 of each gathered iy).
pub fn gather(
    token: Token,
    g: &Geom,
    dcol: &[f32],
    held: usize,
    rows: std::ops::Range<usize>,
    dx: &mut [f32],
) {
    let (p, k) = (g.positions(), g.k());
    assert!(
        held >= g.h.min(3) && held <= g.h,
        "gather: {held} rows held for {} image rows",
        g.h
    );
    assert!(rows.end <= g.h, "gather: rows past the image");
    assert!(dcol.len() >= held * g.w * k, "gather: dcol too short");
    assert!(dx.len() >= p * g.c, "gather: dx too short");
    run_on(
        token,
        Gather {
            g: *g,
            dcol: Ptr::new(dcol.as_ptr(), held * g.w * k),
            held,
            rows,
            dx: Ptr::new(dx.as_mut_ptr(), p * g.c),
        },
    );
}

struct Gather {
    g: Geom,
    dcol: Ptr<*const f32>,
    held: usize,
    rows: std::ops::Range<usize>,
    dx: Ptr<*mut f32>,
}

impl LaneFn for Gather {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        let (h, w, c) = (self.g.h, self.g.w, self.g.c);
        let k = self.g.k();
        // The row slot of image row y.
        let slot = |y: usize| (y % self.held) * w * k;
        // SAFETY: image rows < h sit in slots < held, positions < w,
        // channels < c (so every index is < held·w·k for dcol and < p·c
        // for dx, checked by gather); L's features are enabled (inside
        // run_on).
        unsafe {
            // Offsets in dcol of the taps that cover (iy, ix), in tap order.
            let mut taps = [0usize; 9];
            for iy in self.rows.clone() {
                for ix in 0..w {
                    let mut n = 0;
                    for ky in 0..3 {
                        let oy = iy + 1;
                        if oy < ky || oy - ky >= h {
                            continue;
                        }
                        for kx in 0..3 {
                            let ox = ix + 1;
                            if ox < kx || ox - kx >= w {
                                continue;
                            }
                            taps[n] = slot(oy - ky) + (ox - kx) * k + (ky * 3 + kx) * c;
                            n += 1;
                        }
                    }
                    let out = (iy * w + ix) * c;
                    let mut ch = 0;
                    while ch + 2 * L::N <= c {
                        let (mut s0, mut s1) = (L::zero(), L::zero());
                        for &t in &taps[..n] {
                            s0 = s0.add(L::load(self.dcol.range(t + ch, L::N)));
                            s1 = s1.add(L::load(self.dcol.range(t + ch + L::N, L::N)));
                        }
                        s0.store(self.dx.range(out + ch, L::N));
                        s1.store(self.dx.range(out + ch + L::N, L::N));
                        ch += 2 * L::N;
                    }
                    while ch + L::N <= c {
                        let mut s0 = L::zero();
                        for &t in &taps[..n] {
                            s0 = s0.add(L::load(self.dcol.range(t + ch, L::N)));
                        }
                        s0.store(self.dx.range(out + ch, L::N));
                        ch += L::N;
                    }
                    while ch < c {
                        let mut s0 = 0f32;
                        for &t in &taps[..n] {
                            s0 += self.dcol.read(t + ch);
                        }
                        self.dx.write(out + ch, s0);
                        ch += 1;
                    }
                }
            }
        }
    }
}
