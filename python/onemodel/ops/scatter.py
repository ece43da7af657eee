"""Writing along a dim by index: ``scatter``, ``scatter_add``,
``scatter_reduce``, ``index_add``, ``index_copy``, ``index_fill``,
``masked_scatter`` and their in-place forms (rules in ops/index.py's
docstring: last write wins; accumulations are one double chain per element
in source order, rounded once)."""

from __future__ import annotations

import builtins

import numpy as np

from .. import _core, _shape
from .._numpy_exact import canonical_nan, ieee, ieee_method
from ..autograd.function import Function
from ..tensor import Tensor, float32
from .gather import _along, _check_index
from .subscript import _region_index, parse
from .take_put import Put, _cast_value, _from_numpy


def _scatter_index(op: str, input: Tensor, dim: int, index: Tensor, src_shape: tuple | None) -> tuple:
    ix = _check_index(op, index)
    d = _shape.norm_dim(op, dim, builtins.max(input.ndim, 1))
    if ix.ndim != input.ndim:
        raise ValueError(f"{op}: index of shape {tuple(index.shape)} must have the input's {input.ndim} dimensions")
    for k in range(ix.ndim):
        if k != d and ix.shape[k] > input.shape[k]:
            raise ValueError(f"{op}: index of shape {tuple(index.shape)} is larger than the input {tuple(input.shape)} in dimension {k}")
        if src_shape is not None and ix.shape[k] > src_shape[k]:
            raise ValueError(f"{op}: index of shape {tuple(index.shape)} is larger than the source {tuple(src_shape)} in dimension {k}")
    return d, _along(op, input, d, ix)


def _src_values(op: str, input: Tensor, src, index: Tensor) -> Tensor:
    """The source restricted to the index's shape (its leading corner, as torch)."""
    if not isinstance(src, Tensor):
        t = Tensor._empty(tuple(index.shape), input.dtype)
        _core.fill_(t, src)
        return t
    if src.ndim != index.ndim:
        raise ValueError(f"{op}: src of shape {tuple(src.shape)} must have the index's {index.ndim} dimensions")
    if tuple(src.shape) == tuple(index.shape):
        return src
    return src[tuple(slice(0, n) for n in index.shape)]


def scatter(input: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce: str | None = None) -> Tensor:
    """``out = input.clone(); out[index[i][j]][j] = src[i][j]`` (dim 0); a
    repeated target keeps the last source in index order. ``reduce='add'``
    / ``'multiply'`` combine instead (torch's deprecated form)."""
    if src is None:
        src = value
    if reduce is not None:
        return scatter_reduce(input, dim, index, src if isinstance(src, Tensor) else _src_values("scatter", input, src, index),
                              {"add": "sum", "multiply": "prod"}[reduce])
    d, idx = _scatter_index("scatter", input, dim, index, src.shape if isinstance(src, Tensor) else None)
    v = _src_values("scatter", input, src, index)
    return Put.apply(input, v, idx, False)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """``out = input.clone(); out[index[i][j]][j] += src[i][j]``: per element
    one double chain from the old value over its sources in increasing
    source position, rounded once."""
    d, idx = _scatter_index("scatter_add", input, dim, index, src.shape)
    return Put.apply(input, _src_values("scatter_add", input, src, index), idx, True)


class ScatterReduce(Function):
    """scatter_reduce for 'sum', 'prod', 'mean', 'amax', 'amin' (double
    arithmetic in source order for sum/prod/mean; comparisons for the
    extrema). Backward as torch: sum passes g; mean g/count; amax/amin share
    g evenly among the elements equal to the result; prod g·out/x
    (recomputed without the element where it is 0)."""

    @ieee_method
    def forward(self, a, v, idx, reduce, include_self):
        self.idx, self.reduce, self.include_self = idx, reduce, include_self
        x = a.numpy(force=True)
        vals = v.numpy(force=True)
        touched = np.zeros(x.shape, bool)
        touched[idx] = True
        self.touched = touched
        if a.dtype is float32:
            with ieee(), np.errstate(all="ignore"):
                out = self._reduce64(x.astype(np.float64), vals.astype(np.float64), idx, touched)
                res = canonical_nan(out.astype(np.float32))
        else:
            res = self._reduce64(x.copy(), vals, idx, touched).astype(x.dtype)
        out_t = _from_numpy(res, a.dtype)
        self.save_for_backward(a, v, out_t)
        return out_t

    def _reduce64(self, x, vals, idx, touched):
        r = self.reduce
        ident = {"sum": 0, "mean": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}[r]
        buf = x.copy()
        if not self.include_self:
            if np.issubdtype(buf.dtype, np.integer) and r in ("amax", "amin"):
                ident = np.iinfo(buf.dtype).min if r == "amax" else np.iinfo(buf.dtype).max
            buf[touched] = ident
        ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[r]
        ufunc.at(buf, idx, vals)
        if r == "mean":
            count = np.zeros(x.shape, np.int64)
            np.add.at(count, idx, 1)
            if self.include_self:
                count += 1
            count = np.maximum(count, 1)
            buf = buf / count if np.issubdtype(buf.dtype, np.floating) else buf // count
            self.count = count
        return buf

    @ieee_method
    def backward(self, g):
        a, v, out = self.saved_tensors
        r = self.reduce
        gn = g.numpy(force=True).astype(np.float64)
        x = a.numpy(force=True).astype(np.float64)
        vals = v.numpy(force=True).astype(np.float64)
        o = out.numpy(force=True).astype(np.float64)
        idx = self.idx
        with ieee(), np.errstate(all="ignore"):
            if r == "sum":
                gx = gn if self.include_self else np.where(self.touched, 0.0, gn)
                gv = gn[idx]
            elif r == "mean":
                gx = gn / self.count if self.include_self else np.where(self.touched, 0.0, gn)
                gv = (gn / self.count)[idx]
            elif r in ("amax", "amin"):
                hit_x = (x == o) & (self.touched if not self.include_self else True)
                if not self.include_self:
                    hit_x = np.zeros(x.shape, bool) | ((x == o) & ~self.touched)
                hit_v = vals == o[idx]
                count = hit_x.astype(np.float64)
                np.add.at(count, idx, hit_v.astype(np.float64))
                share = gn / np.maximum(count, 1)
                gx = np.where(hit_x, share, 0.0)
                gv = np.where(hit_v, share[idx], 0.0)
            else:  # prod
                gx = np.where(self.touched & ~self.include_self, 0.0, np.where(x != 0, gn * o / x, 0.0))
                gv = np.where(vals != 0, gn[idx] * o[idx] / vals, 0.0)
        ga = _from_numpy(canonical_nan(gx.astype(np.float32)), float32) if self.needs_input_grad[0] else None
        gvt = _from_numpy(canonical_nan(np.ascontiguousarray(gv).astype(np.float32)), float32) if self.needs_input_grad[1] else None
        return ga, gvt


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True) -> Tensor:
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise ValueError(f"scatter_reduce: reduce must be 'sum', 'prod', 'mean', 'amax' or 'amin', got {reduce!r}")
    d, idx = _scatter_index("scatter_reduce", input, dim, index, src.shape)
    return ScatterReduce.apply(input, _src_values("scatter_reduce", input, src, index), idx, reduce, bool(include_self))


