//! sin, cos and tan in binary32, generic over [`Lanes`].
//!
//! Range reduction to r = |x| − q·π/2, |r| ≤ π/4 (+ 2^−20 for a rounded q),
//! kept as an unevaluated sum hi + lo:
//!
//! * |x| < 6400 (q < 2^12): Cody–Waite with π/2 = C1 + C2 + C3 + C4 + C5,
//!   C1..C4 of 12 significant bits (so q·Ci is exact), C5 = RN(π/2 − ΣCi);
//!   x − q·C1 is exact (Sterbenz) and the other four terms are subtracted
//!   with error-free sums (`two_sum`). The residual of the split is
//!   1.9·10^−25, so the absolute error of hi + lo is below 2^−58.
//! * |x| ≥ 6400 (and inf/NaN): Payne–Hanek, exact: the 24-bit significand
//!   times 256 bits of 2/π as an integer product (u128), from which the two
//!   bits of q mod 4 and 64 bits of the fraction are read; the fraction
//!   f ∈ [−1/2, 1/2) times π/2 is formed in binary64 (relative error below
//!   2^−52) and split into hi + lo. This is scalar integer and binary64
//!   arithmetic; a vector path runs it lane by lane (the definition is the
//!   f32 code), and only when some lane needs it.
//!
//! Kernels on |r| ≤ 0.786, z = hi²:
//! sin r = hi + (hi·z·S(z) + lo·(1 − z/2)), cos r = (1 − z/2) + z²·C(z) − hi·lo
//! with z and z/2 exact (Dekker) and 1 − z/2 split by Fast2Sum, and
//! tan = sin/cos (q even) or −cos/sin (q odd) from both as normalised
//! float-float pairs (`div_ff`), so tan has one final rounding. The sign of x is
//! applied last (sin and tan are odd); inf and NaN give NaN.

use super::ff::{div_ff, fast_two_sum, two_sum};
use super::fixed::{horner, k, neg_square, SIGN};
use crate::simd::Lanes;

/// S(z) ≈ (sin(r)/r − 1)/z on z ∈ [0, 0.786²]. Degree 3.
/// Max |z·(S − s)| = 1.89e−10 = 2^−32.3 (fit_polys.py sin).
const SIN_S: [f32; 4] = [-0.166_666_67, 0.008_333_373, -0.000_198_502_97, 2.804_387_3e-6];
/// C(z) ≈ (cos(r) − 1 + z/2)/z² on z ∈ [0, 0.786²]. Degree 3.
/// Max |z²·(C − c)| = 7.55e−12 = 2^−36.95 (fit_polys.py cos).
const COS_C: [f32; 4] = [0.041_666_668, -0.001_388_897_4, 2.481_973_6e-5, -2.866_142e-7];

/// 2/π rounded to binary32 (0x3f22f983).
const FRAC_2_PI: f32 = std::f32::consts::FRAC_2_PI;
/// 1.5·2^23 (rounds a value below 2^22 to an integer, RNE).
const SHIFTER: f32 = 12_582_912.0;
/// π/2 = C1 + C2 + C3 + C4 + C5 (+1.9e−25); C1..C4 have 12 significant bits.
const C1: f32 = f32::from_bits(0x3fc9_1000); // 1.57080078125
const C2: f32 = f32::from_bits(0xb695_7000); // −4.4535845518112183e−6
const C3: f32 = f32::from_bits(0xb06f_5000); // −8.7061380327213556e−10
const C4: f32 = f32::from_bits(0x298c_2000); // 6.2228000530240024e−14
const C5: f32 = f32::from_bits(0x22d3_131a); // 5.7211889164587280e−18
/// Below this |x| the quadrant is < 2^12 and Cody–Waite is exact enough.
const CW_MAX: f32 = 6400.0;

/// 2/π·2^256 rounded down, as four u64 limbs, least significant first.
const TWO_OVER_PI: [u64; 4] = [
    0xfe51_63ab_debb_c561,
    0xdb62_9599_3c43_9041,
    0xfc27_57d1_f534_ddc0,
    0xa2f9_836e_4e44_1529,
];
/// π/2·2^−64 rounded to binary64 (0x1.921fb54442d18p−64).
const PIO2_2M64: f64 = f64::from_bits(0x3bf9_21fb_5444_2d18);

