//! dot16 products whose second operand runs along the outputs:
//! `c[i][j] = dot16_k(A(i, k), B[k][j])`, with B stored `[k][n]` and A
//! given by its two strides — the outputs on the lanes.
//!
//! Each output's 16 partials are the definition's (`dot16`, module
//! [`super::dot16`]): partial r is the fma chain over the terms k ≡ r
//! (mod 16), k ascending, from +0, and the tree adds p[r] + p[r + s] for
//! r < s, s = 8, 4, 2, 1. Here one register holds partial r of N
//! neighbouring outputs (columns j .. j + N): the chain is a vertical fma
//! of A(i, k) broadcast with B's row k as it lies in memory, and the tree
//! is vertical adds of whole registers. No lane ever meets another, so
//! there is no shuffle and no horizontal step; a k that is not a multiple
//! of 16 only gives the first k mod 16 chains one more term (no mask).
//!
//! A tile of MR rows × NV registers runs the 16 chains one after the
//! other, each into MR·NV accumulators that are then stored to a block
//! of partials (the stack, in L1), and the tree reads them back. Per term
//! that is MR broadcasts and NV loads for MR·NV fmas, as in the GEMM's
//! fast tile; per output it adds two stores, two loads and two adds in
//! place of [`super::dot16::gemm_nt`]'s in-register tree, whose shuffles
//! share the fma pipes. For a short k — the convolution input gradient
//! (k = output channels), the LSTM weight gradients (k = time steps) —
//! that tree costs as much as the fmas, and this form is about a third
//! faster; for a long k `gemm_nt`'s contiguous rows win
//! (docs/performance.md, "2026-12-07, later") — except with many rows
//! and few columns, where a tile's panel of B stays in cache: the
//! convolution forward (`gemm_nn_taps`, its windows read in place) is
//! faster here ("2026-12-07, evening").

use super::dot16::Taps3x3;
use crate::ptr::Ptr;
use crate::simd::{run_on, LaneFn, Lanes, Token};

/// Rows of A per tile.
const MR: usize = 6;
/// Registers of B per tile row (columns: NV·N).
const NV: usize = 2;

/// `c[i*ldc + j] = dot16_k(a[i*a_rs + k*a_ks], b[k*ldb + j])` for i < m,
/// j < n, k < `k`, on `token`'s kernel path, on the calling thread. A
/// stride may be 0 (a broadcast operand: `a = [1.0]` with both strides 0
/// gives the column sums of B, dot16 with a row of ones).
#[allow(clippy::too_many_arguments)]
pub fn gemm_nn(
    token: Token,
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    a_rs: usize,
    a_ks: usize,
    b: &[f32],
    ldb: usize,
    c: &mut [f32],
    ldc: usize,
) {
    strided(token, m, n, k, a, a_rs, a_ks, b, ldb, c, ldc, false)
}

/// [`gemm_nn`] added to C: `c[i*ldc + j] = c[i*ldc + j] + dot16_k(…)`, one
/// rounded f32 addition with C's value as the first operand — the step
/// `acc = acc + g` of a sum over lines in line order, made as each tile of
/// g is done, so that g is never stored.
#[allow(clippy::too_many_arguments)]
pub fn gemm_nn_add(
    token: Token,
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    a_rs: usize,
    a_ks: usize,
    b: &[f32],
    ldb: usize,
    c: &mut [f32],
    ldc: usize,
) {
    strided(token, m, n, k, a, a_rs, a_ks, b, ldb, c, ldc, true)
}

#[allow(clippy::too_many_arguments)]
fn strided(
    token: Token,
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    a_rs: usize,
    a_ks: usize,
    b: &[f32],
    ldb: usize,
    c: &mut [f32],
    ldc: usize,
    add: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k > 0 {
        assert!(
            a.len() > (m - 1) * a_rs + (k - 1) * a_ks,
            "gemm_nn: A too short"
        );
        assert!(b.len() >= (k - 1) * ldb + n, "gemm_nn: B too short");
    }
    assert!(c.len() >= (m - 1) * ldc + n, "gemm_nn: C too short");
    let at = Strides { rs: a_rs, ks: a_ks };
    run(token, m, n, k, a, at, b, ldb, c, ldc, add);
}

