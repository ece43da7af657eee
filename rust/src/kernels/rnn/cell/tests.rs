//! Every path against the written-out scalar rules of the module docs.

use super::*;
use crate::dispatch::available_paths;
use crate::math::{sigmoid as sig, tanh as th};

/// Values over the activations' whole range, some large.
fn val(i: usize) -> f32 {
    ((i * 7919 % 1000) as f32 / 100.0 - 5.0) * if i % 11 == 0 { 9.0 } else { 1.0 }
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// A forward cell without the copies, in fast mode.
fn plain<'a>(
    z: &'a mut [f32],
    rec: &'a [f32],
    c: &'a mut [f32],
    h: &'a mut [f32],
) -> CellForward<'a> {
    CellForward {
        z,
        rec,
        c,
        h,
        c_out: None,
        tc_out: None,
        h_out: None,
        exact: false,
    }
}

#[test]
fn every_path_gives_the_scalar_forward() {
    for hn in [1usize, 7, 16, 24, 37, 128] {
        let z0: Vec<f32> = (0..4 * hn).map(val).collect();
        let rec: Vec<f32> = (0..4 * hn).map(|i| val(i + 3)).collect();
        let c0: Vec<f32> = (0..hn).map(|i| val(i + 5)).collect();
        for exact in [false, true] {
            let mut want = None;
            for path in available_paths() {
                let (mut z, mut c, mut h) = (z0.clone(), c0.clone(), vec![0f32; hn]);
                let (mut co, mut tco, mut ho) = (vec![0f32; hn], vec![0f32; hn], vec![0f32; hn]);
                let cell = CellForward {
                    z: &mut z,
                    rec: &rec,
                    c: &mut c,
                    h: &mut h,
                    c_out: Some(&mut co),
                    tc_out: Some(&mut tco),
                    h_out: Some(&mut ho),
                    exact,
                };
                cell.run_here(Token::new(path).unwrap());
                for j in 0..hn {
                    let pre = |q: usize| z0[q * hn + j] + rec[q * hn + j];
                    let (i, f, g, o) = (sig(pre(0)), sig(pre(1)), th(pre(2)), sig(pre(3)));
                    let cv = f * c0[j] + i * g;
                    let tc = th(cv);
                    for (q, want) in [i, f, g, o].into_iter().enumerate() {
                        assert_eq!(
                            z[q * hn + j].to_bits(),
                            want.to_bits(),
                            "{path:?} {hn} {j} {q}"
                        );
                    }
                    assert_eq!(c[j].to_bits(), cv.to_bits(), "{path:?}");
                    assert_eq!(tco[j].to_bits(), tc.to_bits(), "{path:?}");
                    assert_eq!(h[j].to_bits(), (o * tc).to_bits(), "{path:?}");
                }
                assert_eq!(bits(&ho), bits(&h));
                assert_eq!(bits(&co), bits(&c));
                let all: Vec<u32> = bits(&z)
                    .into_iter()
                    .chain(bits(&c))
                    .chain(bits(&h))
                    .collect();
                assert_eq!(*want.get_or_insert(all.clone()), all, "{path:?}");
            }
        }
    }
}

/// Without the copies the state is the same.
#[test]
fn the_copies_are_optional() {
    let hn = 19;
    let z0: Vec<f32> = (0..4 * hn).map(val).collect();
    let rec: Vec<f32> = (0..4 * hn).map(|i| val(i + 1)).collect();
    let c0: Vec<f32> = (0..hn).map(|i| val(i + 2)).collect();
    let token = Token::current();
    let run = |copies: bool| {
        let (mut z, mut c, mut h) = (z0.clone(), c0.clone(), vec![0f32; hn]);
        let (mut co, mut ho) = (vec![0f32; hn], vec![0f32; hn]);
        CellForward {
            c_out: copies.then_some(&mut co[..]),
            h_out: copies.then_some(&mut ho[..]),
            exact: true,
            ..plain(&mut z, &rec, &mut c, &mut h)
        }
        .run_here(token);
        (bits(&z), bits(&c), bits(&h))
    };
    assert_eq!(run(true), run(false));
}

