//! Float-float ("double-word") building blocks over [`Lanes`]: error-free
//! sums and products in binary32 without fma, and the quotients, square
//! roots and logarithms of unevaluated sums hi + lo that the functions of
//! `trig`, `inverse_trig`, `exp_log` and `hyperbolic` use to keep about 45
//! significant bits through a range reduction or a cancellation.
//!
//! * `two_sum` (Knuth) and `fast_two_sum` (Dekker, |a| ≥ |b| or a = 0) are
//!   exact: s + e = a + b.
//! * `two_prod` is Dekker's product with both factors split on the bits
//!   (the high 12 significand bits and the rest): exact when no partial
//!   product underflows or overflows.
//!
//! # Safety
//! As in [`super::fixed`]: unsafe only because of the [`Lanes`] calls.

use super::fixed::{log_parts, log_specials};
use crate::simd::Lanes;

/// The high 12 significand bits of each lane (exact split a = hi + (a − hi)).
#[inline(always)]
pub(crate) unsafe fn split<L: Lanes>(a: L) -> (L, L) {
    // SAFETY: module contract.
    unsafe {
        let h = a.and(L::splat_bits(0xffff_f000));
        (h, a.sub(h))
    }
}

/// s = RN(a + b), e = a + b − s exactly.
#[inline(always)]
pub(crate) unsafe fn two_sum<L: Lanes>(a: L, b: L) -> (L, L) {
    // SAFETY: module contract.
    unsafe {
        let s = a.add(b);
        let bb = s.sub(a);
        let e = a.sub(s.sub(bb)).add(b.sub(bb));
        (s, e)
    }
}

/// As [`two_sum`] for |a| ≥ |b| (or a = 0).
#[inline(always)]
pub(crate) unsafe fn fast_two_sum<L: Lanes>(a: L, b: L) -> (L, L) {
    // SAFETY: module contract.
    unsafe {
        let s = a.add(b);
        (s, b.sub(s.sub(a)))
    }
}

/// p = RN(a·b), e = a·b − p exactly (Dekker).
#[inline(always)]
pub(crate) unsafe fn two_prod<L: Lanes>(a: L, b: L) -> (L, L) {
    // SAFETY: module contract.
    unsafe {
        let p = a.mul(b);
        let (ah, al) = split(a);
        let (bh, bl) = split(b);
        let e = ah
            .mul(bh)
            .sub(p)
            .add(ah.mul(bl))
            .add(al.mul(bh))
            .add(al.mul(bl));
        (p, e)
    }
}

/// (nh + nl)/(dh + dl) as q + r: q = RN(nh/dh), r the next-order term
/// ((nh − q·dh) + nl − q·dl)/dh with q·dh formed exactly.
#[inline(always)]
pub(crate) unsafe fn div_ff<L: Lanes>(nh: L, nl: L, dh: L, dl: L) -> (L, L) {
    // SAFETY: module contract.
    unsafe {
        let q = nh.div(dh);
        let (p, e) = two_prod(q, dh);
        let r = nh.sub(p).sub(e).add(nl).sub(q.mul(dl)).div(dh);
        (q, r)
    }
}

/// √(th + tl) as q + c: q = RN(√th), c = (th − q² + tl)/(2q) with q² exact;
/// c = 0 where q = 0.
#[inline(always)]
pub(crate) unsafe fn sqrt_ff<L: Lanes>(th: L, tl: L) -> (L, L) {
    // SAFETY: module contract.
    unsafe {
        let q = th.sqrt();
        let (p, e) = two_prod(q, q);
        let c = th.sub(p).sub(e).add(tl).div(q.add(q));
        (q, L::select(q.eq(L::zero()), L::zero(), c))
    }
}

/// ln(wh + wl), rounded once: ln wh = hi + lo from the fixed log's parts,
/// and ln(1 + wl/wh) ≈ wl/wh added to lo. Special values are those of
/// ln wh (wh = 0 → −inf, wh < 0 → NaN, wh = +inf → +inf).
#[inline(always)]
pub(crate) unsafe fn log_ff<L: Lanes>(wh: L, wl: L) -> L {
    // SAFETY: module contract.
    unsafe {
        let (hi, lo) = log_parts(wh);
        let y = hi.add(lo.add(wl.div(wh)));
        log_specials(wh, y)
    }
}
