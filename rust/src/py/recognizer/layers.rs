//! Single layers, for the per-layer parity fixtures
//! (tools/recognizer_oracle.py).

use super::flat;
use crate::dispatch;
use crate::error::Error;
use crate::py::kernel::detach;
use crate::simd::Token;
use crate::storage::scratch_vec;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

type Arr<'py> = Bound<'py, PyArray1<f32>>;

fn need(name: &str, v: &[f32], n: usize) -> PyResult<()> {
    Ok(crate::error::expect_len(
        "recognizer layer",
        name,
        v.len(),
        n,
    )?)
}

/// One convolution block: returns (pooled y, dW natural [O][9C], db, dx
/// (empty unless need_dx)). `x` is `[h][w][c]`, `w` natural `[O][3][3][C]`,
/// `dy` the gradient of the pooled output.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn rec_conv_block<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'py, f32>,
    h: usize,
    w: usize,
    c: usize,
    weight: PyReadonlyArray1<'py, f32>,
    bias: PyReadonlyArray1<'py, f32>,
    pool: (usize, usize),
    dy: PyReadonlyArray1<'py, f32>,
    need_dx: bool,
) -> PyResult<(Arr<'py>, Arr<'py>, Arr<'py>, Arr<'py>)> {
    use crate::recognizer::conv::{self, Geom};
    let (x, weight, bias, dy) = (flat(&x)?, flat(&weight)?, flat(&bias)?, flat(&dy)?);
    let o = bias.len();
    let g = Geom {
        h,
        w,
        c,
        o,
        ph: pool.0,
        pw: pool.1,
    };
    need("x", &x, h * w * c)?;
    need("weight", &weight, o * g.k())?;
    need("dy", &dy, g.out_h() * g.out_w() * o)?;
    let (k, kp) = (g.k(), g.kp());
    let token = Token::current();
    let (y, dw, db, dx) = detach(py, || {
        dispatch::with_ieee(|| {
            let mut wp = scratch_vec(o * kp, 0f32);
            for oi in 0..o {
                for ki in 0..k {
                    wp[oi * kp + ki] = weight[oi * k + ki];
                }
            }
            let mut col = conv::Windows::default();
            let (mut cv, mut y, mut win) = (vec![], vec![], vec![]);
            conv::forward(
                token, &g, &x, &wp, None, &bias, &mut col, &mut cv, &mut y, &mut win,
            );
            let mut dw = scratch_vec(o * kp, 0f32);
            let mut db = scratch_vec(o, 0f32);
            let mut dx = if need_dx {
                scratch_vec(h * w * c, 0f32)
            } else {
                vec![]
            };
            let mut s = conv::BackScratch::default();
            conv::backward(
                token,
                &g,
                &x,
                &win,
                &dy,
                &wp,
                &mut dw,
                &mut db,
                if need_dx { Some(&mut dx) } else { None },
                &mut s,
            );
            let dwn: Vec<f32> = (0..o)
                .flat_map(|oi| dw[oi * kp..oi * kp + k].to_vec())
                .collect();
            (y, dwn, db, dx)
        })
    })?;
    Ok((
        y.into_pyarray(py),
        dw.into_pyarray(py),
        db.into_pyarray(py),
        dx.into_pyarray(py),
    ))
}

/// One bidirectional LSTM layer: returns (out [T][2H], [dW_ih, dW_hh, db] of
/// the forward then reverse direction, dx [T][In]).
#[pyfunction]
pub fn rec_lstm_layer<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'py, f32>,
    t_len: usize,
    inp: usize,
    hidden: usize,
    params: Vec<PyReadonlyArray1<'py, f32>>,
    dout: PyReadonlyArray1<'py, f32>,
) -> PyResult<(Arr<'py>, Vec<Arr<'py>>, Arr<'py>)> {
    use crate::kernels::transpose::transpose;
    use crate::recognizer::lstm::{self, DirParams, DirState};
    let h = hidden;
    let x = flat(&x)?;
    let dout = flat(&dout)?;
    need("x", &x, t_len * inp)?;
    need("dout", &dout, t_len * 2 * h)?;
    if params.len() != 6 {
        return Err(Error::value(
            "params: w_ih, w_hh, b of the forward then the reverse direction",
        )
        .into());
    }
    let ps: Vec<Vec<f32>> = params.iter().map(flat).collect::<PyResult<_>>()?;
    for d in 0..2 {
        need("w_ih", &ps[3 * d], 4 * h * inp)?;
        need("w_hh", &ps[3 * d + 1], 4 * h * h)?;
        need("b", &ps[3 * d + 2], 4 * h)?;
    }
    let token = Token::current();
    let (out, grads, dx) = detach(py, || {
        dispatch::with_ieee(|| {
            let mut whht = [scratch_vec(4 * h * h, 0f32), scratch_vec(4 * h * h, 0f32)];
            let mut cat = scratch_vec(inp * 8 * h, 0f32);
            for d in 0..2 {
                transpose(token, &ps[3 * d + 1], 4 * h, h, &mut whht[d]);
                for g in 0..4 * h {
                    for i in 0..inp {
                        cat[i * 8 * h + d * 4 * h + g] = ps[3 * d][g * inp + i];
                    }
                }
            }
            let dp = |d: usize| DirParams {
                w_ih: &ps[3 * d],
                w_hh: &ps[3 * d + 1],
                b: &ps[3 * d + 2],
            };
            let mut st = [DirState::default(), DirState::default()];
            let mut out = scratch_vec(t_len * 2 * h, 0f32);
            for (d, sd) in st.iter_mut().enumerate() {
                lstm::forward_dir(
                    token,
                    t_len,
                    inp,
                    h,
                    d == 1,
                    &x,
                    dp(d),
                    sd,
                    &mut out,
                    2 * h,
                    d * h,
                );
            }
            for (d, sd) in st.iter_mut().enumerate() {
                lstm::backward_dir(token, h, d == 1, &dout, 2 * h, d * h, &whht[d], sd);
            }
            let mut grads = vec![];
            for sd in &st {
                let (mut a, mut b, mut c) = (
                    scratch_vec(4 * h * inp, 0f32),
                    scratch_vec(4 * h * h, 0f32),
                    scratch_vec(4 * h, 0f32),
                );
                lstm::weight_grads(token, inp, h, &x, sd, &mut a, &mut b, &mut c);
                grads.extend([a, b, c]);
            }
            let mut dx = scratch_vec(t_len * inp, 0f32);
            lstm::input_grad(token, inp, h, &st, &cat, &mut vec![], &mut dx);
            (out, grads, dx)
        })
    })?;
    Ok((
        out.into_pyarray(py),
        grads.into_iter().map(|g| g.into_pyarray(py)).collect(),
        dx.into_pyarray(py),
    ))
}

