"""``quantile`` and ``nanquantile`` with torch's algorithm (ATen's
``quantile_compute``): sort along the dim, a float32 rank ``q·(n − 1)``
per quantile (over the non-NaN count for ``nanquantile``; a NaN in the
reduced elements makes ``quantile`` NaN), the rank rounded for ``lower``,
``higher`` and ``nearest`` (half to even), and for ``linear`` and
``midpoint`` a ``lerp`` between the two neighbouring sorted values. The
values are gathered from the sort, so the gradient reaches the chosen
elements through ``take_along_dim`` and ``lerp``, as in torch. Among
equal values (and among NaNs) the gradient goes to the one the stable sort
puts at the rank; torch's sort may pick another of the equal values.""" 

from __future__ import annotations

import numbers

import numpy as np

from .. import _shape
from ..tensor import Tensor, float32, int64
from .binary_math import lerp
from .index import take_along_dim
from .operands import from_array
from .sort import sort

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _q_array(op: str, q, input: Tensor) -> np.ndarray:
    if isinstance(q, Tensor):
        if q.dtype is not input.dtype:
            raise TypeError(f"{op}() q tensor must be same dtype as the input tensor (got {q.dtype.name} and {input.dtype.name})")
        if q.ndim > 1:
            raise ValueError(f"{op}() q must be a scalar or 1D tensor, got shape {tuple(q.shape)}")
        qa = np.asarray(q.numpy(force=True), np.float32)
    elif isinstance(q, numbers.Real) and not isinstance(q, bool):
        qa = np.asarray(q, np.float32)
    elif isinstance(q, (list, tuple)):
        qa = np.asarray(q, np.float32)
        if qa.ndim != 1:
            raise ValueError(f"{op}() q must be a scalar or 1D sequence of numbers")
    else:
        raise TypeError(f"{op}(): q must be a number, a sequence of numbers or a Tensor, got {type(q).__name__}")
    if not np.all((qa >= 0) & (qa <= 1)):
        raise ValueError(f"{op}() q values must be in the range [0, 1]")
    return qa


def _quantile(op: str, input, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}")
    if input.dtype is not float32:
        raise TypeError(f"{op}() input tensor must be a float tensor (float32), got {input.dtype.name}")
    if input.numel() == 0:
        raise ValueError(f"{op}() input tensor must be non-empty")
    if interpolation not in _MODES:
        raise ValueError(f"{op}() interpolation must be one of linear, lower, higher, midpoint or nearest. Got {interpolation}")
    qa = _q_array(op, q, input)
    if dim is not None:
        _shape.norm_dim(op, dim, max(input.ndim, 1))
    if dim is None or input.ndim == 0:
        values = sort(input.reshape(-1)).values
        out_shape = (1,) * input.ndim if keepdim else ()
    else:
        d = _shape.norm_dim(op, dim, input.ndim)
        values = sort(input.movedim(d, -1), -1).values
        shape = tuple(input.shape)
        out_shape = shape[:d] + (1,) + shape[d + 1:] if keepdim else shape[:d] + shape[d + 1:]
    n = values.shape[-1]
    values = values.reshape(out_shape + (n,))
    s = values.numpy(force=True)
    q1 = qa.reshape(-1)
    # The ranks in float32, as torch computes them (q is the input's dtype).
    with np.errstate(invalid="ignore"):
        if ignore_nan:
            count = (~np.isnan(s)).sum(-1, keepdims=True).astype(np.float32)
            ranks = q1 * (count - np.float32(1))
            ranks = np.where(ranks < 0, np.float32(0), ranks)
        else:
            last = np.float32(n - 1)
            ranks = np.broadcast_to(q1 * last, out_shape + (q1.size,))
            ranks = np.where(np.isnan(s).any(-1, keepdims=True), last, ranks)
    ranks = ranks.astype(np.float32)
    if interpolation == "lower":
        ranks = np.floor(ranks)
    elif interpolation == "higher":
        ranks = np.ceil(ranks)
    elif interpolation == "nearest":
        ranks = np.round(ranks)
    below = ranks.astype(np.int64)
    out = take_along_dim(values, from_array(np.ascontiguousarray(below), int64), -1)
    if interpolation in ("linear", "midpoint"):
        weights = np.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below.astype(np.float32)
        above = np.ceil(ranks).astype(np.int64)
        out_above = take_along_dim(values, from_array(np.ascontiguousarray(above), int64), -1)
        out = lerp(out, out_above, from_array(np.ascontiguousarray(weights, np.float32), float32))
    if qa.ndim == 0:
        return out.squeeze(-1)
    return out.movedim(-1, 0)


def quantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear", out=None) -> Tensor:
    """torch.quantile: the q-th quantiles of ``input`` (flattened, or along
    ``dim``); a 1-D ``q`` puts the quantiles first in the result."""
    if out is not None:
        raise TypeError("quantile: out= is not supported")
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear", out=None) -> Tensor:
    """torch.nanquantile: quantile over the non-NaN values (NaN where a row
    has none)."""
    if out is not None:
        raise TypeError("nanquantile: out= is not supported")
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)
