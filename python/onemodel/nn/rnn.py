"""LSTM and GRU modules with torch's constructor arguments, parameter names
(weight_ih_l0, weight_hh_l0_reverse, bias_ih_l1, …), initialisation bounds
U(−1/√H, 1/√H) (from onemodel's generator), inputs and outputs."""

from __future__ import annotations

import math

from ..creation import empty
from ..ops.join import stack
from ..ops.rnn import gru_directions, lstm_directions
from ..tensor import Tensor
from .layers import _uniform_
from .module import Module
from .parameter import Parameter


class _RNNBase(Module):
    gates = 0
    mode = ""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, generator=None):
        super().__init__()
        if dropout:
            raise ValueError(f"{self.mode}: dropout between layers is not supported yet (got dropout={dropout})")
        if proj_size:
            raise ValueError(f"{self.mode}: proj_size is not supported yet (got proj_size={proj_size})")
        if hidden_size <= 0 or num_layers <= 0 or input_size <= 0:
            raise ValueError(f"{self.mode}: input_size, hidden_size and num_layers must be positive")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.bidirectional = bias, batch_first, bidirectional
        self.dropout, self.proj_size = dropout, proj_size
        dirs = 2 if bidirectional else 1
        bound = 1.0 / math.sqrt(hidden_size)
        g = self.gates * hidden_size
        for layer in range(num_layers):
            in_size = input_size if layer == 0 else hidden_size * dirs
            for suffix in ([""] + (["_reverse"] if bidirectional else [])):
                names = [(f"weight_ih_l{layer}{suffix}", (g, in_size)), (f"weight_hh_l{layer}{suffix}", (g, hidden_size))]
                if bias:
                    names += [(f"bias_ih_l{layer}{suffix}", (g,)), (f"bias_hh_l{layer}{suffix}", (g,))]
                for name, shape in names:
                    p = Parameter(empty(*shape))
                    _uniform_(p, bound, generator)
                    setattr(self, name, p)

    def _layer_params(self, layer, suffix):
        get = lambda n: self._parameters.get(f"{n}_l{layer}{suffix}")
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh")

    def _prepare(self, input):
        if not isinstance(input, Tensor):
            raise TypeError(f"{self.mode}: input must be a Tensor")
        batched = input.ndim == 3
        if input.ndim not in (2, 3):
            raise ValueError(f"{self.mode}: input must be 2-D (unbatched) or 3-D, got shape {input.shape}")
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        if input.shape[2] != self.input_size:
            raise ValueError(f"{self.mode}: expected input_size {self.input_size}, got input of shape {input.shape}")
        return input, batched

    def _state(self, h, batch, batched, name):
        dirs = 2 if self.bidirectional else 1
        shape = (self.num_layers * dirs, batch, self.hidden_size)
        if h is None:
            return None
        if not batched:
            if h.ndim != 2:
                raise ValueError(f"{self.mode}: for unbatched input {name} must be 2-D, got shape {h.shape}")
            h = h.unsqueeze(1)
        if tuple(h.shape) != shape:
            raise ValueError(f"{self.mode}: expected {name} of shape {shape}, got {tuple(h.shape)}")
        return h

    def _finish(self, output, states, batched):
        if not batched:
            output = output.squeeze(1)
            states = [s.squeeze(1) for s in states]
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, states

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


class LSTM(_RNNBase):
    gates = 4
    mode = "LSTM"

    def forward(self, input, hx=None):
        x, batched = self._prepare(input)
        h0 = c0 = None
        if hx is not None:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise ValueError("LSTM: hx must be a tuple (h_0, c_0)")
            h0 = self._state(hx[0], x.shape[1], batched, "h_0")
            c0 = self._state(hx[1], x.shape[1], batched, "c_0")
        dirs = 2 if self.bidirectional else 1
        hs, cs = [], []
        for layer in range(self.num_layers):
            # The directions of a layer are one operator: they run at once.
            directions = []
            for d, suffix in enumerate(["", "_reverse"][:dirs]):
                idx = layer * dirs + d
                state = (None if h0 is None else h0[idx], None if c0 is None else c0[idx])
                directions.append((*self._layer_params(layer, suffix), *state, d == 1))
            x, h_n, c_n = lstm_directions(x, directions)
            hs += h_n
            cs += c_n
        output, (h_n, c_n) = self._finish(x, [stack(hs, 0), stack(cs, 0)], batched)
        return output, (h_n, c_n)


class GRU(_RNNBase):
    gates = 3
    mode = "GRU"

    def forward(self, input, hx=None):
        x, batched = self._prepare(input)
        h0 = self._state(hx, x.shape[1], batched, "h_0") if hx is not None else None
        dirs = 2 if self.bidirectional else 1
        hs = []
        for layer in range(self.num_layers):
            directions = []
            for d, suffix in enumerate(["", "_reverse"][:dirs]):
                idx = layer * dirs + d
                directions.append((*self._layer_params(layer, suffix), None if h0 is None else h0[idx], d == 1))
            x, h_n = gru_directions(x, directions)
            hs += h_n
        output, (h_n,) = self._finish(x, [stack(hs, 0)], batched)
        return output, h_n
