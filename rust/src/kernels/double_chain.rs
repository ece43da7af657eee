//! The double sum (docs/engine.md, "Arithmetic rules") — `s ← s + x_k` for
//! k ascending, each term a double (an f32 widened exactly, or an f64 term
//! such as a square or a product of widened f32 values), one rounding per
//! term — evaluated a block of terms at a time, with the same bits. This
//! module is the one place the engine's double chains are written: the
//! blocked chain of one long run ([`add_terms`] over contiguous f32 terms,
//! [`add_iter`] over terms an iterator gives — strided
//! columns, squares, products), and the plain chains of many outputs side
//! by side ([`column_sums`]), where the CPU overlaps independent chains
//! already and blocking gains nothing.
//!
//! Written as a loop the chain waits out one f64 add latency per term (≈ 1 ms
//! per million terms). Most blocks of a real chain, though, are in one of two
//! states where the block's outcome can be computed in any order, and
//! the chain checks, per block of [`BLOCK`] terms, which one holds
//! (the checks are exact or carry a proven margin):
//!
//! 1. **No rounding at all.** Every term is a multiple of 2^g (g from its
//!    exponent field: an f32 or f64 with field F is a multiple of its format's
//!    smallest step at that field) and so is `s` (g from its lowest set bit).
//!    If `|s| + Σ|x| < 2^(53+g)`, every prefix of the chain is a multiple of
//!    2^g below 2^53·2^g, hence a double: each add is exact, and so is every
//!    other order. The block's result is `s + (Σ x in any order)`.
//! 2. **One binade.** With 2^e ≤ |s| < 2^(e+1), the doubles there are the
//!    multiples of G = 2^(e−52). While every prefix stays in that binade, an
//!    add rounds `s + x` to the nearest multiple of G, and as `s` is one,
//!    that is `s + round_G(x)` — unless `x` is a tie (exactly halfway between
//!    multiples of G: the even rule then depends on `s`, so such a block is
//!    not taken). The block's result is `s + G · Σ round(x/G)`, the integers
//!    summed exactly in any order. The binade test allows for the drift of
//!    the rounded prefixes (≤ G/2 per term). `x/G` is a product by a power
//!    of two, exact for every term whose quotient is at least 2^-1022 (a
//!    smaller one rounds to the integer 0 either way, and is no tie).
//!
//! Neither argument uses the format a term came from, only that it is a
//! double: f32 and f64 terms take the same routes by the same proofs
//! (`Block` is implemented for both).
//!
//! Any other block (a NaN or infinity, a tie, a prefix leaving the binade
//! while rounding) runs the plain chain. Which route a block takes changes
//! the time, never the result; the route is also the same on every kernel
//! path (the checks use fixed-order sums), so even the time does not depend
//! on the instruction set beyond the vector width.
//!
//! The per-term loops are plain Rust over eight f64 accumulators, compiled
//! inside [`run_on`]'s trampoline for the token's path so that the compiler
//! vectorises them with that path's instructions; they are exact (case 1 and
//! 2) or only feed the checks, so no reassociation question arises.

use crate::dispatch::KernelPath;
use crate::simd::{run_on, LaneFn, Lanes, Token};

/// Terms per block: large enough that the per-block checks cost little,
/// small enough that `Σ|x|` of a block rarely spoils the bounds.
pub const BLOCK: usize = 64;

/// `s` followed by `terms` through the double chain, compiled for `token`'s
/// path: bit for bit `terms.iter().fold(s, |a, &x| a + x as f64)`.
pub fn add_terms(token: Token, s: f64, terms: &[f32]) -> f64 {
    if terms.len() < BLOCK {
        return plain(s, terms);
    }
    run_on(token, Chain { s, terms })
}

