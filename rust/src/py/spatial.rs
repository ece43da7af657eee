//! Bindings of the spatial, normalization, softmax and gather kernels.
//!
//! Each function takes contiguous tensors (the Python side makes them so),
//! checks the shapes the kernel relies on, and releases the GIL around the
//! kernel. Operator-level validation (with the user-facing messages) is the
//! Python side's; these errors only guard memory safety.

use super::storage::{DType, TView};
use crate::dispatch::{self, Mode};
use crate::kernels::{conv, gather, norm, pool, resize, softmax};
use crate::layout::is_contiguous;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

fn err<T>(msg: String) -> PyResult<T> {
    Err(PyValueError::new_err(msg))
}

/// A contiguous float32 operand.
fn cf32(obj: &Bound<'_, PyAny>, op: &str) -> PyResult<TView> {
    let v = TView::f32(obj, op)?;
    if !is_contiguous(&v.shape, &v.strides) {
        return err(format!(
            "{op} kernel: operand of shape {:?} must be contiguous",
            v.shape
        ));
    }
    Ok(v)
}

fn cf32_out(obj: &Bound<'_, PyAny>, op: &str) -> PyResult<TView> {
    cf32(obj, op)?.writable(op)
}

fn opt_f32(obj: Option<&Bound<'_, PyAny>>, op: &str, len: usize) -> PyResult<Option<TView>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => {
            let v = cf32(o, op)?;
            if v.numel() != len {
                return err(format!(
                    "{op} kernel: expected {len} elements, got shape {:?}",
                    v.shape
                ));
            }
            Ok(Some(v))
        }
    }
}

fn ci64(obj: &Bound<'_, PyAny>, op: &str) -> PyResult<TView> {
    let v = TView::of(obj, op)?;
    if v.dtype != DType::I64 || !is_contiguous(&v.shape, &v.strides) {
        return err(format!(
            "{op} kernel: indices must be a contiguous int64 tensor"
        ));
    }
    Ok(v)
}

fn f32_slice(v: &TView) -> &[f32] {
    // SAFETY: the view is contiguous and lies inside its storage, which the
    // TView keeps alive.
    unsafe { std::slice::from_raw_parts(v.addr() as *const f32, v.numel()) }
}

#[allow(clippy::mut_from_ref)]
fn f32_slice_mut(v: &TView) -> &mut [f32] {
    // SAFETY: as f32_slice; the Python side passes a fresh output buffer that
    // no other operand of the call aliases.
    unsafe { std::slice::from_raw_parts_mut(v.addr() as *mut f32, v.numel()) }
}

fn i64_slice(v: &TView) -> &[i64] {
    // SAFETY: as f32_slice, for an int64 view.
    unsafe { std::slice::from_raw_parts(v.addr() as *const i64, v.numel()) }
}

fn dims4(v: &TView, what: &str, op: &str) -> PyResult<[usize; 4]> {
    match v.shape[..] {
        [a, b, c, d] => Ok([a, b, c, d]),
        _ => err(format!(
            "{op} kernel: {what} must be 4-D, got shape {:?}",
            v.shape
        )),
    }
}

type Pair = (usize, usize);

/// The convolution whose input is `x_shape`, weight `w_shape`, output
/// `y_shape`; the output may be smaller than the full size (transposed
/// convolution's backward), never larger.
fn conv_geometry(
    x: [usize; 4],
    w: [usize; 4],
    y: [usize; 4],
    stride: Pair,
    padding: Pair,
    dilation: Pair,
    groups: usize,
    op: &str,
) -> PyResult<conv::Conv2d> {
    let [n, c_in, h, wd] = x;
    let [c_out, cg, kh, kw] = w;
    let ok = groups >= 1
        && stride.0 >= 1
        && stride.1 >= 1
        && dilation.0 >= 1
        && dilation.1 >= 1
        && kh >= 1
        && kw >= 1
        && c_in == cg * groups
        && c_out % groups == 0
        && y[0] == n
        && y[1] == c_out
        && y[2] <= conv::out_size(h, kh, stride.0, padding.0, dilation.0)
        && y[3] <= conv::out_size(wd, kw, stride.1, padding.1, dilation.1);
    if !ok {
        return err(format!("{op} kernel: inconsistent shapes input {x:?}, weight {w:?}, output {y:?} for groups {groups}"));
    }
    Ok(conv::Conv2d {
        n,
        c_in,
        h,
        w: wd,
        c_out,
        kh,
        kw,
        stride,
        padding,
        dilation,
        groups,
        oh: y[2],
        ow: y[3],
    })
}

