"""Recurrent modules with torch's constructor arguments, parameter names
(weight_ih_l0, weight_hh_l0_reverse, bias_ih_l1, …), initialisation
bounds U(−1/√H, 1/√H) (from onemodel's generator), inputs and outputs:
LSTM and GRU (one Rust operator per layer, both directions at once), RNN
(tanh or relu; composed per step from linear and the activation) and the
cells LSTMCell, GRUCell, RNNCell (composed in torch's order).

``dropout`` applies dropout to each layer's output except the last, in
training mode (torch's rule), drawing its mask from onemodel's generator
(the module's ``generator`` or the default one)."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from .. import functional as F
from ..creation import empty, zeros
from ..ops.join import cat, stack
from ..ops.pointwise import sigmoid, tanh
from ..ops.rnn import gru_directions, lstm_directions
from ..tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter, optional_parameter


class RNNBase(Module):
    gates = 0
    mode = ""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None, generator=None) -> None:
        super().__init__()
        from .layers import _check_factory

        _check_factory(mode, device, dtype)
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                stacklevel=3,
            )
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size:
            raise ValueError(f"{mode}: proj_size is not supported (got proj_size={proj_size})")
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.bidirectional = bias, batch_first, bidirectional
        self.dropout, self.proj_size = float(dropout), proj_size
        self.generator = generator
        dirs = 2 if bidirectional else 1
        g = self.gates * hidden_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            in_size = input_size if layer == 0 else hidden_size * dirs
            for suffix in ([""] + (["_reverse"] if bidirectional else [])):
                names = [(f"weight_ih_l{layer}{suffix}", (g, in_size)), (f"weight_hh_l{layer}{suffix}", (g, hidden_size))]
                if bias:
                    names += [(f"bias_ih_l{layer}{suffix}", (g,)), (f"bias_hh_l{layer}{suffix}", (g,))]
                for name, shape in names:
                    setattr(self, name, Parameter(empty(*shape)))
                    self._flat_weights_names.append(name)
        self.reset_parameters(generator)

    def reset_parameters(self, generator=None) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv, generator=generator)

    @property
    def all_weights(self) -> list:
        return [[getattr(self, n) for n in self._flat_weights_names[i:i + (4 if self.bias else 2)]]
                for i in range(0, len(self._flat_weights_names), 4 if self.bias else 2)]

    def flatten_parameters(self) -> None:
        """Accepted and ignored (a cuDNN memory-layout step in torch)."""

    def _layer_params(self, layer, suffix):
        get = lambda n: self._parameters.get(f"{n}_l{layer}{suffix}")
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh")

    def _prepare(self, input):
        if not isinstance(input, Tensor):
            raise TypeError(f"{self.mode}: input must be a Tensor or a PackedSequence, got {type(input).__name__}")
        batched = input.ndim == 3
        if input.ndim not in (2, 3):
            raise ValueError(f"{self.mode}: Expected input to be 2D or 3D, got {input.ndim}D tensor instead (shape {tuple(input.shape)})")
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        if input.shape[2] != self.input_size:
            raise ValueError(f"{self.mode}: input.size(-1) must be equal to input_size. Expected {self.input_size}, got {input.shape[2]}")
        return input, batched

    def _state(self, h, batch, batched, name):
        dirs = 2 if self.bidirectional else 1
        shape = (self.num_layers * dirs, batch, self.hidden_size)
        if h is None:
            return None
        if not isinstance(h, Tensor):
            raise TypeError(f"{self.mode}: {name} must be a Tensor, got {type(h).__name__}")
        if not batched:
            if h.ndim != 2:
                raise ValueError(f"{self.mode}: For unbatched 2-D input, {name} should also be 2-D but got {h.ndim}-D tensor")
            h = h.unsqueeze(1)
        elif h.ndim != 3:
            raise ValueError(f"{self.mode}: For batched 3-D input, {name} should also be 3-D but got {h.ndim}-D tensor")
        if tuple(h.shape) != shape:
            raise ValueError(f"{self.mode}: Expected hidden size {shape}, got {tuple(h.shape)}")
        return h

    def _run_layers(self, x, states: list, directions_op) -> tuple:
        """The stacked layers over x [T, B, I]. Each layer's directions are
        one operator (`directions_op`: ops.rnn.lstm_directions or
        gru_directions), run at once from the initial `states` (h_0, and c_0
        for the LSTM: [layers·dirs, B, H] each, or None), with dropout
        between layers. Returns the last layer's output and each state's
        final values stacked to [layers·dirs, B, H]."""
        dirs = 2 if self.bidirectional else 1
        finals: list = [[] for _ in states]
        for layer in range(self.num_layers):
            directions = []
            for d, suffix in enumerate(["", "_reverse"][:dirs]):
                idx = layer * dirs + d
                start = tuple(None if s is None else s[idx] for s in states)
                directions.append((*self._layer_params(layer, suffix), *start, d == 1))
            x, *ends = directions_op(x, directions)
            for acc, end in zip(finals, ends):
                acc += end
            x = self._between_layers(x, layer)
        return x, [stack(f, 0) for f in finals]

    def _between_layers(self, x, layer):
        if self.dropout and self.training and layer < self.num_layers - 1:
            return F.dropout(x, self.dropout, True, generator=self.generator)
        return x

    def _finish(self, output, states, batched):
        if not batched:
            output = output.squeeze(1)
            states = [s.squeeze(1) for s in states]
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, states

    def forward(self, input, hx=None) -> Any:
        from .utils.rnn import PackedSequence, run_packed

        if isinstance(input, PackedSequence):
            return run_packed(self, input, hx)
        return self._forward_tensor(input, hx)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class LSTM(RNNBase):
    """torch.nn.LSTM: forward(input, (h_0, c_0)=None) → output, (h_n, c_n)."""

    gates = 4

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def _forward_tensor(self, input, hx=None):
        x, batched = self._prepare(input)
        h0 = c0 = None
        if hx is not None:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise ValueError("LSTM: hx must be a tuple (h_0, c_0)")
            h0 = self._state(hx[0], x.shape[1], batched, "h_0")
            c0 = self._state(hx[1], x.shape[1], batched, "c_0")
        x, finals = self._run_layers(x, [h0, c0], lstm_directions)
        output, (h_n, c_n) = self._finish(x, finals, batched)
        return output, (h_n, c_n)


class GRU(RNNBase):
    """torch.nn.GRU: forward(input, h_0=None) → output, h_n."""

    gates = 3

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("GRU", *args, **kwargs)

    def _forward_tensor(self, input, hx=None):
        x, batched = self._prepare(input)
        h0 = self._state(hx, x.shape[1], batched, "h_0") if hx is not None else None
        x, finals = self._run_layers(x, [h0], gru_directions)
        output, (h_n,) = self._finish(x, finals, batched)
        return output, h_n


def _activation(mode: str, nonlinearity: str):
    if nonlinearity == "tanh":
        return tanh
    if nonlinearity == "relu":
        return F.relu
    raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")


class RNN(RNNBase):
    """torch.nn.RNN (Elman): h_t = act(x_t W_ihᵀ + b_ih + h_{t−1} W_hhᵀ + b_hh),
    act tanh or relu. The input projection of all steps is one product; each
    step adds the recurrent product, in torch's order."""

    gates = 1

    def __init__(self, *args, **kwargs) -> None:
        args = list(args)
        if len(args) > 3:
            nonlinearity = args.pop(3)
            if "nonlinearity" in kwargs:
                raise TypeError("RNN: nonlinearity given twice")
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        _activation("RNN", nonlinearity)
        self_mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__("RNN", *args, **kwargs)
        self.nonlinearity = nonlinearity
        self.mode = self_mode

    def _direction(self, x, params, h, reverse):
        w_ih, w_hh, b_ih, b_hh = params
        act = _activation("RNN", self.nonlinearity)
        t_len, batch = x.shape[0], x.shape[1]
        proj = F.linear(x, w_ih, b_ih)
        if h is None:
            h = zeros(batch, self.hidden_size)
        outs = [None] * t_len
        steps = range(t_len - 1, -1, -1) if reverse else range(t_len)
        for t in steps:
            h = act(proj[t] + F.linear(h, w_hh, b_hh))
            outs[t] = h
        return (stack(outs, 0) if t_len else empty(0, batch, self.hidden_size)), h

    def _forward_tensor(self, input, hx=None):
        x, batched = self._prepare(input)
        h0 = self._state(hx, x.shape[1], batched, "h_0") if hx is not None else None
        dirs = 2 if self.bidirectional else 1
        hs = []
        for layer in range(self.num_layers):
            outs = []
            for d, suffix in enumerate(["", "_reverse"][:dirs]):
                idx = layer * dirs + d
                out, h_n = self._direction(x, self._layer_params(layer, suffix), None if h0 is None else h0[idx], d == 1)
                outs.append(out)
                hs.append(h_n)
            x = outs[0] if dirs == 1 else cat(outs, 2)
            x = self._between_layers(x, layer)
        output, (h_n,) = self._finish(x, [stack(hs, 0)], batched)
        return output, h_n

