"""Recurrent layers as single differentiable operators: lstm_layer and
gru_layer (one direction each). Backward through time runs inside the Rust
kernel (rust/src/kernels/rnn.rs), with no per-step Python.

An LSTM layer returns its steps' hidden states and its final cell state;
both come from one record whose output is the packed [T + 1, B, H] tensor
(rows 0..T the hidden states, row T the final cell), so the engine's
one-output rule still holds and a loss may use either or both.
"""

from __future__ import annotations

from .. import _core
from ..autograd.function import Function
from ..tensor import Tensor, float32
from .arith import clone_contiguous


def _contig(t):
    return None if t is None else (t if t.is_contiguous() else clone_contiguous(t))


class LSTMLayer(Function):
    def forward(self, x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse):
        x, w_ih, w_hh, b_ih, b_hh, h0, c0 = map(_contig, (x, w_ih, w_hh, b_ih, b_hh, h0, c0))
        t, b, _ = x.shape
        h = w_hh.shape[1]
        self.reverse = reverse
        self.present = tuple(v is not None for v in (b_ih, b_hh, h0, c0))
        out = Tensor._empty((t + 1, b, h))
        saved = None
        if self.recording:
            saved = (Tensor._empty((t, b, 4 * h)), Tensor._empty((t, b, h)), Tensor._empty((t, b, h)), Tensor._empty((t, b, h)))
            self.save_for_backward(x, w_ih, w_hh, c0, *saved)
        _core.lstm_forward(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, out, saved)
        return out

    def backward(self, g):
        x, w_ih, w_hh, c0, gates, cells, tanh_c, h_prev = self.saved_tensors
        t, b, i = x.shape
        h = w_hh.shape[1]
        grads = (
            Tensor._empty((t, b, i)),
            Tensor._empty(w_ih.shape),
            Tensor._empty(w_hh.shape),
            Tensor._empty((4 * h,)),
            Tensor._empty((4 * h,)),
            Tensor._empty((b, h)),
            Tensor._empty((b, h)),
        )
        _core.lstm_backward(x, w_ih, w_hh, c0, (gates, cells, tanh_c, h_prev), clone_contiguous(g), self.reverse, grads)
        return _select(grads, self.present, self.needs_input_grad)


class GRULayer(Function):
    def forward(self, x, w_ih, w_hh, b_ih, b_hh, h0, reverse):
        x, w_ih, w_hh, b_ih, b_hh, h0 = map(_contig, (x, w_ih, w_hh, b_ih, b_hh, h0))
        t, b, _ = x.shape
        h = w_hh.shape[1]
        self.reverse = reverse
        self.present = tuple(v is not None for v in (b_ih, b_hh, h0)) + (False,)
        out = Tensor._empty((t, b, h))
        saved = None
        if self.recording:
            saved = (Tensor._empty((t, b, 3 * h)), Tensor._empty((t, b, h)), Tensor._empty((t, b, h)))
            self.save_for_backward(x, w_ih, w_hh, *saved)
        _core.gru_forward(x, w_ih, w_hh, b_ih, b_hh, h0, reverse, out, saved)
        return out

    def backward(self, g):
        x, w_ih, w_hh, gates, hp_n, h_prev = self.saved_tensors
        t, b, i = x.shape
        h = w_hh.shape[1]
        grads = (
            Tensor._empty((t, b, i)),
            Tensor._empty(w_ih.shape),
            Tensor._empty(w_hh.shape),
            Tensor._empty((3 * h,)),
            Tensor._empty((3 * h,)),
            Tensor._empty((b, h)),
            Tensor._empty((b, h)),  # unused dc0 slot
        )
        _core.gru_backward(x, w_ih, w_hh, (gates, hp_n, h_prev), clone_contiguous(g), self.reverse, grads)
        return _select(grads, self.present, self.needs_input_grad)


def _select(grads, present, needs):
    """Gradients for the tensor inputs that were passed, in input order:
    x, w_ih, w_hh, then whichever of b_ih, b_hh, h0, c0 were given."""
    chosen = list(grads[:3]) + [g for g, p in zip(grads[3:], present) if p]
    return tuple(g if n else None for g, n in zip(chosen, needs))


def _check(op, x, w_ih, w_hh, b_ih, b_hh, h0, c0, gates):
    for name, t in (("input", x), ("weight_ih", w_ih), ("weight_hh", w_hh)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
        if t.dtype is not float32:
            raise TypeError(f"{op}: {name} must be float32, got {t.dtype.name}")
    if x.ndim != 3:
        raise ValueError(f"{op}: input must be [T, B, input_size], got shape {x.shape}")
    if w_hh.ndim != 2 or w_hh.shape[0] != gates * w_hh.shape[1]:
        raise ValueError(f"{op}: weight_hh must be [{gates}·hidden, hidden], got shape {w_hh.shape}")
    h = w_hh.shape[1]
    if w_ih.shape != (gates * h, x.shape[2]):
        raise ValueError(f"{op}: weight_ih must be [{gates * h}, {x.shape[2]}] for input {x.shape}, got {w_ih.shape}")
    for name, t, shape in (("bias_ih", b_ih, (gates * h,)), ("bias_hh", b_hh, (gates * h,)), ("h0", h0, (x.shape[1], h)), ("c0", c0, (x.shape[1], h))):
        if t is None:
            continue
        if not isinstance(t, Tensor) or t.dtype is not float32:
            raise TypeError(f"{op}: {name} must be a float32 Tensor")
        if t.shape != shape:
            raise ValueError(f"{op}: {name} must have shape {shape}, got {t.shape}")


def lstm_layer(input, weight_ih, weight_hh, bias_ih=None, bias_hh=None, h0=None, c0=None, reverse=False):
    """One LSTM direction over input [T, B, I]. Returns (output [T, B, H],
    h_n [B, H], c_n [B, H]); h_n is the last visited step (step 0 when
    reverse)."""
    _check("lstm_layer", input, weight_ih, weight_hh, bias_ih, bias_hh, h0, c0, 4)
    packed = LSTMLayer.apply(input, weight_ih, weight_hh, bias_ih, bias_hh, h0, c0, bool(reverse))
    t = input.shape[0]
    output = packed[:t]
    c_n = packed[t]
    if t == 0:
        h_n = h0 if h0 is not None else packed[t] * 0.0
    else:
        h_n = packed[0] if reverse else packed[t - 1]
    return output, h_n, c_n


def gru_layer(input, weight_ih, weight_hh, bias_ih=None, bias_hh=None, h0=None, reverse=False):
    """One GRU direction over input [T, B, I]. Returns (output [T, B, H], h_n [B, H])."""
    _check("gru_layer", input, weight_ih, weight_hh, bias_ih, bias_hh, h0, None, 3)
    out = GRULayer.apply(input, weight_ih, weight_hh, bias_ih, bias_hh, h0, bool(reverse))
    t = input.shape[0]
    if t == 0:
        from ..creation import zeros

        return out, (h0 if h0 is not None else zeros(input.shape[1], weight_hh.shape[1]))
    return out, (out[0] if reverse else out[t - 1])