/// `c[p*ldc + j] = dot16_k(window row p, b[k*ldb + j])` for the h·w
/// window rows of `taps` read in place from the padded input `xp`
/// (`dot16::pad_input`), j < n, k < 9c: the convolution forward with the
/// output channels on the lanes and B the weight transposed (`[9c][O]`).
/// The same terms in the same order as `dot16::gemm_nt_taps`, so the
/// same bits.
#[allow(clippy::too_many_arguments)]
pub fn gemm_nn_taps(
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
    if m == 0 || n == 0 {
        return;
    }
    assert!(xp.len() >= taps.padded_len(), "gemm_nn_taps: xp too short");
    assert!(b.len() >= (k - 1) * ldb + n, "gemm_nn_taps: B too short");
    assert!(c.len() >= (m - 1) * ldc + n, "gemm_nn_taps: C too short");
    run(token, m, n, k, xp, taps, b, ldb, c, ldc, false);
}

/// The kernel on `token`'s path, the bounds already checked.
#[allow(clippy::too_many_arguments)]
fn run<A: AIndex>(
    token: Token,
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    at: A,
    b: &[f32],
    ldb: usize,
    c: &mut [f32],
    ldc: usize,
    add: bool,
) {
    run_on(
        token,
        Nn {
            m,
            n,
            k,
            a: Ptr::new(a.as_ptr(), a.len()),
            at,
            b: Ptr::new(b.as_ptr(), b.len()),
            ldb,
            c: Ptr::new(c.as_mut_ptr(), c.len()),
            ldc,
            add,
        },
    )
}

/// Where A(i, k) lies: at `row(i) + col(k)`.
trait AIndex: Copy {
    fn row(&self, i: usize) -> usize;
    /// # Safety
    /// `k` is below the product's k (a table may be read unchecked).
    unsafe fn col(&self, k: usize) -> usize;
    /// `(row(i0), stride)` when rows i0..i0 + r are evenly spaced.
    fn linear(&self, i0: usize, r: usize) -> Option<(usize, usize)>;
}

/// A by its two strides.
#[derive(Clone, Copy)]
struct Strides {
    rs: usize,
    ks: usize,
}

impl AIndex for Strides {
    #[inline(always)]
    fn row(&self, i: usize) -> usize {
        i * self.rs
    }
    #[inline(always)]
    unsafe fn col(&self, k: usize) -> usize {
        k * self.ks
    }
    #[inline(always)]
    fn linear(&self, i0: usize, _r: usize) -> Option<(usize, usize)> {
        Some((i0 * self.rs, self.rs))
    }
}

/// The window rows of a 3×3 convolution, in place in the padded input:
/// row p starts at the window's first element, and tap k lies in the
/// 16-element step k/16 (contiguous within the step).
impl AIndex for Taps3x3<'_> {
    #[inline(always)]
    fn row(&self, p: usize) -> usize {
        self.window(p)
    }
    #[inline(always)]
    unsafe fn col(&self, k: usize) -> usize {
        // SAFETY: k < 9c by the caller's contract (gemm_nn_taps runs the
        // kernel with k = 9c), and the step table has 9c/16 entries.
        unsafe { self.step_at_unchecked(k & !15) + (k & 15) }
    }
    /// Positions in one image row are one window (c elements) apart.
    #[inline(always)]
    fn linear(&self, i0: usize, r: usize) -> Option<(usize, usize)> {
        (i0 % self.width() + r <= self.width()).then(|| (self.window(i0), self.channels()))
    }
}

/// The operands with their extents (every read and write is checked
/// against them in debug builds).
struct Nn<A> {
    m: usize,
    n: usize,
    k: usize,
    a: Ptr<*const f32>,
    at: A,
    b: Ptr<*const f32>,
    ldb: usize,
    c: Ptr<*mut f32>,
    ldc: usize,
    /// C = C + the product instead of C = the product.
    add: bool,
}

