//! The lane forms of the CTC recursions against their scalar definitions,
//! bit for bit, on every kernel path this CPU has.

use super::*;
use crate::dispatch::{available_paths, KernelPath};
use crate::splitmix::SplitMix64;

/// A uniform double in [0, 1) from the top 53 bits.
fn uniform(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// `out[i] = logadd(a[i], b[i])` over the lanes of a path, the tail (fewer
/// than N pairs) one lane at a time as the recursions do.
struct LogAddProbe<'a> {
    a: &'a [f64],
    b: &'a [f64],
    out: &'a mut [f64],
}

impl LaneFn for LogAddProbe<'_> {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        let n = self.a.len();
        let mut i = 0;
        // SAFETY: inside L's path; i + N ≤ n for every lane access.
        unsafe {
            while i + <L::F64 as F64Lanes>::N <= n {
                let a = <L::F64 as F64Lanes>::load(self.a.as_ptr().add(i));
                let b = <L::F64 as F64Lanes>::load(self.b.as_ptr().add(i));
                logadd_lanes(a, b).store(self.out.as_mut_ptr().add(i));
                i += <L::F64 as F64Lanes>::N;
            }
        }
        for j in i..n {
            self.out[j] = logadd(self.a[j], self.b[j]);
        }
    }
}

/// The lane exp on [−40, 0] and the lane log on [1, 2].
struct ExpLogProbe<'a> {
    x: &'a [f64],
    out: &'a mut [f64],
    log: bool,
}

impl LaneFn for ExpLogProbe<'_> {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        let n = <L::F64 as F64Lanes>::N;
        assert_eq!(self.x.len() % n, 0);
        for i in (0..self.x.len()).step_by(n) {
            // SAFETY: inside L's path; i + N ≤ len.
            unsafe {
                let x = <L::F64 as F64Lanes>::load(self.x.as_ptr().add(i));
                let y = if self.log {
                    detmath::log_lanes_on_1_2(x)
                } else {
                    detmath::exp_lanes(x)
                };
                y.store(self.out.as_mut_ptr().add(i));
            }
        }
    }
}

fn paths() -> Vec<Token> {
    available_paths()
        .into_iter()
        .map(|p| Token::new(p).expect("an available path"))
        .collect()
}

fn same_bits(
    what: &str,
    path: KernelPath,
    want: &[f64],
    got: &[f64],
    inputs: impl Fn(usize) -> String,
) {
    for i in 0..want.len() {
        assert_eq!(
            want[i].to_bits(),
            got[i].to_bits(),
            "{what} on {path:?}, {}: {:e} vs {:e}",
            inputs(i),
            want[i],
            got[i]
        );
    }
}

#[test]
fn lane_exp_and_log_are_detmath_on_their_general_ranges() {
    let mut rng = SplitMix64(0x0ce7_11a5);
    // exp: the general range's ends, −40 and 0 (logadd's), −0, the
    // subnormal results, the points where k changes (multiples of ln2/2
    // and their neighbours) near 0, and random points over the range.
    let (low, high) = (detmath::EXP_LOW, detmath::EXP_HIGH);
    let mut xs = vec![
        low,
        high,
        -40.0,
        0.0,
        -0.0,
        -f64::MIN_POSITIVE,
        -1e-300,
        -708.5,
        -720.0,
        -744.9,
        709.0,
    ];
    for j in 0..116 {
        let m = -(j as f64) * std::f64::consts::LN_2 / 2.0;
        xs.extend([
            m,
            f64::from_bits(m.to_bits() + 1),
            f64::from_bits(m.to_bits().saturating_sub(1)),
        ]);
    }
    while xs.len() < 6000 {
        let u = uniform(&mut rng);
        xs.push(match xs.len() % 3 {
            0 => -40.0 * u,
            _ => low + (high - low) * u,
        });
    }
    xs.retain(|x| (low..=high).contains(x));
    xs.truncate(xs.len() / 8 * 8);
    // log: 1, 2, around √2 (where k changes), and random points.
    let r2 = std::f64::consts::SQRT_2;
    let mut ls = vec![
        1.0,
        2.0,
        f64::from_bits(1f64.to_bits() + 1),
        f64::from_bits(2f64.to_bits() - 1),
    ];
    for d in 0..8u64 {
        ls.extend([
            f64::from_bits(r2.to_bits() + d),
            f64::from_bits(r2.to_bits() - d),
        ]);
    }
    while ls.len() < 4096 {
        ls.push(1.0 + uniform(&mut rng));
    }
    ls.truncate(ls.len() / 8 * 8);
    let want_exp: Vec<f64> = xs.iter().map(|&x| detmath::exp(x)).collect();
    let want_log: Vec<f64> = ls.iter().map(|&x| detmath::log(x)).collect();
    for token in paths() {
        let mut got = vec![0.0; xs.len()];
        run_on(
            token,
            ExpLogProbe {
                x: &xs,
                out: &mut got,
                log: false,
            },
        );
        same_bits("exp", token.path(), &want_exp, &got, |i| {
            format!("x = {:e}", xs[i])
        });
        let mut got = vec![0.0; ls.len()];
        run_on(
            token,
            ExpLogProbe {
                x: &ls,
                out: &mut got,
                log: true,
            },
        );
        same_bits("log", token.path(), &want_log, &got, |i| {
            format!("x = {:e}", ls[i])
        });
    }
}

