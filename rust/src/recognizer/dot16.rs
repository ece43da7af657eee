//! The 16-lane dot product (seed 002, CONTRACT §2) and the products built
//! from it.
//!
//! `p[0..16] = +0`; for k ascending `p[k % 16] = fma(a[k], b[k], p[k % 16])`;
//! then for s in 8, 4, 2, 1: `p[i] = p[i] + p[i + s]` for i < s; result p[0].
//!
//! The 16 partials map onto lanes (1×16 for avx512, 2×8 for avx2, 4×4 for
//! v128, 16 scalars for scalar). Each partial sees the same sequence of
//! correctly rounded fmas on every path, the elements of a trailing partial
//! chunk are added by the scalar fma into the same partials, and the tree is
//! always the scalar one, so every path gives the definition's bits.

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
/// j < n, on the current kernel path, on the calling thread.
#[allow(clippy::too_many_arguments)]
pub fn gemm_nt(
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
    gemm_nt_on(Token::current(), m, n, k, a, lda, b, ldb, c, ldc)
}

/// [`gemm_nt`] on a given path.
#[allow(clippy::too_many_arguments)]
pub fn gemm_nt_on(
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
    if m == 0 || n == 0 {
        return;
    }
    assert!(a.len() >= (m - 1) * lda + k, "gemm_nt: A too short");
    assert!(b.len() >= (n - 1) * ldb + k, "gemm_nt: B too short");
    assert!(c.len() >= (m - 1) * ldc + n, "gemm_nt: C too short");
    run_on(
        token,
        Gemm { m, n, k, a: a.as_ptr(), lda, b: b.as_ptr(), ldb, c: c.as_mut_ptr(), ldc },
    )
}

struct Gemm {
    m: usize,
    n: usize,
    k: usize,
    a: *const f32,
    lda: usize,
    b: *const f32,
    ldb: usize,
    c: *mut f32,
    ldc: usize,
}

impl LaneFn for Gemm {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        // SAFETY: the bounds were checked by gemm_nt_on; we are inside L's
        // path (run_on).
        unsafe {
            match L::N {
                16 => self.blocked::<L, 4, 4, 1>(),
                8 => self.blocked::<L, 3, 2, 2>(),
                4 => self.blocked::<L, 1, 2, 4>(),
                _ => self.blocked::<L, 1, 1, 16>(),
            }
        }
    }
}

impl Gemm {
    /// Full MR×NR tiles, then the edges with narrower tiles.
    #[inline(always)]
    unsafe fn blocked<L: Lanes, const MR: usize, const NR: usize, const Q: usize>(&self) {
        debug_assert_eq!(Q * L::N, 16);
        let mf = self.m / MR * MR;
        let nf = self.n / NR * NR;
        // SAFETY: every tile lies inside the checked bounds.
        unsafe {
            let mut i = 0;
            while i < mf {
                let mut j = 0;
                while j < nf {
                    self.tile::<L, MR, NR, Q>(i, j);
                    j += NR;
                }
                while j < self.n {
                    self.tile::<L, MR, 1, Q>(i, j);
                    j += 1;
                }
                i += MR;
            }
            while i < self.m {
                let mut j = 0;
                while j < nf {
                    self.tile::<L, 1, NR, Q>(i, j);
                    j += NR;
                }
                while j < self.n {
                    self.tile::<L, 1, 1, Q>(i, j);
                    j += 1;
                }
                i += 1;
            }
        }
    }