impl<A: AIndex> LaneFn for Nn<A> {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        // Columns in groups of NV registers, then one register, then the
        // last < N columns one at a time on scalar lanes (the same IEEE
        // operations per output, so the same bits).
        let nr = NV * L::N;
        let n2 = self.n / nr * nr;
        let n1 = n2 + (self.n - n2) / L::N * L::N;
        // SAFETY: the bounds were checked by gemm_nn; we are inside L's
        // path (run_on), whose features also cover the scalar lanes.
        unsafe {
            self.columns::<L, NV>(0, n2);
            self.columns::<L, 1>(n2, n1);
            self.columns::<f32, 1>(n1, self.n);
        }
    }
}

impl<A: AIndex> Nn<A> {
    /// Columns j0..j1 (a multiple of V·M::N wide) of every row: MR-row
    /// tiles, then one tile of the rows left over. Which outputs share a
    /// tile never enters a sum.
    #[inline(always)]
    unsafe fn columns<M: Lanes, const V: usize>(&self, j0: usize, j1: usize) {
        let w = V * M::N;
        let mut i = 0;
        // The block of partials, made once per call: zeroing it per tile
        // would be as many stores again as the tiles make.
        // SAFETY: zero() needs M's features, enabled by the caller.
        let mut parts = [[[unsafe { M::zero() }; V]; MR]; 16];
        // SAFETY (every tile): rows i.. and columns j.. of the tile lie
        // inside the checked bounds.
        unsafe {
            while i + MR <= self.m {
                let mut j = j0;
                while j < j1 {
                    self.tile::<M, MR, V>(i, j, &mut parts);
                    j += w;
                }
                i += MR;
            }
            let mut j = j0;
            while j < j1 {
                match self.m - i {
                    0 => {}
                    1 => self.tile::<M, 1, V>(i, j, &mut parts),
                    2 => self.tile::<M, 2, V>(i, j, &mut parts),
                    3 => self.tile::<M, 3, V>(i, j, &mut parts),
                    4 => self.tile::<M, 4, V>(i, j, &mut parts),
                    5 => self.tile::<M, 5, V>(i, j, &mut parts),
                    r => unreachable!("gemm_nn: {r} rows left over (MR = {MR})"),
                }
                j += w;
            }
        }
    }

    /// Rows i0..i0 + R, columns j0..j0 + V·M::N; `parts` is the block of
    /// partials (its first R rows used, every one written before it is read).
    #[inline(always)]
    unsafe fn tile<M: Lanes, const R: usize, const V: usize>(
        &self,
        i0: usize,
        j0: usize,
        parts: &mut [[[M; V]; MR]; 16],
    ) {
        // SAFETY: every element read is A(i, k) or B[k][j] for i, j inside
        // the tile and k < self.k, and every element written is C[i][j]
        // inside the tile (checked by gemm_nn); M's features are enabled.
        unsafe {
            // Rows evenly spaced (every strided A, and the window rows of a
            // tile inside one image row) are addressed from the first with
            // the stride, which keeps the general-purpose registers free;
            // otherwise from a table of the R row offsets.
            match self.at.linear(i0, R) {
                Some((first, stride)) => {
                    self.chains::<M, R, V, true>(j0, (first, stride), [0; R], parts)
                }
                None => {
                    let rows = core::array::from_fn(|i| self.at.row(i0 + i));
                    self.chains::<M, R, V, false>(j0, (0, 0), rows, parts);
                }
            }
            // The tree, partial r first in every add.
            for i in 0..R {
                for v in 0..V {
                    let mut t = [M::zero(); 8];
                    for r in 0..8 {
                        t[r] = parts[r][i][v].add(parts[r + 8][i][v]);
                    }
                    for s in [4, 2, 1] {
                        for r in 0..s {
                            t[r] = t[r].add(t[r + s]);
                        }
                    }
                    let out = self.c.range((i0 + i) * self.ldc + j0 + v * M::N, M::N);
                    if self.add {
                        t[0] = M::load(out.cast_const()).add(t[0]);
                    }
                    t[0].store(out);
                }
            }
        }
    }