#[test]
fn lane_logadd_is_the_scalar_rule_on_every_path() {
    let nan_payload = f64::from_bits(0x7ff8_0000_0000_1234);
    let specials = [
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NAN,
        -f64::NAN,
        nan_payload,
        0.0,
        -0.0,
        1.0,
        -1.0,
        -40.0,
        40.0,
        5e-324,
        f64::MAX,
        f64::MIN,
        -745.0,
        -3.25,
    ];
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in &specials {
        for &y in &specials {
            a.push(x);
            b.push(y);
        }
    }
    // Differences at the −40 cut: just inside, on it, just outside.
    let mut rng = SplitMix64(0x10_9add);
    for _ in 0..200 {
        let hi = -200.0 * uniform(&mut rng);
        let lo = hi - 40.0;
        for d in [0u64, 1, 2] {
            a.push(hi);
            b.push(f64::from_bits(lo.to_bits() + d));
            a.push(f64::from_bits(lo.to_bits() - d));
            b.push(hi);
        }
    }
    // Random pairs over the recursions' range, some equal, some −∞.
    for i in 0..6000 {
        let x = -300.0 * uniform(&mut rng);
        let y = match i % 7 {
            0 => x,
            1 => f64::NEG_INFINITY,
            _ => x + 90.0 * (uniform(&mut rng) - 0.5),
        };
        a.push(x);
        b.push(y);
    }
    // Odd lengths: every path's vector loop ends on a mixed register.
    let mut want = vec![0.0; a.len()];
    for i in 0..a.len() {
        want[i] = logadd(a[i], b[i]);
    }
    for token in paths() {
        let mut got = vec![0.0; a.len()];
        run_on(
            token,
            LogAddProbe {
                a: &a,
                b: &b,
                out: &mut got,
            },
        );
        same_bits("logadd", token.path(), &want, &got, |i| {
            format!("({:e}, {:e})", a[i], b[i])
        });
    }
}

