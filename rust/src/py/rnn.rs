//! Bindings of the recurrent layers (`kernels::rnn`). The Python operator
//! (python/onemodel/ops/rnn.py) builds a [`RecurrentLayout`] from the
//! input's and weights' shapes, allocates every buffer from it, and passes
//! each direction as a named tuple that pyo3 reads by attribute
//! ([`ForwardDirection`], [`BackwardDirection`]); the bindings check each
//! buffer against the same layout before releasing the GIL.

use super::operand::{In, Out};
use crate::dispatch;
use crate::error::Error;
use crate::kernels::rnn::{self, layout::Buffer, Cell, Layout};
use crate::ptr::Ptr;
use pyo3::prelude::*;

/// The sizes of one recurrent call and the shape of every buffer
/// (`kernels::rnn::Layout`), for the Python side to allocate from.
#[pyclass(module = "onemodel._core", frozen)]
pub struct RecurrentLayout(Layout);

#[pymethods]
impl RecurrentLayout {
    /// `cell`: "lstm" or "gru"; `x` [T, B, I]; `w_hh` [G·H, H].
    #[new]
    fn new(cell: &str, x: Vec<usize>, w_hh: Vec<usize>, directions: usize) -> PyResult<Self> {
        Ok(RecurrentLayout(Layout::new(
            Cell::parse(cell)?,
            &x,
            &w_hh,
            directions,
        )?))
    }

    /// The packed output: [T + 1, B, D·H] (LSTM) or [T, B, D·H] (GRU).
    #[getter]
    fn output_shape(&self) -> Vec<usize> {
        self.0.shape_of(Buffer::Output)
    }

    /// One direction's saved buffers: the gates, then the cell's states.
    #[getter]
    fn saved_shapes(&self) -> Vec<Vec<usize>> {
        self.0.saved_shapes()
    }

    #[getter]
    fn hidden_size(&self) -> usize {
        self.0.dims.h
    }

    /// Check a tensor's shape against the layout: `what` is one of input,
    /// weight_ih, weight_hh, bias_ih, bias_hh, h0, c0.
    fn check(&self, what: &str, shape: Vec<usize>) -> PyResult<()> {
        let buffer = match what {
            "input" => Buffer::Input,
            "weight_ih" => Buffer::WeightIh,
            "weight_hh" => Buffer::WeightHh,
            "bias_ih" | "bias_hh" => Buffer::Bias,
            "h0" | "c0" => Buffer::State,
            other => return Err(Error::Value(format!("unknown buffer {other:?}")).into()),
        };
        Ok(self.0.expect(buffer, what, &shape)?)
    }
}

/// One direction of a forward call (ops/rnn.py `ForwardDirection`); `saved`
/// is None on the inference path, else the buffers forward fills for
/// backward, shaped as `RecurrentLayout.saved_shapes`.
#[derive(FromPyObject)]
pub struct ForwardDirection {
    w_ih: In<f32>,
    w_hh: In<f32>,
    b_ih: Option<In<f32>>,
    b_hh: Option<In<f32>>,
    h0: Option<In<f32>>,
    c0: Option<In<f32>>,
    reverse: bool,
    saved: Option<Vec<Out<f32>>>,
}

/// The gradients one direction's backward writes (ops/rnn.py `Grads`);
/// `dc0` only for an LSTM.
#[derive(FromPyObject)]
pub struct Grads {
    dx: Out<f32>,
    dw_ih: Out<f32>,
    dw_hh: Out<f32>,
    db_ih: Out<f32>,
    db_hh: Out<f32>,
    dh0: Out<f32>,
    dc0: Option<Out<f32>>,
}

/// One direction of a backward call (ops/rnn.py `BackwardDirection`).
#[derive(FromPyObject)]
pub struct BackwardDirection {
    w_ih: In<f32>,
    w_hh: In<f32>,
    c0: Option<In<f32>>,
    saved: Vec<Out<f32>>,
    reverse: bool,
    grads: Grads,
}

type Check<'a> = (Buffer, &'a str, &'a [usize]);

