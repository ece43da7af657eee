//! The fixed f32 transcendentals, written once, generic over [`Lanes`].
//!
//! Every function here is a fixed sequence of IEEE binary32 + − × ÷,
//! comparisons with selects, and integer operations on bit patterns
//! (exponent extraction and construction). No fma, no libm, no table
//! lookups, no data-dependent branches: the `f32` instantiation is the
//! definition and every vector instantiation computes the same operations
//! lane by lane, so it gives the same bits (tests/`math::tests`).
//!
//! Polynomials are evaluated by Horner's rule, highest coefficient first.
//! Each polynomial's coefficients come from `tools/fit_polys.py` (weighted
//! least squares at Chebyshev nodes with mpmath references, coefficients
//! rounded to binary32 one at a time with refits); the bound written above
//! each is the approximation error of the rounded coefficients in exact
//! arithmetic, as that script prints it. The accuracy of the whole function,
//! evaluation rounding included, is measured over all 2^32 inputs by
//! `tools/accuracy.rs` and tabulated in docs/numerics.md.
//!
//! # Safety
//! Every function is `unsafe` only because it calls [`Lanes`] methods: call
//! it for `L = f32` anywhere (see the safe wrappers in `math`), or for a
//! vector type inside [`crate::simd::run_on`].

use crate::simd::Lanes;

/// `c[0] + x·(c[1] + x·(… + x·c[n]))`, innermost first.
#[inline(always)]
pub(crate) unsafe fn horner<L: Lanes, const N: usize>(x: L, c: &[f32; N]) -> L {
    // SAFETY: the caller is inside L's path (module contract).
    unsafe {
        let mut acc = L::splat(c[N - 1]);
        let mut i = N - 1;
        while i > 0 {
            i -= 1;
            acc = acc.mul(x).add(L::splat(c[i]));
        }
        acc
    }
}

#[inline(always)]
pub(crate) unsafe fn k<L: Lanes>(v: f32) -> L {
    // SAFETY: module contract.
    unsafe { L::splat(v) }
}

pub(crate) const SIGN: u32 = 0x8000_0000;

// ---------------------------------------------------------------------------
// exp core
// ---------------------------------------------------------------------------

/// log2(e) rounded to binary32 (0x3fb8aa3b).
const LOG2E: f32 = std::f32::consts::LOG2_E;
/// 1.5·2^23: adding it rounds a value of magnitude < 2^22 to an integer, RNE.
const SHIFTER: f32 = 12_582_912.0;
/// ln 2 split for Cody–Waite reduction: LN2_HI has 16 significant bits (its
/// last 8 mantissa bits are zero) so k·LN2_HI is exact for |k| ≤ 255;
/// LN2_LO = RN(ln 2 − LN2_HI).
pub(crate) const LN2_HI: f32 = f32::from_bits(0x3f31_7200); // 0.693145751953125
pub(crate) const LN2_LO: f32 = f32::from_bits(0x35bf_be8e); // 1.42860677e-6
/// Arguments are clamped to [EXP_MIN, EXP_MAX] first: exp(89) overflows and
/// exp(−104) < 2^−150 rounds to zero, so the clamp changes no result.
const EXP_MAX: f32 = 89.0;
const EXP_MIN: f32 = -104.0;

/// Q(r) ≈ (e^r − 1 − r)/r² on [−0.3467, 0.3467] (|r| ≤ ln2/2 plus the slack
/// of the rounded k). Degree 5. Max |r²·(Q − q)| = 1.11e−10 = 2^−33.06
/// (fit_polys.py exp).
const EXP_Q: [f32; 6] = [
    0.5,
    0.166_666_67,
    0.041_666_456,
    0.008_333_198,
    0.001_393_576_5,
    0.000_199_534_01,
];

