"""Recurrent layers as single differentiable operators: lstm_layer and
gru_layer (one direction), and the same kernels for the two directions of a
bidirectional layer as one operator (what nn.LSTM and nn.GRU use), so that
the directions run at once, forward and backward, on two threads. Backward
through time runs inside the Rust kernel (rust/src/kernels/rnn.rs), with no
per-step Python.

One record per layer call, whose output packs what the call returns:
[T + 1, B, D·H] for an LSTM (rows 0..T the hidden states, row T the final
cells) and [T, B, D·H] for a GRU, direction k in columns k·H..(k+1)·H. So
the engine's one-output rule holds, a loss may use any part of it, and the
concatenated output of a bidirectional layer is a contiguous view (no copy).

The input's gradient of a two-direction call is dx_reverse + dx_forward: the
sum the engine formed when the directions were two records (the reverse
one's emission came first), so the bits are those of the two-record graph
(up to the sign of an exact zero in the output gradient when a loss reads
h_n or c_n of both directions: docs/recurrent.md).
"""

from __future__ import annotations

from .. import _core
from ..autograd.function import Function
from ..tensor import Tensor, float32
from ._spatial_util import contig
from .._kernels import add_new


def _contig(t):
    """`contig` that passes an absent optional operand through."""
    return None if t is None else contig(t)


# Tensor inputs per direction after x: w_ih, w_hh, b_ih, b_hh, h0, c0.
_PER_DIRECTION = 6


class _Recurrent(Function):
    """Inputs: x, then per direction w_ih, w_hh, b_ih, b_hh, h0, c0 (None
    where absent; c0 always None for a GRU). Subclasses name the kernels and
    the layout of what forward saves."""

    gates: int
    saved_states: int  # [T, B, H] buffers saved after the [T, B, G·H] gates
    extra_rows: int  # rows of the output after the T steps

    @staticmethod
    def _forward_kernel(x, dirs, out):  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def _backward_kernel(x, dirs, g):  # pragma: no cover - abstract
        raise NotImplementedError

    def forward(self, x, *params, reverses):
        x = _contig(x)
        t, b, _ = x.shape
        groups = [tuple(map(_contig, params[k * _PER_DIRECTION:(k + 1) * _PER_DIRECTION])) for k in range(len(reverses))]
        h = groups[0][1].shape[1]
        self.reverses = reverses
        # Which of b_ih, b_hh, h0, c0 each direction was given (they are
        # tensor inputs only when present).
        self.present = [tuple(v is not None for v in g[2:]) for g in groups]
        out = Tensor._empty((t + self.extra_rows, b, len(groups) * h))
        dirs, keep = [], [x]
        for (w_ih, w_hh, b_ih, b_hh, h0, c0), reverse in zip(groups, reverses):
            saved = None
            if self.recording:
                saved = [Tensor._empty((t, b, self.gates * h))] + [Tensor._empty((t, b, h)) for _ in range(self.saved_states)]
                keep += [w_ih, w_hh, c0, *saved]
            dirs.append((w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, saved))
        if self.recording:
            self.save_for_backward(*keep)
        self._forward_kernel(x, dirs, out)
        return out

    def backward(self, g):
        saved = self.saved_tensors
        x = saved[0]
        t, b, i = x.shape
        width = 3 + 1 + self.saved_states
        dirs, grads = [], []
        for k, reverse in enumerate(self.reverses):
            w_ih, w_hh, c0, *buffers = saved[1 + k * width:1 + (k + 1) * width]
            gh, h = w_hh.shape
            # dx, dw_ih, dw_hh, db_ih, db_hh, dh0, dc0 (a GRU leaves dc0 unused).
            gk = (
                Tensor._empty((t, b, i)),
                Tensor._empty(w_ih.shape),
                Tensor._empty(w_hh.shape),
                Tensor._empty((gh,)),
                Tensor._empty((gh,)),
                Tensor._empty((b, h)),
                Tensor._empty((b, h)),
            )
            dirs.append((w_ih, w_hh, c0, buffers, reverse, gk))
            grads.append(gk)
        self._backward_kernel(x, dirs, _contig(g))
        return self._select(grads)

    def _select(self, grads):
        """Gradients for the tensor inputs, in input order: x, then per
        direction w_ih, w_hh and whichever of b_ih, b_hh, h0, c0 were given."""
        needs = self.needs_input_grad
        dx = None
        if needs[0]:
            dx = grads[0][0]
            if len(grads) == 2:
                dx = add_new(grads[1][0], dx)
        chosen = [dx]
        for gk, present in zip(grads, self.present):
            chosen += [gk[1], gk[2]] + [gi for gi, p in zip(gk[3:], present) if p]
        return tuple(gi if n else None for gi, n in zip(chosen, needs))