/// `out = conv2d(x, weight) (+ bias)`.
#[pyfunction]
#[pyo3(signature = (out, x, weight, bias, stride, padding, dilation, groups))]
#[allow(clippy::too_many_arguments)]
pub fn conv2d_forward(
    py: Python<'_>,
    out: &Bound<'_, PyAny>,
    x: &Bound<'_, PyAny>,
    weight: &Bound<'_, PyAny>,
    bias: Option<&Bound<'_, PyAny>>,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
    groups: usize,
) -> PyResult<()> {
    let op = "conv2d";
    let (o, xv, wv) = (cf32_out(out, op)?, cf32(x, op)?, cf32(weight, op)?);
    let s = conv_geometry(
        dims4(&xv, "input", op)?,
        dims4(&wv, "weight", op)?,
        dims4(&o, "output", op)?,
        stride,
        padding,
        dilation,
        groups,
        op,
    )?;
    let b = opt_f32(bias, op, s.c_out)?;
    let mode = dispatch::mode();
    py.detach(move || {
        // SAFETY: shapes checked above; `out` is a fresh buffer.
        unsafe {
            conv::forward(
                mode,
                &s,
                xv.addr() as *const f32,
                wv.addr() as *const f32,
                b.as_ref().map(|b| b.addr() as *const f32),
                o.addr() as *mut f32,
            )
        }
    });
    Ok(())
}

/// `dx = ∂conv2d/∂x` applied to `dy`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn conv2d_input_grad(
    py: Python<'_>,
    dx: &Bound<'_, PyAny>,
    dy: &Bound<'_, PyAny>,
    weight: &Bound<'_, PyAny>,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
    groups: usize,
) -> PyResult<()> {
    let op = "conv2d_input_grad";
    let (o, gv, wv) = (cf32_out(dx, op)?, cf32(dy, op)?, cf32(weight, op)?);
    let s = conv_geometry(
        dims4(&o, "dx", op)?,
        dims4(&wv, "weight", op)?,
        dims4(&gv, "dy", op)?,
        stride,
        padding,
        dilation,
        groups,
        op,
    )?;
    let mode = dispatch::mode();
    py.detach(move || {
        // SAFETY: shapes checked above; `dx` is a fresh buffer.
        unsafe {
            conv::input_grad(
                mode,
                &s,
                gv.addr() as *const f32,
                wv.addr() as *const f32,
                o.addr() as *mut f32,
            )
        }
    });
    Ok(())
}

/// `dw = ∂conv2d/∂w` applied to `dy`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn conv2d_weight_grad(
    py: Python<'_>,
    dw: &Bound<'_, PyAny>,
    x: &Bound<'_, PyAny>,
    dy: &Bound<'_, PyAny>,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
    groups: usize,
) -> PyResult<()> {
    let op = "conv2d_weight_grad";
    let (o, xv, gv) = (cf32_out(dw, op)?, cf32(x, op)?, cf32(dy, op)?);
    let s = conv_geometry(
        dims4(&xv, "input", op)?,
        dims4(&o, "dw", op)?,
        dims4(&gv, "dy", op)?,
        stride,
        padding,
        dilation,
        groups,
        op,
    )?;
    let mode = dispatch::mode();
    py.detach(move || {
        // SAFETY: shapes checked above; `dw` is a fresh buffer.
        unsafe {
            conv::weight_grad(
                mode,
                &s,
                xv.addr() as *const f32,
                gv.addr() as *const f32,
                o.addr() as *mut f32,
            )
        }
    });
    Ok(())
}

