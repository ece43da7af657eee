use super::*;
use crate::dispatch::{available_paths, set_kernel_path, set_threads, KernelPath};
use crate::kernels::CANONICAL_NAN;
use crate::simd::Token;

// Tests that change the process-wide path or thread count take
// crate::dispatch::settings_lock().

fn values(n: usize, seed: u32, scale: f32) -> Vec<f32> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(12345);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            ((x >> 8) as f32 / (1u32 << 24) as f32 - 0.5) * scale
        })
        .collect()
}

/// Seed 002's element update written out directly (no slices, no
/// chunks, no variants): the definition the kernel must reproduce.
fn reference_adamw(p: f32, g: f32, m: f32, v: f32, s: &AdamScalars) -> (f32, f32, f32) {
    let p1 = p * s.decay;
    let m1 = m + s.one_minus_beta1 * (g - m);
    let v1 = v * s.beta2 + s.one_minus_beta2 * (g * g);
    let p2 = p1 - s.step_size * (m1 / (v1.sqrt() / s.sqrt_c2 + s.eps));
    (p2, m1, v1)
}

#[test]
fn scalars_are_doubles_rounded_once() {
    let s = AdamScalars::new(1e-3, 0.9, 0.999, 1e-8, 0.01, 3, true);
    let b1 = 0.9f64 * 0.9 * 0.9;
    let b2 = 0.999f64 * 0.999 * 0.999;
    assert_eq!(s.step_size, (1e-3 / (1.0 - b1)) as f32);
    assert_eq!(s.sqrt_c2, (1.0 - b2).sqrt() as f32);
    assert_eq!(s.decay, (1.0 - 1e-3 * 0.01) as f32);
    assert_eq!(s.one_minus_beta1, 0.1f32);
    assert_eq!(s.beta2, 0.999f32);
    assert_eq!(s.one_minus_beta2, (1.0f64 - 0.999) as f32);
    assert_eq!(s.eps, 1e-8f32);
    assert_eq!(s.l2, 0.0);
    let nd = AdamScalars::new(1e-3, 0.9, 0.999, 1e-8, 0.01, 3, false);
    assert_eq!(nd.decay, 1.0);
    let a = AdamScalars::adam(1e-3, 0.9, 0.999, 1e-8, 0.01, 3);
    assert_eq!((a.decay, a.l2), (1.0, 0.01f32));
    // The running product is the one a step-by-step caller keeps.
    let mut run = 1.0f64;
    for t in 1..=50u64 {
        run *= 0.999;
        assert_eq!(beta_power(0.999, t).to_bits(), run.to_bits());
    }
}

#[test]
fn adamw_matches_the_written_out_definition() {
    let _g = crate::dispatch::settings_lock();
    let n = 3 * CHUNK + 77;
    let g = values(n, 1, 2e-2);
    let mut p = values(n, 2, 1.0);
    let (mut m, mut v) = (vec![0f32; n], vec![0f32; n]);
    let (mut rp, mut rm, mut rv) = (p.clone(), m.clone(), v.clone());
    for t in 1..=3 {
        let s = AdamScalars::new(1e-2, 0.9, 0.999, 1e-8, 0.05, t, true);
        adamw_step(Token::current(), &mut p, &g, &mut m, &mut v, &s);
        for i in 0..n {
            (rp[i], rm[i], rv[i]) = reference_adamw(rp[i], g[i], rm[i], rv[i], &s);
        }
    }
    for i in 0..n {
        assert_eq!(p[i].to_bits(), rp[i].to_bits(), "p[{i}]");
        assert_eq!(m[i].to_bits(), rm[i].to_bits(), "m[{i}]");
        assert_eq!(v[i].to_bits(), rv[i].to_bits(), "v[{i}]");
    }
}