# -- cells ---------------------------------------------------------------------------

class RNNCellBase(Module):
    gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool, device=None, dtype=None, generator=None) -> None:
        super().__init__()
        from .layers import _check_factory

        _check_factory(type(self).__name__, device, dtype)
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        g = self.gates * hidden_size
        self.weight_ih = Parameter(empty(g, input_size))
        self.weight_hh = Parameter(empty(g, hidden_size))
        optional_parameter(self, "bias_ih", empty(g) if bias else None)
        optional_parameter(self, "bias_hh", empty(g) if bias else None)
        self.reset_parameters(generator)

    def reset_parameters(self, generator=None) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv, generator=generator)

    def _batched(self, input, hx):
        name = type(self).__name__
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: input must be a Tensor")
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise ValueError(f"{name}: input has inconsistent input_size: got {input.shape[-1]} expected {self.input_size}")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        states = hx if isinstance(hx, (tuple, list)) else (hx,)
        out = []
        for h in states:
            if h is None:
                out.append(zeros(x.shape[0], self.hidden_size))
                continue
            if h.ndim != input.ndim:
                raise ValueError(f"{name}: Expected hidden to be {input.ndim}D, got {h.ndim}D instead")
            h = h if batched else h.unsqueeze(0)
            if tuple(h.shape) != (x.shape[0], self.hidden_size):
                raise ValueError(f"{name}: hidden state of shape {tuple(h.shape)} does not match ({x.shape[0]}, {self.hidden_size})")
            out.append(h)
        return x, out, batched

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


