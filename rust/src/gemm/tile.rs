//! The register tile and k block of each kernel path: one table.
//!
//! Each path has a kernel type ([`ScalarTile`], [`V128Tile`], [`Avx2Tile`],
//! [`Avx512Tile`]) whose associated constants are its tile (MR rows × NV
//! registers of the path's lanes, so NR = NV·N columns) and its k block KC.
//! Everything else reads them from here: the blocking of the plan
//! ([`blocking`]) and the const generics the microkernel and the packing are
//! instantiated with ([`with_tile`]). Both come from the same row of
//! `tiles!`, so no run-time check has to keep copies in step.
//!
//! The accumulators take MR·NR/N registers of the 16 (32 with AVX-512),
//! leaving room for NR/N B registers, the broadcast A value and the product
//! of exact mode:
//!
//! | path   | lanes | MR × NR | accumulators | KC  | B sliver | MC  | NC   |
//! |--------|-------|---------|--------------|-----|----------|-----|------|
//! | scalar | 1     | 4 × 4   | 16           | 256 | 4 KiB    | 64  | 1536 |
//! | v128   | 4     | 6 × 8   | 12           | 256 | 8 KiB    | 192 | 768  |
//! | avx2   | 8     | 6 × 16  | 12           | 256 | 16 KiB   | 192 | 768  |
//! | avx512 | 16    | 8 × 48  | 24           | 512 | 96 KiB   | 256 | 768  |
//!
//! MC × NC is the chunk of C one thread computes with its whole k range
//! (targets: the plan equalises chunks in whole tiles and cuts small
//! products finer). Every B element a chunk reads from the shared packed B
//! (in L3 for large products) serves MC rows, so MC is large enough to
//! amortise that read; the chunk's A block (MC × KC) stays in L2 while the
//! slivers pass over it, and its C (MC × NC) stays in L2 between k blocks.
//! On AVX-512 cores (1–2 MiB of L2) the avx512 row is sized for that: A
//! block 512 KiB, C 768 KiB; the B sliver (96 KiB) streams from L2, which
//! measured faster than a KC of 128 with the sliver in L1 (more k blocks,
//! each reloading C). The avx2 and v128 rows keep the sliver in L1 and
//! the A block (192 KiB) inside a 512 KiB L2 (docs/kernels.md,
//! "Register tiles and blocking").
//!
//! avx2 is 6 × 16 rather than 4 × 24 (the same 12 accumulators): with 3 B
//! registers LLVM spilled an accumulator in the loop, which measured at
//! about half the speed. On avx512, MR = 8 makes the recurrent-step shape
//! (M = 8) one tile; on the 6-row paths its last 2 rows run a 2-row kernel
//! (`kernel::rows`).

use crate::dispatch::{KernelPath, Mode};
use crate::simd::Lanes;

/// Register tile and k block of one path, as plain numbers (the plan's
/// arithmetic on chunks and panels).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Blocking {
    /// Rows of the register tile (A panel width).
    pub mr: usize,
    /// Columns of the register tile (B sliver width), a multiple of the
    /// path's lanes.
    pub nr: usize,
    /// k block: the depth of a B sliver (kc × nr) and of the chunk's packed
    /// A block.
    pub kc: usize,
    /// Rows (a target) and at most columns of C per chunk.
    pub mc: usize,
    pub nc: usize,
}

/// A kernel path's tile: its constants.
pub(super) trait Tile {
    /// The path's f32 lanes per register (its `Lanes::N`; checked at compile
    /// time below for the lane types this target has).
    const LANES: usize;
    const MR: usize;
    /// B registers per row of the tile.
    const NV: usize;
    const KC: usize;
    /// Rows of C per chunk (a target) and columns at most.
    const MC: usize;
    const NC: usize;
    const NR: usize = Self::NV * Self::LANES;
    const BLOCKING: Blocking = Blocking {
        mr: Self::MR,
        nr: Self::NR,
        kc: Self::KC,
        mc: Self::MC,
        nc: Self::NC,
    };

    /// Run `f` with this tile's MR and NV as const generics, over the lanes
    /// `L` of the trampoline that is running.
    fn with<L: Lanes, F: TileFn>(mode: Mode, f: F) -> F::Output;
}

/// Work generic over a tile: the microkernel loops and the packings.
pub(super) trait TileFn {
    type Output;
    fn call<L: Lanes, const MR: usize, const NV: usize, const EXACT: bool>(self) -> Self::Output;
}

/// The table: one row per path, `name: lanes per register, MR, NV, KC, MC, NC`.
macro_rules! tiles {
    ($($(#[$doc:meta])* $name:ident: $lanes:literal, $mr:literal, $nv:literal, $kc:literal,
       $mc:literal, $nc:literal;)*) => {
        $(
            $(#[$doc])*
            pub(super) struct $name;

            impl Tile for $name {
                const LANES: usize = $lanes;
                const MR: usize = $mr;
                const NV: usize = $nv;
                const KC: usize = $kc;
                const MC: usize = $mc;
                const NC: usize = $nc;

                #[inline(always)]
                fn with<L: Lanes, F: TileFn>(mode: Mode, f: F) -> F::Output {
                    match mode {
                        Mode::Exact => f.call::<L, $mr, $nv, true>(),
                        Mode::Fast => f.call::<L, $mr, $nv, false>(),
                    }
                }
            }
        )*
    };
}

tiles! {
    /// The scalar path: 4 × 4 of f32.
    ScalarTile: 1, 4, 4, 256, 64, 1536;
    /// SSE4.1: 6 rows × 2 registers of 4.
    V128Tile: 4, 6, 2, 256, 192, 768;
    /// AVX2 + FMA: 6 rows × 2 registers of 8.
    Avx2Tile: 8, 6, 2, 256, 192, 768;
    /// AVX-512: 8 rows × 3 registers of 16; KC, MC and NC measured on a
    /// 2-core Xeon with AVX-512 (48 KiB L1d, 2 MiB L2 per core).
    Avx512Tile: 16, 8, 3, 512, 256, 768;
}

// Each tile's lane count is its path's lane type's (a compile-time check).
const _: () = assert!(ScalarTile::LANES == <f32 as Lanes>::N);
#[cfg(target_arch = "x86_64")]
const _: () = {
    use crate::simd::{Avx2, Avx512, V128};
    assert!(V128Tile::LANES == <V128 as Lanes>::N);
    assert!(Avx2Tile::LANES == <Avx2 as Lanes>::N);
    assert!(Avx512Tile::LANES == <Avx512 as Lanes>::N);
};

/// The blocking of `path`.
pub(super) const fn blocking(path: KernelPath) -> Blocking {
    match path {
        KernelPath::Scalar => ScalarTile::BLOCKING,
        KernelPath::V128 => V128Tile::BLOCKING,
        KernelPath::Avx2 => Avx2Tile::BLOCKING,
        KernelPath::Avx512 => Avx512Tile::BLOCKING,
    }
}

/// Run `f` with the tile of `path` in `mode`, over lanes `L` (those of the
/// trampoline running it; `path` is `L::PATH` except for work that uses
/// scalar lanes on another path's tile, such as packing A).
#[inline(always)]
pub(super) fn with_tile<L: Lanes, F: TileFn>(path: KernelPath, mode: Mode, f: F) -> F::Output {
    match path {
        KernelPath::Scalar => ScalarTile::with::<L, F>(mode, f),
        KernelPath::V128 => V128Tile::with::<L, F>(mode, f),
        KernelPath::Avx2 => Avx2Tile::with::<L, F>(mode, f),
        KernelPath::Avx512 => Avx512Tile::with::<L, F>(mode, f),
    }
}