/// In exact mode a NaN out of σ or tanh is the canonical one, as the
/// element-wise kernels write it; in fast mode it is whatever the hardware
/// makes (not tested).
#[test]
fn exact_mode_canonicalizes_the_activations_nans() {
    let hn = 9;
    let odd = f32::from_bits(0xFFC0_1234); // a negative NaN with a payload
    for path in available_paths() {
        let mut z = vec![odd; 4 * hn];
        let rec = vec![0f32; 4 * hn];
        let (mut c, mut h, mut tco) = (vec![0f32; hn], vec![0f32; hn], vec![0f32; hn]);
        CellForward {
            tc_out: Some(&mut tco),
            exact: true,
            ..plain(&mut z, &rec, &mut c, &mut h)
        }
        .run_here(Token::new(path).unwrap());
        for v in z.iter().chain(&tco) {
            assert_eq!(v.to_bits(), 0x7FC0_0000, "{path:?}");
        }
        assert!(c.iter().chain(&h).all(|v| v.is_nan()));
    }
}

#[test]
fn every_path_gives_the_scalar_backward() {
    for hn in [1usize, 7, 16, 24, 37, 128] {
        // Gates in (0, 1) (σ) and (-1, 1) (tanh), as the forward stores them.
        let gates: Vec<f32> = (0..4 * hn)
            .map(|i| {
                if (i / hn) == 2 {
                    th(val(i))
                } else {
                    sig(val(i))
                }
            })
            .collect();
        let tc: Vec<f32> = (0..hn).map(|i| th(val(i + 1))).collect();
        let cp: Vec<f32> = (0..hn).map(|i| val(i + 2)).collect();
        let dout: Vec<f32> = (0..hn).map(|i| val(i + 3) / 7.0).collect();
        let dh_rec: Vec<f32> = (0..hn).map(|i| val(i + 4) / 3.0).collect();
        let dc0: Vec<f32> = (0..hn).map(|i| val(i + 6) / 5.0).collect();
        for with_prev in [true, false] {
            let mut want = None;
            for path in available_paths() {
                let (mut dc, mut dz) = (dc0.clone(), vec![0f32; 4 * hn]);
                CellBackward {
                    gates: &gates,
                    tc: &tc,
                    c_prev: with_prev.then_some(&cp[..]),
                    dh_out: &dout,
                    dh_rec: &dh_rec,
                    dc: &mut dc,
                    dz: &mut dz,
                }
                .run_here(Token::new(path).unwrap());
                for j in 0..hn {
                    let (i, f, g, o) = (
                        gates[j],
                        gates[hn + j],
                        gates[2 * hn + j],
                        gates[3 * hn + j],
                    );
                    let t = tc[j];
                    let dh = dout[j] + dh_rec[j];
                    let (dtc, d_o) = (dh * o, dh * t);
                    let dcv = dc0[j] + dtc * (1.0 - t * t);
                    let c_prev = if with_prev { cp[j] } else { 0.0 };
                    let (di, dg, df) = (dcv * g, dcv * i, dcv * c_prev);
                    assert_eq!(dc[j].to_bits(), (dcv * f).to_bits(), "{path:?} {hn} {j}");
                    let dzs = [
                        di * (i * (1.0 - i)),
                        df * (f * (1.0 - f)),
                        dg * (1.0 - g * g),
                        d_o * (o * (1.0 - o)),
                    ];
                    for (q, w) in dzs.into_iter().enumerate() {
                        assert_eq!(
                            dz[q * hn + j].to_bits(),
                            w.to_bits(),
                            "{path:?} {hn} {j} {q}"
                        );
                    }
                }
                let all: Vec<u32> = bits(&dz).into_iter().chain(bits(&dc)).collect();
                assert_eq!(*want.get_or_insert(all.clone()), all, "{path:?}");
            }
        }
    }
}

#[test]
#[should_panic(expected = "lstm cell: rec holds 7 of 8 elements")]
fn a_short_operand_is_refused_before_the_cell_runs() {
    let (mut z, rec, mut c, mut h) = (vec![0f32; 8], vec![0f32; 7], vec![0f32; 2], vec![0f32; 2]);
    plain(&mut z, &rec, &mut c, &mut h).run_here(Token::current());
}