fn pool_geometry(
    x: &TView,
    y: &TView,
    kernel: Pair,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
    op: &str,
) -> PyResult<pool::Pool2d> {
    let [n, c, h, w] = dims4(x, "input", op)?;
    let [yn, yc, oh, ow] = dims4(y, "output", op)?;
    let full_h = pool::out_size(h, kernel.0, stride.0, padding.0, dilation.0, true);
    let full_w = pool::out_size(w, kernel.1, stride.1, padding.1, dilation.1, true);
    if yn != n
        || yc != c
        || oh > full_h
        || ow > full_w
        || kernel.0 == 0
        || kernel.1 == 0
        || stride.0 == 0
        || stride.1 == 0
    {
        return err(format!(
            "{op} kernel: inconsistent shapes {:?} -> {:?}",
            x.shape, y.shape
        ));
    }
    Ok(pool::Pool2d {
        planes: n * c,
        h,
        w,
        oh,
        ow,
        kernel,
        stride,
        padding,
        dilation,
    })
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn max_pool2d_forward(
    py: Python<'_>,
    out: &Bound<'_, PyAny>,
    idx: &Bound<'_, PyAny>,
    x: &Bound<'_, PyAny>,
    kernel: Pair,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
) -> PyResult<()> {
    let op = "max_pool2d";
    let (o, iv, xv) = (
        cf32_out(out, op)?,
        ci64(idx, op)?.writable(op)?,
        cf32(x, op)?,
    );
    let s = pool_geometry(&xv, &o, kernel, stride, padding, dilation, op)?;
    if iv.numel() != o.numel() {
        return err(format!(
            "{op} kernel: indices of shape {:?} for output {:?}",
            iv.shape, o.shape
        ));
    }
    py.detach(move || {
        // SAFETY: shapes checked above.
        unsafe {
            pool::max_forward(
                &s,
                xv.addr() as *const f32,
                o.addr() as *mut f32,
                iv.addr() as *mut i64,
            )
        }
    });
    Ok(())
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn max_pool2d_backward(
    py: Python<'_>,
    dx: &Bound<'_, PyAny>,
    g: &Bound<'_, PyAny>,
    idx: &Bound<'_, PyAny>,
    kernel: Pair,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
) -> PyResult<()> {
    let op = "max_pool2d_backward";
    let (o, gv, iv) = (cf32_out(dx, op)?, cf32(g, op)?, ci64(idx, op)?);
    let s = pool_geometry(&o, &gv, kernel, stride, padding, dilation, op)?;
    let hw = (s.h * s.w) as i64;
    if iv.numel() != gv.numel() || i64_slice(&iv).iter().any(|&i| i >= hw) {
        return err(format!(
            "{op} kernel: bad indices for output {:?}",
            gv.shape
        ));
    }
    py.detach(move || {
        // SAFETY: shapes and index range checked above.
        unsafe {
            pool::max_backward(
                &s,
                gv.addr() as *const f32,
                iv.addr() as *const i64,
                o.addr() as *mut f32,
            )
        }
    });
    Ok(())
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (out, x, kernel, stride, padding, count_include_pad, divisor_override, backward))]
pub fn avg_pool2d(
    py: Python<'_>,
    out: &Bound<'_, PyAny>,
    x: &Bound<'_, PyAny>,
    kernel: Pair,
    stride: Pair,
    padding: Pair,
    count_include_pad: bool,
    divisor_override: Option<usize>,
    backward: bool,
) -> PyResult<()> {
    let op = "avg_pool2d";
    let (o, xv) = (cf32_out(out, op)?, cf32(x, op)?);
    // Forward: x is the input, out the output; backward: x is the output
    // gradient, out the input gradient.
    let (inp, outp) = if backward { (&o, &xv) } else { (&xv, &o) };
    let s = pool_geometry(inp, outp, kernel, stride, padding, (1, 1), op)?;
    py.detach(move || {
        // SAFETY: shapes checked above.
        unsafe {
            if backward {
                pool::avg_backward(
                    &s,
                    xv.addr() as *const f32,
                    o.addr() as *mut f32,
                    count_include_pad,
                    divisor_override,
                )
            } else {
                pool::avg_forward(
                    &s,
                    xv.addr() as *const f32,
                    o.addr() as *mut f32,
                    count_include_pad,
                    divisor_override,
                )
            }
        }
    });
    Ok(())
}

/// Resize forward (`backward = False`: out ← resize(x)) or backward
/// (`backward = True`: out ← the input gradient of the output gradient x).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (out, x, mode, align_corners, scale_h, scale_w, backward))]
pub fn resize2d(
    py: Python<'_>,
    out: &Bound<'_, PyAny>,
    x: &Bound<'_, PyAny>,
    mode: &str,
    align_corners: bool,
    scale_h: Option<f64>,
    scale_w: Option<f64>,
    backward: bool,
) -> PyResult<()> {
    let op = "interpolate";
    let (o, xv) = (cf32_out(out, op)?, cf32(x, op)?);
    let (inp, outp) = if backward { (&o, &xv) } else { (&xv, &o) };
    let [n, c, h, w] = dims4(inp, "input", op)?;
    let [yn, yc, oh, ow] = dims4(outp, "output", op)?;
    if yn != n || yc != c || h == 0 || w == 0 {
        return err(format!(
            "{op} kernel: inconsistent shapes {:?} -> {:?}",
            inp.shape, outp.shape
        ));
    }
    let nearest = match mode {
        "nearest" => true,
        "bilinear" => false,
        other => return err(format!("{op} kernel: unknown mode {other:?}")),
    };
    let (ay, ax) = if nearest {
        (
            resize::nearest_axis(h, oh, scale_h),
            resize::nearest_axis(w, ow, scale_w),
        )
    } else {
        (
            resize::linear_axis(h, oh, align_corners, scale_h),
            resize::linear_axis(w, ow, align_corners, scale_w),
        )
    };
    py.detach(move || {
        // SAFETY: shapes checked above.
        unsafe {
            if backward {
                resize::backward(
                    n * c,
                    h,
                    w,
                    &ay,
                    &ax,
                    nearest,
                    xv.addr() as *const f32,
                    o.addr() as *mut f32,
                )
            } else {
                resize::forward(
                    n * c,
                    h,
                    w,
                    &ay,
                    &ax,
                    nearest,
                    xv.addr() as *const f32,
                    o.addr() as *mut f32,
                )
            }
        }
    });
    Ok(())
}

fn nc_s(v: &TView, op: &str) -> PyResult<(usize, usize, usize)> {
    if v.shape.len() < 2 {
        return err(format!(
            "{op} kernel: expected [N, C, *], got {:?}",
            v.shape
        ));
    }
    Ok((v.shape[0], v.shape[1], v.shape[2..].iter().product()))
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (y, save_mean, save_invstd, var_unbiased, x, weight, bias, running_mean, running_var, eps))]
pub fn batch_norm_forward(
    py: Python<'_>,
    y: &Bound<'_, PyAny>,
    save_mean: &Bound<'_, PyAny>,
    save_invstd: &Bound<'_, PyAny>,
    var_unbiased: &Bound<'_, PyAny>,
    x: &Bound<'_, PyAny>,
    weight: Option<&Bound<'_, PyAny>>,
    bias: Option<&Bound<'_, PyAny>>,
    running_mean: Option<&Bound<'_, PyAny>>,
    running_var: Option<&Bound<'_, PyAny>>,
    eps: f64,
) -> PyResult<()> {
    let op = "batch_norm";
    let xv = cf32(x, op)?;
    let dims = nc_s(&xv, op)?;
    let c = dims.1;
    let yv = cf32_out(y, op)?;
    let (mv, iv, vv) = (
        cf32_out(save_mean, op)?,
        cf32_out(save_invstd, op)?,
        cf32_out(var_unbiased, op)?,
    );
    if yv.shape != xv.shape || mv.numel() != c || iv.numel() != c || vv.numel() != c {
        return err(format!(
            "{op} kernel: inconsistent outputs for input {:?}",
            xv.shape
        ));
    }
    let (wv, bv) = (opt_f32(weight, op, c)?, opt_f32(bias, op, c)?);
    let (rm, rv) = (opt_f32(running_mean, op, c)?, opt_f32(running_var, op, c)?);
    let running = match (&rm, &rv) {
        (Some(m), Some(v)) => Some((m.addr() as *const f32, v.addr() as *const f32)),
        _ => None,
    };
    let running = running.map(|(m, v)| (m as usize, v as usize));
    py.detach(move || {
        // SAFETY: shapes checked above.
        unsafe {
            norm::batch_norm_forward(
                dims,
                xv.addr() as *const f32,
                wv.as_ref().map(|w| w.addr() as *const f32),
                bv.as_ref().map(|b| b.addr() as *const f32),
                running.map(|(m, v)| (m as *const f32, v as *const f32)),
                eps,
                yv.addr() as *mut f32,
                mv.addr() as *mut f32,
                iv.addr() as *mut f32,
                vv.addr() as *mut f32,
            )
        }
    });
    Ok(())
}