/// exp(a_hi + a_lo) as 2^k·(h + l): returns (h, l, k) with h = RN(h + l),
/// h ∈ [0.70, 1.42], |l| ≤ ulp(h)/2, and k the integer lanes (bit patterns).
/// `a_lo` must be small (|a_lo| ≤ 2^−20·|a_hi| or so): it is applied to
/// first order.
///
/// Method: k = RN(a·log2e) by the 1.5·2^23 shifter; r_hi = a − k·LN2_HI is
/// exact (Sterbenz); r = r_hi − k·LN2_LO, and its rounding error plus a_lo
/// is carried as `corr`. With p = r²Q(r), e^(r+corr) = 1 + r + p +
/// corr·(1 + r + p) to first order in corr; 1 + r is
/// split exactly (Fast2Sum) and the rest added to its low part, then the sum
/// renormalised (Fast2Sum), so h is one rounding of an approximation whose
/// relative error is about 2^−28.
#[inline(always)]
pub(crate) unsafe fn exp_core<L: Lanes>(a_hi: L, a_lo: L) -> (L, L, L) {
    // SAFETY: module contract.
    unsafe {
        let one = k::<L>(1.0);
        // NaN compares false and passes through both clamps.
        let a = L::select(a_hi.gt(k(EXP_MAX)), k(EXP_MAX), a_hi);
        let a = L::select(a.lt(k(EXP_MIN)), k(EXP_MIN), a);
        let t = a.mul(k(LOG2E)).add(k(SHIFTER));
        let kf = t.sub(k(SHIFTER));
        // t lies in [2^23, 2^24), where the ulp is 1: its bits minus the
        // shifter's bits are k.
        let ki = t.sub_i32(k(SHIFTER));
        let r_hi = a.sub(kf.mul(k(LN2_HI)));
        let c = kf.mul(k(LN2_LO));
        let r = r_hi.sub(c);
        let corr = r_hi.sub(r).sub(c).add(a_lo);
        let q = horner(r, &EXP_Q);
        let p = r.mul(r).mul(q);
        let tail = p.add(corr.add(corr.mul(r.add(p))));
        let hi0 = one.add(r);
        let lo0 = one.sub(hi0).add(r);
        let lo1 = lo0.add(tail);
        let h = hi0.add(lo1);
        let l = hi0.sub(h).add(lo1);
        (h, l, ki)
    }
}

/// y·2^k for k ∈ [−151, 128], as y·2^k1·2^k2 with k1 = k >> 1, k2 = k − k1:
/// both factors are normal powers of two, the first product is exact for
/// y ∈ [0.5, 2], so the only rounding is the final one (into the subnormal
/// range, or to ±inf).
#[inline(always)]
pub(crate) unsafe fn scale<L: Lanes>(y: L, ki: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let k1 = ki.shr_i32::<1>();
        let k2 = ki.sub_i32(k1);
        let bias = L::splat_bits(127);
        let s1 = k1.add_i32(bias).shl_i32::<23>();
        let s2 = k2.add_i32(bias).shl_i32::<23>();
        y.mul(s1).mul(s2)
    }
}

/// −x² as an exact unevaluated sum (hi, lo): hi = −RN(x²), lo = −(x² − RN(x²))
/// by Dekker's product with a Veltkamp-style split done on the bits
/// (x = xh + xl, xh with 12 significant bits). Valid for |x| ≤ 2^60 and
/// x² not subnormal.
#[inline(always)]
pub(crate) unsafe fn neg_square<L: Lanes>(x: L) -> (L, L) {
    // SAFETY: module contract.
    unsafe {
        let xh = x.and(L::splat_bits(0xffff_f000));
        let xl = x.sub(xh);
        let p = x.mul(x);
        let e = xh
            .mul(xh)
            .sub(p)
            .add(xh.mul(xl).add(xh.mul(xl)))
            .add(xl.mul(xl));
        (p.neg(), e.neg())
    }
}

// ---------------------------------------------------------------------------
// exp, log
// ---------------------------------------------------------------------------

/// e^x. Special values: exp(−inf) = +0, exp(+inf) = +inf, exp(NaN) = NaN;
/// overflow to +inf above 88.7228; gradual underflow below −87.34.
#[inline(always)]
pub unsafe fn exp<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let (h, _l, ki) = exp_core(x, L::zero());
        scale(h, ki)
    }
}

/// P(z) ≈ (2·atanh(s) − 2s)/s³, z = s², on [0, 0.02944] (|s| ≤ 0.17158).
/// Degree 3. Max |s³·(P − p)| = 4.07e−12 = 2^−37.84 (fit_polys.py log).
const LOG_P: [f32; 4] = [0.666_666_6, 0.400_008_14, 0.285_132_38, 0.239_644_17];

