"""Turning an operator's arguments into what a kernel takes: dtype checks
(check_float), int-pair arguments (pair), unbatched inputs (batched),
contiguous operands (contig), scalar fills and the in-place scale and
channel-bias epilogues the spatial operators share."""

from __future__ import annotations

import numbers

import numpy as np

from .. import _core
from ..tensor import Tensor, float32
from .._kernels import clone_contiguous, expand_to


def contig(t: Tensor) -> Tensor:
    """`t` itself when contiguous, else a contiguous copy (no autograd)."""
    return t if t.is_contiguous() else clone_contiguous(t)


#: Operands no operator takes as optional: None for one of them is a
#: TypeError here, not an AttributeError further on (a fuzz finding).
_REQUIRED = frozenset({"input", "target", "input1", "input2", "x1", "x2", "query", "key", "value",
                       "anchor", "positive", "negative", "grid"})


def check_float(op: str, **tensors) -> None:
    for name, t in tensors.items():
        if t is None and name not in _REQUIRED:
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
        if t.dtype is not float32:
            raise TypeError(f"{op}: {name} must be float32, got {t.dtype.name}")


def float_target(target):
    """An int64 or bool target tensor as float32 (torch promotes it in the
    regression and margin losses: mse_loss(x, long_target) runs); anything
    else unchanged, for check_float to judge."""
    if isinstance(target, Tensor) and target.dtype is not float32:
        return target.float()
    return target


_HOW_MANY = {1: "a 1-tuple", 2: "a pair", 3: "a triple"}


def ints(op: str, name: str, value, n: int, minimum: int = 0) -> tuple:
    """An int, or a sequence of one or `n` ints (one is repeated), as `n`
    ints, each at least `minimum` and below 2**63: the spatial arguments
    (kernel_size, stride, padding, dilation) of the 1-, 2- and 3-D ops."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        out = (int(value),) * n
    else:
        try:
            out = tuple(int(v) for v in value)
        except TypeError:
            raise TypeError(f"{op}: {name} must be an int or {_HOW_MANY[n]} of ints, got {value!r}") from None
        if len(out) == 1:
            out = out * n
        if len(out) != n:
            raise ValueError(f"{op}: {name} must be an int or {_HOW_MANY[n]} of ints, got {value!r}")
    if any(v < minimum for v in out):
        raise ValueError(f"{op}: {name} must be at least {minimum}, got {value!r}")
    if any(v >= 2**63 for v in out):
        raise ValueError(f"{op}: {name} must be below 2**63, got {value!r}")
    return out


def pool_stride(op: str, stride, kernel: tuple) -> tuple:
    """torch's pooling stride: the kernel's when None or an empty sequence,
    else as many ints as the kernel has, each at least 1."""
    if stride is None or (not isinstance(stride, numbers.Integral) and len(stride) == 0):
        return kernel
    return ints(op, "stride", stride, len(kernel), 1)


def pair(op: str, name: str, value, minimum: int = 0) -> tuple:
    """An int or a pair of ints as a pair, each at least `minimum`."""
    return ints(op, name, value, 2, minimum)


def from_array(a: np.ndarray, dt) -> Tensor:
    """A NumPy result as a fresh tensor of dtype `dt` (a copy, cast as
    NumPy assigns): how the NumPy-computed operators return their values."""
    out = Tensor._empty(a.shape, dt)
    if a.size:
        out.numpy(force=True)[...] = a
    return out


def scalar_tensor(value: float) -> Tensor:
    t = Tensor._empty(())
    _core.fill_(t, float(value))
    return t


def scale_inplace(t: Tensor, value: float) -> None:
    """t *= value (one IEEE multiply per element)."""
    _core.binary("mul", t, t, expand_to(scalar_tensor(value), t._shape, "mul"))


def add_channel_bias(out: Tensor, bias: Tensor) -> None:
    """out[:, c, ...] += bias[c] (one IEEE add per element)."""
    view_shape = (1, bias.shape[0]) + (1,) * (out.ndim - 2)
    b = bias._view(view_shape, (0, bias._strides[0]) + (0,) * (out.ndim - 2))
    _core.binary("add", out, out, expand_to(b, out._shape, "bias"))


def batched(op: str, input: Tensor, ndim: int):
    """Accept an unbatched input (one dim fewer, as torch does): returns the
    batched view and whether to squeeze the result."""
    if input.ndim == ndim - 1:
        return input.unsqueeze(0), True
    if input.ndim != ndim:
        raise ValueError(f"{op}: expected a {ndim - 1}-D or {ndim}-D input, got shape {tuple(input.shape)}")
    return input, False
