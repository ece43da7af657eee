use super::*;

#[cfg(target_arch = "x86_64")]
#[test]
fn ftz_daz_left_set_by_the_caller_change_nothing_and_are_restored() {
    use crate::dispatch::{read_mxcsr, write_mxcsr};
    let _g = crate::dispatch::settings_lock();
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
    let _g = crate::dispatch::settings_lock();
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
        gemm(
            Token::current(),
            Mode::Exact,
            &Product::views(row_major(&v, 2, 2), row_major(&v, 2, 2), c.as_mut_ptr(), 2)
                .batched(0, 4, 4),
        )
    };
    assert!(c.iter().all(|x| x.is_nan()));
}

#[test]
fn strided_transposed_and_reversed_views() {
    let _g = crate::dispatch::settings_lock();
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
    let _g = crate::dispatch::settings_lock();
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
                        gemm(
                            Token::new(path).unwrap(),
                            mode,
                            &Product::views(a, b, c.as_mut_ptr(), n).batched(batch, a_bs, b_bs),
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
