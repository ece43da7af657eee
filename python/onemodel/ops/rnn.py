"""Recurrent layers as single differentiable operators: lstm_layer and
gru_layer (one direction), and the same kernels for the two directions of a
bidirectional layer as one operator (what nn.LSTM and nn.GRU use), so that
the directions run at once, forward and backward, on two threads. Backward
through time runs inside the Rust kernel (rust/src/kernels/rnn/), with no
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
from typing import NamedTuple, Optional

from ..tensor import Tensor, float32
from .operands import contig
from .._kernels import add_new


def _contig(t):
    """`contig` that passes an absent optional operand through."""
    return None if t is None else contig(t)


# Tensor inputs per direction after x: w_ih, w_hh, b_ih, b_hh, h0, c0.
_PER_DIRECTION = 6


class ForwardDirection(NamedTuple):
    """One direction of a forward kernel call (read by attribute in
    rust/src/py/rnn.rs). ``saved``: None on the inference path, else the
    buffers forward fills for backward (``RecurrentLayout.saved_shapes``)."""

    w_ih: Tensor
    w_hh: Tensor
    b_ih: Optional[Tensor]
    b_hh: Optional[Tensor]
    h0: Optional[Tensor]
    c0: Optional[Tensor]
    reverse: bool
    saved: Optional[list]


class Grads(NamedTuple):
    """The gradients one direction's backward writes (dc0 only for an LSTM)."""

    dx: Tensor
    dw_ih: Tensor
    dw_hh: Tensor
    db_ih: Tensor
    db_hh: Tensor
    dh0: Tensor
    dc0: Optional[Tensor]


class BackwardDirection(NamedTuple):
    """One direction of a backward kernel call."""

    w_ih: Tensor
    w_hh: Tensor
    c0: Optional[Tensor]
    saved: list
    reverse: bool
    grads: Grads


class RecurrentLayer(Function):
    """Inputs: x, then per direction w_ih, w_hh, b_ih, b_hh, h0, c0 (None
    where absent; c0 always None for a GRU). Every buffer is allocated from
    the call's ``_core.RecurrentLayout`` (the Rust side's layout, the one
    source of the packed output and of what forward saves)."""


    def forward(self, x, *params, layout, reverses):
        x = _contig(x)
        groups = [tuple(map(_contig, params[k * _PER_DIRECTION:(k + 1) * _PER_DIRECTION])) for k in range(len(reverses))]
        self.layout, self.reverses = layout, reverses
        # Which of b_ih, b_hh, h0, c0 each direction was given (they are
        # tensor inputs only when present).
        self.present = [tuple(v is not None for v in g[2:]) for g in groups]
        out = Tensor._empty(tuple(layout.output_shape))
        dirs, keep = [], [x]
        for (w_ih, w_hh, b_ih, b_hh, h0, c0), reverse in zip(groups, reverses):
            saved = None
            if self.recording:
                saved = [Tensor._empty(tuple(shape)) for shape in layout.saved_shapes]
                keep += [w_ih, w_hh, c0, *saved]
            dirs.append(ForwardDirection(w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, saved))
        if self.recording:
            self.save_for_backward(*keep)
        _core.recurrent_forward(layout, x, dirs, out)
        return out

    def backward(self, g):
        saved = self.saved_tensors
        x = saved[0]
        width = 3 + len(self.layout.saved_shapes)
        dirs, grads = [], []
        for k, reverse in enumerate(self.reverses):
            w_ih, w_hh, c0, *buffers = saved[1 + k * width:1 + (k + 1) * width]
            state = (x.shape[1], self.layout.hidden_size)
            gk = Grads(
                Tensor._empty(x.shape),
                Tensor._empty(w_ih.shape),
                Tensor._empty(w_hh.shape),
                Tensor._empty((w_hh.shape[0],)),
                Tensor._empty((w_hh.shape[0],)),
                Tensor._empty(state),
                Tensor._empty(state) if self.cell == "lstm" else None,
            )
            dirs.append(BackwardDirection(w_ih, w_hh, c0, buffers, reverse, gk))
            grads.append(gk)
        _core.recurrent_backward(self.layout, x, dirs, _contig(g))
        return self._select(grads)

    def _select(self, grads):
        """Gradients for the tensor inputs, in input order: x, then per
        direction w_ih, w_hh and whichever of b_ih, b_hh, h0, c0 were given."""
        needs = self.needs_input_grad
        dx = None
        if needs[0]:
            dx = grads[0].dx
            if len(grads) == 2:
                dx = add_new(grads[1].dx, dx)
        chosen = [dx]
        for gk, present in zip(grads, self.present):
            optional = (gk.db_ih, gk.db_hh, gk.dh0, gk.dc0)
            chosen += [gk.dw_ih, gk.dw_hh] + [gi for gi, p in zip(optional, present) if p]
        return tuple(gi if n else None for gi, n in zip(chosen, needs))