/// The definition, cell by cell with the scalar `logadd` and DetMath
/// (the module's recursions as they were before the lanes): alpha [T][S],
/// the loss and the gradient [T][C] of one line.
fn reference(
    lp: &[f32],
    steps: usize,
    classes: usize,
    target: &[i64],
) -> (Vec<f64>, f64, Vec<f64>) {
    let blank = 0;
    let l = extended(target, blank);
    let s_len = l.len();
    let at = |t: usize, c: usize| lp[t * classes + c] as f64;
    let mut alpha = vec![f64::NEG_INFINITY; steps * s_len];
    let mut beta = vec![f64::NEG_INFINITY; steps * s_len];
    let mut g = vec![0.0; steps * classes];
    if steps == 0 {
        let log_p: f64 = if s_len == 1 { 0.0 } else { f64::NEG_INFINITY };
        return (alpha, -log_p, g);
    }
    alpha[0] = at(0, blank);
    if s_len > 1 {
        alpha[1] = at(0, l[1]);
    }
    for t in 1..steps {
        for s in 0..s_len {
            let prev = |i: usize| alpha[(t - 1) * s_len + i];
            let mut a = prev(s);
            if s >= 1 {
                a = logadd(a, prev(s - 1));
            }
            if can_skip(&l, s, blank) {
                a = logadd(a, prev(s - 2));
            }
            alpha[t * s_len + s] = if a == f64::NEG_INFINITY {
                a
            } else {
                a + at(t, l[s])
            };
        }
    }
    let last = &alpha[(steps - 1) * s_len..];
    let log_p = if s_len > 1 {
        logadd(last[s_len - 1], last[s_len - 2])
    } else {
        last[0]
    };
    if log_p == f64::NEG_INFINITY {
        return (alpha, -log_p, g);
    }
    let lt = steps - 1;
    beta[lt * s_len + s_len - 1] = at(lt, l[s_len - 1]);
    if s_len > 1 {
        beta[lt * s_len + s_len - 2] = at(lt, l[s_len - 2]);
    }
    for t in (0..lt).rev() {
        for s in 0..s_len {
            let next = |i: usize| beta[(t + 1) * s_len + i];
            let mut v = next(s);
            if s + 1 < s_len {
                v = logadd(v, next(s + 1));
            }
            if s + 2 < s_len && can_skip(&l, s + 2, blank) {
                v = logadd(v, next(s + 2));
            }
            beta[t * s_len + s] = if v == f64::NEG_INFINITY {
                v
            } else {
                v + at(t, l[s])
            };
        }
    }
    for t in 0..steps {
        let mut acc = vec![f64::NEG_INFINITY; classes];
        for s in 0..s_len {
            acc[l[s]] = logadd(acc[l[s]], alpha[t * s_len + s] + beta[t * s_len + s]);
        }
        for c in 0..classes {
            g[t * classes + c] = if acc[c] == f64::NEG_INFINITY {
                0.0
            } else {
                -detmath::exp(acc[c] - at(t, c) - log_p)
            };
        }
    }
    (alpha, -log_p, g)
}

#[test]
fn the_recursions_give_the_definitions_bits_on_every_path() {
    // Against the cell-by-cell definition, on every path (the scalar one
    // included, whose f64 "lanes" run the same generic code). Targets of
    // every length up to 14 (S up to 29: registers and tails of every
    // size), with repeats (no skip) and distinct labels (skip).
    let mut rng = SplitMix64(0xc7c_1a9e5);
    let classes = 6;
    let mut below_range = 0;
    for len in 0..15usize {
        let target: Vec<i64> = (0..len)
            .map(|i| {
                if i % 4 == 3 {
                    2
                } else {
                    1 + (rng.next_u64() % 5) as i64
                }
            })
            .collect();
        for steps in [0usize, 1, 2, 2 * len + 1, 2 * len + 7] {
            // Some entries far below the rest, so that a gradient entry's
            // exponent falls below exp's general range (a zero or
            // subnormal gradient, the scalar rule's register).
            let lp: Vec<f32> = (0..steps * classes)
                .map(|_| match rng.next_u64() % 20 {
                    0 => -1000.0,
                    1 => -200.0 * uniform(&mut rng) as f32,
                    _ => (-8.0 * uniform(&mut rng)) as f32,
                })
                .collect();
            let view = LogProbs {
                ptr: lp.as_ptr(),
                steps,
                classes,
                st: classes as isize,
                sc: 1,
            };
            let run = |token: Token| {
                let mut g = vec![0.0f64; steps * classes];
                // SAFETY: the view holds steps × classes values; labels < 6.
                let l = unsafe {
                    loss_and_grad(token, &view, &target, 0, None, |t, c, v| {
                        g[t * classes + c] = v
                    })
                };
                // SAFETY: as above.
                let a = unsafe { alpha(token, &view, &target, 0) };
                (l, g, a.alpha)
            };
            let (want_a, want_l, want_g) = reference(&lp, steps, classes, &target);
            // exp(x) for x below exp's general range is +0: such entries
            // are −0 (the lanes' scalar-rule register).
            below_range += want_g
                .iter()
                .filter(|g| g.to_bits() == (-0.0f64).to_bits())
                .count();
            for token in paths() {
                let (l, g, a) = run(token);
                let path = token.path();
                let what = format!("target length {len}, {steps} steps");
                assert_eq!(want_l.to_bits(), l.to_bits(), "loss, {what}, {path:?}");
                same_bits("alpha", path, &want_a, &a, |i| format!("{what}, entry {i}"));
                same_bits("gradient", path, &want_g, &g, |i| {
                    format!("{what}, entry {i}")
                });
            }
        }
    }
    assert!(below_range > 0, "no gradient entry below exp's range");
}
