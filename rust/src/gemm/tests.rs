//! GEMM tests. Expected values come from sources independent of the GEMM:
//! the canonical order written as the plain triple loop (its definition),
//! a float64 reference with a derived error bound, and hand derivations.

use super::plan::{blocking, Plan};
use super::{gemm_on, MatRef};
use crate::dispatch::{available_paths, set_threads, KernelPath, Mode};
use crate::kernels::CANONICAL_NAN;
use crate::simd::Token;
use std::sync::Mutex;

/// Tests that change the global thread count hold this, so that each one
/// knows the count it runs under.
static THREADS: Mutex<()> = Mutex::new(());
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
        gemm_on(
            Token::new(path).unwrap(),
            mode,
            1,
            a,
            0,
            b,
            0,
            c.as_mut_ptr(),
            ldc,
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

#[test]
fn every_tail_every_path_every_thread_count() {
    let _g = THREADS.lock().unwrap_or_else(|e| e.into_inner());
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for d in 1..=70 {
        for axis in 0..3 {
            let mut dims = [1 + rng.below(70), 1 + rng.below(70), 1 + rng.below(70)];
            dims[axis] = d;
            let [m, k, n] = dims;
            let special = (d + axis) % 3 == 0;
            let av = values(&mut rng, m * k, special);
            let bv = values(&mut rng, k * n, special);
            check_everywhere(
                row_major(&av, m, k),
                row_major(&bv, k, n),
                &THREAD_COUNTS,
                "tail",
            );
        }
    }
}

#[test]
fn large_shapes_every_path_every_thread_count() {
    let _g = THREADS.lock().unwrap_or_else(|e| e.into_inner());
    let mut rng = Rng(42);
    for (m, k, n) in [
        (257, 300, 263),
        (8, 128, 512),
        (1, 1500, 517),
        (515, 3, 1029),
        (130, 700, 50),
    ] {
        let av = values(&mut rng, m * k, true);
        let bv = values(&mut rng, k * n, true);
        check_everywhere(
            row_major(&av, m, k),
            row_major(&bv, k, n),
            &THREAD_COUNTS,
            "large",
        );
    }
}

/// γ_k = k·u / (1 − k·u) with u = 2^-24: the classic bound for a recursive
/// sum of k rounded products (Higham, Accuracy and Stability, §3.1), which
/// also holds for fma steps (one rounding per step instead of two).
/// Underflow adds at most half the smallest subnormal (2^-150) per rounding,
/// two roundings per term.
fn bound(k: usize, abs_sum: f64) -> f64 {
    let u = 2f64.powi(-24);
    let ku = k as f64 * u;
    ku / (1.0 - ku) * abs_sum + 2.0 * k as f64 * 2f64.powi(-150)
}

#[test]
fn both_modes_within_the_error_bound_of_f64() {
    let _g = THREADS.lock().unwrap_or_else(|e| e.into_inner());
    let mut rng = Rng(7);
    for (m, k, n) in [(33, 4099, 29), (64, 1024, 64), (5, 20000, 7), (70, 70, 70)] {
        let av = values(&mut rng, m * k, false);
        let bv = values(&mut rng, k * n, false);
        let (a, b) = (row_major(&av, m, k), row_major(&bv, k, n));
        for mode in [Mode::Exact, Mode::Fast] {
            for path in available_paths() {
                let got = run(path, 2, mode, a, b);
                for i in 0..m {
                    for j in 0..n {
                        let (mut s, mut abs) = (0f64, 0f64);
                        for p in 0..k {
                            let t = av[i * k + p] as f64 * bv[p * n + j] as f64;
                            s += t;
                            abs += t.abs();
                        }
                        // The f64 reference's own error (γ_k in f64) is
                        // added to the allowance.
                        let allow = bound(k, abs) + k as f64 * 2f64.powi(-53) * abs * 1.01;
                        let err = (got[i * n + j] as f64 - s).abs();
                        assert!(
                            err <= allow,
                            "{path:?} {mode:?} {m}x{k}x{n} ({i},{j}): err {err:e} > {allow:e}"
                        );
                    }
                }
            }
        }
    }
}

/// One product on every path, both modes, against hand-derived bits.
fn hand(a: &[f32], b: &[f32], m: usize, k: usize, n: usize, exact: &[u32], fast: &[u32]) {
    for path in available_paths() {
        for (mode, want) in [(Mode::Exact, exact), (Mode::Fast, fast)] {
            let got = run(path, 1, mode, row_major(a, m, k), row_major(b, k, n));
            let want: Vec<f32> = want.iter().map(|&w| f32::from_bits(w)).collect();
            assert_bits(mode, &want, &got, &format!("hand {path:?} {mode:?}"));
        }
    }
}

#[test]
fn hand_derived_special_values() {
    let _g = THREADS.lock().unwrap_or_else(|e| e.into_inner());
    let nan = |b: u32| f32::from_bits(b);
    // (-1)·(+0) = -0, and +0 + -0 = +0: the accumulator's start shows.
    hand(&[-1.0], &[0.0], 1, 1, 1, &[0], &[0]);
    // inf·0 is NaN; input NaN payloads are not passed on in exact mode.
    // k = 2: A = [[inf, 0], [1, 1]], B = [[0, NaN], [-inf, sNaN]].
    let a = [f32::INFINITY, 0.0, 1.0, 1.0];
    let b = [0.0, nan(0xFFC1_2345), f32::NEG_INFINITY, nan(0x7FA0_0001)];
    // C00 = inf·0 + 0·(-inf) = NaN;  C01 = inf·NaN + 0·NaN = NaN;
    // C10 = 1·0 + 1·(-inf) = -inf;   C11 = NaN + NaN = NaN.
    hand(
        &a,
        &b,
        2,
        2,
        2,
        &[CANONICAL_NAN, CANONICAL_NAN, 0xFF80_0000, CANONICAL_NAN],
        &[CANONICAL_NAN, CANONICAL_NAN, 0xFF80_0000, CANONICAL_NAN],
    );
    // Overflow: MAX + MAX = +inf, then inf + (-MAX) stays +inf.
    hand(
        &[1.0, 1.0, 1.0],
        &[f32::MAX, f32::MAX, -f32::MAX],
        1,
        3,
        1,
        &[0x7F80_0000],
        &[0x7F80_0000],
    );
    // Subnormals: 2^-149 · 1 = 2^-149 (bits 1); 2^-70 · 2^-72 = 2^-142
    // (bits 2^7); summed over k = 2: bits 129.
    hand(
        &[f32::from_bits(1), 2f32.powi(-70)],
        &[1.0, 2f32.powi(-72)],
        1,
        2,
        1,
        &[129],
        &[129],
    );
}

#[test]
fn exact_and_fast_differ_where_fma_keeps_a_bit() {
    let _g = THREADS.lock().unwrap_or_else(|e| e.into_inner());
    // x = 1 + 2^-12. Terms: 1·(-1), then x·x = 1 + 2^-11 + 2^-24 exactly.
    // exact: round(x·x) = 1 + 2^-11 (a tie, to even), minus 1 → 2^-11.
    // fast:  fma(x, x, -1) = 2^-11 + 2^-24 exactly.
    // Repeated over a 9 × 53 output so every lane and edge of every tile
    // sees it.
    let x = 1.0 + 2f32.powi(-12);
    let (m, n) = (9, 53);
    let a: Vec<f32> = (0..m).flat_map(|_| [1.0, x]).collect();
    let b: Vec<f32> = [vec![-1.0; n], vec![x; n]].concat();
    let exact = vec![2f32.powi(-11).to_bits(); m * n];
    let fast = vec![(2f32.powi(-11) + 2f32.powi(-24)).to_bits(); m * n];
    hand(&a, &b, m, 2, n, &exact, &fast);
}

#[cfg(target_arch = "x86_64")]
#[test]
fn ftz_daz_left_set_by_the_caller_change_nothing_and_are_restored() {
    use crate::dispatch::{read_mxcsr, write_mxcsr};
    let _g = THREADS.lock().unwrap_or_else(|e| e.into_inner());
    const FTZ_DAZ: u32 = (1 << 15) | (1 << 6);
    // A = 2^-149 (subnormal input: DAZ would read it as 0), B = 1: each
    // term is 2^-149 (a subnormal result: FTZ would flush it), and the sum
    // of k of them is k·2^-149, bits k.
    let (m, k, n) = (40, 300, 70);
    let av = vec![f32::from_bits(1); m * k];
    let bv = vec![1.0f32; k * n];
    for path in available_paths() {
        for threads in [1, 2] {
            for mode in [Mode::Exact, Mode::Fast] {
                let before = read_mxcsr();
                write_mxcsr(before | FTZ_DAZ);
                let got = run(
                    path,
                    threads,
                    mode,
                    row_major(&av, m, k),
                    row_major(&bv, k, n),
                );
                let after = read_mxcsr();
                write_mxcsr(before);
                assert_eq!(
                    after,
                    before | FTZ_DAZ,
                    "the caller's MXCSR was not restored"
                );
                assert!(
                    got.iter().all(|x| x.to_bits() == k as u32),
                    "{path:?} {mode:?} threads {threads}: subnormals flushed"
                );
            }
        }
    }
}

#[test]
fn empty_dimensions() {
    let _g = THREADS.lock().unwrap_or_else(|e| e.into_inner());
    let v = [1.0f32; 16];
    for path in available_paths() {
        for mode in [Mode::Exact, Mode::Fast] {
            // k = 0: every output is +0 (C was NaN-filled).
            let got = run(path, 2, mode, row_major(&v, 3, 0), row_major(&v, 0, 5));
            assert!(got.len() == 15 && got.iter().all(|x| x.to_bits() == 0));
            // m = 0 or n = 0: nothing written (run checks the padding).
            assert!(run(path, 2, mode, row_major(&v, 0, 4), row_major(&v, 4, 3)).is_empty());
            assert!(run(path, 2, mode, row_major(&v, 3, 4), row_major(&v, 4, 0)).is_empty());
        }
    }
    // batch = 0 writes nothing.
    let mut c = [f32::NAN; 4];
    // SAFETY: nothing is read or written for batch 0.
    unsafe {
        gemm_on(
            Token::current(),
            Mode::Exact,
            0,
            row_major(&v, 2, 2),
            4,
            row_major(&v, 2, 2),
            4,
            c.as_mut_ptr(),
            2,
        )
    };
    assert!(c.iter().all(|x| x.is_nan()));
}

#[test]
fn strided_transposed_and_reversed_views() {
    let _g = THREADS.lock().unwrap_or_else(|e| e.into_inner());
    let mut rng = Rng(99);
    let (m, k, n) = (37, 45, 51);
    let at_store = values(&mut rng, k * m, true); // A stored k × m: A = storeᵀ
    let bt_store = values(&mut rng, n * k, true); // B stored n × k: B = storeᵀ
    let wide = values(&mut rng, m * 3 * k, true); // A = every third column
    let at = row_major(&at_store, k, m).t();
    let bt = row_major(&bt_store, n, k).t();
    let a_cols = MatRef {
        ptr: wide.as_ptr(),
        rows: m,
        cols: k,
        rs: 3 * k as isize,
        cs: 3,
    };
    // Rows of A reversed through a negative row stride.
    let a_rev = MatRef {
        ptr: at_store[(m - 1) * k..].as_ptr(),
        rows: m,
        cols: k,
        rs: -(k as isize),
        cs: 1,
    };
    let b_plain_store = values(&mut rng, k * n, true);
    let b = row_major(&b_plain_store, k, n);
    check_everywhere(at, b, &[1, 3], "xᵀ·g");
    check_everywhere(a_cols, bt, &[1, 3], "strided·Wᵀ");
    check_everywhere(at, bt, &[2], "ᵀ·ᵀ");
    check_everywhere(a_rev, b, &[2], "reversed");
    // B with its rows reversed (packed, never read in place) and with a
    // zero row stride (every k reads the same row; read in place), each
    // for a short product (m ≤ 16) and a tall one.
    let b_rev = MatRef {
        ptr: b_plain_store[(k - 1) * n..].as_ptr(),
        rows: k,
        cols: n,
        rs: -(n as isize),
        cs: 1,
    };
    let b_row = MatRef {
        ptr: b_plain_store.as_ptr(),
        rows: k,
        cols: n,
        rs: 0,
        cs: 1,
    };
    let a_short = MatRef { rows: 5, ..at };
    for bv in [b_rev, b_row] {
        check_everywhere(a_short, bv, &[2], "short·B view");
        check_everywhere(at, bv, &[2], "tall·B view");
    }
}

#[test]
fn batched_with_broadcast_operands() {
    let _g = THREADS.lock().unwrap_or_else(|e| e.into_inner());
    let mut rng = Rng(5);
    // m = 13 reads B in place, m = 40 packs it (once per distinct item).
    for (batch, m, k, n) in [(5, 13, 29, 31), (3, 40, 300, 37)] {
        let av = values(&mut rng, batch * m * k, true);
        let bv = values(&mut rng, batch * k * n, true);
        // (a batch stride, b batch stride): both batched, A broadcast, B broadcast.
        for (a_bs, b_bs) in [
            ((m * k) as isize, (k * n) as isize),
            (0, (k * n) as isize),
            ((m * k) as isize, 0),
        ] {
            for path in available_paths() {
                for mode in [Mode::Exact, Mode::Fast] {
                    set_threads(3).unwrap();
                    let mut c = vec![f32::NAN; batch * m * n];
                    let (a, b) = (row_major(&av, m, k), row_major(&bv, k, n));
                    // SAFETY: every batch item's view lies inside av / bv; C holds batch·m·n.
                    unsafe {
                        gemm_on(
                            Token::new(path).unwrap(),
                            mode,
                            batch,
                            a,
                            a_bs,
                            b,
                            b_bs,
                            c.as_mut_ptr(),
                            n,
                        )
                    };
                    for item in 0..batch {
                        let ai = MatRef {
                            ptr: av[item * a_bs as usize..].as_ptr(),
                            ..a
                        };
                        let bi = MatRef {
                            ptr: bv[item * b_bs as usize..].as_ptr(),
                            ..b
                        };
                        let want = naive(mode, ai, bi);
                        assert_bits(
                            mode,
                            &want,
                            &c[item * m * n..(item + 1) * m * n],
                            &format!("batch {item} {path:?} {mode:?}"),
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn chunks_cover_c_once_and_depend_on_the_shape_only() {
    for path in KernelPath::ALL {
        let blk = blocking(path);
        for (batch, m, n, k) in [
            (1, 1, 1, 1),
            (1, 8, 512, 128),
            (1, 1024, 1024, 1024),
            (3, 70, 33, 5),
            (2, 2048, 512, 384),
        ] {
            let plan = Plan::new(path, batch, m, n, k, true);
            assert_eq!(plan.mc % blk.mr, 0);
            assert_eq!(plan.nc % blk.nr, 0);
            let mut hits = vec![0u8; batch * m * n];
            for i in 0..plan.chunks() {
                let (item, r0, rows, c0, cols) = plan.chunk(i);
                for r in r0..r0 + rows {
                    for c in c0..c0 + cols {
                        hits[item * m * n + r * n + c] += 1;
                    }
                }
            }
            assert!(hits.iter().all(|&h| h == 1), "{path:?} {m}x{n}");
        }
    }
}

/// A product over k cut into consecutive ranges — the first by a plain
/// call, the rest continued from C — gives the canonical order's bits over
/// the whole k (cuts inside and across k blocks, special values included
/// where k is short).
#[test]
fn continued_calls_over_k_ranges_give_one_products_bits() {
    let _guard = THREADS.lock().unwrap_or_else(|e| e.into_inner());
    let mut rng = Rng(0x5eed_c0de);
    for &(m, k, n, ref cuts) in &[
        (7usize, 600usize, 37usize, vec![0usize, 1, 256, 300, 599]),
        (64, 288, 40, vec![0, 100]),
        (3, 5, 2, vec![0, 2, 2, 5]),
    ] {
        // Special values only where k is short: over hundreds of terms nearly
        // every output would be NaN, which hides a restarted accumulator.
        let av = values(&mut rng, m * k, k < 32);
        let bv = values(&mut rng, k * n, k < 32);
        let (a, b) = (row_major(&av, m, k), row_major(&bv, k, n));
        for mode in [Mode::Exact, Mode::Fast] {
            let want = naive(mode, a, b);
            for path in available_paths() {
                for threads in [1, 3] {
                    set_threads(threads).unwrap();
                    let mut c = vec![f32::from_bits(0x7FBA_D0D0); m * n];
                    for (i, &lo) in cuts.iter().enumerate() {
                        let hi = cuts.get(i + 1).copied().unwrap_or(k);
                        // Columns lo..hi of A, rows lo..hi of B.
                        let a_part = MatRef {
                            ptr: av[lo..].as_ptr(),
                            cols: hi - lo,
                            ..a
                        };
                        let b_part = MatRef {
                            ptr: bv[lo * n..].as_ptr(),
                            rows: hi - lo,
                            ..b
                        };
                        // SAFETY: the views lie inside the vectors; C holds m × n.
                        unsafe {
                            super::gemm_with(
                                Token::new(path).unwrap(),
                                mode,
                                1,
                                a_part,
                                0,
                                b_part,
                                0,
                                c.as_mut_ptr(),
                                n,
                                i > 0,
                            )
                        };
                    }
                    let tag =
                        format!("{m}x{k}x{n} cuts {cuts:?} {path:?} {mode:?} threads {threads}");
                    assert_bits(mode, &want, &c, &tag);
                }
            }
        }
    }
}

/// A packed once and B read in place through row offsets give the canonical
/// order's bits for every item of a batch: B's rows overlap (as a
/// convolution's taps do), the shapes leave partial panels and slivers, and
/// k spans several k blocks; C's items sit at a stride of their own.
#[test]
fn packed_a_and_offset_rows_give_the_definition_bits() {
    let _guard = THREADS.lock().unwrap_or_else(|e| e.into_inner());
    let mut rng = Rng(0x0FF5_E075);
    for &(m, k, n, batch) in &[
        (64usize, 288usize, 128usize, 3usize),
        (7, 600, 37, 2),
        (13, 9, 5, 4),
        (1, 1, 1, 1),
    ] {
        // Special values only where k is short: over hundreds of terms nearly
        // every output would be NaN, which hides wrong operands.
        let special = k < 32;
        let av = values(&mut rng, m * k, special);
        let a = row_major(&av, m, k);
        // Item i's B row p starts at i·b_bs + off[p]: rows of n overlapping
        // their neighbours, in a shuffled order.
        let b_bs = n + 5;
        let offsets: Vec<isize> = (0..k).map(|_| rng.below(3 * n + 7) as isize).collect();
        let span = (batch - 1) * b_bs + 3 * n + 7 + n;
        let bv = values(&mut rng, span, special);
        let ldc = n + 2;
        let c_bs = m * ldc + 3;
        for mode in [Mode::Exact, Mode::Fast] {
            for path in available_paths() {
                let token = Token::new(path).unwrap();
                // SAFETY: A is a live row-major matrix.
                let packed = unsafe { super::PackedA::new(token, a) };
                for threads in [1, 3] {
                    set_threads(threads).unwrap();
                    let sentinel = f32::from_bits(0x7FBA_D0D0);
                    let mut c = vec![sentinel; batch * c_bs];
                    // SAFETY: every B[i][p, j] lies inside bv (offsets <
                    // 3n + 7, j < n); each item's C holds m rows of ldc.
                    unsafe {
                        super::gemm_offset_rows(
                            mode,
                            &packed,
                            super::OffsetRows {
                                ptr: bv.as_ptr(),
                                offsets: &offsets,
                                cols: n,
                            },
                            batch,
                            b_bs as isize,
                            c.as_mut_ptr(),
                            ldc,
                            c_bs,
                        )
                    };
                    for item in 0..batch {
                        let explicit: Vec<f32> = (0..k * n)
                            .map(|e| bv[item * b_bs + offsets[e / n] as usize + e % n])
                            .collect();
                        let want = naive(mode, a, row_major(&explicit, k, n));
                        let got: Vec<f32> = (0..m * n)
                            .map(|e| c[item * c_bs + e / n * ldc + e % n])
                            .collect();
                        let tag =
                            format!("{m}x{k}x{n} item {item} {path:?} {mode:?} threads {threads}");
                        assert_bits(mode, &want, &got, &tag);
                        for i in 0..m {
                            let pad = &c[item * c_bs + i * ldc + n..item * c_bs + (i + 1) * ldc];
                            assert!(
                                pad.iter().all(|x| x.to_bits() == sentinel.to_bits()),
                                "{tag}: wrote past n"
                            );
                        }
                    }
                }
            }
        }
    }
}

/// B packed from column offsets in runs gives the canonical order's bits:
/// columns overlapping and shuffled, runs shorter than a k block and not a
/// multiple of 4 (the SSE transpose's remainder), a block starting inside
/// a run, partial slivers; a second call continues the first's sums.
#[test]
fn offset_columns_give_the_definition_bits() {
    let _guard = THREADS.lock().unwrap_or_else(|e| e.into_inner());
    let mut rng = Rng(0x0C01_5EED);
    for &(m, k, n, run, run_stride) in &[
        (64usize, 256usize, 288usize, 128usize, 131isize),
        (7, 600, 37, 50, 53),
        (13, 9, 5, 3, 7),
        (3, 300, 17, 301, 0),
    ] {
        // Special values only where k is short (see above).
        let special = k < 32;
        let av = values(&mut rng, m * k, special);
        let a = row_major(&av, m, k);
        let groups = k.div_ceil(run);
        let span = (groups - 1) * run_stride as usize + run;
        let offsets: Vec<isize> = (0..n).map(|_| rng.below(40) as isize).collect();
        let bv = values(&mut rng, span + 40, special);
        let explicit: Vec<f32> = (0..k * n)
            .map(|e| {
                let (q, j) = (e / n, e % n);
                bv[offsets[j] as usize + (q / run) * run_stride as usize + q % run]
            })
            .collect();
        let b = super::OffsetCols {
            ptr: bv.as_ptr(),
            offsets: &offsets,
            rows: k,
            run,
            run_stride,
        };
        for mode in [Mode::Exact, Mode::Fast] {
            let want = naive(mode, a, row_major(&explicit, k, n));
            for path in available_paths() {
                for threads in [1, 3] {
                    set_threads(threads).unwrap();
                    let mut c = vec![f32::from_bits(0x7FBA_D0D0); m * n];
                    // The first 100 rows of B, then the rest continued.
                    let cut = 100.min(k);
                    let tail = super::OffsetCols {
                        ptr: bv[(cut / run) * run_stride as usize + cut % run..].as_ptr(),
                        rows: k - cut,
                        ..b
                    };
                    // SAFETY: every B element lies inside bv; C holds m × n.
                    unsafe {
                        let token = Token::new(path).unwrap();
                        let a_head = MatRef { cols: cut, ..a };
                        let a_tail = MatRef {
                            ptr: av[cut..].as_ptr(),
                            cols: k - cut,
                            ..a
                        };
                        let head = super::OffsetCols { rows: cut, ..b };
                        super::gemm_offset_cols_on(
                            token,
                            mode,
                            a_head,
                            head,
                            c.as_mut_ptr(),
                            n,
                            false,
                        );
                        if cut % run == 0 {
                            super::gemm_offset_cols_on(
                                token,
                                mode,
                                a_tail,
                                tail,
                                c.as_mut_ptr(),
                                n,
                                true,
                            );
                        } else {
                            // A tail starting inside a run: give it the
                            // whole B and only A's tail columns would not
                            // line up, so continue with the written-out B.
                            let bt = MatRef {
                                ptr: explicit[cut * n..].as_ptr(),
                                rows: k - cut,
                                ..row_major(&explicit, k, n)
                            };
                            super::gemm_with(
                                token,
                                mode,
                                1,
                                a_tail,
                                0,
                                bt,
                                0,
                                c.as_mut_ptr(),
                                n,
                                true,
                            );
                        }
                    }
                    let tag = format!("{m}x{k}x{n} run {run} {path:?} {mode:?} threads {threads}");
                    assert_bits(mode, &want, &c, &tag);
                }
            }
        }
    }
}