fn opt_out(obj: Option<&Bound<'_, PyAny>>, op: &str, len: usize) -> PyResult<Option<TView>> {
    match opt_f32(obj, op, len)? {
        Some(v) => Ok(Some(v.writable(op)?)),
        None => Ok(None),
    }
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (dx, dw, db, x, g, weight, mean, invstd, training))]
pub fn batch_norm_backward(
    py: Python<'_>,
    dx: Option<&Bound<'_, PyAny>>,
    dw: Option<&Bound<'_, PyAny>>,
    db: Option<&Bound<'_, PyAny>>,
    x: &Bound<'_, PyAny>,
    g: &Bound<'_, PyAny>,
    weight: Option<&Bound<'_, PyAny>>,
    mean: &Bound<'_, PyAny>,
    invstd: &Bound<'_, PyAny>,
    training: bool,
) -> PyResult<()> {
    let op = "batch_norm_backward";
    let (xv, gv) = (cf32(x, op)?, cf32(g, op)?);
    let dims = nc_s(&xv, op)?;
    let c = dims.1;
    if gv.shape != xv.shape {
        return err(format!(
            "{op} kernel: gradient {:?} for input {:?}",
            gv.shape, xv.shape
        ));
    }
    let (dxv, dwv, dbv) = (
        opt_out(dx, op, xv.numel())?,
        opt_out(dw, op, c)?,
        opt_out(db, op, c)?,
    );
    let wv = opt_f32(weight, op, c)?;
    let (mv, iv) = (
        opt_f32(Some(mean), op, c)?.unwrap(),
        opt_f32(Some(invstd), op, c)?.unwrap(),
    );
    py.detach(move || {
        // SAFETY: shapes checked above.
        unsafe {
            norm::batch_norm_backward(
                dims,
                xv.addr() as *const f32,
                gv.addr() as *const f32,
                wv.as_ref().map(|w| w.addr() as *const f32),
                mv.addr() as *const f32,
                iv.addr() as *const f32,
                training,
                dxv.as_ref().map(|v| v.addr() as *mut f32),
                dwv.as_ref().map(|v| v.addr() as *mut f32),
                dbv.as_ref().map(|v| v.addr() as *mut f32),
            )
        }
    });
    Ok(())
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (y, save_mean, save_invstd, x, d, weight, bias, eps))]
pub fn layer_norm_forward(
    py: Python<'_>,
    y: &Bound<'_, PyAny>,
    save_mean: &Bound<'_, PyAny>,
    save_invstd: &Bound<'_, PyAny>,
    x: &Bound<'_, PyAny>,
    d: usize,
    weight: Option<&Bound<'_, PyAny>>,
    bias: Option<&Bound<'_, PyAny>>,
    eps: f64,
) -> PyResult<()> {
    let op = "layer_norm";
    let (xv, yv) = (cf32(x, op)?, cf32_out(y, op)?);
    if d == 0 || xv.numel() % d != 0 || yv.shape != xv.shape {
        return err(format!("{op} kernel: bad shapes {:?} / {d}", xv.shape));
    }
    let rows = xv.numel() / d;
    let (mv, iv) = (
        opt_out(Some(save_mean), op, rows)?.unwrap(),
        opt_out(Some(save_invstd), op, rows)?.unwrap(),
    );
    let (wv, bv) = (opt_f32(weight, op, d)?, opt_f32(bias, op, d)?);
    py.detach(move || {
        // SAFETY: shapes checked above.
        unsafe {
            norm::layer_norm_forward(
                rows,
                d,
                xv.addr() as *const f32,
                wv.as_ref().map(|w| w.addr() as *const f32),
                bv.as_ref().map(|b| b.addr() as *const f32),
                eps,
                yv.addr() as *mut f32,
                mv.addr() as *mut f32,
                iv.addr() as *mut f32,
            )
        }
    });
    Ok(())
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (dx, dw, db, x, g, d, weight, mean, invstd))]
pub fn layer_norm_backward(
    py: Python<'_>,
    dx: Option<&Bound<'_, PyAny>>,
    dw: Option<&Bound<'_, PyAny>>,
    db: Option<&Bound<'_, PyAny>>,
    x: &Bound<'_, PyAny>,
    g: &Bound<'_, PyAny>,
    d: usize,
    weight: Option<&Bound<'_, PyAny>>,
    mean: &Bound<'_, PyAny>,
    invstd: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let op = "layer_norm_backward";
    let (xv, gv) = (cf32(x, op)?, cf32(g, op)?);
    if d == 0 || xv.numel() % d != 0 || gv.shape != xv.shape {
        return err(format!("{op} kernel: bad shapes {:?} / {d}", xv.shape));
    }
    let rows = xv.numel() / d;
    let (dxv, dwv, dbv) = (
        opt_out(dx, op, xv.numel())?,
        opt_out(dw, op, d)?,
        opt_out(db, op, d)?,
    );
    let wv = opt_f32(weight, op, d)?;
    let (mv, iv) = (
        opt_f32(Some(mean), op, rows)?.unwrap(),
        opt_f32(Some(invstd), op, rows)?.unwrap(),
    );
    py.detach(move || {
        // SAFETY: shapes checked above.
        unsafe {
            norm::layer_norm_backward(
                rows,
                d,
                xv.addr() as *const f32,
                gv.addr() as *const f32,
                wv.as_ref().map(|w| w.addr() as *const f32),
                mv.addr() as *const f32,
                iv.addr() as *const f32,
                dxv.as_ref().map(|v| v.addr() as *mut f32),
                dwv.as_ref().map(|v| v.addr() as *mut f32),
                dbv.as_ref().map(|v| v.addr() as *mut f32),
            )
        }
    });
    Ok(())
}