/// `s` followed by the first `n` items of `terms` through the double chain,
/// compiled for `token`'s path: bit for bit
/// `terms.take(n).fold(s, |a, x| a + x.wide())`. The terms are gathered a
/// block at a time into a local array, so `terms` may walk a strided column
/// or runs of a tensor, or compute squares or products (`T` = f32 for a
/// widened value, f64 for a term computed in double).
#[inline]
pub fn add_iter<T: Term, I: Iterator<Item = T>>(token: Token, s: f64, n: usize, terms: I) -> f64
where
    [T; BLOCK]: Block,
{
    let terms = terms.take(n);
    if n < BLOCK {
        return terms.fold(s, |a, x| a + x.wide());
    }
    run_on(token, Mapped { s, terms })
}

/// The f64 column sums of a matrix, rows in increasing order from +0, each
/// rounded once: `out[c] = f32(Σ_r m[r·ld + c])` for c < `out.len()`, r <
/// `rows`. The plain chains side by side, row by row: with many columns the
/// CPU overlaps their adds (the loop is at the adds' throughput, not their
/// latency), so the blocked chain would only add its checks.
///
/// # Safety
/// `m` must be valid for reads at `r·ld + c` for every r < rows and
/// c < out.len().
pub unsafe fn column_sums(m: *const f32, rows: usize, ld: usize, out: &mut [f32]) {
    let mut acc = vec![0f64; out.len()];
    for r in 0..rows {
        // SAFETY: row r holds out.len() readable elements (the caller's
        // contract).
        let row = unsafe { std::slice::from_raw_parts(m.add(r * ld), out.len()) };
        for (a, &x) in acc.iter_mut().zip(row) {
            *a += x as f64;
        }
    }
    for (o, a) in out.iter_mut().zip(acc) {
        *o = a as f32;
    }
}

/// A term of the chain: a double, or an f32 widened exactly.
pub trait Term: Copy + Default {
    fn wide(self) -> f64;
}

impl Term for f32 {
    #[inline(always)]
    fn wide(self) -> f64 {
        self as f64
    }
}

impl Term for f64 {
    #[inline(always)]
    fn wide(self) -> f64 {
        self
    }
}

struct Chain<'a> {
    s: f64,
    terms: &'a [f32],
}

impl LaneFn for Chain<'_> {
    type Output = f64;
    #[inline(always)]
    fn run<L: Lanes>(self) -> f64 {
        let mut s = self.s;
        let mut blocks = self.terms.chunks_exact(BLOCK);
        for b in blocks.by_ref() {
            let b: &[f32; BLOCK] = b.try_into().expect("a block");
            s = routed::<L, _>(s, b).0;
        }
        plain(s, blocks.remainder())
    }
}

struct Mapped<I> {
    s: f64,
    terms: I,
}

impl<T: Term, I: Iterator<Item = T>> LaneFn for Mapped<I>
where
    [T; BLOCK]: Block,
{
    type Output = f64;
    #[inline(always)]
    fn run<L: Lanes>(mut self) -> f64 {
        let mut s = self.s;
        let mut buf = [T::default(); BLOCK];
        loop {
            let mut k = 0;
            for (b, x) in buf.iter_mut().zip(self.terms.by_ref()) {
                *b = x;
                k += 1;
            }
            if k < BLOCK {
                return plain(s, &buf[..k]);
            }
            s = routed::<L, _>(s, &buf).0;
        }
    }
}

/// The chain written out: one f64 add per term.
#[inline(always)]
fn plain<T: Term>(s: f64, terms: &[T]) -> f64 {
    terms.iter().fold(s, |a, &x| a + x.wide())
}

/// A block of terms and the two passes the fast routes need over it
/// (implemented for blocks of f32 and of f64 terms).
pub trait Block {
    /// Pass 1: Σx and Σ|x| in eight accumulators (term i into accumulator
    /// i mod 8), and the exponent g of a power of two every nonzero term
    /// is a multiple of (None when every term is ±0).
    fn scan<L: Lanes>(&self) -> ([f64; W], [f64; W], Option<i32>);
    /// Pass 2 of case 2: Σ round(x·inv) in eight accumulators (as in
    /// `scan`), and whether any x·inv was a tie (fraction exactly ½).
    fn round_to_grid<L: Lanes>(&self, inv: f64) -> ([f64; W], bool);
    /// The chain written out.
    fn plain(&self, s: f64) -> f64;
}