def _index_dim(op: str, input: Tensor, dim: int, index: Tensor, source_shape: tuple | None) -> tuple:
    ix = _check_index(op, index)
    if ix.ndim > 1:
        raise ValueError(f"{op}: index must be 1-D, got shape {tuple(index.shape)}")
    ix = ix.reshape(-1)
    d = _shape.norm_dim(op, dim, builtins.max(input.ndim, 1))
    if source_shape is not None:
        want = tuple(input.shape[:d]) + (ix.size,) + tuple(input.shape[d + 1 :])
        if tuple(source_shape) != want and not (input.ndim == 0 and ix.size == 1):
            raise ValueError(f"{op}: source of shape {tuple(source_shape)} must have shape {want} (input {tuple(input.shape)}, index of {ix.size})")
    spec, adv = parse(op, input.shape, (slice(None),) * d + (ix,))
    return _region_index(input.shape, spec, adv)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """``out = input.clone(); out.select(dim, index[i]) += alpha·source.select(dim, i)``
    (double chains in source order, rounded once)."""
    if alpha != 1:
        source = source * alpha
    region = _index_dim("index_add", input, dim, index, source.shape)
    return Put.apply(input, source, region, True)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    region = _index_dim("index_copy", input, dim, index, source.shape)
    return Put.apply(input, source, region, False)


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    region = _index_dim("index_fill", input, dim, index, None)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"index_fill: value must be a number or a 0-d tensor, got shape {tuple(value.shape)}")
        v = value if value.dtype is input.dtype else _cast_value(value, input.dtype, "index_fill")
    else:
        v = _cast_value(value, input.dtype, "index_fill")
    return Put.apply(input, v, region, False)


def masked_scatter(input: Tensor, mask, source: Tensor) -> Tensor:
    """The source's first elements (row-major) written where the broadcast
    mask is True."""
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("masked_scatter", input)
    m = mask.numpy(force=True) if isinstance(mask, Tensor) else np.asarray(mask)
    shape = _shape.broadcast_shapes("masked_scatter", input.shape, m.shape)
    if shape != tuple(input.shape):
        raise ValueError(f"masked_scatter: the mask of shape {m.shape} must broadcast to the input's {tuple(input.shape)}")
    region = np.nonzero(np.broadcast_to(m, shape))
    k = len(region[0]) if region else 0
    if not isinstance(source, Tensor):
        raise _shape.not_a_tensor("masked_scatter", source, "source")
    if source.numel() < k:
        raise ValueError(f"masked_scatter: the source has {source.numel()} elements, fewer than the {k} the mask selects")
    return Put.apply(input, source.reshape(-1)[:k], region, False)


# -- in-place forms ------------------------------------------------------------

def _inplace(op: str, fn):
    def method(self, *args, **kwargs):
        from .inplace import assign_result

        return assign_result(self, op, lambda t: fn(t, *args, **kwargs), args + tuple(kwargs.values()))

    method.__name__ = op
    return method


scatter_ = _inplace("scatter_", scatter)
scatter_add_ = _inplace("scatter_add_", scatter_add)
scatter_reduce_ = _inplace("scatter_reduce_", scatter_reduce)
index_add_ = _inplace("index_add_", index_add)
index_copy_ = _inplace("index_copy_", index_copy)
index_fill_ = _inplace("index_fill_", index_fill)
masked_scatter_ = _inplace("masked_scatter_", masked_scatter)
