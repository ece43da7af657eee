//! The 16-lane dot product (docs/recognizer.md, "The arithmetic contract")
//! and the products built from it.
//!
//! `p[0..16] = +0`; for k ascending `p[k % 16] = fma(a[k], b[k], p[k % 16])`;
//! then for s in 8, 4, 2, 1: `p[i] = p[i] + p[i + s]` for i < s; result p[0].
//!
//! The 16 partials map onto lanes (1×16 for avx512, 2×8 for avx2, 4×4 for
//! v128, 16 scalars for scalar). Each partial sees the same sequence of
//! correctly rounded fmas on every path, the elements of a trailing partial
//! chunk (read by `Lanes::load_first`, the other lanes zero) are added into
//! the same partials by one vector fma whose result is kept only in the
//! tail's lanes (a select, so the other partials are untouched), and the tree
//! always pairs the same partials in the same order (levels across whole
//! registers as vector adds, levels inside a register on stored scalars or,
//! eight outputs at once, by `Lanes::tree8`), so every path gives the
//! definition's bits. Products whose operand runs along the other axis are
//! given a transposed copy (`kernels::transpose`), or, where the sum is short
//! (the convolution input gradient, the LSTM weight gradients), run by
//! [`super::dot16_nn`], which puts the outputs on the lanes instead of the
//! partials and reads that operand as it lies.

use crate::ptr::Ptr;
use crate::simd::{run_on, LaneFn, Lanes, Token};

/// The definition (scalar, one output).
pub fn dot16_scalar(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    let mut p = [0f32; 16];
    for k in 0..a.len() {
        p[k % 16] = a[k].mul_add(b[k], p[k % 16]);
    }
    tree(&mut p)
}

/// The fixed pairwise tree over the 16 partials.
#[inline(always)]
pub fn tree(p: &mut [f32; 16]) -> f32 {
    for i in 0..8 {
        p[i] += p[i + 8];
    }
    for i in 0..4 {
        p[i] += p[i + 4];
    }
    for i in 0..2 {
        p[i] += p[i + 2];
    }
    p[0] + p[1]
}

/// The 16-lane sum of a row: dot16 with a row of ones (fma(x, 1, p) is the
/// rounded x + p, so plain adds give the same bits).
pub fn rowsum16(a: &[f32]) -> f32 {
    let mut p = [0f32; 16];
    let mut chunks = a.chunks_exact(16);
    for ch in &mut chunks {
        for i in 0..16 {
            p[i] += ch[i];
        }
    }
    for (i, x) in chunks.remainder().iter().enumerate() {
        p[i] += *x;
    }
    tree(&mut p)
}

/// `c[i*ldc + j] = dot16(a[i*lda ..][..k], b[j*ldb ..][..k])` for i < m,
/// j < n, on `token`'s kernel path, on the calling thread.
#[allow(clippy::too_many_arguments)]
pub fn gemm_nt(
    token: Token,
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    lda: usize,
    b: &[f32],
    ldb: usize,
    c: &mut [f32],
    ldc: usize,
) {
    let (ra, rb) = (Strided { ld: lda }, Strided { ld: ldb });
    product(token, "gemm_nt", m, n, k, a, ra, b, rb, c, ldc);
}

/// The window rows of a 3×3 convolution (padding 1, stride 1) over a
/// channels-last `[h][w][c]` input, read in place from its zero-padded copy
/// `[h + 2][w + 2][c]` (see [`pad_input`]): row p = (oy, ox) of the window
/// matrix is taps (ky, kx) in increasing order, each the c channels at
/// padded position (oy + ky, ox + kx) — the im2col row's elements, the
/// padding's +0 included, in the same order. Needs c a multiple of 16, so
/// that every 16-element step of a row lies inside one tap.
#[derive(Clone, Copy)]
pub struct Taps3x3<'a> {
    h: usize,
    w: usize,
    c: usize,
    /// Offset, from a row's first element, of each 16-element step.
    steps: &'a [usize],
}

