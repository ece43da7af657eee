//! The blocked SIMD GEMM under every product of the engine: matmul, linear,
//! and the backward products.
//!
//! # The order (docs/kernels.md, "The order it keeps")
//! Each output C[i, j] has one f32 accumulator that starts at +0 and adds
//! its terms A[i, p]·B[p, j] for p = 0, 1, …, k−1 in that order. Exact mode:
//! each term is a rounded multiply then a rounded add (no fma anywhere), and
//! a NaN result is written as the canonical quiet NaN 0x7FC00000. Fast mode:
//! each term is one fma. Everything else in this module — packing, register
//! tiles, k blocks, chunks, threads, the vector width — moves data around
//! that order and never changes it, so exact mode gives the same bits on
//! every path and thread count, and fast mode the same bits on every thread
//! count (and, since an fma is correctly rounded wherever it is done, on
//! every path too, up to NaN payloads).
//!
//! # Structure
//! * `operand`: the operands of a [`Product`] — A's source ([`A`]: a view or
//!   a [`PackedA`]), B's ([`B`]: a view, [`OffsetRows`], [`OffsetCols`]), C,
//!   the batch and [`Start`] (β);
//! * `tile`: each path's register tile and k block, one table;
//! * `plan`: the chunk grid (shape only);
//! * `loops`: the BLIS loop nest in two parallel phases: B packed once
//!   (or read in place for short products), then the chunks of C, each
//!   packing its rows of A (k blocks, slivers, panels);
//! * `pack`: strided operands → contiguous panels (transposes are free);
//! * `kernel`: the MR × NR register tile, written once over [`Lanes`]
//!   (B's rows at a fixed stride, or at listed offsets);
//! * `peak`: the measured arithmetic peak the benchmark compares against.
//!
//! Threads take whole chunks (output tiles with their whole k range) through
//! [`par_chunks`], which also clears the MXCSR flush-to-zero bits on every
//! thread that computes, the caller's included. There is no reduction
//! across threads. See docs/kernels.md for the design and its limits.
//!
//! [`Lanes`]: crate::simd::Lanes

mod kernel;
mod loops;
mod operand;
mod pack;
mod peak;
mod plan;
#[cfg(test)]
mod tests;
mod tile;

use crate::dispatch::{par_chunks, Mode};
use crate::ptr::Ptr;
use crate::simd::{run_on, Token};
use crate::storage::Buffer;
pub use operand::{MatRef, OffsetCols, OffsetRows, PackedA, Product, Start, A, B};
pub use peak::peak_gflops;

/// The register tile's width NR on `path`: the columns of C one B sliver
/// covers, for callers that choose between two shapes of the same product.
/// A product of n columns runs n / NR full-width tiles and, for the rest,
/// one tile of the fewest whole registers that cover it (slower per column
/// than a full tile: fewer multiply-adds per broadcast of A).
pub fn tile_cols(path: crate::dispatch::KernelPath) -> usize {
    tile::blocking(path).nr
}

/// Run `p` on the kernel path of `token` in `mode`: the one entry point of
/// every product.
///
/// # Safety
/// Every element A's and B's sources reach for each batch item must be
/// valid to read (a packed A: its source unchanged since it was packed); C
/// valid for m rows of n writes (and reads, with [`Start::Continue`]) at
/// row stride `ldc` for each item, the items' C disjoint and not
/// overlapping A or B.
pub unsafe fn gemm(token: Token, mode: Mode, p: &Product) {
    let (m, k, n) = (p.m(), p.a_k(), p.n());
    assert_eq!(p.b_k(), k, "gemm: A is {m}×{k} but B has {} rows", p.b_k());
    assert!(p.ldc >= n, "gemm: ldc {} < n {n}", p.ldc);
    if let A::Packed(a) = p.a {
        assert!(
            a.token == token && p.a_bs == 0,
            "gemm: a packed A runs on the path it was packed for, unbatched"
        );
    }
    if let B::OffsetCols(b) = p.b {
        assert!(b.run > 0 || k == 0, "gemm: B's runs are empty");
    }
    if p.batch == 0 || m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if p.start == Start::Zero {
            // SAFETY: forwarded from the caller.
            unsafe { empty_sums(p.c, p.batch, m, n, p.ldc, p.c_bs) };
        }
        // Continued: no terms, every accumulator keeps its value.
        return;
    }
    // B is read in place when its rows are contiguous (a non-negative row
    // stride, as the kernel's step is a usize) and the product is short, or
    // always for rows by offset; B by column offsets is always packed.
    let b_contiguous_rows = match p.b {
        B::View(b) => b.cs == 1 && b.rs >= 0,
        B::OffsetRows(_) | B::OffsetCols(_) => false,
    };
    let mut plan = plan::Plan::new(token.path(), p.batch, m, n, k, b_contiguous_rows);
    if let B::OffsetRows(_) = p.b {
        plan.direct_b = true;
    }
    let job = loops::Job::new(mode, plan, p);
    // SAFETY: forwarded from the caller.
    unsafe { run_job(token, job) }
}

/// A product over k = 0: every output is the empty sum, +0.
///
/// # Safety
/// C valid for n writes on each of the m rows (stride ldc) of each of the
/// batch items (stride c_bs).
unsafe fn empty_sums(c: *mut f32, batch: usize, m: usize, n: usize, ldc: usize, c_bs: usize) {
    for item in 0..batch {
        for i in 0..m {
            // SAFETY: as the caller promised.
            unsafe { std::ptr::write_bytes(c.add(item * c_bs + i * ldc), 0, n) };
        }
    }
}

/// Phase 1 (B packed, unless read in place) then phase 2 (the chunks of C),
/// on the pool or, for a small product, on the calling thread.
///
/// # Safety
/// The job's operands must be valid as [`gemm`] requires.
unsafe fn run_job(token: Token, mut job: loops::Job) {
    let plan = job.plan;
    let b_pack = Buffer::new(if plan.direct_b {
        0
    } else {
        job.b_items() * plan.k * plan.n_pad() * 4
    });
    if !plan.direct_b {
        job.b_packed = Some(Ptr::new(
            b_pack.as_ptr() as *mut f32,
            job.b_items() * plan.k * plan.n_pad(),
        ));
    }
    let job = &job;
    let run = || {
        if !plan.direct_b {
            par_chunks(job.pack_chunks(), |index| {
                run_on(token, loops::PackB { job, index })
            });
        }
        par_chunks(plan.chunks(), |index| {
            run_on(token, loops::Chunk { job, index })
        });
    };
    // A small product runs its chunks on the calling thread: waking the
    // pool costs about what it would save (measured on the recurrent
    // layers' per-step [8, 128] × [128, 512] products, where the 2-thread
    // LSTM was slower than the 1-thread one). Same chunks, same bits.
    crate::dispatch::serial_below(plan.macs(), crate::dispatch::INLINE_MACS, run)
}