    #[inline(always)]
    unsafe fn tile<L: Lanes, const MR: usize, const NR: usize, const Q: usize>(&self, i0: usize, j0: usize) {
        let k = self.k;
        let kf = k / 16 * 16;
        // SAFETY: rows i0..i0+MR of A and j0..j0+NR of B hold k elements
        // (checked by the caller); L's features are enabled.
        unsafe {
            let a = self.a.add(i0 * self.lda);
            let b = self.b.add(j0 * self.ldb);
            let mut acc = [[[L::zero(); Q]; NR]; MR];
            let mut kk = 0;
            while kk < kf {
                for q in 0..Q {
                    let off = kk + q * L::N;
                    let mut bv = [L::zero(); NR];
                    for (j, v) in bv.iter_mut().enumerate() {
                        *v = L::load(b.add(j * self.ldb + off));
                    }
                    for (i, row) in acc.iter_mut().enumerate() {
                        let av = L::load(a.add(i * self.lda + off));
                        for j in 0..NR {
                            row[j][q] = av.fma(bv[j], row[j][q]);
                        }
                    }
                }
                kk += 16;
            }
            if kf == k {
                // No tail: the tree levels that pair whole registers
                // (partial r with r + s where s ≥ N) are vector adds, and
                // only the last log2(N) levels run on the stored lanes.
                for (i, row) in acc.iter_mut().enumerate() {
                    for (j, parts) in row.iter_mut().enumerate() {
                        let mut q = Q;
                        while q > 1 {
                            q /= 2;
                            for r in 0..q {
                                parts[r] = parts[r].add(parts[r + q]);
                            }
                        }
                        let mut p = [0f32; 16];
                        parts[0].store(p.as_mut_ptr());
                        let mut s = L::N / 2;
                        while s > 0 {
                            for r in 0..s {
                                p[r] += p[r + s];
                            }
                            s /= 2;
                        }
                        *self.c.add((i0 + i) * self.ldc + j0 + j) = p[0];
                    }
                }
                return;
            }
            for (i, row) in acc.iter().enumerate() {
                for (j, parts) in row.iter().enumerate() {
                    let mut p = [0f32; 16];
                    for (q, v) in parts.iter().enumerate() {
                        v.store(p.as_mut_ptr().add(q * L::N));
                    }
                    let ar = a.add(i * self.lda);
                    let br = b.add(j * self.ldb);
                    for t in kf..k {
                        p[t - kf] = (*ar.add(t)).mul_add(*br.add(t), p[t - kf]);
                    }
                    *self.c.add((i0 + i) * self.ldc + j0 + j) = tree(&mut p);
                }
            }
        }
    }
}

/// `c[i*ldc + j] = dot16 over k of A(i, k) and B(k, j)` for i < m, j < n,
/// where `A(i, k) = a[i*a_rs + k*a_cs]` (any strides, a stride may be 0)
/// and `B(k, j) = b[k*ldb + j]` (rows contiguous along j), on the current
/// kernel path, on the calling thread.
///
/// The lanes run across outputs j, not across k: each of the 16 partials of
/// an output is its own chain of fmas over k ≡ r (mod 16), ascending, so the
/// partial sequences are exactly the definition's; the tree is then 15
/// vertical additions per tile, in the fixed pairing. Columns left over
/// after full vectors use the one-lane (f32) instantiation of the same code.
#[allow(clippy::too_many_arguments)]
pub fn gemm16(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    a_rs: usize,
    a_cs: usize,
    b: &[f32],
    ldb: usize,
    c: &mut [f32],
    ldc: usize,
) {
    gemm16_on(Token::current(), m, n, k, a, a_rs, a_cs, b, ldb, c, ldc)
}

/// [`gemm16`] on a given path.
#[allow(clippy::too_many_arguments)]
pub fn gemm16_on(
    token: Token,
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    a_rs: usize,
    a_cs: usize,
    b: &[f32],
    ldb: usize,
    c: &mut [f32],
    ldc: usize,
) {
    if m == 0 || n == 0 {
        return;
    }
    assert!(c.len() >= (m - 1) * ldc + n, "gemm16: C too short");
    if k == 0 {
        for i in 0..m {
            c[i * ldc..][..n].fill(0.0);
        }
        return;
    }
    assert!(a.len() > (m - 1) * a_rs + (k - 1) * a_cs, "gemm16: A too short");
    assert!(b.len() >= (k - 1) * ldb + n, "gemm16: B too short");
    run_on(
        token,
        G16 { m, n, k, a: a.as_ptr(), a_rs, a_cs, b: b.as_ptr(), ldb, c: c.as_mut_ptr(), ldc },
    )
}

struct G16 {
    m: usize,
    n: usize,
    k: usize,
    a: *const f32,
    a_rs: usize,
    a_cs: usize,
    b: *const f32,
    ldb: usize,
    c: *mut f32,
    ldc: usize,
}

impl LaneFn for G16 {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        // SAFETY: bounds checked by gemm16_on; inside L's path.
        unsafe {
            match L::N {
                16 => self.blocked::<L, 4, 1>(),
                8 => self.blocked::<L, 4, 1>(),
                4 => self.blocked::<L, 4, 1>(),
                _ => self.blocked::<L, 4, 4>(),
            }
        }
    }
}