/// Linear layer: (y [T][Out], dW, db, dx [T][In]).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn rec_linear<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'py, f32>,
    t_len: usize,
    inp: usize,
    out: usize,
    weight: PyReadonlyArray1<'py, f32>,
    bias: PyReadonlyArray1<'py, f32>,
    dy: PyReadonlyArray1<'py, f32>,
) -> PyResult<(Arr<'py>, Arr<'py>, Arr<'py>, Arr<'py>)> {
    use crate::recognizer::linear;
    let (x, weight, bias, dy) = (flat(&x)?, flat(&weight)?, flat(&bias)?, flat(&dy)?);
    need("x", &x, t_len * inp)?;
    need("weight", &weight, out * inp)?;
    need("bias", &bias, out)?;
    need("dy", &dy, t_len * out)?;
    let token = Token::current();
    let r = detach(py, || {
        dispatch::with_ieee(|| {
            let mut y = vec![];
            linear::forward(token, t_len, inp, out, &x, &weight, &bias, &mut y);
            let (mut dw, mut db, mut dx) = (
                scratch_vec(out * inp, 0f32),
                scratch_vec(out, 0f32),
                scratch_vec(t_len * inp, 0f32),
            );
            linear::backward(
                token,
                t_len,
                inp,
                out,
                &x,
                &dy,
                &weight,
                &mut dw,
                &mut db,
                Some(&mut dx),
            );
            (y, dw, db, dx)
        })
    })?;
    Ok((
        r.0.into_pyarray(py),
        r.1.into_pyarray(py),
        r.2.into_pyarray(py),
        r.3.into_pyarray(py),
    ))
}

/// CTC from logits `[T][K]` (blank 0): (loss, logit gradient × scale).
#[pyfunction]
pub fn rec_ctc<'py>(
    py: Python<'py>,
    logits: PyReadonlyArray1<'py, f32>,
    t_len: usize,
    k: usize,
    labels: Vec<usize>,
    scale: f64,
) -> PyResult<(f64, Arr<'py>)> {
    let logits = flat(&logits)?;
    need("logits", &logits, t_len * k)?;
    if labels.iter().any(|&l| l == 0 || l >= k) {
        return Err(Error::value("labels must be in 1..K (0 is the blank)").into());
    }
    let mut g = scratch_vec(t_len * k, 0f32);
    let mut s = crate::recognizer::ctc::Scratch::default();
    let loss = crate::recognizer::ctc::loss_from_logits(
        crate::simd::Token::current(),
        &logits,
        t_len,
        k,
        &labels,
        scale,
        &mut g,
        &mut s,
    );
    Ok((loss, g.into_pyarray(py)))
}

/// AdamW step number `step` (≥ 1) on one tensor: (p, m, v).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn rec_adamw<'py>(
    py: Python<'py>,
    p: PyReadonlyArray1<'py, f32>,
    g: PyReadonlyArray1<'py, f32>,
    m: PyReadonlyArray1<'py, f32>,
    v: PyReadonlyArray1<'py, f32>,
    step: u64,
    lr: f64,
    betas: (f64, f64),
    eps: f64,
    weight_decay: f64,
    decay: bool,
) -> PyResult<(Arr<'py>, Arr<'py>, Arr<'py>)> {
    let (mut p, g, mut m, mut v) = (flat(&p)?, flat(&g)?, flat(&m)?, flat(&v)?);
    let n = p.len();
    need("g", &g, n)?;
    need("m", &m, n)?;
    need("v", &v, n)?;
    if step == 0 {
        return Err(Error::value("step counts from 1").into());
    }
    use crate::kernels::optim::{adamw_step, AdamScalars};
    let s = AdamScalars::new(lr, betas.0, betas.1, eps, weight_decay, step, decay);
    adamw_step(
        crate::simd::Token::current(),
        &mut p,
        &g,
        &mut m,
        &mut v,
        &s,
    );
    Ok((p.into_pyarray(py), m.into_pyarray(py), v.into_pyarray(py)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rec_conv_block, m)?)?;
    m.add_function(wrap_pyfunction!(rec_lstm_layer, m)?)?;
    m.add_function(wrap_pyfunction!(rec_linear, m)?)?;
    m.add_function(wrap_pyfunction!(rec_ctc, m)?)?;
    m.add_function(wrap_pyfunction!(rec_adamw, m)?)?;
    Ok(())
}
