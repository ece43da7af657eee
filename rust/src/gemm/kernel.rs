//! The register-blocked microkernel: one MR × NR tile of C, written once over
//! [`Lanes`].
//!
//! The tile is `MR` rows by `NV` registers of `L::N` lanes (NR = NV·N). Each
//! output owns one accumulator lane, and for every k the kernel does, per
//! output, exactly one step of the canonical order:
//!
//! * exact: `acc = acc + (a·b)` — a rounded multiply, then a rounded add;
//! * fast:  `acc = fma(a, b, acc)` — one rounding.
//!
//! Lanes never talk to each other (no horizontal operation), so a vector lane
//! performs the same sequence of IEEE operations as the scalar path does for
//! that output: the vector width changes speed, never bits.
//!
//! Every function here is `#[inline(always)]`: it is compiled inside the
//! `#[target_feature]` trampoline of [`crate::simd::run_on`] that reached it.

use crate::simd::Lanes;

/// How the tile's accumulators start and end for one k block.
#[derive(Clone, Copy, Debug)]
pub(super) struct Edge {
    /// Valid rows (≤ MR) and columns (≤ NR) of this tile of C.
    pub rows: usize,
    pub cols: usize,
    /// First k block: the accumulators start at +0 and C is not read.
    /// Otherwise they are reloaded from C, where the previous k block stored
    /// them (an f32 store and load are exact, so the order is unbroken).
    pub first: bool,
    /// Last k block in exact mode: NaN results get the canonical bits.
    pub canonicalize: bool,
}

/// Run `kc` steps of the canonical order on one tile.
///
/// `a`: packed A panel, `kc` groups of MR values (row i of step p at
/// `a[p*MR + i]`). `b`: B sliver, `kc` groups of NR values, group p at
/// `b + p*ldb` (packed: ldb = NR; read in place: B's row stride), or, when
/// `b_off` is not null, at `b + b_off[p]` (a B whose rows are given by
/// offsets, read in place). `c`: the tile's top-left element in C, row
/// stride `ldc`.
///
/// # Safety
/// Must run where `L`'s CPU features are enabled. `a` must be valid for
/// `kc*MR` reads, `b_off` (if not null) for `kc` reads, `b` for NR reads at
/// each of the `kc` steps; `c` valid for `edge.rows` rows of `edge.cols`
/// reads and writes at row stride `ldc`. A partial tile (`edge.cols < NR`)
/// takes its B from a zero-padded packed sliver (`b_off` null).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn tile<L: Lanes, const MR: usize, const NV: usize, const EXACT: bool>(
    kc: usize,
    a: *const f32,
    b: *const f32,
    ldb: usize,
    b_off: *const isize,
    c: *mut f32,
    ldc: usize,
    edge: Edge,
) {
    let nr = NV * L::N;
    let bs = BSteps { b, ldb, b_off };
    if edge.cols == nr {
        // SAFETY: full width: C itself is valid for rows × NR at stride ldc.
        unsafe {
            rows::<L, MR, NV, EXACT>(edge.rows, kc, a, bs, c, ldc, edge.first, edge.canonicalize)
        };
    } else {
        // A partial sliver runs, on a scratch tile, the narrowest kernel
        // whose registers cover the valid columns (the padding of the
        // packed sliver is zero, its results unused), and copies the valid
        // part in and out. Each output's accumulator takes the same steps
        // whatever the tile's width (lanes never talk to each other), so
        // the width changes only the work spent on padding: a 97-column
        // product on a 48-wide tile computes 112 columns, not 144.
        let mut scratch = [[0f32; 64]; MR];
        debug_assert!(nr <= 64 && b_off.is_null());
        let s = scratch.as_mut_ptr() as *mut f32;
        if !edge.first {
            for i in 0..edge.rows {
                // SAFETY: row i < rows of C holds `cols` valid accumulators;
                // the scratch row holds 64 ≥ cols.
                unsafe { std::ptr::copy_nonoverlapping(c.add(i * ldc), s.add(i * 64), edge.cols) };
            }
        }
        let (first, canon) = (edge.first, edge.canonicalize);
        // SAFETY: the scratch is MR rows of 64 ≥ NR f32 at stride 64; a
        // narrower kernel reads the first nv·N ≤ NR values of each of B's
        // steps, at the same stride.
        unsafe {
            match edge.cols.div_ceil(L::N) {
                1 if NV > 1 => rows::<L, MR, 1, EXACT>(edge.rows, kc, a, bs, s, 64, first, canon),
                2 if NV > 2 => rows::<L, MR, 2, EXACT>(edge.rows, kc, a, bs, s, 64, first, canon),
                3 if NV > 3 => rows::<L, MR, 3, EXACT>(edge.rows, kc, a, bs, s, 64, first, canon),
                _ => rows::<L, MR, NV, EXACT>(edge.rows, kc, a, bs, s, 64, first, canon),
            }
        };
        for i in 0..edge.rows {
            // SAFETY: as the copy in, in the other direction.
            unsafe { std::ptr::copy_nonoverlapping(s.add(i * 64), c.add(i * ldc), edge.cols) };
        }
    }
}

