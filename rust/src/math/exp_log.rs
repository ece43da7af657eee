//! The exp/log family beyond e^x and ln x: expm1, log1p, exp2, log2, log10
//! and ln(1 + e^u) (the softplus core), generic over [`Lanes`], on the exp
//! and log cores of [`super::fixed`] and the float-float blocks of
//! [`super::ff`].

use super::ff::{log_ff, two_prod, two_sum};
use super::fixed::{exp, exp_core, horner, k, log_reduce, log_specials, neg_square, scale, LN2_HI, LN2_LO, SIGN};
use crate::simd::Lanes;

/// Q(x) ≈ (e^x − 1 − x − x²/2)/x³ on [−0.3467, 0.3467]. Degree 5.
/// Max |x³·(Q − q)/expm1(x)| = 5.76e−11 = 2^−34.0 (fit_polys.py expm1).
const EXPM1_Q: [f32; 6] = [
    0.166_666_67,
    0.041_666_67,
    0.008_333_191,
    0.001_388_770_1,
    0.000_199_593_21,
    2.549_412e-5,
];
/// Below this |x| expm1 uses the polynomial (ln 2/2).
const EXPM1_SMALL: f32 = 0.346_6;

/// e^x − 1. |x| < 0.3466: x + x²/2 + x·(x²·Q(x)) with x²/2 exact (Dekker)
/// and x + x²/2 split by Fast2Sum, so only the last addition rounds.
/// Otherwise 2^k(h + l) − 1 from the exp core, with 2^k·h − 1 as an exact
/// sum. Special values: expm1(±0) = ±0, expm1(+inf) = +inf,
/// expm1(−inf) = −1, NaN → NaN; overflow to +inf above 88.7228.
#[inline(always)]
pub unsafe fn expm1<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let one = k::<L>(1.0);
        let (nzh, nzl) = neg_square(x);
        let (wh, wl) = (nzh.mul(k(-0.5)), nzl.mul(k(-0.5)));
        let hi0 = x.add(wh);
        let lo0 = x.sub(hi0).add(wh);
        let tail = lo0.add(wl).add(x.mul(nzh.neg().mul(horner(x, &EXPM1_Q))));
        // expm1 has the sign of x: or-ing it makes expm1(−0) = −0.
        let small = hi0.add(tail).or(x.and(L::splat_bits(SIGN)));
        let (h, l, ki) = exp_core(x, L::zero());
        let eh = scale(h, ki);
        let (d, e) = two_sum(eh, one.neg());
        let large = d.add(e.add(scale(l, ki)));
        // Above 88, e^x − 1 rounds to e^x (and the sum would meet inf − inf).
        let large = L::select(x.gt(k(88.0)), eh, large);
        L::select(x.abs().lt(k(EXPM1_SMALL)), small, large)
    }
}

/// ln(1 + x): u = RN(1 + x) and its rounding error c (fdlibm's
/// correction, exact), then fdlibm's ln u = e·ln2_hi + (f − (f²/2 −
/// (s·(f²/2 + R) + e·ln2_lo))) with c/u joined to the small bracket before
/// f is added, so that for tiny x (f and c/u of one size) only the last two
/// additions round. Special values: log1p(±0) = ±0, log1p(−1) = −inf,
/// log1p(x < −1) = NaN, log1p(+inf) = +inf, NaN → NaN.
#[inline(always)]
pub unsafe fn log1p<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let one = k::<L>(1.0);
        let u = one.add(x);
        let c = L::select(u.ge(k(2.0)), one.sub(u.sub(x)), x.sub(u.sub(one)));
        let (dk, f, hfsq, s, r) = log_reduce(u);
        let bracket = hfsq.sub(s.mul(hfsq.add(r)).add(dk.mul(k(LN2_LO))));
        let y = dk.mul(k(LN2_HI)).add(f.add(c.div(u).sub(bracket)));
        let y = log_specials(u, y);
        y.or(x.and(L::splat_bits(SIGN)))
    }
}

/// ln 2 as binary32 (0x3f317218) and the rest RN(ln 2 − LN2) (0xb102e308).
const LN2: f32 = std::f32::consts::LN_2;
const LN2_REST: f32 = f32::from_bits(0xb102_e308);