/// ln x, fdlibm's method in binary32: x = 2^e·(1 + f), 1 + f ∈ [√2/2, √2),
/// s = f/(2 + f), ln(1 + f) = f − f²/2 + s·(f²/2 + s²P(s²)),
/// ln x = e·LN2_HI + (f − (f²/2 − (s·(f²/2 + R) + e·LN2_LO))).
/// Subnormal inputs are scaled by 2^23 first. Special values: ln(±0) = −inf,
/// ln(x < 0) = NaN, ln(+inf) = +inf, ln(NaN) = NaN, ln(1) = +0.
#[inline(always)]
pub unsafe fn log<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let (hi, lo) = log_parts(x);
        let y = hi.add(lo);
        log_specials(x, y)
    }
}

/// ln x = hi + lo before the final addition: hi = e·LN2_HI (exact), lo the
/// rest (fdlibm's bracket).
#[inline(always)]
pub(crate) unsafe fn log_parts<L: Lanes>(x: L) -> (L, L) {
    // SAFETY: module contract.
    unsafe {
        let (dk, f, hfsq, s, r) = log_reduce(x);
        let lo = f.sub(hfsq.sub(s.mul(hfsq.add(r)).add(dk.mul(k(LN2_LO)))));
        (dk.mul(k(LN2_HI)), lo)
    }
}

/// The reduction shared by ln, log2 and log10 (fdlibm): x = 2^e·(1 + f),
/// returns (e, f, f²/2, s = f/(2 + f), s²·P(s²)).
#[inline(always)]
pub(crate) unsafe fn log_reduce<L: Lanes>(x: L) -> (L, L, L, L, L) {
    // SAFETY: module contract.
    unsafe {
        let tiny = x.lt(k(f32::MIN_POSITIVE));
        let xs = L::select(tiny, x.mul(k(8_388_608.0)), x);
        // Offset so that the exponent field steps at √2/2 instead of 1.
        let ix = xs.add_i32(L::splat_bits(0x3f80_0000 - 0x3f35_04f3));
        let e = ix.shr_i32::<23>().sub_i32(L::splat_bits(127));
        let e = L::select(tiny, e.sub_i32(L::splat_bits(23)), e);
        let m = ix
            .and(L::splat_bits(0x007f_ffff))
            .add_i32(L::splat_bits(0x3f35_04f3));
        let f = m.sub(k(1.0));
        let dk = e.i32_to_f32();
        let hfsq = k::<L>(0.5).mul(f).mul(f);
        let s = f.div(k::<L>(2.0).add(f));
        let z = s.mul(s);
        let r = z.mul(horner(z, &LOG_P));
        (dk, f, hfsq, s, r)
    }
}

#[inline(always)]
pub(crate) unsafe fn log_specials<L: Lanes>(x: L, y: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let y = L::select(x.eq(L::zero()), k(f32::NEG_INFINITY), y);
        let y = L::select(x.lt(L::zero()), k(f32::NAN), y);
        let y = L::select(x.eq(k(f32::INFINITY)), x, y);
        L::select(x.is_nan(), x, y)
    }
}

// ---------------------------------------------------------------------------
// tanh, sigmoid
// ---------------------------------------------------------------------------

/// P(z) ≈ (tanh(x)/x − 1)/z, z = x², on [0, 0.625²]. Degree 5.
/// Max |z·(P − p)| = 1.63e−10 = 2^−32.52 (fit_polys.py tanh).
const TANH_P: [f32; 6] = [
    -0.333_333_3,
    0.133_332_22,
    -0.053_948_455,
    0.021_708_671,
    -0.008_194_822,
    0.002_157_345_9,
];
/// Below this |x| tanh uses the odd polynomial.
const TANH_SMALL: f32 = 0.625;