/// Special values: every path and thread count gives the same bits,
/// NaNs canonical.
#[test]
fn every_path_and_thread_count_gives_the_same_bits() {
    let _g = crate::dispatch::settings_lock();
    let mut g = values(2 * CHUNK + 31, 3, 1.0);
    let specials = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::MAX,
        1e-38,
        3e-39,
    ];
    for (i, &x) in specials.iter().enumerate() {
        g[i * 7] = x;
    }
    let p0 = values(g.len(), 4, 4.0);
    let run_all = || {
        let mut outs = Vec::new();
        for (maximize, amsgrad, adam) in [
            (false, false, false),
            (true, true, false),
            (false, true, true),
            (true, false, true),
        ] {
            let mut p = p0.clone();
            let (mut m, mut v, mut vm) = (
                vec![0f32; p.len()],
                vec![0f32; p.len()],
                vec![0f32; p.len()],
            );
            for t in 1..=2 {
                let s = if adam {
                    AdamScalars::adam(1e-2, 0.8, 0.99, 1e-6, 0.1, t)
                } else {
                    AdamScalars::new(1e-2, 0.8, 0.99, 1e-6, 0.1, t, true)
                }
                .with_maximize(maximize);
                if amsgrad {
                    adamw_step_amsgrad(Token::current(), &mut p, &g, &mut m, &mut v, &mut vm, &s);
                } else {
                    adamw_step(Token::current(), &mut p, &g, &mut m, &mut v, &s);
                }
            }
            let mut buf = vec![0f32; p.len()];
            let ss = SgdScalars::new(0.1, 0.9, 0.1, 0.01, false, maximize);
            sgd_step(Token::current(), &mut p, &g, Some(&mut buf), true, &ss);
            sgd_step(Token::current(), &mut p, &g, Some(&mut buf), false, &ss);
            scale_inplace(Token::current(), &mut p, 0.75);
            clamp_inplace(Token::current(), &mut m, -0.5, 0.5);
            outs.push((p, m, v, vm, buf));
        }
        outs
    };
    set_kernel_path(Some(KernelPath::Scalar)).unwrap();
    set_threads(1).unwrap();
    let want = run_all();
    for path in available_paths() {
        for threads in [1, 3] {
            set_kernel_path(Some(path)).unwrap();
            set_threads(threads).unwrap();
            let got = run_all();
            for (w, g) in want.iter().zip(&got) {
                for (a, b) in [
                    (&w.0, &g.0),
                    (&w.1, &g.1),
                    (&w.2, &g.2),
                    (&w.3, &g.3),
                    (&w.4, &g.4),
                ] {
                    assert!(
                        a.iter()
                            .zip(b.iter())
                            .all(|(x, y)| x.to_bits() == y.to_bits()),
                        "{path:?} x{threads}"
                    );
                }
            }
        }
    }
    set_kernel_path(None).unwrap();
    for (p, m, v, vm, buf) in &want {
        for x in p.iter().chain(m).chain(v).chain(vm).chain(buf) {
            assert!(!x.is_nan() || x.to_bits() == CANONICAL_NAN);
        }
    }
}

#[test]
fn every_nan_written_is_the_canonical_one() {
    // NaNs with payloads in g, in m, in v and from inf − inf, spread over
    // several chunks; with and without AMSGrad.
    let n = 3 * CHUNK + 5;
    for amsgrad in [false, true] {
        let mut p = values(n, 1, 1.0);
        let mut g = values(n, 2, 1e-2);
        let mut m = values(n, 3, 1e-3);
        let mut v: Vec<f32> = values(n, 4, 1e-3).iter().map(|x| x * x).collect();
        let mut vmax = v.clone();
        g[7] = f32::from_bits(0x7FA0_0001);
        g[CHUNK + 1] = f32::from_bits(0xFFC1_2345);
        m[2 * CHUNK + 3] = f32::from_bits(0x7FC0_0F00);
        v[n - 1] = f32::from_bits(0xFF80_0001);
        (g[40], m[40]) = (f32::INFINITY, f32::INFINITY);
        let s = AdamScalars::new(1e-3, 0.9, 0.999, 1e-8, 0.01, 1, true);
        if amsgrad {
            adamw_step_amsgrad(Token::current(), &mut p, &g, &mut m, &mut v, &mut vmax, &s);
        } else {
            adamw_step(Token::current(), &mut p, &g, &mut m, &mut v, &s);
        }
        let mut nans = 0;
        for x in p
            .iter()
            .chain(&m)
            .chain(&v)
            .chain(if amsgrad { &vmax[..] } else { &[] })
        {
            if x.is_nan() {
                nans += 1;
                assert_eq!(x.to_bits(), CANONICAL_NAN, "amsgrad {amsgrad}");
            }
        }
        assert!(nans >= 5 * 2, "amsgrad {amsgrad}: only {nans} NaNs");
        for i in [7, CHUNK + 1, 2 * CHUNK + 3, n - 1, 40] {
            assert!(p[i].is_nan(), "element {i}");
        }
    }
}

#[test]
fn amsgrad_keeps_the_maximum_and_maximize_negates() {
    let s = AdamScalars::new(0.1, 0.9, 0.999, 1e-8, 0.0, 1, true);
    let (mut p, mut m, mut v, mut vm) = ([1.0f32], [0.0f32], [0.0f32], [5.0f32]);
    adamw_step_amsgrad(
        Token::current(),
        &mut p,
        &[1.0],
        &mut m,
        &mut v,
        &mut vm,
        &s,
    );
    assert_eq!(vm[0], 5.0);
    assert!(v[0] < 5.0);
    let (mut p2, mut m2, mut v2) = ([1.0f32], [0.0f32], [0.0f32]);
    adamw_step(
        Token::current(),
        &mut p2,
        &[1.0],
        &mut m2,
        &mut v2,
        &s.with_maximize(true),
    );
    assert!(p2[0] > 1.0 && m2[0] < 0.0);
}