impl<'a> Taps3x3<'a> {
    /// The geometry of an `h` × `w` image with `c` channels; `steps` is
    /// filled with the 9c/16 step offsets (a buffer the caller keeps).
    pub fn new(h: usize, w: usize, c: usize, steps: &'a mut Vec<usize>) -> Taps3x3<'a> {
        assert!(
            c > 0 && c % 16 == 0,
            "Taps3x3: c = {c} is not a multiple of 16"
        );
        steps.clear();
        for kk in (0..9 * c).step_by(16) {
            let (tap, within) = (kk / c, kk % c);
            let (ky, kx) = (tap / 3, tap % 3);
            steps.push((ky * (w + 2) + kx) * c + within);
        }
        let steps: &'a Vec<usize> = steps;
        Taps3x3 {
            h,
            w,
            c,
            steps: steps.as_slice(),
        }
    }
    /// Window rows: the image's positions.
    pub fn positions(&self) -> usize {
        self.h * self.w
    }
    pub fn width(&self) -> usize {
        self.w
    }
    pub fn channels(&self) -> usize {
        self.c
    }
    /// Taps per window row (9c).
    pub fn k(&self) -> usize {
        9 * self.c
    }
    /// Length of the padded input (`pad_input`).
    pub fn padded_len(&self) -> usize {
        (self.h + 2) * (self.w + 2) * self.c
    }
    /// Offset in the padded input of position p's window's first element.
    #[inline(always)]
    pub fn window(&self, p: usize) -> usize {
        (p / self.w * (self.w + 2) + p % self.w) * self.c
    }
    /// Offset, from a window's first element, of the 16-element step
    /// holding taps kk..kk + 16 (kk a multiple of 16).
    #[inline(always)]
    pub fn step_at(&self, kk: usize) -> usize {
        self.steps[kk / 16]
    }
    /// [`Self::step_at`] without the bounds check, for a kernel's inner
    /// loop.
    ///
    /// # Safety
    /// `kk` < 9c (the table has one entry per 16 of the 9c taps).
    #[inline(always)]
    pub unsafe fn step_at_unchecked(&self, kk: usize) -> usize {
        debug_assert!(kk / 16 < self.steps.len());
        // SAFETY: kk / 16 < steps.len() by the caller's contract.
        unsafe { *self.steps.get_unchecked(kk / 16) }
    }
}

/// `xp` = the zero-padded copy `[h + 2][w + 2][c]` of `x` (`[h][w][c]`)
/// that [`gemm_nt_taps`] reads; every element is written.
pub fn pad_input(x: &[f32], h: usize, w: usize, c: usize, xp: &mut Vec<f32>) {
    let row = (w + 2) * c;
    super::reuse(xp, (h + 2) * row, 0.0);
    xp[..row].fill(0.0);
    xp[(h + 1) * row..].fill(0.0);
    for iy in 0..h {
        let dst = &mut xp[(iy + 1) * row..][..row];
        dst[..c].fill(0.0);
        dst[c..(w + 1) * c].copy_from_slice(&x[iy * w * c..][..w * c]);
        dst[(w + 1) * c..].fill(0.0);
    }
}

/// `c[p*ldc + j] = dot16(window row p, b[j*ldb ..][..9c])` for the h·w
/// window rows of `taps` read from the padded input `xp` ([`pad_input`]),
/// j < n: the product `gemm_nt` computes from the im2col matrix, without
/// writing it (the same terms in the same order, so the same bits).
#[allow(clippy::too_many_arguments)]
pub fn gemm_nt_taps(
    token: Token,
    taps: Taps3x3<'_>,
    xp: &[f32],
    n: usize,
    b: &[f32],
    ldb: usize,
    c: &mut [f32],
    ldc: usize,
) {
    let (m, k) = (taps.positions(), taps.k());
    assert_eq!(taps.steps.len() * 16, k, "gemm_nt_taps: the step table");
    let rb = Strided { ld: ldb };
    product(token, "gemm_nt_taps", m, n, k, xp, taps, b, rb, c, ldc);
}

/// `c[p*ldc + j] = dot16(window row p, b[j*ldb ..][..16])` for a 3×3
/// convolution (padding 1, stride 1) of a one-channel `h` × `w` image,
/// read from its zero-padded copy `xp` (`[h + 2][w + 2]`, [`pad_input`]
/// with c = 1), j < n: the product `gemm_nt` computes from the im2col rows
/// (9 taps, then 7 zeros up to the 16 of `ldb`), with the outputs on the
/// lanes instead of the partials. With k = 16 every partial is one fma from
/// +0: tap t's is fma(x_t, w_t, +0), and a padding term's fma(+0, w_t, +0)
/// is +0 when w_t is finite — which the caller checks (`padding_finite`)
/// before choosing this kernel. The tree is then the definition's, on
/// whole registers: p₀ + p₈, p_i + (+0) for 0 < i < 8 (the add that turns
/// a −0 partial into +0, as in gemm_nt), then the levels 4, 2, 1.
#[allow(clippy::too_many_arguments)]
pub fn gemm_nt_one_channel(
    token: Token,
    h: usize,
    w: usize,
    xp: &[f32],
    n: usize,
    b: &[f32],
    ldb: usize,
    c: &mut [f32],
    ldc: usize,
) {
    if h == 0 || w == 0 || n == 0 {
        return;
    }
    assert!(ldb >= 16, "gemm_nt_one_channel: weight rows of {ldb} < 16");
    assert!(
        xp.len() >= (h + 2) * (w + 2),
        "gemm_nt_one_channel: xp too short"
    );
    assert!(
        b.len() >= (n - 1) * ldb + 16,
        "gemm_nt_one_channel: B too short"
    );
    assert!(
        c.len() >= (h * w - 1) * ldc + n,
        "gemm_nt_one_channel: C too short"
    );
    // The nine taps' weights channel by channel: wt[t][j] (tiny).
    let mut wt = vec![0f32; 9 * n];
    for j in 0..n {
        for t in 0..9 {
            wt[t * n + j] = b[j * ldb + t];
        }
    }
    run_on(
        token,
        OneChannel {
            h,
            w,
            n,
            xp: Ptr::new(xp.as_ptr(), (h + 2) * (w + 2)),
            wt: Ptr::new(wt.as_ptr(), 9 * n),
            c: Ptr::new(c.as_mut_ptr(), c.len()),
            ldc,
        },
    )
}

/// Whether the padding terms (taps 9..16) of every weight row are finite,
/// so that [`gemm_nt_one_channel`] may take their partials as +0.
pub fn padding_finite(b: &[f32], n: usize, ldb: usize) -> bool {
    ldb >= 16 && (0..n).all(|j| b[j * ldb + 9..j * ldb + 16].iter().all(|v| v.is_finite()))
}

struct OneChannel {
    h: usize,
    w: usize,
    n: usize,
    xp: Ptr<*const f32>,
    wt: Ptr<*const f32>,
    c: Ptr<*mut f32>,
    ldc: usize,
}

impl LaneFn for OneChannel {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        let (w, n) = (self.w, self.n);
        let vec_end = n / L::N * L::N;
        // SAFETY: positions < h·w, taps inside the padded image, channels
        // < n (checked by gemm_nt_one_channel); L's features are enabled.
        unsafe {
            for oy in 0..self.h {
                for ox in 0..w {
                    let at = oy * (w + 2) + ox;
                    let mut x = [0f32; 9];
                    for (t, v) in x.iter_mut().enumerate() {
                        *v = self.xp.read(at + (t / 3) * (w + 2) + t % 3);
                    }
                    let out = (oy * w + ox) * self.ldc;
                    let mut j = 0;
                    while j < vec_end {
                        let sum = self.outputs::<L>(&x, j);
                        sum.store(self.c.range(out + j, L::N));
                        j += L::N;
                    }
                    while j < n {
                        let sum = self.outputs::<f32>(&x, j);
                        self.c.write(out + j, sum);
                        j += 1;
                    }
                }
            }
        }
    }
}