impl G16 {
    /// Column blocks outer (a block of B stays in cache), row blocks inner.
    #[inline(always)]
    unsafe fn blocked<L: Lanes, const MR: usize, const NV: usize>(&self) {
        let w = NV * L::N;
        // SAFETY: every tile lies inside the checked bounds.
        unsafe {
            let mut j = 0;
            while j + w <= self.n {
                self.col_block::<L, MR, NV>(j);
                j += w;
            }
            while j + L::N <= self.n {
                self.col_block::<L, MR, 1>(j);
                j += L::N;
            }
            while j < self.n {
                self.col_block::<f32, MR, 1>(j);
                j += 1;
            }
        }
    }

    #[inline(always)]
    unsafe fn col_block<L: Lanes, const MR: usize, const NV: usize>(&self, j0: usize) {
        // SAFETY: rows stay below m.
        unsafe {
            let mut i = 0;
            while i + MR <= self.m {
                self.tile::<L, MR, NV>(i, j0);
                i += MR;
            }
            while i < self.m {
                self.tile::<L, 1, NV>(i, j0);
                i += 1;
            }
        }
    }

    /// One MR × NV·N tile of C. The 16 partials of every output are formed
    /// one at a time, in the order the tree consumes them (0, 8, 4, 12, 2,
    /// …: bit-reversed), and each tree level is added as soon as both of its
    /// operands exist — `p[r] + p[r + s]`, lower index first, exactly the
    /// definition's additions — so at most one partial per level is alive
    /// (no 16-partial array to zero, store and reload per tile).
    #[inline(always)]
    unsafe fn tile<L: Lanes, const MR: usize, const NV: usize>(&self, i0: usize, j0: usize) {
        // SAFETY: rows i0..i0+MR of A, columns j0..j0+NV·N of B and C are in
        // bounds (callers); L's features are enabled.
        unsafe {
            // No closures here: a closure is not compiled with the
            // trampoline's target features, and its intrinsics would become
            // calls.
            let all = add_tiles(self.oct::<L, MR, NV>(i0, j0, 0), self.oct::<L, MR, NV>(i0, j0, 1)); // s = 1
            for (i, row) in all.iter().enumerate() {
                for (v, x) in row.iter().enumerate() {
                    x.store(self.c.add((i0 + i) * self.ldc + j0 + v * L::N));
                }
            }
        }
    }

    /// Tree node `r` of level s = 2: quads r and r + 2.
    #[inline(always)]
    unsafe fn oct<L: Lanes, const MR: usize, const NV: usize>(&self, i0: usize, j0: usize, r: usize) -> [[L; NV]; MR] {
        // SAFETY: as for `tile`.
        unsafe { add_tiles(self.quad::<L, MR, NV>(i0, j0, r), self.quad::<L, MR, NV>(i0, j0, r + 2)) }
    }

    /// Tree node `r` of level s = 4: pairs r and r + 4.
    #[inline(always)]
    unsafe fn quad<L: Lanes, const MR: usize, const NV: usize>(&self, i0: usize, j0: usize, r: usize) -> [[L; NV]; MR] {
        // SAFETY: as for `tile`.
        unsafe { add_tiles(self.pair::<L, MR, NV>(i0, j0, r), self.pair::<L, MR, NV>(i0, j0, r + 4)) }
    }

    /// Tree node `r` of level s = 8: partials r and r + 8.
    #[inline(always)]
    unsafe fn pair<L: Lanes, const MR: usize, const NV: usize>(&self, i0: usize, j0: usize, r: usize) -> [[L; NV]; MR] {
        // SAFETY: as for `tile`.
        unsafe { add_tiles(self.partial::<L, MR, NV>(i0, j0, r), self.partial::<L, MR, NV>(i0, j0, r + 8)) }
    }

    /// Partial `r` of every output of the tile: the fma chain over
    /// k = r, r + 16, r + 32, … ascending, from +0 (+0 when r ≥ k).
    #[inline(always)]
    unsafe fn partial<L: Lanes, const MR: usize, const NV: usize>(&self, i0: usize, j0: usize, r: usize) -> [[L; NV]; MR] {
        let mut acc = [[L::zero(); NV]; MR];
        let mut kk = r;
        // SAFETY: as for `tile`; kk < k.
        unsafe {
            while kk < self.k {
                let brow = self.b.add(kk * self.ldb + j0);
                let mut bv = [L::zero(); NV];
                for (v, x) in bv.iter_mut().enumerate() {
                    *x = L::load(brow.add(v * L::N));
                }
                for (i, row) in acc.iter_mut().enumerate() {
                    let av = L::splat(*self.a.add((i0 + i) * self.a_rs + kk * self.a_cs));
                    for v in 0..NV {
                        row[v] = av.fma(bv[v], row[v]);
                    }
                }
                kk += 16;
            }
        }
        acc
    }
}