/// tanh x. |x| < 0.625: x + x·(z·P(z)). Otherwise, with E = e^(−2|x|) as
/// 2^k(h + l) from the exp core: tanh|x| = 1 − 2E/(1 + E), where 1 + E is
/// split exactly (Fast2Sum), q = 2E_h/(1 + E)_h, and the low parts enter as
/// a correction (2E_l − q·D_l)/D_h; the sign of x is or-ed back in.
/// Special values: tanh(±0) = ±0, tanh(±inf) = ±1, tanh(NaN) = NaN.
#[inline(always)]
pub unsafe fn tanh<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let one = k::<L>(1.0);
        let sign = x.and(L::splat_bits(SIGN));
        let a = x.abs();
        let z = x.mul(x);
        let small = x.add(x.mul(z.mul(horner(z, &TANH_P))));
        let (h, l, ki) = exp_core(a.mul(k(-2.0)), L::zero());
        let eh = scale(h, ki);
        let el = scale(l, ki);
        let dh = one.add(eh);
        let dl = one.sub(dh).add(eh).add(el);
        let q = eh.add(eh).div(dh);
        let corr = el.add(el).sub(q.mul(dl)).div(dh);
        let large = one.sub(q.add(corr));
        // Or-ing the sign also makes tanh(−0) = −0 (x + x·(z·P) gives +0).
        L::select(a.lt(k(TANH_SMALL)), small, large).or(sign)
    }
}

/// 1/(1 + e^−x). With E = e^(−|x|) ≤ 1 as 2^k(h + l): D = 1 + E split
/// exactly; the numerator N is 1 for x ≥ 0 and E for x < 0 (so that neither
/// side cancels); σ = q + (N_l − q·D_l)/D_h with q = N_h/D_h.
/// Special values: σ(+inf) = 1, σ(−inf) = +0, σ(±0) = 1/2, σ(NaN) = NaN.
#[inline(always)]
pub unsafe fn sigmoid<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let one = k::<L>(1.0);
        let (h, l, ki) = exp_core(x.abs().neg(), L::zero());
        let eh = scale(h, ki);
        let el = scale(l, ki);
        let dh = one.add(eh);
        let dl = one.sub(dh).add(eh).add(el);
        let neg = x.lt(L::zero());
        let nh = L::select(neg, eh, one);
        let nl = L::select(neg, el, L::zero());
        let q = nh.div(dh);
        q.add(nl.sub(q.mul(dl)).div(dh))
    }
}

// ---------------------------------------------------------------------------
// The Gaussian tail: Z(t) = t·Q(t)·e^(t²/2), Q(t) = Φ(−t) = erfc(t/√2)/2
// ---------------------------------------------------------------------------

// Z_T[i][piece] is coefficient i of the polynomial for Z on one of twelve
// half-octave pieces of [0.25, 16): piece 2·(j + 2) + h covers
// t/2^j ∈ [1 + h/2, 1.5 + h/2), j = −2..3, h ∈ {0, 1}, in the variable
// v = t/2^j − (1.25 + h/2) ∈ [−0.25, 0.25) (exact: the mantissa is read
// from the bits). The constant term is the unevaluated sum Z_T[0] + Z_T[1],
// Z_T[0] with at most 13 significant bits so that its product with an
// 11-bit number is exact (see `tail_product`). Entries 12..16 are unused.
// Error bound of each piece (max relative error of the rounded
// coefficients): see the comment in the included file (fit_polys.py z).
include!("z_pieces.rs");

/// Z(t) for t in [0.25, 16) as (c0_hi, rest): Z ≈ c0_hi + rest, where c0_hi
/// is the piece's 13-bit constant. t outside is clamped into the range.
#[inline(always)]
pub(crate) unsafe fn z_tail<L: Lanes>(t: L) -> (L, L) {
    // SAFETY: module contract.
    unsafe {
        let tc = L::select(t.lt(k(0.25)), k(0.25), t);
        let tc = L::select(tc.gt(k(15.999_999)), k(15.999_999), tc);
        half_octaves(tc, &Z_T)
    }
}