/// The exp/log pair of the current mode: the platform's in fast mode, the
/// fixed ones (crate::math) in exact mode.
pub fn mode_fns() -> softmax::Fns {
    match dispatch::mode() {
        Mode::Fast => softmax::Fns {
            exp: f32::exp,
            log: f32::ln,
            exact: false,
        },
        Mode::Exact => softmax::Fns {
            exp: crate::math::exp,
            log: crate::math::log,
            exact: true,
        },
    }
}

/// Softmax / log-softmax over the last dim of a contiguous tensor; with
/// `backward`, `a` is the forward output and `b` its gradient.
#[pyfunction]
#[pyo3(signature = (out, a, b, log, backward))]
pub fn softmax_rows(
    py: Python<'_>,
    out: &Bound<'_, PyAny>,
    a: &Bound<'_, PyAny>,
    b: Option<&Bound<'_, PyAny>>,
    log: bool,
    backward: bool,
) -> PyResult<()> {
    let op = if log { "log_softmax" } else { "softmax" };
    let (o, av) = (cf32_out(out, op)?, cf32(a, op)?);
    if o.shape != av.shape || o.shape.is_empty() {
        return err(format!(
            "{op} kernel: shapes {:?} and {:?}",
            o.shape, av.shape
        ));
    }
    let d = *o.shape.last().unwrap();
    let rows = if d == 0 { 0 } else { o.numel() / d };
    let f = mode_fns();
    if backward {
        let bv = cf32(
            b.ok_or_else(|| {
                PyValueError::new_err(format!("{op} kernel: backward needs the gradient"))
            })?,
            op,
        )?;
        if bv.shape != o.shape {
            return err(format!(
                "{op} kernel: gradient {:?} for {:?}",
                bv.shape, o.shape
            ));
        }
        py.detach(move || {
            // SAFETY: three buffers of one contiguous shape; out is fresh.
            unsafe {
                softmax::backward(
                    rows,
                    d,
                    av.addr() as *const f32,
                    bv.addr() as *const f32,
                    o.addr() as *mut f32,
                    log,
                    f,
                )
            }
        });
    } else {
        py.detach(move || {
            // SAFETY: two buffers of one contiguous shape.
            unsafe {
                softmax::forward(
                    rows,
                    d,
                    av.addr() as *const f32,
                    o.addr() as *mut f32,
                    log,
                    f,
                )
            }
        });
    }
    Ok(())
}