/// The kernel for `rows` ≤ MR rows: the last panel of A may be short, and a
/// kernel of exactly its height keeps short products (M = 8 on a 6-row
/// tile) from paying for the padding.
///
/// # Safety
/// As [`tile`], with C valid for `rows` × NR.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn rows<L: Lanes, const MR: usize, const NV: usize, const EXACT: bool>(
    rows: usize,
    kc: usize,
    a: *const f32,
    b: BSteps,
    c: *mut f32,
    ldc: usize,
    first: bool,
    canon: bool,
) {
    // SAFETY (every arm): forwarded from the caller; R = rows ≤ MR.
    unsafe {
        match rows {
            r if r == MR => full::<L, MR, MR, NV, EXACT>(kc, a, b, c, ldc, first, canon),
            1 => full::<L, 1, MR, NV, EXACT>(kc, a, b, c, ldc, first, canon),
            2 => full::<L, 2, MR, NV, EXACT>(kc, a, b, c, ldc, first, canon),
            3 => full::<L, 3, MR, NV, EXACT>(kc, a, b, c, ldc, first, canon),
            4 => full::<L, 4, MR, NV, EXACT>(kc, a, b, c, ldc, first, canon),
            5 => full::<L, 5, MR, NV, EXACT>(kc, a, b, c, ldc, first, canon),
            6 => full::<L, 6, MR, NV, EXACT>(kc, a, b, c, ldc, first, canon),
            7 => full::<L, 7, MR, NV, EXACT>(kc, a, b, c, ldc, first, canon),
            _ => unreachable!("gemm: a tile of {rows} rows (MR = {MR})"),
        }
    }
}

/// The R × NR kernel over an A panel of stride MR. The accumulator array
/// is indexed only by constants after unrolling, so it lives in registers.
///
/// # Safety
/// As [`tile`], with C valid for R × NR.
#[inline(always)]
unsafe fn full<L: Lanes, const R: usize, const MR: usize, const NV: usize, const EXACT: bool>(
    kc: usize,
    a: *const f32,
    b: BSteps,
    c: *mut f32,
    ldc: usize,
    first: bool,
    canon: bool,
) {
    // SAFETY (whole body): the caller guarantees the CPU features of L and
    // the extents of a, b and c that every offset below stays inside.
    unsafe {
        let mut acc = [[L::zero(); NV]; R];
        if !first {
            for (i, row) in acc.iter_mut().enumerate() {
                for (v, r) in row.iter_mut().enumerate() {
                    *r = L::load(c.add(i * ldc + v * L::N));
                }
            }
        }
        // Two copies of the loop, so that neither tests the B layout per
        // step: rows at a fixed stride, or rows at listed offsets.
        if b.b_off.is_null() {
            let mut bp = b.b;
            for p in 0..kc {
                step::<L, R, MR, NV, EXACT>(&mut acc, a.add(p * MR), bp);
                bp = bp.add(b.ldb);
            }
        } else {
            for p in 0..kc {
                step::<L, R, MR, NV, EXACT>(&mut acc, a.add(p * MR), b.b.offset(*b.b_off.add(p)));
            }
        }
        // The last k block of exact mode stores NaNs with the canonical bits,
        // fixed in the registers on the way out (a separate pass over the
        // tile took about a third of a k = 64 product's time under perf).
        let canon = EXACT && canon;
        for (i, row) in acc.iter().enumerate() {
            for (v, r) in row.iter().enumerate() {
                let r = if canon { r.canonicalize_nan() } else { *r };
                r.store(c.add(i * ldc + v * L::N));
            }
        }
    }
}