impl OneChannel {
    /// Outputs j..j + M::N of one position whose nine taps are `x`.
    ///
    /// SAFETY: j + M::N ≤ n; M's features are enabled.
    #[inline(always)]
    unsafe fn outputs<M: Lanes>(&self, x: &[f32; 9], j: usize) -> M {
        // SAFETY: as for the function.
        unsafe {
            // (Loops, not closures: a closure is not compiled with the
            // trampoline's target features.)
            let zero = M::zero();
            let mut p = [zero; 9];
            for (t, v) in p.iter_mut().enumerate() {
                *v = M::splat(x[t]).fma(M::load(self.wt.range(t * self.n + j, M::N)), zero);
            }
            // s = 8: p₀ + p₈, and p_i + (+0) for the partials whose
            // partner is a padding term.
            let mut a = [zero; 8];
            a[0] = p[0].add(p[8]);
            for i in 1..8 {
                a[i] = p[i].add(zero);
            }
            let mut b = [zero; 4];
            for i in 0..4 {
                b[i] = a[i].add(a[i + 4]);
            }
            let c = [b[0].add(b[2]), b[1].add(b[3])];
            c[0].add(c[1])
        }
    }
}

/// The rows of the transposed window matrix of a 3×3 convolution (padding
/// 1, stride 1) over an `h` × `w` image with `c` channels — row
/// (ky·3 + kx)·c + ci, over the output positions p = oy·w + ox, is channel
/// ci at (oy + ky − 1, ox + kx − 1), zero outside the image — read in place
/// from three planar copies of the input ([`tap_planes`]). Copy kx is
/// `[c][h + 2][w]`: row y + 1 of channel ci is input row y shifted by
/// kx − 1 columns (a zero shifted in), rows 0 and h + 1 are zero. Row
/// (ky, kx, ci) of the matrix is then h·w contiguous elements of copy kx,
/// from row ky of channel ci: a third of the copies of the matrix itself.
#[derive(Clone, Copy)]
pub struct TapPlanes {
    h: usize,
    w: usize,
    c: usize,
}

impl TapPlanes {
    pub fn new(h: usize, w: usize, c: usize) -> TapPlanes {
        TapPlanes { h, w, c }
    }
}

/// `out` = the three shifted planar copies of `x` (`[h][w][c]`) that
/// [`TapPlanes`] describes; `planes` is a workspace (the input made planar
/// by one transpose). Every element of `out` is written.
pub fn tap_planes(
    token: Token,
    t: TapPlanes,
    x: &[f32],
    planes: &mut Vec<f32>,
    out: &mut Vec<f32>,
) {
    let (h, w, c) = (t.h, t.w, t.c);
    let p = h * w;
    super::reuse(planes, c * p, 0.0);
    crate::kernels::transpose::transpose(token, &x[..p * c], p, c, planes);
    let size = (h + 2) * w;
    super::reuse(out, 3 * c * size, 0.0);
    if w == 0 {
        return;
    }
    for kx in 0..3 {
        for ci in 0..c {
            let dst = &mut out[(kx * c + ci) * size..][..size];
            dst[..w].fill(0.0);
            dst[(h + 1) * w..].fill(0.0);
            for y in 0..h {
                let src = &planes[ci * p + y * w..][..w];
                let row = &mut dst[(y + 1) * w..][..w];
                match kx {
                    // Column ox reads input column ox − 1.
                    0 => {
                        row[0] = 0.0;
                        row[1..].copy_from_slice(&src[..w - 1]);
                    }
                    1 => row.copy_from_slice(src),
                    // Column ox reads input column ox + 1.
                    _ => {
                        row[..w - 1].copy_from_slice(&src[1..]);
                        row[w - 1] = 0.0;
                    }
                }
            }
        }
    }
}