#[test]
fn sgd_matches_torch_recurrence() {
    // Two steps, momentum 0.9, dampening 0.5, nesterov off, wd 0.1.
    let s = SgdScalars::new(0.5, 0.9, 0.5, 0.1, false, false);
    let (mut p, g, mut b) = ([2.0f32], [1.0f32], [0.0f32]);
    sgd_step(Token::current(), &mut p, &g, Some(&mut b), true, &s);
    // d = 1 + 0.1*2 = 1.2; buf = d; p = 2 - 0.5*1.2 = 1.4
    assert_eq!(b[0], 1.0f32 + 0.1f32 * 2.0f32);
    assert_eq!(p[0], 2.0f32 - 0.5f32 * b[0]);
    let (p1, b1) = (p[0], b[0]);
    sgd_step(Token::current(), &mut p, &g, Some(&mut b), false, &s);
    let d = 1.0f32 + 0.1f32 * p1;
    let nb = b1 * 0.9f32 + 0.5f32 * d;
    assert_eq!(b[0], nb);
    assert_eq!(p[0], p1 - 0.5f32 * nb);
}

#[test]
fn plan_cuts_every_chunk_elements_end_to_end() {
    let plan = Plan::new([3, 0, CHUNK, 2 * CHUNK + 1].into_iter());
    let mut covered = [vec![], vec![], vec![], vec![]];
    for c in 0..plan.chunks() {
        let pieces = &plan.pieces[plan.starts[c]..plan.starts[c + 1]];
        assert!(pieces.iter().map(|p| p.2 - p.1).sum::<usize>() <= CHUNK);
        for &(s, a, b) in pieces {
            covered[s].push((a, b));
        }
    }
    assert_eq!(plan.chunks(), 4);
    assert_eq!(covered[0], vec![(0, 3)]);
    assert!(covered[1].is_empty());
    assert_eq!(covered[2], vec![(0, CHUNK - 3), (CHUNK - 3, CHUNK)]);
    assert_eq!(
        covered[3],
        vec![
            (0, CHUNK - 3),
            (CHUNK - 3, 2 * CHUNK - 3),
            (2 * CHUNK - 3, 2 * CHUNK + 1)
        ]
    );
    assert_eq!(Plan::new([0usize; 3].into_iter()).chunks(), 0);
}

#[test]
fn norms_are_double_sums_in_order() {
    let a = values(1000, 5, 3.0);
    let b = values(17, 6, 1.0);
    let want_a: f64 = a.iter().fold(0.0, |s, &x| s + (x as f64) * (x as f64));
    let want_b: f64 = b.iter().fold(0.0, |s, &x| s + (x as f64) * (x as f64));
    assert_eq!(
        global_norm_f64(&[&a, &b]).to_bits(),
        (want_a + want_b).sqrt().to_bits()
    );
    let inf = global_norm(&[&a, &b], NormKind::Inf);
    assert_eq!(
        inf,
        a.iter().chain(&b).fold(0.0f32, |m, &x| m.max(x.abs())) as f64
    );
    assert!(global_norm(&[&[1.0, f32::NAN][..]], NormKind::Inf).is_nan());
    assert_eq!(
        global_norm(&[&[3.0, -4.0][..]], NormKind::L1),
        7.0
    );
    // A long tensor of mixed magnitudes: the sums written out in element
    // order.
    let mut c = values(5000, 7, 2.0);
    for (i, v) in c.iter_mut().enumerate() {
        *v *= [1.0, 1e-6, 1e5][i % 3];
    }
    let fold = |f: &dyn Fn(f32) -> f64| c.iter().fold(0.0f64, |s, &x| s + f(x));
    for (kind, want) in [
        (NormKind::L1, fold(&|x| (x as f64).abs())),
        (NormKind::L2, fold(&|x| x as f64 * x as f64)),
        (NormKind::P(3.0), fold(&|x| (x as f64).abs().powf(3.0))),
    ] {
        assert_eq!(norm_term(&c, kind).to_bits(), want.to_bits(), "{kind:?}");
    }
    assert_eq!(clip_coefficient(1.0, 0.5), None);
    assert_eq!(
        clip_coefficient(1.0, 4.0),
        Some((1.0f64 / (4.0 + 1e-6)) as f32)
    );
    let mut x = vec![1.0f32, -3.0, f32::NAN, 0.25];
    clamp_inplace(Token::current(), &mut x, -0.5, 0.5);
    assert_eq!(&x[..2], &[0.5, -0.5]);
    assert!(x[2].is_nan() && x[3] == 0.25);
}