/// `x + y` element by element (one IEEE add per lane, x's operand first).
///
/// # Safety
/// Must run where `L`'s CPU features are enabled.
#[inline(always)]
unsafe fn add_tiles<L: Lanes, const MR: usize, const NV: usize>(mut x: [[L; NV]; MR], y: [[L; NV]; MR]) -> [[L; NV]; MR] {
    for (xr, yr) in x.iter_mut().zip(&y) {
        for (a, b) in xr.iter_mut().zip(yr) {
            // SAFETY: forwarded from the caller.
            *a = unsafe { a.add(*b) };
        }
    }
    x
}

/// `out[j][i] = x[i][j]` for an r×c row-major `x` (out is c×r).
pub fn transpose(x: &[f32], r: usize, c: usize, out: &mut [f32]) {
    transpose_ld(x, r, c, c, out)
}

/// `out[j][i] = x[i * ldx + j]` for i < r, j < c (out is c×r).
pub fn transpose_ld(x: &[f32], r: usize, c: usize, ldx: usize, out: &mut [f32]) {
    if r == 0 || c == 0 {
        return;
    }
    assert!(x.len() >= (r - 1) * ldx + c && out.len() >= r * c);
    const B: usize = 16;
    for i0 in (0..r).step_by(B) {
        for j0 in (0..c).step_by(B) {
            for i in i0..(i0 + B).min(r) {
                for j in j0..(j0 + B).min(c) {
                    out[j * r + i] = x[i * ldx + j];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::{available_paths, KernelPath};

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
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

    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn every_path_gives_the_scalar_bits() {
        let mut rng = Rng(7);
        for len in 0..100 {
            let (m, n) = (5, 7);
            let a: Vec<f32> = (0..m * len).map(|_| rng.value()).collect();
            let b: Vec<f32> = (0..n * len).map(|_| rng.value()).collect();
            let want: Vec<f32> = (0..m * n)
                .map(|x| dot16_scalar(&a[x / n * len..][..len], &b[x % n * len..][..len]))
                .collect();
            for path in available_paths() {
                let mut c = vec![0f32; m * n];
                gemm_nt_on(Token::new(path).unwrap(), m, n, len, &a, len, &b, len, &mut c, n);
                for x in 0..m * n {
                    assert!(same(c[x], want[x]), "{path:?} len {len} out {x}: {} vs {}", c[x], want[x]);
                }
            }
        }
    }

    #[test]
    fn gemm16_every_path_gives_the_scalar_bits() {
        let mut rng = Rng(11);
        for len in 0..100 {
            for (m, n) in [(1, 1), (5, 7), (6, 37), (9, 70)] {
                if len % 3 != 0 && m > 1 && n > 7 {
                    continue;
                }
                // A strided (transposed storage), B row-major k×n.
                let a: Vec<f32> = (0..m * len.max(1)).map(|_| rng.value()).collect();
                let b: Vec<f32> = (0..n * len.max(1)).map(|_| rng.value()).collect();
                let want: Vec<f32> = (0..m * n)
                    .map(|x| {
                        let (i, j) = (x / n, x % n);
                        let ai: Vec<f32> = (0..len).map(|t| a[t * m + i]).collect();
                        let bj: Vec<f32> = (0..len).map(|t| b[t * n + j]).collect();
                        dot16_scalar(&ai, &bj)
                    })
                    .collect();
                for path in available_paths() {
                    let mut c = vec![7f32; m * n];
                    gemm16_on(Token::new(path).unwrap(), m, n, len, &a, 1, m, &b, n, &mut c, n);
                    for x in 0..m * n {
                        assert!(same(c[x], want[x]), "{path:?} len {len} {m}x{n} out {x}: {} vs {}", c[x], want[x]);
                    }
                }
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
            gemm_nt_on(Token::new(path).unwrap(), 1, 1, len, &a, len, &b, len, &mut c, 1);
            assert_eq!(c[0].to_bits(), (-0.0f32).to_bits(), "{path:?}");
        }
        assert!(available_paths().contains(&KernelPath::Scalar));
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