/// `c[i*ldc + j] = dot16(a[i*lda ..][..h·w], transposed window row j)` for
/// i < m and the 9c rows j of `t` read from `planes` ([`tap_planes`]): the
/// product `gemm_nt` computes from the transposed window matrix, without
/// writing it (the same terms in the same order, so the same bits).
#[allow(clippy::too_many_arguments)]
pub fn gemm_nt_tap_planes(
    token: Token,
    m: usize,
    a: &[f32],
    lda: usize,
    t: TapPlanes,
    planes: &[f32],
    c: &mut [f32],
    ldc: usize,
) {
    let (n, k) = (9 * t.c, t.h * t.w);
    let ra = Strided { ld: lda };
    product(
        token,
        "gemm_nt_tap_planes",
        m,
        n,
        k,
        a,
        ra,
        planes,
        t,
        c,
        ldc,
    );
}

/// The bounds checks every product makes before its kernel runs.
#[allow(clippy::too_many_arguments)]
fn product<RA: Rows, RB: Rows>(
    token: Token,
    name: &str,
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    ra: RA,
    b: &[f32],
    rb: RB,
    c: &mut [f32],
    ldc: usize,
) {
    if m == 0 || n == 0 {
        return;
    }
    assert!(a.len() >= ra.extent(m, k), "{name}: A too short");
    assert!(b.len() >= rb.extent(n, k), "{name}: B too short");
    assert!(c.len() >= (m - 1) * ldc + n, "{name}: C too short");
    run_on(
        token,
        Gemm {
            m,
            n,
            k,
            a: Ptr::new(a.as_ptr(), a.len()),
            ra,
            b: Ptr::new(b.as_ptr(), b.len()),
            rb,
            c: Ptr::new(c.as_mut_ptr(), c.len()),
            ldc,
        },
    )
}

/// Where an operand's row i and its 16-element steps lie in its buffer.
trait Rows: Copy {
    /// Offset of row i's first element.
    fn row(&self, i: usize) -> usize;
    /// Offset, from a row's first element, of elements kk..kk + 16 (kk a
    /// multiple of 16); for a row of fewer than 16 left (the tail), of
    /// element kk.
    fn step(&self, kk: usize) -> usize;
    /// The buffer length that `rows` rows of length k need.
    fn extent(&self, rows: usize, k: usize) -> usize;
}

/// Rows `ld` apart, each contiguous.
#[derive(Clone, Copy)]
struct Strided {
    ld: usize,
}

impl Rows for Strided {
    #[inline(always)]
    fn row(&self, i: usize) -> usize {
        i * self.ld
    }
    #[inline(always)]
    fn step(&self, kk: usize) -> usize {
        kk
    }
    fn extent(&self, rows: usize, k: usize) -> usize {
        (rows - 1) * self.ld + k
    }
}

impl Rows for Taps3x3<'_> {
    #[inline(always)]
    fn row(&self, p: usize) -> usize {
        self.window(p)
    }
    #[inline(always)]
    fn step(&self, kk: usize) -> usize {
        self.step_at(kk)
    }
    fn extent(&self, rows: usize, k: usize) -> usize {
        assert!(
            rows <= self.positions() && k == self.k(),
            "Taps3x3: {rows} rows of {k}"
        );
        self.padded_len()
    }
}

impl Rows for TapPlanes {
    #[inline(always)]
    fn row(&self, j: usize) -> usize {
        let (tap, ci) = (j / self.c, j % self.c);
        let (ky, kx) = (tap / 3, tap % 3);
        ((kx * self.c + ci) * (self.h + 2) + ky) * self.w
    }
    #[inline(always)]
    fn step(&self, kk: usize) -> usize {
        kk
    }
    fn extent(&self, rows: usize, k: usize) -> usize {
        assert!(
            rows <= 9 * self.c && k == self.h * self.w,
            "TapPlanes: {rows} rows of {k}"
        );
        3 * self.c * (self.h + 2) * self.w
    }
}

/// The operands with their extents (every load and store is checked
/// against them in debug builds).
struct Gemm<RA, RB> {
    m: usize,
    n: usize,
    k: usize,
    a: Ptr<*const f32>,
    ra: RA,
    b: Ptr<*const f32>,
    rb: RB,
    c: Ptr<*mut f32>,
    ldc: usize,
}

impl<RA: Rows, RB: Rows> LaneFn for Gemm<RA, RB> {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        // SAFETY: the bounds were checked by gemm_nt_on; we are inside L's
        // path (run_on).
        unsafe {
            match L::N {
                16 => self.blocked::<L, 4, 4, 1, 0, 4>(),
                8 => self.blocked::<L, 3, 2, 2, 3, 6>(),
                4 => self.blocked::<L, 1, 2, 4, 0, 2>(),
                _ => self.blocked::<L, 1, 1, 16, 0, 1>(),
            }
        }
    }
}