class LSTMLayer(RecurrentLayer):
    cell = "lstm"


class GRULayer(RecurrentLayer):
    cell = "gru"


def _check(op, x, w_ih, w_hh, b_ih, b_hh, h0, c0):
    for name, t in (("input", x), ("weight_ih", w_ih), ("weight_hh", w_hh)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
        if t.dtype is not float32:
            raise TypeError(f"{op}: {name} must be float32, got {t.dtype.name}")
    for name, t in (("bias_ih", b_ih), ("bias_hh", b_hh), ("h0", h0), ("c0", c0)):
        if t is not None and (not isinstance(t, Tensor) or t.dtype is not float32):
            raise TypeError(f"{op}: {name} must be a float32 Tensor")


def _layout(op, cls, input, directions):
    """The call's layout from the shapes (sizes checked in Rust), and each
    direction's tensors checked against it."""
    if len(directions) not in (1, 2):
        raise ValueError(f"{op}: expected one or two directions, got {len(directions)}")
    for d in directions:
        _check(op, input, *d[:6])
    if len(directions) == 2 and directions[1][1].shape != directions[0][1].shape:
        raise ValueError(f"{op}: both directions must have one hidden size, got weight_hh {directions[0][1].shape} and {directions[1][1].shape}")
    layout = _core.RecurrentLayout(cls.cell, list(input.shape), list(directions[0][1].shape), len(directions))
    for d in directions:
        for name, t in zip(("weight_ih", "weight_hh", "bias_ih", "bias_hh", "h0", "c0"), d[:6]):
            if t is not None:
                layout.check(name, list(t.shape))
    return layout


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
    layout = _layout(op, cls, input, directions)
    h = layout.hidden_size
    flat = [v for d in directions for v in d[:6]]
    reverses = tuple(bool(d[6]) for d in directions)
    packed = cls.apply(input, *flat, layout=layout, reverses=reverses)
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
        if cls.cell == "lstm":
            cs.append(_direction_columns(packed[t], k, h))
    return output, hs, cs


def lstm_layer(input, weight_ih, weight_hh, bias_ih=None, bias_hh=None, h0=None, c0=None, reverse=False) -> tuple[Tensor, Tensor, Tensor]:
    """One LSTM direction over input [T, B, I]. Returns (output [T, B, H],
    h_n [B, H], c_n [B, H]); h_n is the last visited step (step 0 when
    reverse)."""
    output, (h_n,), (c_n,) = lstm_directions(input, [(weight_ih, weight_hh, bias_ih, bias_hh, h0, c0, reverse)])
    return output, h_n, c_n


def gru_layer(input, weight_ih, weight_hh, bias_ih=None, bias_hh=None, h0=None, reverse=False) -> tuple[Tensor, Tensor]:
    """One GRU direction over input [T, B, I]. Returns (output [T, B, H], h_n [B, H])."""
    output, (h_n,) = gru_directions(input, [(weight_ih, weight_hh, bias_ih, bias_hh, h0, reverse)])
    return output, h_n