fn check_all(layout: &Layout, checks: &[Check<'_>]) -> PyResult<()> {
    for &(what, name, shape) in checks {
        layout.expect(what, name, shape)?;
    }
    Ok(())
}

/// The saved buffers must be those of the layout, in its order.
fn check_saved(layout: &Layout, saved: &[Out<f32>]) -> PyResult<()> {
    let want = layout.saved_shapes();
    if saved.len() != want.len() {
        return Err(Error::Value(format!(
            "{}: expected {} saved buffers, got {}",
            layout.cell.op(),
            want.len(),
            saved.len()
        ))
        .into());
    }
    for (k, s) in saved.iter().enumerate() {
        layout.expect(Buffer::Saved(k), "saved buffer", s.shape())?;
    }
    Ok(())
}

fn opt_shape<const W: bool>(v: &Option<super::operand::Operand<f32, true, W>>) -> Option<&[usize]> {
    v.as_ref().map(|v| v.shape())
}

impl Direction for ForwardDirection {
    fn check(&self, layout: &Layout) -> PyResult<()> {
        let mut checks = vec![
            (Buffer::WeightIh, "weight_ih", self.w_ih.shape()),
            (Buffer::WeightHh, "weight_hh", self.w_hh.shape()),
        ];
        for (name, v) in [("bias_ih", &self.b_ih), ("bias_hh", &self.b_hh)] {
            checks.extend(opt_shape(v).map(|s| (Buffer::Bias, name, s)));
        }
        for (name, v) in [("h0", &self.h0), ("c0", &self.c0)] {
            checks.extend(opt_shape(v).map(|s| (Buffer::State, name, s)));
        }
        check_all(layout, &checks)?;
        if self.c0.is_some() && !layout.cell.has_cell() {
            return Err(Error::Value(format!("{}: takes no cell state", layout.cell.op())).into());
        }
        match &self.saved {
            Some(saved) => check_saved(layout, saved),
            None => Ok(()),
        }
    }
}

impl Direction for BackwardDirection {
    fn check(&self, layout: &Layout) -> PyResult<()> {
        let g = &self.grads;
        let mut checks = vec![
            (Buffer::WeightIh, "weight_ih", self.w_ih.shape()),
            (Buffer::WeightHh, "weight_hh", self.w_hh.shape()),
            (Buffer::Input, "dx", g.dx.shape()),
            (Buffer::WeightIh, "dw_ih", g.dw_ih.shape()),
            (Buffer::WeightHh, "dw_hh", g.dw_hh.shape()),
            (Buffer::Bias, "db_ih", g.db_ih.shape()),
            (Buffer::Bias, "db_hh", g.db_hh.shape()),
            (Buffer::State, "dh0", g.dh0.shape()),
        ];
        checks.extend(opt_shape(&self.c0).map(|s| (Buffer::State, "c0", s)));
        checks.extend(opt_shape(&g.dc0).map(|s| (Buffer::State, "dc0", s)));
        check_all(layout, &checks)?;
        check_saved(layout, &self.saved)
    }
}

impl BackwardDirection {
    fn grads(&self) -> rnn::RnnGrads {
        let g = &self.grads;
        rnn::RnnGrads {
            dx: dst(&g.dx),
            dw_ih: dst(&g.dw_ih),
            dw_hh: dst(&g.dw_hh),
            db_ih: dst(&g.db_ih),
            db_hh: dst(&g.db_hh),
            dh0: dst(&g.dh0),
            dc0: g.dc0.as_ref().map(dst),
        }
    }
}

/// One direction of a forward or a backward call, checked against the
/// layout before the GIL is released.
trait Direction: Sync {
    fn check(&self, layout: &Layout) -> PyResult<()>;
}

/// What a direction's kernel call needs besides its own buffers.
struct CallSettings {
    token: crate::simd::Token,
    mode: dispatch::Mode,
    dims: rnn::Dims,
    /// Elements between two rows of the packed output: D·H.
    ld: usize,
}

/// Both calls' frame: the layout's directions must be the call's, x its
/// input, `packed` (name, shape) its packed output or output gradient and
/// each direction's buffers its own; then `run(settings, k, direction)`
/// for each direction without the GIL ([`run_directions`]).
fn call<D: Direction>(
    py: Python<'_>,
    layout: &Layout,
    x: &In<f32>,
    directions: &[D],
    packed: (&str, &[usize]),
    run: impl Fn(&CallSettings, usize, &D) + Sync + Send,
) -> PyResult<()> {
    if directions.len() != layout.directions {
        return Err(Error::Value(format!(
            "{}: a layout of {} direction(s) for {}",
            layout.cell.op(),
            layout.directions,
            directions.len()
        ))
        .into());
    }
    layout.expect(Buffer::Input, "input", x.shape())?;
    layout.expect(Buffer::Output, packed.0, packed.1)?;
    for dir in directions {
        dir.check(layout)?;
    }
    let (token, mode) = super::settings();
    let settings = CallSettings {
        token,
        mode,
        dims: layout.dims,
        ld: layout.directions * layout.dims.h,
    };
    super::kernel::detach(py, || {
        run_directions(layout.macs(), directions, |k, dir| run(&settings, k, dir))
    })
}

/// Run `run(k, direction)` for each direction: a lone one on this thread,
/// two at once on two threads of the pool ([`dispatch::join_macs`]: unless
/// the layer is too small for a helper to help, `macs` being the forward's
/// multiply-adds). Each writes only its own buffers and its own H columns
/// of the shared output, so the bits do not depend on which runs where.
fn run_directions<T: Sync>(macs: usize, dirs: &[T], run: impl Fn(usize, &T) + Sync) {
    match dirs {
        [only] => dispatch::with_ieee(|| run(0, only)),
        [a, b] => {
            dispatch::join_macs(macs, || run(0, a), || run(1, b));
        }
        _ => unreachable!("checked: one or two directions"),
    }
}

fn src(v: &In<f32>) -> rnn::Src {
    Ptr::new(v.ptr(), v.numel())
}

fn dst(v: &Out<f32>) -> rnn::Dst {
    Ptr::new(v.mut_ptr(), v.numel())
}

fn lstm_saved(v: &[Out<f32>]) -> rnn::LstmSaved {
    rnn::LstmSaved {
        gates: dst(&v[0]),
        cells: dst(&v[1]),
        tanh_c: dst(&v[2]),
        h_prev: dst(&v[3]),
    }
}

fn gru_saved(v: &[Out<f32>]) -> rnn::GruSaved {
    rnn::GruSaved {
        gates: dst(&v[0]),
        hp_n: dst(&v[1]),
        h_prev: dst(&v[2]),
    }
}

/// Forward over x [T, B, I] for one direction or two at once; `out` is the
/// layout's packed output: direction k writes columns k·H..(k+1)·H.
#[pyfunction]
pub fn recurrent_forward(
    py: Python<'_>,
    layout: PyRef<'_, RecurrentLayout>,
    x: In<f32>,
    directions: Vec<ForwardDirection>,
    out: Out<f32>,
) -> PyResult<()> {
    let (l, packed) = (layout.0, ("output", out.shape()));
    call(py, &l, &x, &directions, packed, |c, k, dir| {
        let (token, mode, d, ld) = (c.token, c.mode, c.dims, c.ld);
        let out = dst(&out).offset(k * d.h);
        let inp = rnn::ForwardInputs {
            x: src(&x),
            w_ih: src(&dir.w_ih),
            w_hh: src(&dir.w_hh),
            b_ih: dir.b_ih.as_ref().map(src),
            b_hh: dir.b_hh.as_ref().map(src),
            h0: dir.h0.as_ref().map(src),
            c0: dir.c0.as_ref().map(src),
            reverse: dir.reverse,
        };
        let saved = dir.saved.as_deref();
        // SAFETY: every buffer was checked against the layout the
        // kernels assume; `out` and the saved buffers are fresh buffers
        // the Python side allocated; the directions write disjoint
        // columns of `out` and their own saved buffers.
        unsafe {
            match l.cell {
                Cell::Lstm => {
                    let saved = saved.map(lstm_saved);
                    rnn::lstm_forward(token, mode, d, &inp, out, ld, saved.as_ref())
                }
                Cell::Gru => {
                    let saved = saved.map(gru_saved);
                    rnn::gru_forward(token, mode, d, &inp, out, ld, saved.as_ref())
                }
            }
        }
    })
}

/// Backward for the directions of one forward call; `g_out` is the
/// gradient of its packed output.
#[pyfunction]
pub fn recurrent_backward(
    py: Python<'_>,
    layout: PyRef<'_, RecurrentLayout>,
    x: In<f32>,
    directions: Vec<BackwardDirection>,
    g_out: In<f32>,
) -> PyResult<()> {
    let (l, packed) = (layout.0, ("output gradient", g_out.shape()));
    call(py, &l, &x, &directions, packed, |c, k, dir| {
        let (token, mode, d, ld) = (c.token, c.mode, c.dims, c.ld);
        let inp = rnn::BackwardInputs {
            x: src(&x),
            w_ih: src(&dir.w_ih),
            w_hh: src(&dir.w_hh),
            c0: dir.c0.as_ref().map(src),
            reverse: dir.reverse,
            g_out: src(&g_out).offset(k * d.h),
            ld_g: ld,
        };
        let grads = dir.grads();
        // SAFETY: as in `recurrent_forward`; each direction writes only
        // its own fresh gradient buffers.
        unsafe {
            match l.cell {
                Cell::Lstm => {
                    rnn::lstm_backward(token, mode, d, &inp, &lstm_saved(&dir.saved), &grads)
                }
                Cell::Gru => {
                    rnn::gru_backward(token, mode, d, &inp, &gru_saved(&dir.saved), &grads)
                }
            }
        }
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RecurrentLayout>()?;
    m.add_function(wrap_pyfunction!(recurrent_forward, m)?)?;
    m.add_function(wrap_pyfunction!(recurrent_backward, m)?)?;
    Ok(())
}