/// Bytes of B's rows one column block may take: about half an L2, so that
/// the block stays there while every row of A passes over it (each output
/// is still one dot16; blocking only changes which outputs come first).
const NT_B_BLOCK_BYTES: usize = 256 * 1024;

impl<RA: Rows, RB: Rows> Gemm<RA, RB> {
    /// Column blocks of B sized for L2; in each, MR × NR tiles over the
    /// rows of A in groups of MR, then the rows left over: two rows as 2 ×
    /// NR2 tiles when NR2 > 0, single rows as 1 × NR1 tiles (wider tiles
    /// for the rows left over keep more fmas per load on a product of few
    /// rows, such as a recurrence step over eight lines: 3 + 3 + 2 rows).
    /// Which outputs share a tile never enters a sum: each is one dot16.
    #[inline(always)]
    unsafe fn blocked<
        L: Lanes,
        const MR: usize,
        const NR: usize,
        const Q: usize,
        const NR2: usize,
        const NR1: usize,
    >(
        &self,
    ) {
        debug_assert_eq!(Q * L::N, 16);
        let rows = (NT_B_BLOCK_BYTES / (4 * self.k.max(1))).max(NR) / NR * NR;
        let mut j0 = 0;
        while j0 < self.n {
            let j1 = self.n.min(j0 + rows);
            let mf = self.m / MR * MR;
            // SAFETY: rows 0..m and columns j0..j1 lie inside the checked
            // bounds.
            unsafe {
                let mut i = 0;
                while i < mf {
                    self.row_group::<L, MR, NR, Q>(i, j0, j1);
                    i += MR;
                }
                if NR2 > 0 && self.m - i >= 2 {
                    self.row_group::<L, 2, NR2, Q>(i, j0, j1);
                    i += 2;
                }
                while i < self.m {
                    self.row_group::<L, 1, NR1, Q>(i, j0, j1);
                    i += 1;
                }
            }
            j0 = j1;
        }
    }

    /// Rows i..i + R against columns j0..j1: R × C tiles, then R × 1.
    #[inline(always)]
    unsafe fn row_group<L: Lanes, const R: usize, const C: usize, const Q: usize>(
        &self,
        i: usize,
        j0: usize,
        j1: usize,
    ) {
        let nf = j0 + (j1 - j0) / C * C;
        // SAFETY: every tile lies inside the checked bounds.
        unsafe {
            let mut j = j0;
            while j < nf {
                self.tile::<L, R, C, Q>(i, j);
                j += C;
            }
            while j < j1 {
                self.tile::<L, R, 1, Q>(i, j);
                j += 1;
            }
        }
    }

    #[inline(always)]
    unsafe fn tile<L: Lanes, const MR: usize, const NR: usize, const Q: usize>(
        &self,
        i0: usize,
        j0: usize,
    ) {
        let k = self.k;
        let kf = k / 16 * 16;
        // SAFETY: rows i0..i0+MR of A and j0..j0+NR of B hold k elements
        // (checked by the caller); L's features are enabled.
        unsafe {
            let ra: [usize; MR] = std::array::from_fn(|i| self.ra.row(i0 + i));
            let rb: [usize; NR] = std::array::from_fn(|j| self.rb.row(j0 + j));
            let mut acc = [[[L::zero(); Q]; NR]; MR];
            let mut kk = 0;
            while kk < kf {
                let (sa, sb) = (self.ra.step(kk), self.rb.step(kk));
                for q in 0..Q {
                    let off = q * L::N;
                    let mut bv = [L::zero(); NR];
                    for (j, v) in bv.iter_mut().enumerate() {
                        *v = L::load(self.b.range(rb[j] + sb + off, L::N));
                    }
                    for (i, row) in acc.iter_mut().enumerate() {
                        let av = L::load(self.a.range(ra[i] + sa + off, L::N));
                        for j in 0..NR {
                            row[j][q] = av.fma(bv[j], row[j][q]);
                        }
                    }
                }
                kk += 16;
            }
            if kf < k {
                // The tail's terms go to partials 0..k − kf: loaded into
                // registers whose other lanes are zero (`load_first`, a
                // masked load on the AVX paths), multiplied and added by
                // the vector fma, and kept only in those lanes (select), so
                // every other partial is left exactly as the definition
                // leaves it.
                let tail = k - kf;
                let (sa, sb) = (self.ra.step(kf), self.rb.step(kf));
                let lanes = Ptr::new(LANE_INDEX.as_ptr(), 16);
                let limit = L::splat(tail as f32);
                for q in 0..Q {
                    let off = q * L::N;
                    let count = tail.saturating_sub(off).min(L::N);
                    if count == 0 {
                        break;
                    }
                    let keep = L::load(lanes.range(off, L::N)).lt(limit);
                    let mut bv = [L::zero(); NR];
                    for (j, v) in bv.iter_mut().enumerate() {
                        *v = L::load_first(self.b.range(rb[j] + sb + off, count), count);
                    }
                    for (i, row) in acc.iter_mut().enumerate() {
                        let av = L::load_first(self.a.range(ra[i] + sa + off, count), count);
                        for j in 0..NR {
                            row[j][q] = L::select(keep, av.fma(bv[j], row[j][q]), row[j][q]);
                        }
                    }
                }
            }
            // The tree levels that pair whole registers (partial r with
            // r + s where s ≥ N) are vector adds, and the last log2(N)
            // levels, inside each register, run for eight outputs at once
            // (Lanes::tree8).
            let mut regs = [L::zero(); 8];
            let mut n = 0;
            for row in acc.iter_mut() {
                for parts in row.iter_mut() {
                    let mut q = Q;
                    while q > 1 {
                        q /= 2;
                        for r in 0..q {
                            parts[r] = parts[r].add(parts[r + q]);
                        }
                    }
                    regs[n % 8] = parts[0];
                    n += 1;
                    if n % 8 == 0 || n == MR * NR {
                        let sums = L::tree8(regs);
                        let first = (n - 1) / 8 * 8;
                        for (t, &v) in sums[..n - first].iter().enumerate() {
                            let (i, j) = ((first + t) / NR, (first + t) % NR);
                            self.c.write((i0 + i) * self.ldc + j0 + j, v);
                        }
                    }
                }
            }
        }
    }
}