/// A piecewise polynomial on the twelve half-octave pieces of [0.25, 16)
/// laid out as `Z_T` is (see above), at t in that range: (c0_hi, rest) with
/// rest = c0_lo + v·(c1 + v·(…)), the piece and v read from t's bits.
#[inline(always)]
pub(crate) unsafe fn half_octaves<L: Lanes, const N: usize>(tc: L, table: &[[f32; 16]; N]) -> (L, L) {
    // SAFETY: module contract.
    unsafe {
        // Piece index: the biased exponent and the top mantissa bit, minus
        // those of 0.25 (2·125).
        let idx = tc.shr_u32::<22>().sub_i32(L::splat_bits(250));
        let m = tc
            .and(L::splat_bits(0x007f_ffff))
            .or(L::splat_bits(0x3f80_0000));
        let center = tc
            .and(L::splat_bits(0x0040_0000))
            .or(L::splat_bits(0x3fa0_0000));
        let v = m.sub(center);
        let mut acc = L::lookup16(&table[N - 1], idx);
        let mut i = N - 1;
        while i > 2 {
            i -= 1;
            acc = acc.mul(v).add(L::lookup16(&table[i], idx));
        }
        let rest = L::lookup16(&table[1], idx).add(acc.mul(v));
        (L::lookup16(&table[0], idx), rest)
    }
}

/// t·Q(t) = Z(t)·e^(−t²/2) for t ≥ 0.25, with one final rounding:
/// e^(−t²/2) = 2^k(h + l) from the exp core on the exact −t²/2, and
/// (z0 + zr)(h + l) = z0·h_hi + (z0·h_lo + (zr·h + Z·l)) where h = h_hi + h_lo
/// with h_hi of 11 bits, so z0·h_hi (13 × 11 bits) is exact.
#[inline(always)]
unsafe fn tail_product<L: Lanes>(t: L) -> L {
    // SAFETY: module contract.
    unsafe {
        // e^(−128) already underflows; clamping keeps t² finite (NaN passes).
        let t = L::select(t.gt(k(16.0)), k(16.0), t);
        let (z0, zr) = z_tail(t);
        let (sh, sl) = neg_square(t);
        let half = k::<L>(0.5);
        let (h, l, ki) = exp_core(sh.mul(half), sl.mul(half));
        let hh = h.and(L::splat_bits(0xffff_e000));
        let hl = h.sub(hh);
        let zz = z0.add(zr);
        let small = z0.mul(hl).add(zr.mul(h).add(zz.mul(l)));
        scale(z0.mul(hh).add(small), ki)
    }
}

// ---------------------------------------------------------------------------
// erf, gelu
// ---------------------------------------------------------------------------

/// P(z) ≈ erf(x)/x − 1, z = x², on [0, 0.875²]. Degree 6.
/// Max |P − p| = 9.69e−10 = 2^−29.94 (fit_polys.py erf).
pub(crate) const ERF_P: [f32; 7] = [
    0.128_379_17,
    -0.376_126_35,
    0.112_837_28,
    -0.026_861_524,
    0.005_206_863_4,
    -0.000_821_414_17,
    8.693_078e-5,
];
const ERF_SMALL: f32 = 0.875;

/// erf x. |x| < 0.875: x + x·P(x²). Otherwise erf|x| = 1 − erfc|x| with
/// erfc(a) = 2·Z(√2·a)/(√2·a)·e^(−a²) (the exp core on the exact −a²), and
/// the sign of x or-ed back in; |x| is clamped to 4 (erf = 1 in binary32
/// from 3.92). Special values: erf(±0) = ±0, erf(±inf) = ±1, erf(NaN) = NaN.
#[inline(always)]
pub unsafe fn erf<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let sign = x.and(L::splat_bits(SIGN));
        let a = x.abs();
        let small = x.add(x.mul(horner(x.mul(x), &ERF_P)));
        let ac = L::select(a.gt(k(4.0)), k(4.0), a);
        let t = ac.mul(k(std::f32::consts::SQRT_2));
        let (z0, zr) = z_tail(t);
        let zz = z0.add(zr);
        let (sh, sl) = neg_square(ac);
        let (h, l, ki) = exp_core(sh, sl);
        let c = scale(zz.add(zz).mul(h.add(l)).div(t), ki);
        let large = k::<L>(1.0).sub(c).or(sign);
        L::select(a.lt(k(ERF_SMALL)), small, large)
    }
}