impl Block for [f32; BLOCK] {
    #[inline(always)]
    fn scan<L: Lanes>(&self) -> ([f64; W], [f64; W], Option<i32>) {
        let (sum, abs, field) = scan_f32::<L>(self);
        // An f32 with exponent field F ≥ 1 is a multiple of 2^(F − 150) (a
        // subnormal counts as field 1: its bits are multiples of 2^-149).
        (sum, abs, (field != 255).then(|| field as i32 - 150))
    }
    #[inline(always)]
    fn round_to_grid<L: Lanes>(&self, inv: f64) -> ([f64; W], bool) {
        round_to_grid_f32::<L>(self, inv)
    }
    #[inline(always)]
    fn plain(&self, s: f64) -> f64 {
        plain(s, &self[..])
    }
}

impl Block for [f64; BLOCK] {
    #[inline(always)]
    fn scan<L: Lanes>(&self) -> ([f64; W], [f64; W], Option<i32>) {
        let mut sum = [0f64; W];
        let mut abs = [0f64; W];
        let mut field = [u64::MAX; W];
        for c in self.chunks_exact(W) {
            for j in 0..W {
                sum[j] += c[j];
                abs[j] += c[j].abs();
                let b = c[j].to_bits() & !(1u64 << 63);
                let f = if b == 0 { u64::MAX } else { (b >> 52).max(1) };
                field[j] = field[j].min(f);
            }
        }
        let field = field.into_iter().min().unwrap_or(u64::MAX);
        // A double with exponent field F ≥ 1 is a multiple of 2^(F − 1075)
        // (subnormals: field 1, multiples of 2^-1074).
        (sum, abs, (field != u64::MAX).then(|| field as i32 - 1075))
    }
    #[inline(always)]
    fn round_to_grid<L: Lanes>(&self, inv: f64) -> ([f64; W], bool) {
        let mut ints = [0f64; W];
        let mut tie = false;
        for c in self.chunks_exact(W) {
            for j in 0..W {
                let q = c[j] * inv;
                let r = (q + MAGIC) - MAGIC;
                tie |= (q - r).abs() == 0.5;
                ints[j] += r;
            }
        }
        (ints, tie)
    }
    #[inline(always)]
    fn plain(&self, s: f64) -> f64 {
        plain(s, &self[..])
    }
}

/// Lanes of the block loops (accumulators side by side).
const W: usize = 8;

/// The pairwise tree over the eight accumulators (a fixed order).
#[inline(always)]
fn tree(v: [f64; W]) -> f64 {
    ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]))
}

/// 2^k as a double, for k in the normal range.
#[inline(always)]
fn pow2(k: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&k));
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// Exponent of the lowest set bit of a nonzero finite double.
#[inline(always)]
fn lowest_bit(s: f64) -> i32 {
    let bits = s.to_bits() & !(1u64 << 63);
    let field = (bits >> 52) as i32;
    let mantissa = bits & ((1u64 << 52) - 1);
    if field == 0 {
        mantissa.trailing_zeros() as i32 - 1074
    } else {
        (mantissa | (1u64 << 52)).trailing_zeros() as i32 + field - 1075
    }
}

/// 1.5 · 2^52: `(q + MAGIC) - MAGIC` is q rounded to an integer, ties to
/// even, for |q| ≤ 2^51.
const MAGIC: f64 = 6755399441055744.0;