/// 0, 1, …, 15: lane l of register q holds partial q·N + l (the tail mask).
static LANE_INDEX: [f32; 16] = [
    0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::{available_paths, KernelPath};

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(crate::splitmix::GAMMA);
            crate::splitmix::mix(self.0)
        }
        fn value(&mut self) -> f32 {
            let r = self.next();
            match r % 50 {
                0 => f32::NAN,
                1 => f32::INFINITY,
                2 => f32::NEG_INFINITY,
                3 => f32::from_bits((r >> 40) as u32 & 0x807f_ffff), // subnormal or zero
                4 => -0.0,
                5 => f32::from_bits((r >> 32) as u32), // any bits
                _ => ((r >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 4.0,
            }
        }
    }

    /// `gemm_nt` over dense rows (lda = ldb = len, ldc = n) on `path`.
    fn dense(
        path: KernelPath,
        m: usize,
        n: usize,
        len: usize,
        a: &[f32],
        b: &[f32],
        c: &mut [f32],
    ) {
        gemm_nt(Token::new(path).unwrap(), m, n, len, a, len, b, len, c, n);
    }

    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn every_path_gives_the_scalar_bits() {
        let mut rng = Rng(7);
        // Lengths 0..100 (every tail), and two long enough (≥ 16384) that
        // B's rows are cut into column blocks of fewer than 7 rows.
        // m = 5, 7 and 8 leave 2, 1 and 2 rows after the groups of three.
        for (len, m) in (0..100)
            .map(|l| (l, 5 + 2 * (l % 2)))
            .chain([(16384, 8), (16393, 5)])
        {
            let n = 7;
            let a: Vec<f32> = (0..m * len).map(|_| rng.value()).collect();
            let b: Vec<f32> = (0..n * len).map(|_| rng.value()).collect();
            let want: Vec<f32> = (0..m * n)
                .map(|x| dot16_scalar(&a[x / n * len..][..len], &b[x % n * len..][..len]))
                .collect();
            for path in available_paths() {
                let mut c = vec![0f32; m * n];
                dense(path, m, n, len, &a, &b, &mut c);
                assert_same_bits(&c, &want, &format!("{path:?} len {len}"));
            }
        }
    }

    #[test]
    fn negative_zero_partials_keep_their_sign() {
        // Every product underflows to -0: the result is -0 on every path.
        let len = 37;
        let a = vec![-1e-30f32; len];
        let b = vec![1e-30f32; len];
        for path in available_paths() {
            let mut c = [1f32];
            dense(path, 1, 1, len, &a, &b, &mut c);
            assert_eq!(c[0].to_bits(), (-0.0f32).to_bits(), "{path:?}");
        }
        assert!(available_paths().contains(&KernelPath::Scalar));
    }

    /// A C one element shorter than the outputs: the debug extent refuses
    /// the second store (gemm_nt's own length checks are bypassed here).
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "outside an extent of 1")]
    fn a_store_past_c_trips_the_debug_extent() {
        let (a, b) = ([1f32; 2 * 16], [1f32; 16]);
        let mut c = [0f32; 2];
        let gemm = Gemm {
            m: 2,
            n: 1,
            k: 16,
            a: Ptr::new(a.as_ptr(), a.len()),
            ra: Strided { ld: 16 },
            b: Ptr::new(b.as_ptr(), b.len()),
            rb: Strided { ld: 16 },
            c: Ptr::new(c.as_mut_ptr(), 1),
            ldc: 1,
        };
        run_on(Token::new(KernelPath::Scalar).unwrap(), gemm);
    }

    /// A 3×3 block's geometry without pooling.
    fn geom(h: usize, w: usize, c: usize, o: usize) -> crate::recognizer::conv::Geom {
        crate::recognizer::conv::Geom {
            h,
            w,
            c,
            o,
            ph: 1,
            pw: 1,
        }
    }

    /// Every output of `got` has `want`'s bits (NaN: any NaN).
    fn assert_same_bits(got: &[f32], want: &[f32], what: &str) {
        assert_eq!(got.len(), want.len(), "{what}");
        for i in 0..want.len() {
            assert!(
                same(got[i], want[i]),
                "{what}, out {i}: {} vs {}",
                got[i],
                want[i]
            );
        }
    }

    /// The window rows read in place from the padded input give the bits
    /// of `gemm_nt` over the im2col matrix on every path, with the outputs
    /// along the rows (`gemm_nt_taps`) and on the lanes (`gemm_nn_taps`,
    /// the weight transposed): channel counts 16, 32, 48, images down to
    /// one row and one column, outputs that do not fill a tile, special
    /// values in the input.
    #[test]
    fn taps_give_the_im2col_products_bits() {
        use crate::recognizer::conv::im2col;
        use crate::recognizer::dot16_nn::gemm_nn_taps;
        let mut rng = Rng(19);
        for &(h, w, c, n) in &[
            (1, 1, 16, 3),
            (2, 3, 32, 5),
            (5, 7, 16, 9),
            (4, 9, 48, 4),
            (3, 16, 32, 17),
            (4, 5, 32, 40),
        ] {
            let g = geom(h, w, c, n);
            let x: Vec<f32> = (0..h * w * c).map(|_| rng.value()).collect();
            let (k, kp) = (g.k(), g.kp());
            assert_eq!(k, kp);
            let b: Vec<f32> = (0..n * k).map(|_| rng.value()).collect();
            let (mut col, mut xp, mut steps) = (Vec::new(), Vec::new(), Vec::new());
            im2col(&g, &x, &mut col);
            pad_input(&x, h, w, c, &mut xp);
            for path in available_paths() {
                let token = Token::new(path).unwrap();
                let mut want = vec![0f32; h * w * n];
                gemm_nt(token, h * w, n, k, &col, kp, &b, k, &mut want, n);
                let mut got = vec![7f32; h * w * n];
                let taps = Taps3x3::new(h, w, c, &mut steps);
                gemm_nt_taps(token, taps, &xp, n, &b, k, &mut got, n);
                assert_same_bits(&got, &want, &format!("{path:?} {h}×{w}×{c} → {n}"));
                let bt: Vec<f32> = (0..k * n).map(|i| b[(i % n) * k + i / n]).collect();
                let mut got = vec![7f32; h * w * n];
                gemm_nn_taps(token, taps, &xp, n, &bt, n, &mut got, n);
                assert_same_bits(&got, &want, &format!("nn {path:?} {h}×{w}×{c} → {n}"));
            }
        }
    }

    /// The one-channel kernel gives the bits of `gemm_nt` over the im2col
    /// rows on every path: channel counts below, at and across a register
    /// of every path, images down to one row and one column, special values
    /// among the pixels and the taps' weights, and finite padding weights
    /// of either sign (a padding term's fma is then +0 in both).
    #[test]
    fn one_channel_gives_the_im2col_products_bits() {
        use crate::recognizer::conv::im2col;
        let mut rng = Rng(29);
        for &(h, w, n) in &[
            (1, 1, 3),
            (2, 3, 8),
            (5, 7, 17),
            (4, 9, 32),
            (3, 16, 5),
            (32, 20, 33),
        ] {
            let g = geom(h, w, 1, n);
            let (k, kp) = (g.k(), g.kp());
            assert_eq!((k, kp), (9, 16));
            let x: Vec<f32> = (0..h * w).map(|_| rng.value()).collect();
            let mut b: Vec<f32> = (0..n * kp).map(|_| rng.value()).collect();
            for (i, v) in b.iter_mut().enumerate() {
                if i % kp >= k && !v.is_finite() {
                    *v = -0.5;
                }
            }
            assert!(padding_finite(&b, n, kp));
            let (mut col, mut xp) = (Vec::new(), Vec::new());
            im2col(&g, &x, &mut col);
            pad_input(&x, h, w, 1, &mut xp);
            for path in available_paths() {
                let token = Token::new(path).unwrap();
                let mut want = vec![0f32; h * w * n];
                gemm_nt(token, h * w, n, kp, &col, kp, &b, kp, &mut want, n);
                let mut got = vec![7f32; h * w * n];
                gemm_nt_one_channel(token, h, w, &xp, n, &b, kp, &mut got, n);
                assert_same_bits(&got, &want, &format!("{path:?} {h}×{w} → {n}"));
            }
            b[kp - 1] = f32::NAN;
            assert!(!padding_finite(&b, n, kp));
        }
    }

    /// A partial that rounds to −0 (a tiny negative product) meets the
    /// tree's +0 add in both kernels: the sum of a window whose only
    /// nonzero products underflow to −0 is +0, as the definition gives.
    #[test]
    fn one_channel_underflow_to_negative_zero() {
        let (h, w, n) = (1, 1, 1);
        let xp = [0.0, 0.0, 0.0, 0.0, -1e-30f32, 0.0, 0.0, 0.0, 0.0];
        let mut b = vec![0f32; 16];
        b[4] = 1e-30;
        let mut want = [0f32; 16];
        want[4] = -1e-30;
        let expect = dot16_scalar(&want, &b);
        assert_eq!(expect.to_bits(), 0f32.to_bits());
        for path in available_paths() {
            let mut got = [7f32];
            gemm_nt_one_channel(Token::new(path).unwrap(), h, w, &xp, n, &b, 16, &mut got, n);
            assert_eq!(got[0].to_bits(), expect.to_bits(), "{path:?}");
        }
    }

    /// The gather (`conv::gather`, channels on the lanes) gives, on every
    /// path, the bits of the scalar sum over the covering taps in tap
    /// order from +0: channel counts below, at and across two registers of
    /// every path, images down to one row and one column, special values.
    #[test]
    fn gather_gives_the_scalar_tap_sums() {
        let mut rng = Rng(31);
        for &(h, w, c) in &[
            (1, 1, 1),
            (2, 3, 5),
            (5, 7, 16),
            (4, 9, 32),
            (3, 2, 37),
            (6, 5, 64),
        ] {
            let g = geom(h, w, c, 1);
            let k = g.k();
            let dcol: Vec<f32> = (0..h * w * k).map(|_| rng.value()).collect();
            let mut want = vec![0f32; h * w * c];
            for iy in 0..h as isize {
                for ix in 0..w as isize {
                    for ch in 0..c {
                        let mut s = 0f32;
                        for ky in 0..3isize {
                            for kx in 0..3isize {
                                let (oy, ox) = (iy + 1 - ky, ix + 1 - kx);
                                if oy < 0 || oy >= h as isize || ox < 0 || ox >= w as isize {
                                    continue;
                                }
                                let row = (oy * w as isize + ox) as usize * k;
                                s += dcol[row + (ky * 3 + kx) as usize * c + ch];
                            }
                        }
                        want[(iy as usize * w + ix as usize) * c + ch] = s;
                    }
                }
            }
            for path in available_paths() {
                let token = Token::new(path).unwrap();
                let mut got = vec![7f32; h * w * c];
                crate::recognizer::conv::gather(token, &g, &dcol, h, 0..h, &mut got);
                assert_same_bits(&got, &want, &format!("{path:?} {h}×{w}×{c}"));
                // Row by row from a ring of three rows (as the backward
                // pass runs it): the ring is refilled before each row, with
                // the other slots poisoned, so a read of a row the ring
                // does not hold would show.
                let (held, row) = (h.min(3), w * k);
                let mut ring = vec![f32::NAN; held * row];
                let mut got = vec![7f32; h * w * c];
                for iy in 0..h {
                    ring.fill(f32::NAN);
                    for y in iy.saturating_sub(1)..(iy + 2).min(h) {
                        ring[(y % held) * row..][..row].copy_from_slice(&dcol[y * row..][..row]);
                    }
                    crate::recognizer::conv::gather(token, &g, &ring, held, iy..iy + 1, &mut got);
                }
                assert_same_bits(&got, &want, &format!("{path:?} {h}×{w}×{c}, ring"));
            }
        }
    }

    /// The transposed window rows read in place from the three shifted
    /// planar copies give the bits of `gemm_nt` over `im2col_t`'s matrix on
    /// every path: one and several channels, images down to one row and
    /// one column, outputs that do not fill a tile, positions with a tail,
    /// special values in both operands.
    #[test]
    fn tap_planes_give_the_transposed_windows_bits() {
        use crate::recognizer::conv::im2col_t;
        let mut rng = Rng(23);
        for &(h, w, c, m) in &[
            (1, 1, 1, 3),
            (2, 3, 2, 5),
            (5, 7, 1, 9),
            (4, 9, 3, 4),
            (3, 16, 16, 17),
            (8, 2, 5, 6),
        ] {
            let g = geom(h, w, c, m);
            let (p, k) = (h * w, g.k());
            let x: Vec<f32> = (0..p * c).map(|_| rng.value()).collect();
            let a: Vec<f32> = (0..m * p).map(|_| rng.value()).collect();
            let (mut planes, mut colt, mut shifted) = (Vec::new(), Vec::new(), Vec::new());
            for path in available_paths() {
                let token = Token::new(path).unwrap();
                im2col_t(token, &g, &x, &mut planes, &mut colt);
                let mut want = vec![0f32; m * k];
                gemm_nt(token, m, k, p, &a, p, &colt, p, &mut want, k);
                let t = TapPlanes::new(h, w, c);
                tap_planes(token, t, &x, &mut planes, &mut shifted);
                let mut got = vec![7f32; m * k];
                gemm_nt_tap_planes(token, m, &a, p, t, &shifted, &mut got, k);
                assert_same_bits(&got, &want, &format!("{path:?} {h}×{w}×{c}, {m} rows"));
            }
        }
    }

    #[test]
    fn rowsum_is_dot_with_ones() {
        let mut rng = Rng(3);
        for len in 0..100 {
            let a: Vec<f32> = (0..len).map(|_| rng.value()).collect();
            let ones = vec![1f32; len];
            assert!(same(rowsum16(&a), dot16_scalar(&a, &ones)));
        }
    }
}