/// `out[i] = weight[idx[i]]` (rows); ValueError for an index out of range.
#[pyfunction]
pub fn embedding_forward(
    py: Python<'_>,
    out: &Bound<'_, PyAny>,
    weight: &Bound<'_, PyAny>,
    idx: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let op = "embedding";
    let (o, wv, iv) = (cf32_out(out, op)?, cf32(weight, op)?, ci64(idx, op)?);
    if wv.shape.len() != 2 || o.numel() != iv.numel() * wv.shape[1] {
        return err(format!(
            "{op} kernel: weight {:?}, indices {:?}, output {:?}",
            wv.shape, iv.shape, o.shape
        ));
    }
    let (rows, d) = (wv.shape[0], wv.shape[1]);
    if let Err((pos, v)) = gather::check_indices(i64_slice(&iv), rows, None) {
        return err(format!("embedding: index {v} at position {pos} is out of range for a table of {rows} rows (weight shape {:?})", wv.shape));
    }
    py.detach(|| gather::gather_rows(f32_slice(&wv), d, i64_slice(&iv), f32_slice_mut(&o)));
    Ok(())
}

/// `dw[r] = Σ g[i]` over positions with `idx[i] = r`, `padding_idx` skipped.
#[pyfunction]
#[pyo3(signature = (dw, g, idx, padding_idx))]
pub fn embedding_backward(
    py: Python<'_>,
    dw: &Bound<'_, PyAny>,
    g: &Bound<'_, PyAny>,
    idx: &Bound<'_, PyAny>,
    padding_idx: Option<i64>,
) -> PyResult<()> {
    let op = "embedding_backward";
    let (o, gv, iv) = (cf32_out(dw, op)?, cf32(g, op)?, ci64(idx, op)?);
    if o.shape.len() != 2 || gv.numel() != iv.numel() * o.shape[1] {
        return err(format!(
            "{op} kernel: dw {:?}, g {:?}, indices {:?}",
            o.shape, gv.shape, iv.shape
        ));
    }
    let (rows, d) = (o.shape[0], o.shape[1]);
    if gather::check_indices(i64_slice(&iv), rows, None).is_err() {
        return err(format!("{op} kernel: index out of range"));
    }
    py.detach(|| {
        dispatch::with_ieee(|| {
            gather::scatter_add_rows(
                f32_slice(&gv),
                d,
                i64_slice(&iv),
                padding_idx,
                f32_slice_mut(&o),
            )
        })
    });
    Ok(())
}