/// P(z) ≈ (Φ(x) − 1/2)/x, z = x², on [0, 1.25²]; the constant term is the
/// unevaluated sum PHI_P[0] + PHI_P[1]. Degree 7. Max relative error
/// 1.72e−10 = 2^−32.44 (fit_polys.py phi).
const PHI_P: [f32; 9] = [
    0.398_942_3,
    -1.133_717_3e-8,
    -0.066_490_38,
    0.009_973_574,
    -0.001_187_385_2,
    0.000_115_521_005,
    -9.506_369e-6,
    6.805_495_3e-7,
    -3.679_791e-8,
];

/// Φ(x) − 1/2 for |x| < 1.25.
#[inline(always)]
unsafe fn phi_mid<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let z = x.mul(x);
        let mut acc = k::<L>(PHI_P[8]);
        let mut i = 8;
        while i > 2 {
            i -= 1;
            acc = acc.mul(z).add(k(PHI_P[i]));
        }
        let p = k::<L>(PHI_P[0]).add(k::<L>(PHI_P[1]).add(acc.mul(z)));
        x.mul(p)
    }
}

const GELU_NEG: f32 = -0.25;
const GELU_POS: f32 = 1.25;

/// GELU, erf form: x·Φ(x), Φ the standard normal CDF.
/// x < −0.25: −(t·Q(t)) with t = −x (`tail_product`, one rounding);
/// −0.25 ≤ x < 1.25: x/2 + x·(Φ(x) − 1/2) by the polynomial;
/// x ≥ 1.25: x − x·Q(x).
/// Special values: gelu(±0) = ±0, gelu(+inf) = +inf, gelu(−inf) = −0 (the
/// limit), gelu(NaN) = NaN.
#[inline(always)]
pub unsafe fn gelu<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let mid = k::<L>(0.5).mul(x).add(x.mul(phi_mid(x)));
        let c = tail_product(x.abs());
        let y = L::select(x.lt(k(GELU_POS)), mid, x.sub(c));
        // gelu(x) has the sign of x; or-ing it makes gelu(−0) = −0.
        L::select(x.lt(k(GELU_NEG)), c.neg(), y).or(x.and(L::splat_bits(SIGN)))
    }
}

/// 1/√(2π).
const INV_SQRT_2PI: f32 = 0.398_942_3;

/// GELU'(x) = Φ(x) + x·φ(x), φ(x) = e^(−x²/2)/√(2π): the same three regions
/// as [`gelu`]. In the tails, with t = |x|, E = e^(−t²/2), Q(t) = E·Z(t)/t:
/// x < −0.25: E·(Z/t − t/√(2π)); x ≥ 1.25: 1 + E·(t/√(2π) − Z/t).
#[inline(always)]
pub unsafe fn gelu_slope<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let t = x.abs();
        let t = L::select(t.gt(k(16.0)), k(16.0), t);
        let (sh, sl) = neg_square(t);
        let half = k::<L>(0.5);
        let (h, l, ki) = exp_core(sh.mul(half), sl.mul(half));
        let e = scale(h.add(l), ki);
        let mid = half.add(phi_mid(x)).add(x.mul(e.mul(k(INV_SQRT_2PI))));
        let (z0, zr) = z_tail(t);
        let w = e.mul(t.mul(k(INV_SQRT_2PI)).sub(z0.add(zr).div(t)));
        let y = L::select(x.lt(k(GELU_POS)), mid, k::<L>(1.0).add(w));
        L::select(x.lt(k(GELU_NEG)), w.neg(), y)
    }
}

/// erf'(x) = (2/√π)·e^(−x²), on the exact −x², with one final rounding.
#[inline(always)]
pub unsafe fn erf_slope<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        const TWO_OVER_SQRT_PI: f32 = std::f32::consts::FRAC_2_SQRT_PI; // 0x3f906ebb
        let a = x.abs();
        let a = L::select(a.gt(k(16.0)), k(16.0), a);
        let (sh, sl) = neg_square(a);
        let (h, l, ki) = exp_core(sh, sl);
        let c = k::<L>(TWO_OVER_SQRT_PI);
        scale(c.mul(h).add(c.mul(l)), ki)
    }
}

// pow lives in `power.rs` (scalar and per-element exponents).
pub use super::power::pow;