/// Payne–Hanek for one finite |x| ≥ 2^12 (any normal x whose exponent
/// gives s ≥ −11 below): (hi, lo, q mod 4) with hi + lo = |x| − q·π/2.
/// Non-finite x gives (NaN, 0, 0).
pub(crate) fn reduce_big(x: f32) -> (f32, f32, u32) {
    let u = x.to_bits() & 0x7fff_ffff;
    let eb = (u >> 23) as i32;
    if eb == 255 {
        return (f32::NAN, 0.0, 0);
    }
    let m = ((u & 0x007f_ffff) | 0x0080_0000) as u128;
    // |x| = m·2^s; |x|·2/π = (m·B)·2^(s − 256) with B the table's integer.
    let s = (eb - 150).max(-11);
    let mut w = [0u64; 7];
    let mut carry = 0u128;
    for (j, &limb) in TWO_OVER_PI.iter().enumerate() {
        let t = m * limb as u128 + carry;
        w[j] = t as u64;
        carry = t >> 64;
    }
    w[4] = carry as u64;
    // Bits [192 − s, 258 − s) of m·B: 64 fraction bits, then q mod 4.
    let lo_bit = (192 - s) as usize;
    let (i, sh) = (lo_bit / 64, lo_bit % 64);
    let pair = w[i] as u128 | (w[i + 1] as u128) << 64;
    let window = if sh == 0 {
        pair
    } else {
        (pair >> sh) | (w[i + 2] as u128) << (128 - sh)
    };
    let frac = window as u64;
    let q = ((window >> 64) as u32).wrapping_add((frac >> 63) as u32) & 3;
    // The fraction taken to the nearest quadrant: f ∈ [−1/2, 1/2).
    let r = (frac as i64) as f64 * PIO2_2M64;
    let hi = r as f32;
    let lo = (r - hi as f64) as f32;
    (hi, lo, q)
}

/// [`reduce_big`] lane by lane (store, scalar code, load).
#[inline(always)]
unsafe fn reduce_big_lanes<L: Lanes>(a: L) -> (L, L, L) {
    debug_assert!(L::N <= 16, "reduce_big_lanes: {} lanes past the 16-float buffers", L::N);
    // SAFETY: the buffers hold 16 ≥ L::N floats; module contract otherwise.
    unsafe {
        let mut xs = [0f32; 16];
        let (mut hs, mut ls, mut qs) = ([0f32; 16], [0f32; 16], [0f32; 16]);
        a.store(xs.as_mut_ptr());
        for i in 0..L::N {
            let (h, l, q) = reduce_big(xs[i]);
            hs[i] = h;
            ls[i] = l;
            qs[i] = f32::from_bits(q);
        }
        (L::load(hs.as_ptr()), L::load(ls.as_ptr()), L::load(qs.as_ptr()))
    }
}

/// |x| = q·π/2 + hi + lo for a = |x| ≥ 0: (hi, lo, q as integer lanes).
#[inline(always)]
pub(crate) unsafe fn reduce<L: Lanes>(a: L) -> (L, L, L) {
    // SAFETY: module contract.
    unsafe {
        let t = a.mul(k(FRAC_2_PI)).add(k(SHIFTER));
        let kf = t.sub(k(SHIFTER));
        let q = t.sub_i32(k(SHIFTER));
        let r0 = a.sub(kf.mul(k(C1)));
        let (s1, e1) = two_sum(r0, kf.mul(k(C2)).neg());
        let (s2, e2) = two_sum(s1, kf.mul(k(C3)).neg());
        let (s3, e3) = two_sum(s2, kf.mul(k(C4)).neg());
        let lo = e1.add(e2).add(e3).sub(kf.mul(k(C5)));
        let (hi, lo) = fast_two_sum(s3, lo);
        let big = a.ge(k(CW_MAX));
        if L::any(big) {
            let (bh, bl, bq) = reduce_big_lanes(a);
            return (
                L::select(big, bh, hi),
                L::select(big, bl, lo),
                L::select(big, bq, q),
            );
        }
        (hi, lo, q)
    }
}