/// 2^x = e^(x·ln 2) with x·ln 2 formed exactly (Dekker) plus x·(ln 2 −
/// LN2), fed to the exp core as a two-part argument. |x| is clamped to 160
/// first (2^160 overflows, 2^−160 underflows; NaN passes).
/// Special values: exp2(−inf) = +0, exp2(+inf) = +inf, NaN → NaN.
#[inline(always)]
pub unsafe fn exp2<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let xc = L::select(x.gt(k(160.0)), k(160.0), x);
        let xc = L::select(xc.lt(k(-160.0)), k(-160.0), xc);
        let (p, e) = two_prod(xc, k(LN2));
        let (h, _l, ki) = exp_core(p, e.add(xc.mul(k(LN2_REST))));
        scale(h, ki)
    }
}

/// 1/ln 2 and 1/ln 10 split as a 12-bit high part and the rest; log10(2)
/// split as a 15-bit high part (so that e·hi is exact) and the rest.
const INV_LN2_HI: f32 = f32::from_bits(0x3fb8_b000);
const INV_LN2_LO: f32 = f32::from_bits(0xb938_9ad4);
const INV_LN10_HI: f32 = f32::from_bits(0x3ede_6000);
const INV_LN10_LO: f32 = f32::from_bits(0xb804_ead9);
const LOG10_2_HI: f32 = f32::from_bits(0x3e9a_2000);
const LOG10_2_LO: f32 = f32::from_bits(0x369a_84fc);

/// ln(1 + f) = hi + lo with hi = f − f²/2 cut to 12 significant bits
/// (fdlibm's log2f/log10f), for x = 2^e(1 + f); returns (e, hi, lo).
#[inline(always)]
unsafe fn log_split<L: Lanes>(x: L) -> (L, L, L) {
    // SAFETY: module contract.
    unsafe {
        let (dk, f, hfsq, s, r) = log_reduce(x);
        let r = s.mul(hfsq.add(r));
        let hi = f.sub(hfsq).and(L::splat_bits(0xffff_f000));
        let lo = f.sub(hi).sub(hfsq).add(r);
        (dk, hi, lo)
    }
}

/// log2 x (fdlibm's e_log2f.c order): (lo + hi)·IL + lo·IH + hi·IH + e,
/// with hi·IH exact. Special values as ln.
#[inline(always)]
pub unsafe fn log2<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let (dk, hi, lo) = log_split(x);
        let y = lo
            .add(hi)
            .mul(k(INV_LN2_LO))
            .add(lo.mul(k(INV_LN2_HI)))
            .add(hi.mul(k(INV_LN2_HI)))
            .add(dk);
        log_specials(x, y)
    }
}

/// log10 x (fdlibm's e_log10f.c order):
/// (lo + hi)·IL + lo·IH + e·L2lo + hi·IH + e·L2hi. Special values as ln.
#[inline(always)]
pub unsafe fn log10<L: Lanes>(x: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let (dk, hi, lo) = log_split(x);
        let y = lo
            .add(hi)
            .mul(k(INV_LN10_LO))
            .add(lo.mul(k(INV_LN10_HI)))
            .add(dk.mul(k(LOG10_2_LO)))
            .add(hi.mul(k(INV_LN10_HI)))
            .add(dk.mul(k(LOG10_2_HI)));
        log_specials(x, y)
    }
}

/// ln(1 + e^u), the softplus core. u ≤ 16: E = e^u = 2^k(h + l) from the
/// exp core, 1 + E as an exact pair, and ln of the pair (`log_ff`), so
/// the result keeps its relative accuracy down to e^u in the subnormals.
/// u > 16: u + e^−u (e^−u < 2^−23). Special values: −inf → +0,
/// +inf → +inf, NaN → NaN.
#[inline(always)]
pub unsafe fn log1pexp<L: Lanes>(u: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let big = u.gt(k(16.0));
        let uc = L::select(big, k(16.0), u);
        let (h, l, ki) = exp_core(uc, L::zero());
        let (wh, wl) = two_sum(k(1.0), scale(h, ki));
        let r = log_ff(wh, wl.add(scale(l, ki)));
        L::select(big, u.add(exp(u.neg())), r)
    }
}
