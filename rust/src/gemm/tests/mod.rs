//! GEMM tests. Expected values come from sources independent of the GEMM:
//! the canonical order written as the plain triple loop (its definition),
//! a float64 reference with a derived error bound, and hand derivations.
//!
//! This module holds the shared helpers (the random values, the definition,
//! one run on a path and thread count); `definition.rs` checks plain products
//! against the definition, the error bound and hand derivations; `layouts.rs`
//! the floating-point environment, empty dimensions, views, batches and the
//! chunk grid; `operands.rs` the in-place operand sources (continued
//! products, packed A, offset rows and columns).

mod definition;
mod layouts;
mod operands;

use super::plan::Plan;
use super::tile::blocking;
use super::{gemm, MatRef, OffsetCols, OffsetRows, PackedA, Product, Start, A, B};
use crate::dispatch::{available_paths, set_threads, KernelPath, Mode};
use crate::kernels::CANONICAL_NAN;
use crate::simd::Token;

/// Tests that change the global thread count hold this, so that each one
/// knows the count it runs under.
const THREAD_COUNTS: [usize; 4] = [1, 2, 3, 8];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Uniform in [-1, 1) scaled by 2^e, e in -4..=4.
    fn val(&mut self) -> f32 {
        let u = (self.next() >> 40) as f32 / (1u64 << 24) as f32;
        let e = self.below(9) as i32 - 4;
        (2.0 * u - 1.0) * 2f32.powi(e)
    }
}

const SPECIALS: [u32; 12] = [
    0x7FC0_0000, // NaN
    0xFFC1_2345, // negative NaN with a payload
    0x7FA0_0001, // signalling NaN
    0x7F80_0000, // +inf
    0xFF80_0000, // -inf
    0x8000_0000, // -0
    0x0000_0000, // +0
    0x0000_0001, // smallest subnormal
    0x807F_FFFF, // largest negative subnormal
    0x0040_0000, // a mid subnormal
    0x7F7F_FFFF, // f32::MAX
    0x0080_0000, // smallest normal
];

/// `len` values; with `special`, about one in 128 is a special value.
fn values(rng: &mut Rng, len: usize, special: bool) -> Vec<f32> {
    (0..len)
        .map(|_| {
            if special && rng.below(128) == 0 {
                f32::from_bits(SPECIALS[rng.below(SPECIALS.len())])
            } else {
                rng.val()
            }
        })
        .collect()
}

fn row_major(v: &[f32], rows: usize, cols: usize) -> MatRef {
    assert!(v.len() >= rows * cols);
    MatRef {
        ptr: v.as_ptr(),
        rows,
        cols,
        rs: cols as isize,
        cs: 1,
    }
}

/// The canonical order, as the contract states it (exact: NaN canonical).
fn naive(mode: Mode, a: MatRef, b: MatRef) -> Vec<f32> {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    let mut c = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for p in 0..k {
                // SAFETY: (i, p) and (p, j) lie inside the views.
                let (x, y) = unsafe { (a.at(i, p), b.at(p, j)) };
                acc = match mode {
                    Mode::Exact => acc + x * y,
                    Mode::Fast => x.mul_add(y, acc),
                };
            }
            c[i * n + j] = if mode == Mode::Exact && acc.is_nan() {
                f32::from_bits(CANONICAL_NAN)
            } else {
                acc
            };
        }
    }
    c
}

/// Run the GEMM on one path and thread count into a NaN-filled C with row
/// stride n + 3 (the 3 padding columns must stay untouched).
fn run(path: KernelPath, threads: usize, mode: Mode, a: MatRef, b: MatRef) -> Vec<f32> {
    let (m, n) = (a.rows, b.cols);
    let ldc = n + 3;
    let sentinel = f32::from_bits(0x7FBA_D0D0);
    let mut c = vec![sentinel; m * ldc];
    set_threads(threads).unwrap();
    // SAFETY: the views are inside live vectors; C holds m rows of ldc.
    unsafe {
        gemm(
            Token::new(path).unwrap(),
            mode,
            &Product::views(a, b, c.as_mut_ptr(), ldc),
        )
    };
    let mut out = Vec::with_capacity(m * n);
    for i in 0..m {
        out.extend_from_slice(&c[i * ldc..i * ldc + n]);
        assert!(
            c[i * ldc + n..(i + 1) * ldc]
                .iter()
                .all(|x| x.to_bits() == sentinel.to_bits()),
            "wrote past n"
        );
    }
    out
}

/// Bit equality; in fast mode any NaN matches any NaN (payloads are free).
fn assert_bits(mode: Mode, want: &[f32], got: &[f32], what: &str) {
    assert_eq!(want.len(), got.len());
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        let ok = w.to_bits() == g.to_bits() || (mode == Mode::Fast && w.is_nan() && g.is_nan());
        assert!(
            ok,
            "{what}: output {i}: want {w:e} ({:#010x}), got {g:e} ({:#010x})",
            w.to_bits(),
            g.to_bits()
        );
    }
}

/// Every available path × thread count, both modes, gives the canonical
/// order's bits for the views `a` · `b`.
fn check_everywhere(a: MatRef, b: MatRef, threads: &[usize], what: &str) {
    for mode in [Mode::Exact, Mode::Fast] {
        let want = naive(mode, a, b);
        for path in available_paths() {
            for &t in threads {
                let got = run(path, t, mode, a, b);
                let tag = format!(
                    "{what} {}x{}x{} {path:?} {mode:?} threads {t}",
                    a.rows, a.cols, b.cols
                );
                assert_bits(mode, &want, &got, &tag);
            }
        }
    }
}