fn nll_dims(lp: &TView, target: &TView, op: &str) -> PyResult<(usize, usize, usize)> {
    let (n, c, s) = nc_s(lp, op)?;
    if target.numel() != n * s {
        return err(format!(
            "{op}: target of shape {:?} does not match input of shape {:?}",
            target.shape, lp.shape
        ));
    }
    Ok((n, c, s))
}

/// nll_loss's per-element loss and weight (see kernels::gather::nll_pick).
#[pyfunction]
#[pyo3(signature = (loss, wt, lp, target, weight, ignore_index))]
pub fn nll_pick(
    py: Python<'_>,
    loss: &Bound<'_, PyAny>,
    wt: &Bound<'_, PyAny>,
    lp: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    weight: Option<&Bound<'_, PyAny>>,
    ignore_index: i64,
) -> PyResult<()> {
    let op = "nll_loss";
    let (lv, tv) = (cf32(lp, op)?, ci64(target, op)?);
    let dims = nll_dims(&lv, &tv, op)?;
    let (lo, wo) = (
        opt_out(Some(loss), op, tv.numel())?.unwrap(),
        opt_out(Some(wt), op, tv.numel())?.unwrap(),
    );
    let wv = opt_f32(weight, op, dims.1)?;
    if let Err((pos, v)) = gather::check_indices(i64_slice(&tv), dims.1, Some(ignore_index)) {
        return err(format!("nll_loss: target {v} at position {pos} is out of bounds for {} classes (input shape {:?})", dims.1, lv.shape));
    }
    py.detach(|| {
        dispatch::with_ieee(|| {
            gather::nll_pick(
                f32_slice(&lv),
                dims,
                i64_slice(&tv),
                wv.as_ref().map(f32_slice),
                ignore_index,
                f32_slice_mut(&lo),
                f32_slice_mut(&wo),
            )
        })
    });
    Ok(())
}

