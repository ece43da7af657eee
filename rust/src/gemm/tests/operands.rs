use super::*;

/// A product over k cut into consecutive ranges — the first by a plain
/// call, the rest continued from C — gives the canonical order's bits over
/// the whole k (cuts inside and across k blocks, special values included
/// where k is short).
#[test]
fn continued_calls_over_k_ranges_give_one_products_bits() {
    let _guard = crate::dispatch::settings_lock();
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
                            gemm(
                                Token::new(path).unwrap(),
                                mode,
                                &Product::views(a_part, b_part, c.as_mut_ptr(), n)
                                    .start(if i > 0 { Start::Continue } else { Start::Zero }),
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
    let _guard = crate::dispatch::settings_lock();
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
                let packed = unsafe { PackedA::new(token, a) };
                for threads in [1, 3] {
                    set_threads(threads).unwrap();
                    let sentinel = f32::from_bits(0x7FBA_D0D0);
                    let mut c = vec![sentinel; batch * c_bs];
                    // SAFETY: every B[i][p, j] lies inside bv (offsets <
                    // 3n + 7, j < n); each item's C holds m rows of ldc.
                    unsafe {
                        let b = B::OffsetRows(OffsetRows {
                            ptr: bv.as_ptr(),
                            offsets: &offsets,
                            cols: n,
                        });
                        let prod = Product::new(A::Packed(&packed), b, c.as_mut_ptr(), ldc);
                        gemm(
                            token,
                            mode,
                            &prod.batched(batch, 0, b_bs as isize).c_stride(c_bs),
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
    let _guard = crate::dispatch::settings_lock();
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
        let b = OffsetCols {
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
                    let tail = OffsetCols {
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
                        let head = OffsetCols { rows: cut, ..b };
                        gemm(
                            token,
                            mode,
                            &Product::new(A::View(a_head), B::OffsetCols(head), c.as_mut_ptr(), n)
                                .start(Start::Zero),
                        );
                        if cut % run == 0 {
                            gemm(
                                token,
                                mode,
                                &Product::new(
                                    A::View(a_tail),
                                    B::OffsetCols(tail),
                                    c.as_mut_ptr(),
                                    n,
                                )
                                .start(Start::Continue),
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
                            gemm(
                                token,
                                mode,
                                &Product::views(a_tail, bt, c.as_mut_ptr(), n)
                                    .start(Start::Continue),
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

/// Sources combined in ways no caller uses yet give the definition's bits
/// too: a packed A against a strided B view (transposed, so it is packed),
/// continuing C's sums for the second half of k; and B by column offsets
/// in a batch of two items at their own B offset, with A broadcast.
#[test]
fn other_source_combinations_give_the_definition_bits() {
    let _guard = crate::dispatch::settings_lock();
    let mut rng = Rng(0xC0B1_5EED);
    let (m, k, n) = (11usize, 300usize, 21usize);
    let av = values(&mut rng, m * k, false);
    let bv = values(&mut rng, k * n, false);
    let a = row_major(&av, m, k);
    // B given transposed: bt is n × k row-major, B = btᵀ.
    let bt: Vec<f32> = (0..n * k).map(|e| bv[(e % k) * n + e / k]).collect();
    let b = row_major(&bt, n, k).t();
    let cut = 140;
    let (a_head, a_tail) = (
        MatRef { cols: cut, ..a },
        MatRef {
            ptr: av[cut..].as_ptr(),
            cols: k - cut,
            ..a
        },
    );
    let (b_head, b_tail) = (
        MatRef { rows: cut, ..b },
        MatRef {
            ptr: bt[cut..].as_ptr(),
            rows: k - cut,
            ..b
        },
    );
    // Column offsets, two items 5 elements apart: B[i][q, j] =
    // bv2[5i + offsets[j] + q] (one run per column).
    let offsets: Vec<isize> = (0..n).map(|j| (j * 7 % 13) as isize).collect();
    let bv2 = values(&mut rng, 5 + 13 + k, false);
    for mode in [Mode::Exact, Mode::Fast] {
        let want = naive(mode, a, row_major(&bv, k, n));
        let explicit: Vec<Vec<f32>> = (0..2)
            .map(|i| {
                (0..k * n)
                    .map(|e| bv2[5 * i + offsets[e % n] as usize + e / n])
                    .collect()
            })
            .collect();
        for path in available_paths() {
            let token = Token::new(path).unwrap();
            // SAFETY: the views lie inside their vectors.
            let (ph, pt) = unsafe { (PackedA::new(token, a_head), PackedA::new(token, a_tail)) };
            for threads in [1, 3] {
                set_threads(threads).unwrap();
                let mut c = vec![f32::from_bits(0x7FBA_D0D0); m * n];
                // SAFETY: every element the sources reach lies inside the
                // vectors; C holds m × n.
                unsafe {
                    let head = Product::new(A::Packed(&ph), B::View(b_head), c.as_mut_ptr(), n);
                    gemm(token, mode, &head);
                    let tail = Product::new(A::Packed(&pt), B::View(b_tail), c.as_mut_ptr(), n);
                    gemm(token, mode, &tail.start(Start::Continue));
                }
                let tag =
                    format!("packed A, B view, continued {path:?} {mode:?} threads {threads}");
                assert_bits(mode, &want, &c, &tag);

                let mut c2 = vec![f32::from_bits(0x7FBA_D0D0); 2 * m * n];
                let cols = OffsetCols {
                    ptr: bv2.as_ptr(),
                    offsets: &offsets,
                    rows: k,
                    run: k,
                    run_stride: 0,
                };
                // SAFETY: as above; C holds two items of m × n.
                unsafe {
                    let p = Product::new(A::View(a), B::OffsetCols(cols), c2.as_mut_ptr(), n);
                    gemm(token, mode, &p.batched(2, 0, 5));
                }
                for (i, e) in explicit.iter().enumerate() {
                    let want = naive(mode, a, row_major(e, k, n));
                    let tag = format!(
                        "batched offset columns, item {i} {path:?} {mode:?} threads {threads}"
                    );
                    assert_bits(mode, &want, &c2[i * m * n..(i + 1) * m * n], &tag);
                }
            }
        }
    }
}