/// At most how many full slivers of B a short last panel of `rows` rows
/// takes at once (see [`short_panel`]); 1 where it runs one sliver at a
/// time.
pub(super) const fn short_slivers(rows: usize, mr: usize) -> usize {
    match (rows, mr) {
        (1, 4 | 6 | 8) => mr,
        (2, 4 | 6 | 8) => mr / 2,
        (3, 6 | 8) | (4, 8) => 2,
        _ => 1,
    }
}

/// A short last panel of A (`rows` < MR) over `count` full slivers of B at
/// once (2 ≤ count ≤ [`short_slivers`]): sliver s of step p at
/// `b + s·sliver_stride + p·ldb`, C's columns of the slivers side by side.
///
/// One sliver of a 2-row panel has 2·NV accumulators, too few to cover the
/// latency of the add or fma that updates each (on avx2, 4 chains against
/// 5-cycle fmas on 2 pipes). Taking several slivers keeps up to MR·NV
/// chains in flight. Each output's accumulator still takes the same steps
/// in the same order (lanes never talk to each other), so the bits are
/// those of the one-sliver kernel.
///
/// # Safety
/// As [`tile`] for each of the slivers (all full width, `b_off` null), with
/// C valid for `rows` rows of count·NR columns.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn short_panel<L: Lanes, const MR: usize, const NV: usize, const EXACT: bool>(
    rows: usize,
    count: usize,
    kc: usize,
    a: *const f32,
    b: *const f32,
    ldb: usize,
    sliver_stride: usize,
    c: *mut f32,
    ldc: usize,
    edge: Edge,
) {
    debug_assert!(count >= 2 && count <= short_slivers(rows, MR));
    let (first, canon) = (edge.first, edge.canonicalize);
    let s = (b, ldb, sliver_stride);
    // SAFETY (every arm): forwarded from the caller.
    unsafe {
        match (rows, count) {
            (1, 2) => wide::<L, 1, NV, 2, EXACT>(kc, a, MR, s, c, ldc, first, canon),
            (1, 3) => wide::<L, 1, NV, 3, EXACT>(kc, a, MR, s, c, ldc, first, canon),
            (1, 4) => wide::<L, 1, NV, 4, EXACT>(kc, a, MR, s, c, ldc, first, canon),
            (1, 5) => wide::<L, 1, NV, 5, EXACT>(kc, a, MR, s, c, ldc, first, canon),
            (1, 6) => wide::<L, 1, NV, 6, EXACT>(kc, a, MR, s, c, ldc, first, canon),
            (1, 7) => wide::<L, 1, NV, 7, EXACT>(kc, a, MR, s, c, ldc, first, canon),
            (1, 8) => wide::<L, 1, NV, 8, EXACT>(kc, a, MR, s, c, ldc, first, canon),
            (2, 2) => wide::<L, 2, NV, 2, EXACT>(kc, a, MR, s, c, ldc, first, canon),
            (2, 3) => wide::<L, 2, NV, 3, EXACT>(kc, a, MR, s, c, ldc, first, canon),
            (2, 4) => wide::<L, 2, NV, 4, EXACT>(kc, a, MR, s, c, ldc, first, canon),
            (3, 2) => wide::<L, 3, NV, 2, EXACT>(kc, a, MR, s, c, ldc, first, canon),
            (4, 2) => wide::<L, 4, NV, 2, EXACT>(kc, a, MR, s, c, ldc, first, canon),
            _ => unreachable!("gemm: no wide kernel for {rows} rows × {count} slivers"),
        }
    }
}