#[pyfunction]
#[pyo3(signature = (dlp, g, target, weight, ignore_index))]
pub fn nll_scatter(
    py: Python<'_>,
    dlp: &Bound<'_, PyAny>,
    g: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    weight: Option<&Bound<'_, PyAny>>,
    ignore_index: i64,
) -> PyResult<()> {
    let op = "nll_loss_backward";
    let (dv, gv, tv) = (cf32_out(dlp, op)?, cf32(g, op)?, ci64(target, op)?);
    let dims = nll_dims(&dv, &tv, op)?;
    if gv.numel() != tv.numel() {
        return err(format!(
            "{op}: gradient {:?} for target {:?}",
            gv.shape, tv.shape
        ));
    }
    let wv = opt_f32(weight, op, dims.1)?;
    gather::check_indices(i64_slice(&tv), dims.1, Some(ignore_index))
        .map_err(|_| PyValueError::new_err(format!("{op}: target out of range")))?;
    py.detach(|| {
        dispatch::with_ieee(|| {
            gather::nll_scatter(
                f32_slice(&gv),
                dims,
                i64_slice(&tv),
                wv.as_ref().map(f32_slice),
                ignore_index,
                f32_slice_mut(&dv),
            )
        })
    });
    Ok(())
}

/// Fill `out` with the dropout multipliers (0 or 1/(1−p)) of `key`.
#[pyfunction]
pub fn dropout_mask(py: Python<'_>, out: &Bound<'_, PyAny>, key: u64, p: f64) -> PyResult<()> {
    let o = cf32_out(out, "dropout")?;
    if !(0.0..1.0).contains(&p) {
        return err(format!("dropout kernel: p must be in [0, 1), got {p}"));
    }
    let scale = (1.0 / (1.0 - p)) as f32;
    py.detach(|| gather::dropout_mask(key, p, scale, f32_slice_mut(&o)));
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(conv2d_forward, m)?)?;
    m.add_function(wrap_pyfunction!(conv2d_input_grad, m)?)?;
    m.add_function(wrap_pyfunction!(conv2d_weight_grad, m)?)?;
    m.add_function(wrap_pyfunction!(max_pool2d_forward, m)?)?;
    m.add_function(wrap_pyfunction!(max_pool2d_backward, m)?)?;
    m.add_function(wrap_pyfunction!(avg_pool2d, m)?)?;
    m.add_function(wrap_pyfunction!(resize2d, m)?)?;
    m.add_function(wrap_pyfunction!(batch_norm_forward, m)?)?;
    m.add_function(wrap_pyfunction!(batch_norm_backward, m)?)?;
    m.add_function(wrap_pyfunction!(layer_norm_forward, m)?)?;
    m.add_function(wrap_pyfunction!(layer_norm_backward, m)?)?;
    m.add_function(wrap_pyfunction!(softmax_rows, m)?)?;
    m.add_function(wrap_pyfunction!(embedding_forward, m)?)?;
    m.add_function(wrap_pyfunction!(embedding_backward, m)?)?;
    m.add_function(wrap_pyfunction!(nll_pick, m)?)?;
    m.add_function(wrap_pyfunction!(nll_scatter, m)?)?;
    m.add_function(wrap_pyfunction!(dropout_mask, m)?)?;
    Ok(())
}