class RNNCell(RNNCellBase):
    """h' = act(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)."""

    gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh", device=None, dtype=None, generator=None) -> None:
        _activation("RNNCell", nonlinearity)
        super().__init__(input_size, hidden_size, bias, device, dtype, generator)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None) -> Tensor:
        x, (h,), batched = self._batched(input, hx)
        act = _activation("RNNCell", self.nonlinearity)
        out = act(F.linear(x, self.weight_ih, self.bias_ih) + F.linear(h, self.weight_hh, self.bias_hh))
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """gates = x W_ihᵀ + b_ih + h W_hhᵀ + b_hh (i, f, g, o);
    c' = f·c + i·g, h' = o·tanh(c'). forward(input, (h, c)=None) → (h', c')."""

    gates = 4

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None, generator=None) -> None:
        super().__init__(input_size, hidden_size, bias, device, dtype, generator)

    def forward(self, input, hx=None) -> tuple[Tensor, Tensor]:
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise ValueError("LSTMCell: hx must be a tuple (h, c)")
        x, (h, c), batched = self._batched(input, hx if hx is not None else (None, None))
        gates = F.linear(x, self.weight_ih, self.bias_ih) + F.linear(h, self.weight_hh, self.bias_hh)
        i, f, g, o = gates.chunk(4, 1)
        i, f, g, o = sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)
        c_new = f * c + i * g
        h_new = o * tanh(c_new)
        if not batched:
            return h_new.squeeze(0), c_new.squeeze(0)
        return h_new, c_new


class GRUCell(RNNCellBase):
    """r = σ(x W_irᵀ + b_ir + h W_hrᵀ + b_hr), z likewise,
    n = tanh(x W_inᵀ + b_in + r·(h W_hnᵀ + b_hn)), h' = (h − n)·z + n
    (torch's order)."""

    gates = 3

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None, generator=None) -> None:
        super().__init__(input_size, hidden_size, bias, device, dtype, generator)

    def forward(self, input, hx=None) -> Tensor:
        x, (h,), batched = self._batched(input, hx)
        gi = F.linear(x, self.weight_ih, self.bias_ih).chunk(3, 1)
        gh = F.linear(h, self.weight_hh, self.bias_hh).chunk(3, 1)
        r = sigmoid(gh[0] + gi[0])
        z = sigmoid(gh[1] + gi[1])
        n = tanh(gi[2] + gh[2] * r)
        h_new = (h - n) * z + n
        return h_new if batched else h_new.squeeze(0)


# Older name kept for imports.
_RNNBase = RNNBase

__all__ = ["RNNBase", "LSTM", "GRU", "RNN", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