class LSTMLayer(_Recurrent):
    gates = 4
    saved_states = 3  # cells, tanh(cells), the hidden state each step started from
    extra_rows = 1
    _forward_kernel = staticmethod(_core.lstm_forward)
    _backward_kernel = staticmethod(_core.lstm_backward)


class GRULayer(_Recurrent):
    gates = 3
    saved_states = 2  # W_hn h + b_hn, the hidden state each step started from
    extra_rows = 0
    _forward_kernel = staticmethod(_core.gru_forward)
    _backward_kernel = staticmethod(_core.gru_backward)


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


def _direction_columns(packed, k, h):
    return packed[..., k * h:(k + 1) * h]


def lstm_directions(input, directions):
    """One or two LSTM directions over the same input [T, B, I] as one
    operator (both at once on two threads). ``directions`` is a list of
    ``(weight_ih, weight_hh, bias_ih, bias_hh, h0, c0, reverse)``. Returns
    (output [T, B, D·H] with direction k in columns k·H.., [h_n per
    direction], [c_n per direction])."""
    return _run("lstm_layer", LSTMLayer, input, directions)


def gru_directions(input, directions):
    """As :func:`lstm_directions` for a GRU: ``directions`` holds
    ``(weight_ih, weight_hh, bias_ih, bias_hh, h0, reverse)``; returns
    (output [T, B, D·H], [h_n per direction])."""
    output, hs, _ = _run("gru_layer", GRULayer, input, [(*d[:5], None, d[5]) for d in directions])
    return output, hs


def _run(op, cls, input, directions):
    if len(directions) not in (1, 2):
        raise ValueError(f"{op}: expected one or two directions, got {len(directions)}")
    for d in directions:
        _check(op, input, *d[:6], cls.gates)
    h = directions[0][1].shape[1]
    if len(directions) == 2 and directions[1][1].shape != directions[0][1].shape:
        raise ValueError(f"{op}: both directions must have one hidden size, got weight_hh {directions[0][1].shape} and {directions[1][1].shape}")
    flat = [v for d in directions for v in d[:6]]
    reverses = tuple(bool(d[6]) for d in directions)
    packed = cls.apply(input, *flat, reverses=reverses)
    t = input.shape[0]
    output = packed[:t]
    hs, cs = [], []
    for k, d in enumerate(directions):
        if t == 0:
            # No step ran: h_n is the initial state (zeros if none).
            h0 = d[4]
            if h0 is None:
                from ..creation import zeros

                h0 = zeros(input.shape[1], h)
            hs.append(h0)
        else:
            hs.append(_direction_columns(packed[0] if reverses[k] else packed[t - 1], k, h))
        if cls.extra_rows:
            cs.append(_direction_columns(packed[t], k, h))
    return output, hs, cs


def lstm_layer(input, weight_ih, weight_hh, bias_ih=None, bias_hh=None, h0=None, c0=None, reverse=False):
    """One LSTM direction over input [T, B, I]. Returns (output [T, B, H],
    h_n [B, H], c_n [B, H]); h_n is the last visited step (step 0 when
    reverse)."""
    output, (h_n,), (c_n,) = lstm_directions(input, [(weight_ih, weight_hh, bias_ih, bias_hh, h0, c0, reverse)])
    return output, h_n, c_n


def gru_layer(input, weight_ih, weight_hh, bias_ih=None, bias_hh=None, h0=None, reverse=False):
    """One GRU direction over input [T, B, I]. Returns (output [T, B, H], h_n [B, H])."""
    output, (h_n,) = gru_directions(input, [(weight_ih, weight_hh, bias_ih, bias_hh, h0, reverse)])
    return output, h_n
