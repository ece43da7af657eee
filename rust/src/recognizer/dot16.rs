//! The 16-lane dot product (docs/recognizer.md, "The arithmetic contract")
//! and the products built from it.
//!
//! `p[0..16] = +0`; for k ascending `p[k % 16] = fma(a[k], b[k], p[k % 16])`;
//! then for s in 8, 4, 2, 1: `p[i] = p[i] + p[i + s]` for i < s; result p[0].
//!
//! The 16 partials map onto lanes (1×16 for avx512, 2×8 for avx2, 4×4 for
//! v128, 16 scalars for scalar). Each partial sees the same sequence of
//! correctly rounded fmas on every path, the elements of a trailing partial
//! chunk are added into the same partials by one vector fma whose result is
//! kept only in the tail's lanes (a select, so the other partials are
//! untouched), and the tree
//! always pairs the same partials in the same order (levels across whole
//! registers as vector adds, levels inside a register on stored scalars or,
//! eight outputs at once, by `Lanes::tree8`), so every path gives the
//! definition's bits. Products whose operand runs along the other axis are
//! given a transposed copy (`kernels::transpose`) rather than a second kernel.

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
    if m == 0 || n == 0 {
        return;
    }
    assert!(a.len() >= (m - 1) * lda + k, "gemm_nt: A too short");
    assert!(b.len() >= (n - 1) * ldb + k, "gemm_nt: B too short");
    assert!(c.len() >= (m - 1) * ldc + n, "gemm_nt: C too short");
    run_on(
        token,
        Gemm {
            m,
            n,
            k,
            a: Ptr::new(a.as_ptr(), a.len()),
            lda,
            b: Ptr::new(b.as_ptr(), b.len()),
            ldb,
            c: Ptr::new(c.as_mut_ptr(), c.len()),
            ldc,
        },
    )
}

/// The operands with their extents (every load and store is checked
/// against them in debug builds).
struct Gemm {
    m: usize,
    n: usize,
    k: usize,
    a: Ptr<*const f32>,
    lda: usize,
    b: Ptr<*const f32>,
    ldb: usize,
    c: Ptr<*mut f32>,
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

/// Bytes of B's rows one column block may take: about half an L2, so that
/// the block stays there while every row of A passes over it (each output
/// is still one dot16; blocking only changes which outputs come first).
const NT_B_BLOCK_BYTES: usize = 256 * 1024;

impl Gemm {
    /// Column blocks of B sized for L2; in each, full MR×NR tiles over all
    /// rows of A, then the edges with narrower tiles.
    #[inline(always)]
    unsafe fn blocked<L: Lanes, const MR: usize, const NR: usize, const Q: usize>(&self) {
        debug_assert_eq!(Q * L::N, 16);
        let rows = (NT_B_BLOCK_BYTES / (4 * self.k.max(1))).max(NR) / NR * NR;
        let mut j0 = 0;
        while j0 < self.n {
            let j1 = self.n.min(j0 + rows);
            // SAFETY: columns j0..j1 lie inside the checked bounds.
            unsafe { self.column_block::<L, MR, NR, Q>(j0, j1) };
            j0 = j1;
        }
    }

    #[inline(always)]
    unsafe fn column_block<L: Lanes, const MR: usize, const NR: usize, const Q: usize>(
        &self,
        j0: usize,
        j1: usize,
    ) {
        let mf = self.m / MR * MR;
        let nf = j0 + (j1 - j0) / NR * NR;
        // SAFETY: every tile lies inside the checked bounds.
        unsafe {
            let mut i = 0;
            while i < mf {
                let mut j = j0;
                while j < nf {
                    self.tile::<L, MR, NR, Q>(i, j);
                    j += NR;
                }
                while j < j1 {
                    self.tile::<L, MR, 1, Q>(i, j);
                    j += 1;
                }
                i += MR;
            }
            while i < self.m {
                let mut j = j0;
                while j < nf {
                    self.tile::<L, 1, NR, Q>(i, j);
                    j += NR;
                }
                while j < j1 {
                    self.tile::<L, 1, 1, Q>(i, j);
                    j += 1;
                }
                i += 1;
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
            let a = self.a.offset(i0 * self.lda);
            let b = self.b.offset(j0 * self.ldb);
            let mut acc = [[[L::zero(); Q]; NR]; MR];
            let mut kk = 0;
            while kk < kf {
                for q in 0..Q {
                    let off = kk + q * L::N;
                    let mut bv = [L::zero(); NR];
                    for (j, v) in bv.iter_mut().enumerate() {
                        *v = L::load(b.range(j * self.ldb + off, L::N));
                    }
                    for (i, row) in acc.iter_mut().enumerate() {
                        let av = L::load(a.range(i * self.lda + off, L::N));
                        for j in 0..NR {
                            row[j][q] = av.fma(bv[j], row[j][q]);
                        }
                    }
                }
                kk += 16;
            }
            if kf < k {
                // The tail's terms go to partials 0..k − kf: copied into
                // zero-padded rows, multiplied and added by the vector fma,
                // and kept only in those lanes (select), so every other
                // partial is left exactly as the definition leaves it.
                let tail = k - kf;
                let mut ta = [[0f32; 16]; MR];
                let mut tb = [[0f32; 16]; NR];
                for (i, row) in ta.iter_mut().enumerate() {
                    row[..tail].copy_from_slice(a.slice(i * self.lda + kf, tail));
                }
                for (j, row) in tb.iter_mut().enumerate() {
                    row[..tail].copy_from_slice(b.slice(j * self.ldb + kf, tail));
                }
                let lanes = Ptr::new(LANE_INDEX.as_ptr(), 16);
                let limit = L::splat(tail as f32);
                for q in 0..Q {
                    let keep = L::load(lanes.range(q * L::N, L::N)).lt(limit);
                    let mut bv = [L::zero(); NR];
                    for (j, v) in bv.iter_mut().enumerate() {
                        *v = L::load(Ptr::new(tb[j].as_ptr(), 16).range(q * L::N, L::N));
                    }
                    for (i, row) in acc.iter_mut().enumerate() {
                        let av = L::load(Ptr::new(ta[i].as_ptr(), 16).range(q * L::N, L::N));
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
        for len in (0..100).chain([16384, 16393]) {
            let (m, n) = (5, 7);
            let a: Vec<f32> = (0..m * len).map(|_| rng.value()).collect();
            let b: Vec<f32> = (0..n * len).map(|_| rng.value()).collect();
            let want: Vec<f32> = (0..m * n)
                .map(|x| dot16_scalar(&a[x / n * len..][..len], &b[x % n * len..][..len]))
                .collect();
            for path in available_paths() {
                let mut c = vec![0f32; m * n];
                dense(path, m, n, len, &a, &b, &mut c);
                for x in 0..m * n {
                    assert!(
                        same(c[x], want[x]),
                        "{path:?} len {len} out {x}: {} vs {}",
                        c[x],
                        want[x]
                    );
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
            lda: 16,
            b: Ptr::new(b.as_ptr(), b.len()),
            ldb: 16,
            c: Ptr::new(c.as_mut_ptr(), 1),
            ldc: 1,
        };
        run_on(Token::new(KernelPath::Scalar).unwrap(), gemm);
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
