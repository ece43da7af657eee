//! The double sum (docs/engine.md, "Arithmetic rules") — `s ← s + x_k` for
//! k ascending, each term a double (an f32 widened exactly, or an f64 term
//! such as a square), one rounding per term. This module is the one place
//! the engine's double chains are written: the blocked chain of one long
//! run of f32 terms ([`add_terms`], the same bits as the plain chain,
//! faster), the plain chain over terms an iterator gives ([`chain`]: the
//! global norms' |x|, x² and |x|^p), and the plain chains of many outputs
//! side by side ([`column_sums`]: the recurrent layers' bias gradients),
//! where the CPU overlaps the independent chains already.
//!
//! Written as a loop the chain waits out one f64 add latency per term (≈ 1 ms
//! per million terms). Most blocks of a real chain, though, are in one of two
//! states where the block's outcome can be computed in any order, and
//! [`add_terms`] checks, per block of [`BLOCK`] terms, which one holds
//! (the checks are exact or carry a proven margin):
//!
//! 1. **No rounding at all.** Every term is a multiple of 2^g (g from its
//!    exponent field) and so is `s` (g from its lowest set bit). If
//!    `|s| + Σ|x| < 2^(53+g)`, every prefix of the chain is a multiple of
//!    2^g below 2^53·2^g, hence a double: each add is exact, and so is every
//!    other order. The block's result is `s + (Σ x in any order)`.
//! 2. **One binade.** With 2^e ≤ |s| < 2^(e+1), the doubles there are the
//!    multiples of G = 2^(e−52). While every prefix stays in that binade, an
//!    add rounds `s + x` to the nearest multiple of G, and as `s` is one,
//!    that is `s + round_G(x)` — unless `x` is a tie (exactly halfway between
//!    multiples of G: the even rule then depends on `s`, so such a block is
//!    not taken). The block's result is `s + G · Σ round(x/G)`, the integers
//!    summed exactly in any order. The binade test allows for the drift of
//!    the rounded prefixes (≤ G/2 per term).
//!
//! Any other block (a NaN or infinity, a tie, a prefix leaving the binade
//! while rounding) runs the plain chain. Which route a block takes changes
//! the time, never the result; the route is also the same on every kernel
//! path (the checks use fixed-order sums), so even the time does not depend
//! on the instruction set beyond the vector width.
//!
//! The per-term loops are plain Rust over eight f64 accumulators, compiled
//! inside [`run_on`]'s trampoline for the current path so that the compiler
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

/// `s` followed by `terms` through the plain double chain: one f64 add per
/// term, in the iterator's order. For terms computed on the way (squares,
/// powers) where the blocked chain's checks would cost more than they save
/// (measured: docs/kernels.md, "The double chain").
#[inline(always)]
pub fn chain(s: f64, terms: impl Iterator<Item = f64>) -> f64 {
    terms.fold(s, |a, x| a + x)
}

/// Two plain double chains fed by one pass: `(s.0 + Σ t.0, s.1 + Σ t.1)`,
/// each chain one f64 add per term in the iterator's order — the
/// normalizations' backward sums (Σg and Σg·x̂ over the same elements),
/// where reading the elements once for both chains is the point.
#[inline(always)]
pub fn chain2(s: (f64, f64), terms: impl Iterator<Item = (f64, f64)>) -> (f64, f64) {
    terms.fold(s, |(a, b), (x, y)| (a + x, b + y))
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
    let mut acc = crate::storage::scratch_vec(out.len(), 0f64);
    // The extent the contract promises (asserted per row in debug builds).
    let extent = if rows == 0 {
        0
    } else {
        (rows - 1) * ld + out.len()
    };
    let m = crate::ptr::Ptr::new(m, extent);
    for r in 0..rows {
        // SAFETY: row r holds out.len() readable elements (the caller's
        // contract).
        let row = unsafe { m.slice(r * ld, out.len()) };
        for (a, &x) in acc.iter_mut().zip(row) {
            *a += x as f64;
        }
    }
    for (o, a) in out.iter_mut().zip(acc) {
        *o = a as f32;
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
            s = block::<L>(s, b.try_into().expect("a block"));
        }
        plain(s, blocks.remainder())
    }
}

/// The chain written out: one f64 add per term.
#[inline(always)]
fn plain(s: f64, terms: &[f32]) -> f64 {
    terms.iter().fold(s, |a, &x| a + x as f64)
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

/// Pass 1 over a block: Σx and Σ|x| in eight accumulators (term i into
/// accumulator i mod 8), and the smallest exponent field of a nonzero term,
/// a subnormal counting as field 1 (its bits are multiples of 2^-149), 255
/// when every term is ±0.
#[inline(always)]
fn scan<L: Lanes>(x: &[f32; BLOCK]) -> ([f64; W], [f64; W], u32) {
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

/// Pass 2 of case 2: Σ round(x·inv) in eight accumulators (as in [`scan`]),
/// and whether any x·inv was a tie (fraction exactly ½).
#[inline(always)]
fn round_to_grid<L: Lanes>(x: &[f32; BLOCK], inv: f64) -> ([f64; W], bool) {
    #[cfg(target_arch = "x86_64")]
    if matches!(L::PATH, KernelPath::Avx2 | KernelPath::Avx512) {
        // SAFETY: as in `scan`.
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

/// One block of the chain.
#[inline(always)]
fn block<L: Lanes>(s: f64, x: &[f32; BLOCK]) -> f64 {
    routed::<L>(s, x).0
}

/// One block of the chain, and the route it took (see the module comment).
#[inline(always)]
fn routed<L: Lanes>(s: f64, x: &[f32; BLOCK]) -> (f64, Route) {
    // Pass 1: Σx, Σ|x| and the smallest exponent field of a nonzero term
    // (a subnormal counts as field 1: its bits are multiples of 2^-149).
    let (sum, abs, field) = scan::<L>(x);
    // Each partial sum of Σ|x| was rounded by at most 2^-53 relative, 64
    // times at most; the factor covers that, so `a` bounds the true Σ|x|.
    let a = tree(abs) * (1.0 + 1.0 / (1u64 << 40) as f64);
    if !a.is_finite() || field == 255 || !s.is_finite() {
        // A NaN or infinity, or only zeros (whose signs follow the chain's
        // own rules): the plain chain.
        return (plain(s, x), Route::Plain);
    }
    // Case 1. Terms and s are multiples of 2^g, g ≥ -1074; as g ≤ 104 (the
    // largest f32 exponent), 2^(52+g) is a normal double. The computed
    // |s| + a is within a factor (1 + 2^-52) of the true bound, so comparing
    // with half the limit, 2^(52+g), is safe.
    let g = if s == 0.0 {
        field as i32 - 150
    } else {
        (field as i32 - 150).min(lowest_bit(s))
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
            let (ints, tie) = round_to_grid::<L>(x, inv);
            if !tie {
                // Σ|r| ≤ a/G + 32 < 2^51: exact in any order; the product by
                // G and the final add (the chain's last prefix) are exact.
                return (s + tree(ints) * g, Route::Binade);
            }
        }
    }
    (plain(s, x), Route::Plain)
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
                let (next, route) = routed::<f32>(s, b);
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
                    let (next, route) = routed::<L>(s, b.try_into().unwrap());
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
