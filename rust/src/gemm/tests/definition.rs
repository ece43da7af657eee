use super::*;

#[test]
fn every_tail_every_path_every_thread_count() {
    let _g = crate::dispatch::settings_lock();
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
    let _g = crate::dispatch::settings_lock();
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

/// A short last panel of A (1–4 rows past the last full MR panel, on every
/// path's MR) runs over several slivers of B at once; its outputs keep the
/// canonical order's bits, with B read in place (a plain row-major view,
/// few rows) and packed (through a transposed view), over one k block and
/// several, with whole groups of slivers, a remainder of full slivers and a
/// partial last sliver.
#[test]
fn short_panels_over_many_slivers_keep_the_bits() {
    let _g = crate::dispatch::settings_lock();
    let mut rng = Rng(0x5107_7A11);
    for m in [1, 2, 3, 4, 7, 8, 9, 10, 11, 14, 15, 19, 20] {
        for (k, n) in [(7, 201), (300, 130), (520, 64)] {
            let special = k < 32;
            let av = values(&mut rng, m * k, special);
            let bv = values(&mut rng, k * n, special);
            check_everywhere(
                row_major(&av, m, k),
                row_major(&bv, k, n),
                &[1, 2],
                "short panel, B in place",
            );
            // The same B stored transposed ([n, k]) and viewed as k × n.
            let bt: Vec<f32> = (0..n * k).map(|e| bv[(e % k) * n + e / k]).collect();
            let b_view = MatRef {
                ptr: bt.as_ptr(),
                rows: k,
                cols: n,
                rs: 1,
                cs: k as isize,
            };
            check_everywhere(
                row_major(&av, m, k),
                b_view,
                &[1, 2],
                "short panel, B packed",
            );
        }
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
    let _g = crate::dispatch::settings_lock();
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
    let _g = crate::dispatch::settings_lock();
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
    let _g = crate::dispatch::settings_lock();
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