    /// The 16 chains of a tile into `parts`: its rows start at
    /// `first + i·stride` when `LINEAR`, else at `rows[i]`.
    #[inline(always)]
    unsafe fn chains<M: Lanes, const R: usize, const V: usize, const LINEAR: bool>(
        &self,
        j0: usize,
        (first, stride): (usize, usize),
        rows: [usize; R],
        parts: &mut [[[M; V]; MR]; 16],
    ) {
        let (full, tail) = (self.k / 16, self.k % 16);
        // SAFETY: as in `tile`.
        unsafe {
            for (r, part) in parts.iter_mut().enumerate() {
                let mut acc = [[M::zero(); V]; R];
                let mut kk = r;
                for _ in 0..full + usize::from(r < tail) {
                    let brow = kk * self.ldb + j0;
                    let mut bv = [M::zero(); V];
                    for (v, x) in bv.iter_mut().enumerate() {
                        *x = M::load(self.b.range(brow + v * M::N, M::N));
                    }
                    let col = self.at.col(kk);
                    for (i, row) in acc.iter_mut().enumerate() {
                        let at = if LINEAR {
                            first + i * stride + col
                        } else {
                            rows[i] + col
                        };
                        let ai = M::splat(self.a.read(at));
                        for (x, &bx) in row.iter_mut().zip(bv.iter()) {
                            *x = ai.fma(bx, *x);
                        }
                    }
                    kk += 16;
                }
                part[..R].copy_from_slice(&acc);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::available_paths;
    use crate::recognizer::dot16::dot16_scalar;

    /// Values that exercise the rounding, the signed zeros, the specials
    /// and the subnormals (the same mix as dot16's tests).
    fn value(r: u64) -> f32 {
        let r = crate::splitmix::mix(r);
        match r % 50 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            3 => f32::from_bits((r >> 40) as u32 & 0x807f_ffff),
            4 => -0.0,
            5 => 0.0,
            _ => ((r >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 4.0,
        }
    }

    fn same(x: f32, y: f32) -> bool {
        x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
    }

    /// Every path against the definition, for A by rows and by columns,
    /// every k tail, row counts around MR and column counts around every
    /// path's register widths.
    #[test]
    fn every_path_gives_the_definitions_bits() {
        for (case, &(m, n, k)) in [
            (1, 1, 0),
            (7, 5, 1),
            (6, 16, 15),
            (13, 33, 16),
            (5, 47, 17),
            (12, 32, 64),
            (8, 50, 67),
            (3, 70, 96),
            (11, 129, 130),
        ]
        .iter()
        .enumerate()
        {
            for by_columns in [false, true] {
                let (a_rs, a_ks) = if by_columns { (1, m) } else { (k, 1) };
                let a: Vec<f32> = (0..(m * k).max(1))
                    .map(|i| value((case * 1000 + i) as u64))
                    .collect();
                let ldb = n + 3;
                let b: Vec<f32> = (0..(k * ldb).max(1))
                    .map(|i| value((case * 7777 + i + 1) as u64 * 31))
                    .collect();
                let want: Vec<f32> = (0..m * n)
                    .map(|o| {
                        let (i, j) = (o / n, o % n);
                        let ai: Vec<f32> = (0..k).map(|kk| a[i * a_rs + kk * a_ks]).collect();
                        let bj: Vec<f32> = (0..k).map(|kk| b[kk * ldb + j]).collect();
                        dot16_scalar(&ai, &bj)
                    })
                    .collect();
                for path in available_paths() {
                    let ldc = n + 1;
                    let mut c = vec![f32::from_bits(0x7fa0_0001); m * ldc];
                    gemm_nn(
                        Token::new(path).unwrap(),
                        m,
                        n,
                        k,
                        &a,
                        a_rs,
                        a_ks,
                        &b,
                        ldb,
                        &mut c,
                        ldc,
                    );
                    for o in 0..m * n {
                        let (i, j) = (o / n, o % n);
                        assert!(
                            same(c[i * ldc + j], want[o]),
                            "{} m={m} n={n} k={k} columns={by_columns} ({i}, {j}): {:e} against {:e}",
                            path.name(),
                            c[i * ldc + j],
                            want[o]
                        );
                    }
                    // The padding column of C is not written.
                    for i in 0..m {
                        assert_eq!(c[i * ldc + n].to_bits(), 0x7fa0_0001);
                    }
                }
            }
        }
    }

    /// `gemm_nn_add` is C's old value plus the definition's dot16, one
    /// rounded addition with C first; the columns of C outside the product
    /// keep their values.
    #[test]
    fn add_gives_c_plus_the_definition() {
        for (case, &(m, n, k)) in [(7, 5, 1), (13, 33, 16), (8, 50, 67), (11, 129, 64)]
            .iter()
            .enumerate()
        {
            let a: Vec<f32> = (0..m * k).map(|i| value((case * 313 + i) as u64)).collect();
            let b: Vec<f32> = (0..k * n)
                .map(|i| value((case * 919 + i) as u64 * 7))
                .collect();
            let ldc = n + 2;
            let c0: Vec<f32> = (0..m * ldc)
                .map(|i| value((case * 5003 + i) as u64 * 3))
                .collect();
            for path in available_paths() {
                let mut c = c0.clone();
                gemm_nn_add(
                    Token::new(path).unwrap(),
                    m,
                    n,
                    k,
                    &a,
                    1,
                    m,
                    &b,
                    n,
                    &mut c,
                    ldc,
                );
                for i in 0..m {
                    for j in 0..ldc {
                        let want = if j < n {
                            let ai: Vec<f32> = (0..k).map(|kk| a[kk * m + i]).collect();
                            let bj: Vec<f32> = (0..k).map(|kk| b[kk * n + j]).collect();
                            c0[i * ldc + j] + dot16_scalar(&ai, &bj)
                        } else {
                            c0[i * ldc + j]
                        };
                        assert!(
                            same(c[i * ldc + j], want),
                            "{} m={m} n={n} k={k} ({i}, {j}): {:e} against {:e}",
                            path.name(),
                            c[i * ldc + j],
                            want
                        );
                    }
                }
            }
        }
    }

    /// A product whose every term is ±0 keeps the definition's +0 (each
    /// partial starts at +0, so fma(−0·x, +0) is +0, and so is the tree).
    #[test]
    fn zero_terms_give_positive_zero() {
        let (m, n, k) = (7, 19, 35);
        let a = vec![-0.0f32; m * k];
        let b = vec![1.5f32; k * n];
        for path in available_paths() {
            let mut c = vec![f32::NAN; m * n];
            gemm_nn(
                Token::new(path).unwrap(),
                m,
                n,
                k,
                &a,
                k,
                1,
                &b,
                n,
                &mut c,
                n,
            );
            assert!(
                c.iter().all(|x| x.to_bits() == 0),
                "{}: {:?}",
                path.name(),
                &c[..4]
            );
        }
    }

    /// With A = [1.0] broadcast (both strides 0) the outputs are the
    /// column sums of B, as `rowsum16` gives them on the transposed rows.
    #[test]
    fn ones_give_rowsum16() {
        let (n, k) = (37, 70);
        let b: Vec<f32> = (0..k * n).map(|i| value(i as u64 + 5)).collect();
        for path in available_paths() {
            let mut c = vec![0f32; n];
            gemm_nn(
                Token::new(path).unwrap(),
                1,
                n,
                k,
                &[1.0],
                0,
                0,
                &b,
                n,
                &mut c,
                n,
            );
            for j in 0..n {
                let col: Vec<f32> = (0..k).map(|kk| b[kk * n + j]).collect();
                let want = crate::recognizer::dot16::rowsum16(&col);
                assert!(same(c[j], want), "{} column {j}", path.name());
            }
        }
    }

    #[test]
    #[should_panic(expected = "gemm_nn: B too short")]
    fn short_b_is_refused() {
        let mut c = vec![0f32; 4];
        gemm_nn(
            Token::current(),
            2,
            2,
            3,
            &[0.0; 6],
            3,
            1,
            &[0.0; 5],
            2,
            &mut c,
            2,
        );
    }
}
