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
/// `b + p*ldb` (packed: ldb = NR; read in place: B's row stride). `c`: the
/// tile's top-left element in C, row stride `ldc`.
///
/// # Safety
/// Must run where `L`'s CPU features are enabled. `a` must be valid for
/// `kc*MR` reads, `b` for NR reads at each of the `kc` steps; `c` valid for
/// `edge.rows` rows of `edge.cols` reads and writes at row stride `ldc`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn tile<L: Lanes, const MR: usize, const NV: usize, const EXACT: bool>(
    kc: usize,
    a: *const f32,
    b: *const f32,
    ldb: usize,
    c: *mut f32,
    ldc: usize,
    edge: Edge,
) {
    let nr = NV * L::N;
    if edge.cols == nr {
        // SAFETY: full width: C itself is valid for rows × NR at stride ldc.
        unsafe {
            rows::<L, MR, NV, EXACT>(
                edge.rows,
                kc,
                a,
                b,
                ldb,
                c,
                ldc,
                edge.first,
                edge.canonicalize,
            )
        };
    } else {
        // A partial sliver runs the full-width kernel on a scratch tile
        // (the padding of the packed sliver is zero, its results unused) and
        // copies the valid part in and out.
        let mut scratch = [[0f32; 64]; MR];
        debug_assert!(nr <= 64);
        let s = scratch.as_mut_ptr() as *mut f32;
        if !edge.first {
            for i in 0..edge.rows {
                // SAFETY: row i < rows of C holds `cols` valid accumulators;
                // the scratch row holds 64 ≥ cols.
                unsafe { std::ptr::copy_nonoverlapping(c.add(i * ldc), s.add(i * 64), edge.cols) };
            }
        }
        // SAFETY: the scratch is MR rows of 64 ≥ NR f32 at stride 64.
        unsafe {
            rows::<L, MR, NV, EXACT>(
                edge.rows,
                kc,
                a,
                b,
                ldb,
                s,
                64,
                edge.first,
                edge.canonicalize,
            )
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
    b: *const f32,
    ldb: usize,
    c: *mut f32,
    ldc: usize,
    first: bool,
    canon: bool,
) {
    // SAFETY (every arm): forwarded from the caller; R = rows ≤ MR.
    unsafe {
        match rows {
            r if r == MR => full::<L, MR, MR, NV, EXACT>(kc, a, b, ldb, c, ldc, first, canon),
            1 => full::<L, 1, MR, NV, EXACT>(kc, a, b, ldb, c, ldc, first, canon),
            2 => full::<L, 2, MR, NV, EXACT>(kc, a, b, ldb, c, ldc, first, canon),
            3 => full::<L, 3, MR, NV, EXACT>(kc, a, b, ldb, c, ldc, first, canon),
            4 => full::<L, 4, MR, NV, EXACT>(kc, a, b, ldb, c, ldc, first, canon),
            5 => full::<L, 5, MR, NV, EXACT>(kc, a, b, ldb, c, ldc, first, canon),
            6 => full::<L, 6, MR, NV, EXACT>(kc, a, b, ldb, c, ldc, first, canon),
            7 => full::<L, 7, MR, NV, EXACT>(kc, a, b, ldb, c, ldc, first, canon),
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
    mut a: *const f32,
    mut b: *const f32,
    ldb: usize,
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
        for _ in 0..kc {
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
            a = a.add(MR);
            b = b.add(ldb);
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