/// The R × (S slivers of NV registers) kernel of [`short_panel`], over an A
/// panel of stride `a_stride` (MR); `b` is (base, ldb, sliver stride).
///
/// # Safety
/// As [`short_panel`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn wide<L: Lanes, const R: usize, const NV: usize, const S: usize, const EXACT: bool>(
    kc: usize,
    a: *const f32,
    a_stride: usize,
    b: (*const f32, usize, usize),
    c: *mut f32,
    ldc: usize,
    first: bool,
    canon: bool,
) {
    let (b, ldb, sliver_stride) = b;
    let nr = NV * L::N;
    // SAFETY (whole body): the caller guarantees L's CPU features and the
    // extents of a (kc·a_stride), of each sliver's kc steps and of C
    // (R rows of S·NR columns).
    unsafe {
        let mut acc = [[[L::zero(); NV]; S]; R];
        if !first {
            for (i, row) in acc.iter_mut().enumerate() {
                for (s, regs) in row.iter_mut().enumerate() {
                    for (v, r) in regs.iter_mut().enumerate() {
                        *r = L::load(c.add(i * ldc + s * nr + v * L::N));
                    }
                }
            }
        }
        for p in 0..kc {
            let ap = a.add(p * a_stride);
            let bp = b.add(p * ldb);
            let mut ai = [L::zero(); R];
            for (i, x) in ai.iter_mut().enumerate() {
                *x = L::splat(*ap.add(i));
            }
            for s in 0..S {
                for v in 0..NV {
                    let bv = L::load(bp.add(s * sliver_stride + v * L::N));
                    for i in 0..R {
                        let r = &mut acc[i][s][v];
                        *r = if EXACT {
                            r.add(ai[i].mul(bv))
                        } else {
                            ai[i].fma(bv, *r)
                        };
                    }
                }
            }
        }
        let canon = EXACT && canon;
        for (i, row) in acc.iter().enumerate() {
            for (s, regs) in row.iter().enumerate() {
                for (v, r) in regs.iter().enumerate() {
                    let r = if canon { r.canonicalize_nan() } else { *r };
                    r.store(c.add(i * ldc + s * nr + v * L::N));
                }
            }
        }
    }
}

/// Where the kernel finds B's NR values for each step: `b + p*ldb`, or
/// `b + b_off[p]` when `b_off` is not null.
#[derive(Clone, Copy)]
pub(super) struct BSteps {
    b: *const f32,
    ldb: usize,
    b_off: *const isize,
}

/// One step of the canonical order for every output of the tile: `a` holds
/// the step's MR values of A, `b` its NR values of B.
///
/// # Safety
/// As [`full`], for one step.
#[inline(always)]
unsafe fn step<L: Lanes, const R: usize, const MR: usize, const NV: usize, const EXACT: bool>(
    acc: &mut [[L; NV]; R],
    a: *const f32,
    b: *const f32,
) {
    // SAFETY: the caller guarantees NR reads at b and MR ≥ R reads at a.
    unsafe {
        let mut bv = [L::zero(); NV];
        for (v, r) in bv.iter_mut().enumerate() {
            *r = L::load(b.add(v * L::N));
        }
        for (i, row) in acc.iter_mut().enumerate() {
            let ai = L::splat(*a.add(i));
            for (v, r) in row.iter_mut().enumerate() {
                *r = if EXACT {
                    r.add(ai.mul(bv[v]))
                } else {
                    ai.fma(bv[v], *r)
                };
            }
        }
    }
}