/// sin and cos of r = h + l (|r| ≤ 0.786) as float-float pairs
/// (s_hi, s_tail), (c_hi, c_tail).
#[inline(always)]
unsafe fn kernels<L: Lanes>(h: L, l: L) -> ((L, L), (L, L)) {
    // SAFETY: module contract.
    unsafe {
        let one = k::<L>(1.0);
        let half = k::<L>(0.5);
        let z = h.mul(h);
        let s_tail = h
            .mul(z.mul(horner(z, &SIN_S)))
            .add(l.mul(one.sub(z.mul(half))));
        // z = h² exactly as zh + zl (neg_square gives the negatives).
        let (nzh, nzl) = neg_square(h);
        let (zh, zl) = (nzh.neg(), nzl.neg());
        let w = zh.mul(half);
        let (c_hi, c_lo) = fast_two_sum(one, w.neg());
        let c_tail = c_lo
            .sub(zl.mul(half))
            .add(zh.mul(zh).mul(horner(zh, &COS_C)))
            .sub(h.mul(l));
        ((h, s_tail), (c_hi, c_tail))
    }
}

/// Lanes where the integer lane q is odd.
#[inline(always)]
unsafe fn odd<L: Lanes>(q: L) -> L::Mask {
    // SAFETY: module contract.
    unsafe { q.and(L::splat_bits(1)).i32_to_f32().eq(k(1.0)) }
}

/// The sign bit where q mod 4 ∈ {2, 3}.
#[inline(always)]
unsafe fn half_turn_sign<L: Lanes>(q: L) -> L {
    // SAFETY: module contract.
    unsafe { q.and(L::splat_bits(2)).shl_i32::<30>() }
}

/// sin or cos of a = |x| by quadrant q (cos: q + 1).
#[inline(always)]
unsafe fn sin_quadrant<L: Lanes>(a: L, cos: bool) -> L {
    // SAFETY: module contract.
    unsafe {
        let (h, l, q) = reduce(a);
        let q = if cos { q.add_i32(L::splat_bits(1)) } else { q };
        let ((sh, st), (ch, ct)) = kernels(h, l);
        let s = sh.add(st);
        let c = ch.add(ct);
        L::select(odd(q), c, s).xor(half_turn_sign(q))
    }
}

/// sin x. Special values: sin(±0) = ±0, sin(±inf) = NaN, sin(NaN) = NaN.
#[inline(always)]
pub unsafe fn sin<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let r = sin_quadrant(x.abs(), false).xor(x.and(L::splat_bits(SIGN)));
        let bad = x.sub(x);
        L::select(bad.is_nan(), bad, r)
    }
}

/// cos x. Special values: cos(±0) = 1, cos(±inf) = NaN, cos(NaN) = NaN.
#[inline(always)]
pub unsafe fn cos<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let r = sin_quadrant(x.abs(), true);
        let bad = x.sub(x);
        L::select(bad.is_nan(), bad, r)
    }
}

/// tan x. Special values: tan(±0) = ±0, tan(±inf) = NaN, tan(NaN) = NaN.
#[inline(always)]
pub unsafe fn tan<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let (h, l, q) = reduce(x.abs());
        let ((sh, st), (ch, ct)) = kernels(h, l);
        // Normalise both pairs (|tail| ≤ ulp/2) so that the quotient's
        // first-order correction leaves only a 2^−46 term.
        let (sh, st) = fast_two_sum(sh, st);
        let (ch, ct) = fast_two_sum(ch, ct);
        let odd = odd(q);
        // q even: sin/cos; q odd: −cos/sin.
        let (nh, nl) = (L::select(odd, ch, sh), L::select(odd, ct, st));
        let (dh, dl) = (L::select(odd, sh, ch), L::select(odd, st, ct));
        let (t, r) = div_ff(nh, nl, dh, dl);
        let t = t.add(r);
        let t = L::select(odd, t.neg(), t).xor(x.and(L::splat_bits(SIGN)));
        let bad = x.sub(x);
        L::select(bad.is_nan(), bad, t)
    }
}