/// Pass 1 over a block of f32 terms: Σx and Σ|x| in eight accumulators
/// (term i into accumulator i mod 8), and the smallest exponent field of a
/// nonzero term, a subnormal counting as field 1 (its bits are multiples of
/// 2^-149), 255 when every term is ±0.
#[inline(always)]
fn scan_f32<L: Lanes>(x: &[f32; BLOCK]) -> ([f64; W], [f64; W], u32) {
    #[cfg(target_arch = "x86_64")]
    if matches!(L::PATH, KernelPath::Avx2 | KernelPath::Avx512) {
        // SAFETY: L's path has AVX2, and this runs inside its trampoline.
        return unsafe { avx2::scan(x) };
    }
    let mut sum = [0f64; W];
    let mut abs = [0f64; W];
    let mut field = [255u32; W];
    for c in x.chunks_exact(W) {
        for j in 0..W {
            let d = c[j] as f64;
            sum[j] += d;
            abs[j] += d.abs();
            let b = c[j].to_bits() & 0x7FFF_FFFF;
            let f = if b == 0 { 255 } else { (b >> 23).max(1) };
            field[j] = field[j].min(f);
        }
    }
    (sum, abs, field.into_iter().min().unwrap_or(255))
}

/// Pass 2 of case 2 over f32 terms: Σ round(x·inv) in eight accumulators
/// (as in [`scan_f32`]), and whether any x·inv was a tie (fraction exactly ½).
#[inline(always)]
fn round_to_grid_f32<L: Lanes>(x: &[f32; BLOCK], inv: f64) -> ([f64; W], bool) {
    #[cfg(target_arch = "x86_64")]
    if matches!(L::PATH, KernelPath::Avx2 | KernelPath::Avx512) {
        // SAFETY: as in `scan_f32`.
        return unsafe { avx2::round_to_grid(x, inv) };
    }
    let mut ints = [0f64; W];
    let mut tie = false;
    for c in x.chunks_exact(W) {
        for j in 0..W {
            let q = c[j] as f64 * inv;
            let r = (q + MAGIC) - MAGIC;
            tie |= (q - r).abs() == 0.5;
            ints[j] += r;
        }
    }
    (ints, tie)
}

/// The two passes with AVX2 (four f64 lanes: accumulators 0–3 take the
/// low half of each 8-term group, 4–7 the high half, as the portable loops
/// do, so the sums — and hence the routes — are the same on every path).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{BLOCK, MAGIC, W};
    use std::arch::x86_64::*;

    /// # Safety
    /// The CPU must have AVX2 and the caller must run with it enabled.
    #[inline(always)]
    pub(super) unsafe fn scan(x: &[f32; BLOCK]) -> ([f64; W], [f64; W], u32) {
        // SAFETY: every load reads 8 of the block's 64 floats; the stores
        // write the local arrays.
        unsafe {
            let sign = _mm256_set1_epi32(0x7FFF_FFFF);
            let sign_d = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFF_FFFF_FFFF_FFFF));
            let (one, top) = (_mm256_set1_epi32(1), _mm256_set1_epi32(255));
            let (mut s0, mut s1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
            let (mut a0, mut a1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
            let mut field = top;
            for i in (0..BLOCK).step_by(W) {
                let v = _mm256_loadu_ps(x.as_ptr().add(i));
                let bits = _mm256_and_si256(_mm256_castps_si256(v), sign);
                let f = _mm256_max_epu32(_mm256_srli_epi32::<23>(bits), one);
                let zero = _mm256_cmpeq_epi32(bits, _mm256_setzero_si256());
                field = _mm256_min_epu32(field, _mm256_blendv_epi8(f, top, zero));
                let lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
                let hi = _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v));
                s0 = _mm256_add_pd(s0, lo);
                s1 = _mm256_add_pd(s1, hi);
                a0 = _mm256_add_pd(a0, _mm256_and_pd(lo, sign_d));
                a1 = _mm256_add_pd(a1, _mm256_and_pd(hi, sign_d));
            }
            let (mut sum, mut abs, mut fields) = ([0f64; W], [0f64; W], [0u32; W]);
            _mm256_storeu_pd(sum.as_mut_ptr(), s0);
            _mm256_storeu_pd(sum.as_mut_ptr().add(4), s1);
            _mm256_storeu_pd(abs.as_mut_ptr(), a0);
            _mm256_storeu_pd(abs.as_mut_ptr().add(4), a1);
            _mm256_storeu_si256(fields.as_mut_ptr() as *mut __m256i, field);
            (sum, abs, fields.into_iter().min().unwrap_or(255))
        }
    }

    /// # Safety
    /// As [`scan`].
    #[inline(always)]
    pub(super) unsafe fn round_to_grid(x: &[f32; BLOCK], inv: f64) -> ([f64; W], bool) {
        // SAFETY: as in `scan`.
        unsafe {
            let (inv, magic) = (_mm256_set1_pd(inv), _mm256_set1_pd(MAGIC));
            let (half, sign_d) = (
                _mm256_set1_pd(0.5),
                _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFF_FFFF_FFFF_FFFF)),
            );
            let (mut r0, mut r1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
            let mut tie = _mm256_setzero_pd();
            for i in (0..BLOCK).step_by(W) {
                let v = _mm256_loadu_ps(x.as_ptr().add(i));
                let q0 = _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), inv);
                let q1 = _mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v)), inv);
                let n0 = _mm256_sub_pd(_mm256_add_pd(q0, magic), magic);
                let n1 = _mm256_sub_pd(_mm256_add_pd(q1, magic), magic);
                let d0 = _mm256_and_pd(_mm256_sub_pd(q0, n0), sign_d);
                let d1 = _mm256_and_pd(_mm256_sub_pd(q1, n1), sign_d);
                tie = _mm256_or_pd(tie, _mm256_cmp_pd::<_CMP_EQ_OQ>(d0, half));
                tie = _mm256_or_pd(tie, _mm256_cmp_pd::<_CMP_EQ_OQ>(d1, half));
                r0 = _mm256_add_pd(r0, n0);
                r1 = _mm256_add_pd(r1, n1);
            }
            let mut ints = [0f64; W];
            _mm256_storeu_pd(ints.as_mut_ptr(), r0);
            _mm256_storeu_pd(ints.as_mut_ptr().add(4), r1);
            (ints, _mm256_movemask_pd(tie) != 0)
        }
    }
}

/// Which way a block went (the tests count them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    Exact,
    Binade,
    Plain,
}

/// One block of the chain, and the route it took (see the module comment).
#[inline(always)]
fn routed<L: Lanes, B: Block>(s: f64, x: &B) -> (f64, Route) {
    // Pass 1: Σx, Σ|x| and the grid every nonzero term lies on.
    let (sum, abs, grid) = x.scan::<L>();
    // Each partial sum of Σ|x| was rounded by at most 2^-53 relative, 64
    // times at most; the factor covers that, so `a` bounds the true Σ|x|.
    let a = tree(abs) * (1.0 + 1.0 / (1u64 << 40) as f64);
    let grid = match grid {
        Some(g) if a.is_finite() && s.is_finite() => g,
        // A NaN or infinity, or only zeros (whose signs follow the chain's
        // own rules): the plain chain.
        _ => return (x.plain(s), Route::Plain),
    };
    // Case 1. Terms and s are multiples of 2^g, g ≥ -1074; as g ≤ 971 (the
    // largest f64 exponent field less 1075, and for f32 terms ≤ 104),
    // 2^(52+g) is a normal double. The computed |s| + a is within a factor
    // (1 + 2^-52) of the true bound, so comparing with half the limit,
    // 2^(52+g), is safe.
    let g = if s == 0.0 {
        grid
    } else {
        grid.min(lowest_bit(s))
    };
    if s.abs() + a < pow2(52 + g) {
        // Every partial sum of any order is a multiple of 2^g below 2^(53+g):
        // exact.
        return (s + tree(sum), Route::Exact);
    }
    // Case 2: one binade of s, 2^e ≤ |s| < 2^(e+1), doubles spaced G apart.
    let e = ((s.to_bits() >> 52) & 0x7FF) as i32 - 1023;
    if s != 0.0 && (-900..=1000).contains(&e) {
        let g = pow2(e - 52);
        // Drift of the rounded prefixes (≤ G/2 per term) and the rounding of
        // these comparisons, with room to spare.
        let reach = a + (BLOCK as f64 + 8.0) * g;
        let m = s.abs();
        if m - reach >= pow2(e) && m + reach < pow2(e + 1) && a < pow2(e - 2) {
            // |x/G| ≤ a/G < 2^50: adding and subtracting 1.5·2^52 rounds to
            // the nearest integer (ties to even), and x/G − that is exact.
            let inv = pow2(52 - e);
            let (ints, tie) = x.round_to_grid::<L>(inv);
            if !tie {
                // Σ|r| ≤ a/G + 32 < 2^51: exact in any order; the product by
                // G and the final add (the chain's last prefix) are exact.
                return (s + tree(ints) * g, Route::Binade);
            }
        }
    }
    (x.plain(s), Route::Plain)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::available_paths;

    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// Terms drawn to reach every route: normal-like values around a mean,
    /// tiny and huge magnitudes, exact small integers, halves (ties), ±0,
    /// subnormals, and rarely an infinity or NaN.
    fn terms(n: usize, seed: u64, mean: f32, specials: bool) -> Vec<f32> {
        let mut st = seed | 1;
        (0..n)
            .map(|_| {
                let r = xorshift(&mut st);
                let u = (r >> 11) as f64 / (1u64 << 53) as f64;
                let kind = r % 97;
                let v = (u as f32 - 0.5) * 4.0 + mean;
                match kind {
                    0 if specials => f32::from_bits(1 + (r >> 40) as u32 % 1000),
                    1 if specials => -0.0,
                    2 => 0.0,
                    3 => v * 1e-9,
                    4 => v * 1e7,
                    5 => ((r >> 20) % 64) as f32 * 0.5,
                    6 if specials && r % 7 == 0 => f32::INFINITY,
                    7 if specials && r % 11 == 0 => f32::NAN,
                    8..=20 => ((r >> 30) % 1000) as f32,
                    _ => v,
                }
            })
            .collect()
    }

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn equals_the_plain_chain_on_every_path() {
        let mut cases = Vec::new();
        for seed in 1..40u64 {
            for &(mean, specials) in &[(0.0, false), (1.0, false), (-3.0, true), (1e4, false)] {
                let n = 64 * (seed as usize % 9) + (seed as usize * 7) % 64;
                cases.push((0.0f64, terms(n.max(1), seed, mean, specials)));
            }
        }
        // A start far from 0 (a chain carried over from earlier runs), and
        // one that is already huge or subnormal.
        cases.push((1e15, terms(4096, 5, 0.3, false)));
        cases.push((-7.5e-310, terms(640, 6, 0.0, false)));
        cases.push((-0.0, vec![-0.0; 130]));
        cases.push((0.0, vec![-0.0; 130]));
        for path in available_paths() {
            let token = Token::new(path).unwrap();
            for (s, x) in &cases {
                let want = plain(*s, x);
                let got = add_terms(token, *s, x);
                assert!(
                    same(got, want),
                    "{path:?}: {got:e} vs {want:e}, n {}",
                    x.len()
                );
            }
        }
    }

    /// The two fast routes are taken (the test above would pass with
    /// neither): a mean-free chain of moderate terms is mostly exact; a
    /// chain of uniform [0, 1) terms grows until its adds round, and then
    /// mostly stays within one binade per block.
    #[test]
    fn both_fast_routes_are_taken() {
        for (shift, want, share) in [(0.5f32, Route::Exact, 0.8), (0.0, Route::Binade, 0.3)] {
            let mut st = 99u64;
            let x: Vec<f32> = (0..1 << 18)
                .map(|_| ((xorshift(&mut st) >> 11) as f64 / (1u64 << 53) as f64) as f32 - shift)
                .collect();
            let (mut s, mut hits) = (0.0, 0);
            for b in x.chunks_exact(BLOCK) {
                let b: &[f32; BLOCK] = b.try_into().unwrap();
                let (next, route) = routed::<f32, _>(s, b);
                assert!(same(next, plain(s, b)));
                hits += (route == want) as usize;
                s = next;
            }
            let blocks = x.len() / BLOCK;
            assert!(
                hits as f64 > share * blocks as f64,
                "{want:?}: {hits} of {blocks}"
            );
            // Every path takes the same routes (its sums are the same).
            let portable = run_on(Token::new(KernelPath::Scalar).unwrap(), Routes(&x));
            for path in available_paths() {
                assert_eq!(
                    run_on(Token::new(path).unwrap(), Routes(&x)),
                    portable,
                    "{path:?}"
                );
            }
        }
    }

    /// The route of every block of a chain, on the path `run_on` picks.
    struct Routes<'a>(&'a [f32]);

    impl LaneFn for Routes<'_> {
        type Output = Vec<Route>;
        #[inline(always)]
        fn run<L: Lanes>(self) -> Vec<Route> {
            let mut s = 0.0;
            self.0
                .chunks_exact(BLOCK)
                .map(|b| {
                    let b: &[f32; BLOCK] = b.try_into().unwrap();
                    let (next, route) = routed::<L, _>(s, b);
                    s = next;
                    route
                })
                .collect()
        }
    }

    /// Hand-built blocks at the edges of the two bounds, where taking a
    /// fast route wrongly would change the result.
    #[test]
    fn bounds_hold_at_their_edges() {
        let g0 = f64::EPSILON; // G for the binade [1, 2)
        let cases: Vec<(f64, Vec<f32>)> = vec![
            // Case 1 with s's own lowest bit: 1 + 2^-52, then +1, -1, ...: the
            // chain drops the last bit at the first add (a tie at 2), the
            // exact sum keeps it.
            (
                1.0 + g0,
                (0..64)
                    .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
                    .collect(),
            ),
            // Case 1's limit: 2^53 - 1 plus 64 ones stops at 2^53.
            (9007199254740991.0, vec![1.0; 64]),
            // Case 2's drift: from 2^e + 50G, 64 terms of -0.6G round to -G
            // each, so the chain leaves the binade although the exact sum
            // (-38.4G) stays inside it.
            (2.0 + 50.0 * 2.0 * g0, vec![(-0.6 * 2.0 * g0) as f32; 64]),
            // The same at the top of the binade.
            (4.0 - 50.0 * 2.0 * g0, vec![(0.6 * 2.0 * g0) as f32; 64]),
        ];
        for (s, x) in &cases {
            let want = plain(*s, x);
            assert_ne!(
                want,
                *s + x.iter().map(|&v| v as f64).sum::<f64>(),
                "case {s:e} tests nothing"
            );
            for path in available_paths() {
                let got = add_terms(Token::new(path).unwrap(), *s, x);
                assert!(same(got, want), "{path:?} from {s:e}: {got:e} vs {want:e}");
            }
        }
    }

    /// f64 terms: squares and products of widened f32 values (the norms'
    /// and the normalizations' terms) and general doubles of mixed
    /// magnitude, with specials; and f32 terms read down a strided column.
    /// Each equals the chain written out independently (a fold over the
    /// terms materialized first), on every path.
    #[test]
    fn mapped_terms_equal_the_plain_chain_on_every_path() {
        for seed in 1..30u64 {
            let n = 64 * (seed as usize % 7) + (seed as usize * 13) % 64;
            let n = n.max(1);
            let x = terms(n, seed, [0.0, 1.0, -3.0][seed as usize % 3], seed % 4 == 0);
            let y = terms(n, seed + 100, 0.5, false);
            let squares: Vec<f64> = x.iter().map(|&v| v as f64 * v as f64).collect();
            let products: Vec<f64> = x
                .iter()
                .zip(&y)
                .map(|(&a, &b)| a as f64 * b as f64)
                .collect();
            // Doubles that are not products of f32 values: full 53-bit
            // mantissas, deviations from a mean.
            let mean = x.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
            let devs: Vec<f64> = x
                .iter()
                .map(|&v| (v as f64 - mean) * (v as f64 - mean))
                .collect();
            // A column of a row-major [n, 5] matrix.
            let mat: Vec<f32> = (0..5).flat_map(|_| x.iter().copied()).collect::<Vec<_>>();
            let column: Vec<f32> = (0..n).map(|r| mat[r * 5 + 3]).collect();
            for path in available_paths() {
                let token = Token::new(path).unwrap();
                for (s0, t) in [
                    (0.0, &squares),
                    (0.0, &products),
                    (-2.5, &devs),
                    (1e12, &squares),
                ] {
                    let want = t.iter().fold(s0, |a, &v| a + v);
                    let got = add_iter(token, s0, t.len(), t.iter().copied());
                    assert!(
                        same(got, want),
                        "{path:?} f64 terms: {got:e} vs {want:e}, n {n}"
                    );
                }
                let want = column.iter().fold(0.0f64, |a, &v| a + v as f64);
                let got = add_iter(token, 0.0, n, (0..n).map(|r| mat[r * 5 + 3]));
                assert!(same(got, want), "{path:?} column: {got:e} vs {want:e}");
            }
        }
    }

    /// f64 terms take the binade route (so the test above exercises it): a
    /// sum of squares of f32 values, and one of doubles with full 53-bit
    /// mantissas, grow and then mostly stay in one binade per block. (The
    /// exact route reads an f64 term's grid from its exponent field, which
    /// leaves it no headroom for full-mantissa terms: for f64 terms it is
    /// taken essentially only by blocks that are mostly zeros.)
    #[test]
    fn f64_terms_take_both_fast_routes() {
        let mut st = 7u64;
        let u: Vec<f64> = (0..1 << 16)
            .map(|_| (xorshift(&mut st) >> 11) as f64 / (1u64 << 53) as f64)
            .collect();
        let squares: Vec<f64> = u
            .iter()
            .map(|&v| (v as f32 as f64) * (v as f32 as f64))
            .collect();
        let full: Vec<f64> = u.iter().map(|&v| v * 1.000000000000001 + 0.25).collect();
        for (x, want, share) in [(&squares, Route::Binade, 0.5), (&full, Route::Binade, 0.5)] {
            let (mut s, mut hits) = (0.0, 0);
            for b in x.chunks_exact(BLOCK) {
                let b: &[f64; BLOCK] = b.try_into().unwrap();
                let (next, route) = routed::<f32, _>(s, b);
                assert!(same(next, b.iter().fold(s, |a, &v| a + v)));
                hits += (route == want) as usize;
                s = next;
            }
            let blocks = x.len() / BLOCK;
            assert!(
                hits as f64 > share * blocks as f64,
                "{want:?}: {hits} of {blocks}"
            );
        }
    }

    #[test]
    fn column_sums_are_the_chains_of_the_columns() {
        let (rows, cols, ld) = (300usize, 37usize, 40usize);
        let m = terms(rows * ld, 3, 1.0, true);
        let mut got = vec![0f32; cols];
        // SAFETY: every row has ld ≥ cols elements.
        unsafe { column_sums(m.as_ptr(), rows, ld, &mut got) };
        for c in 0..cols {
            let want = (0..rows).fold(0.0f64, |a, r| a + m[r * ld + c] as f64) as f32;
            assert!(
                got[c].to_bits() == want.to_bits() || (got[c].is_nan() && want.is_nan()),
                "column {c}"
            );
        }
    }

    #[test]
    fn lowest_bit_of_doubles() {
        assert_eq!(lowest_bit(1.0), 0);
        assert_eq!(lowest_bit(3.0), 0);
        assert_eq!(lowest_bit(0.75), -2);
        assert_eq!(lowest_bit(-6.0), 1);
        assert_eq!(lowest_bit(f64::from_bits(1)), -1074);
        assert_eq!(lowest_bit(f64::from_bits(1 << 52)), -1022);
        assert_eq!(lowest_bit(1.0 + f64::EPSILON), -52);
    }
}
