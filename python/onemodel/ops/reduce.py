"""Reductions: sum, mean, prod, var/std, norm, logsumexp, the extrema
(max/min along a dim or whole, amax/amin, argmax/argmin) and
count_nonzero, each with torch's backward.

Orders (docs/tensor.md):

* float32 ``sum``/``mean``: one double chain per output, in increasing
  element order, rounded once (``mean`` divides the double sum first);
* ``var``/``std``/``norm`` (p = 2): the double chains of
  ``kernels/moments.rs``;
* ``prod``: a double product chain in increasing element order
  (``np.multiply.accumulate``, sequential), rounded once;
* ``logsumexp``: ``log(Σ exp(x − m)) + m`` with the fixed exp/log of the
  mode and the double sum;
* int64 and bool ``sum``/``prod`` are int64 (exact; int64 wraps as torch);
* extrema are comparisons only: the first of equal values wins, and a NaN
  is the result (and its index) where one is present, as torch.
"""

from __future__ import annotations

import builtins
import math
import numbers

import numpy as np

from .. import _core, _shape
from .. import return_types
from .._kernels import expand_to, scalar_tensor, sum_kernel
from .._numpy_exact import canonical_nan, ieee, ieee_method
from ..autograd.function import Function, is_fresh
from ..grad_mode import _state as _grad_state
from ..tensor import Tensor, as_dtype, float32, from_core, int64


def _grad_to_input(g: Tensor, in_shape: tuple, dims: tuple, keepdim: bool) -> Tensor:
    """Broadcast an output gradient back over the reduced dims (contiguous)."""
    kept_shape = tuple(1 if d in dims else n for d, n in enumerate(in_shape))
    g = g._view(kept_shape, _shape.contiguous_strides(kept_shape)) if not keepdim else g
    out = Tensor._empty(in_shape)
    _core.copy_(out, expand_to(g, in_shape, "sum"))
    return out


def _kept_shape(shape: tuple, dims: tuple, keepdim: bool) -> tuple:
    if keepdim:
        return tuple(1 if d in dims else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in dims)


def _from_numpy(a: np.ndarray, shape: tuple, dt=float32) -> Tensor:
    out = Tensor._empty(shape, dt)
    out.numpy(force=True)[...] = np.asarray(a).reshape(shape)
    return out


def _moved(x: np.ndarray, dims: tuple) -> np.ndarray:
    """`x` with the reduced dims moved last and merged into one (element
    order preserved: the merged axis walks them row-major)."""
    kept = [d for d in range(x.ndim) if d not in dims]
    y = np.transpose(x, kept + list(dims))
    # The merged length is spelled out: -1 is ambiguous when a kept dim is 0.
    return y.reshape(y.shape[: len(kept)] + (_shape.numel(x.shape[d] for d in dims),))


# ---------------------------------------------------------------------------
# sum, mean
# ---------------------------------------------------------------------------

class Sum(Function):
    def forward(self, a, dims, keepdim):
        self.dims, self.keepdim = dims, keepdim
        return sum_kernel(a, dims, keepdim)

    def backward(self, g):
        return _grad_to_input(g, self.input_meta[0][0], self.dims, self.keepdim)


class Mean(Function):
    def forward(self, a, dims, keepdim):
        self.dims, self.keepdim = dims, keepdim
        return sum_kernel(a, dims, keepdim, mean=True)

    def backward(self, g):
        in_shape = self.input_meta[0][0]
        count = _shape.numel(in_shape[d] for d in self.dims)
        full = _grad_to_input(g, in_shape, self.dims, self.keepdim)
        # torch: grad.expand(...) / count, one IEEE division per element.
        _core.binary("div", full, full, expand_to(scalar_tensor(count), in_shape, "mean"))
        return full


def _check(op: str, input) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}")


def _with_dtype(op: str, input: Tensor, dtype) -> Tensor:
    dt = as_dtype(dtype, op)
    if dt is None or dt is input.dtype:
        return input
    return input.to(dt)


def _int_reduce(fn, input: Tensor, dims: tuple, keepdim: bool) -> Tensor:
    a = input.numpy(force=True)
    r = fn(a, axis=dims, dtype=np.int64, keepdims=keepdim) if dims else a.astype(np.int64)
    return _from_numpy(r, _kept_shape(input.shape, dims, keepdim), int64)


def sum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A001 - torch's name
    """float32: the double chain per output; int64 and bool: int64."""
    if dim is None and dtype is None and not keepdim and isinstance(input, Tensor) and is_fresh(input):
        # The whole float32 tensor, the small-op path (None: not float32).
        r = _core.sum_all_new(input, False)
        if r is not None:
            out = from_core(r)
            if (input._requires_grad or input._record is not None) and getattr(_grad_state, "enabled", True):
                rec = Sum.record_op(out, input)
                rec.dims, rec.keepdim = tuple(range(len(input._shape))), False
            return out
    _check("sum", input)
    input = _with_dtype("sum", input, dtype)
    dims = _shape.norm_dims("sum", dim, input.ndim)
    if input.dtype is not float32:
        return _int_reduce(np.sum, input, dims, bool(keepdim))
    return Sum.apply(input, dims, bool(keepdim))


def mean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    _check("mean", input)
    input = _with_dtype("mean", input, dtype)
    if input.dtype is not float32:
        raise TypeError(
            f"mean: could not infer the output dtype of a {input.dtype.name} tensor; "
            "pass dtype=onemodel.float32 or convert with .float()"
        )
    dims = _shape.norm_dims("mean", dim, input.ndim)
    return Mean.apply(input, dims, bool(keepdim))


def nansum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """sum with NaNs counted as zero."""
    from .selection import where

    _check("nansum", input)
    if input.dtype is float32:
        input = where(input.isnan(), 0.0, input)
    return sum(input, dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """mean over the non-NaN elements."""
    _check("nanmean", input)
    count = (~input.isnan()).sum(dim, keepdim).float()
    return nansum(input, dim, keepdim, dtype=dtype) / count


# ---------------------------------------------------------------------------
# prod
# ---------------------------------------------------------------------------

def _prod64(x64: np.ndarray) -> np.ndarray:
    """Products over the last axis: one f64 chain each, in index order."""
    if x64.shape[-1] == 0:
        return np.ones(x64.shape[:-1])
    return np.multiply.accumulate(x64, axis=-1)[..., -1]


class Prod(Function):
    """Backward as torch: ``g·(y / x)`` in float32 for a reduced slice
    without zeros (NaN where x or y is); with a zero, ``g·Π_{j≠i} x_j`` from
    the product of the elements before i (a double chain upward) and after
    it (downward), rounded once."""

    @ieee_method
    def forward(self, a, dims, keepdim):
        self.dims, self.keepdim = dims, keepdim
        with ieee():
            p = _prod64(_moved(a.numpy(force=True), dims).astype(np.float64)).astype(np.float32)
        out = _from_numpy(canonical_nan(p), _kept_shape(a.shape, dims, keepdim))
        self.save_for_backward(a, out)
        return out

    @ieee_method
    def backward(self, g):
        a, y = self.saved_tensors
        dims = self.dims
        x32 = _moved(a.numpy(force=True), dims)
        x = x32.astype(np.float64)
        gk32 = g.numpy(force=True).reshape(x.shape[:-1] + (1,))
        yk32 = y.numpy(force=True).reshape(x.shape[:-1] + (1,))
        with ieee(), np.errstate(all="ignore"):
            gx = gk32 * (yk32 / x32)  # float32, as torch
            zero_rows = (x == 0).any(axis=-1)
            if zero_rows.any():
                ones = np.ones(x.shape[:-1] + (1,))
                before = np.concatenate([ones, np.multiply.accumulate(x, axis=-1)[..., :-1]], axis=-1)
                after = np.flip(np.concatenate([ones, np.multiply.accumulate(np.flip(x, -1), axis=-1)[..., :-1]], axis=-1), -1)
                safe = (gk32.astype(np.float64) * (before * after)).astype(np.float32)
                gx = np.where(zero_rows[..., None], safe, gx)
            gx = gx.astype(np.float32)
        canonical_nan(gx)
        return _from_numpy(_unmove(gx, a.shape, dims), a.shape)


def prod(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    _check("prod", input)
    input = _with_dtype("prod", input, dtype)
    if dim is not None and not isinstance(dim, numbers.Integral):
        raise TypeError(f"prod: dim must be an int (torch.prod takes one dim), got {dim!r}")
    dims = _shape.norm_dims("prod", dim, input.ndim)
    if input.dtype is not float32:
        return _int_reduce(_int_prod, input, dims, bool(keepdim))
    return Prod.apply(input, dims, bool(keepdim))


def _int_prod(a, axis, dtype, keepdims):
    return np.prod(a, axis=axis, dtype=dtype, keepdims=keepdims)  # integers: exact in any order (mod 2^64)


# ---------------------------------------------------------------------------
# var, std, norm
# ---------------------------------------------------------------------------

def _mean64(a: Tensor, dims: tuple) -> np.ndarray:
    """The f64 mean of the kernels' first pass (the same element-order chain)."""
    x = _moved(a.numpy(force=True), dims).astype(np.float64)
    if x.shape[-1] == 0:
        return np.full(x.shape[:-1] + (1,), np.nan)
    return (np.add.accumulate(x, axis=-1)[..., -1:]) / x.shape[-1]


def _unmove(gx: np.ndarray, shape: tuple, dims: tuple) -> np.ndarray:
    kept = [d for d in range(len(shape)) if d not in dims]
    moved_shape = tuple(shape[d] for d in kept) + tuple(shape[d] for d in dims)
    return np.transpose(gx.reshape(moved_shape), np.argsort(kept + list(dims)))


class Var(Function):
    """var/std: ``kernels/moments.rs``. Backward in double, rounded once,
    with torch's formulas (``var_backward``, ``std_backward``): var
    ``g·2(x − mean)/(n − c)``; std first takes ``g/(2·std)``, 0 where the
    std is 0 (a constant input has a zero gradient, not a NaN), then the
    var rule. Over every element (no ``dim``, or a 0-d input) with
    ``n − c ≤ 0`` the gradient is ``g·inf``, NaN where x equals the mean;
    with a ``dim`` the divisor ``n − c`` is used as it is (2/0 = inf, a
    negative divisor flips the sign)."""

    @ieee_method
    def forward(self, a, dims, keepdim, correction, std, all_elements):
        self.dims, self.keepdim, self.correction, self.std = dims, keepdim, correction, std
        self.all_elements = all_elements
        out = Tensor._empty(tuple(n for d, n in enumerate(a.shape) if d not in dims))
        _core.var(out, a, list(dims), float(correction), std)
        self.save_for_backward(a, out)
        return out._view(_kept_shape(a.shape, dims, keepdim), _shape.contiguous_strides(_kept_shape(a.shape, dims, keepdim)))

    @ieee_method
    def backward(self, g):
        a, y = self.saved_tensors
        dims = self.dims
        x = _moved(a.numpy(force=True), dims).astype(np.float64)
        n = x.shape[-1]
        gk = g.numpy(force=True).reshape(x.shape[:-1] + (1,)).astype(np.float64)
        with ieee(), np.errstate(all="ignore"):
            d = x - _mean64(a, dims)
            dof = n - self.correction
            yk = y.numpy(force=True).reshape(x.shape[:-1] + (1,)).astype(np.float64) if self.std else None
            if self.all_elements and dof <= 0:
                gv = np.where(yk == 0, 0.0, gk / (2.0 * yk)) if self.std else gk
                gx = gv * np.where(d == 0, np.nan, np.inf)
            elif self.std:
                gx = np.where(yk == 0, 0.0, gk * d / (dof * yk))
            else:
                gx = gk * (2.0 * d / dof)
            gx = gx.astype(np.float32)
        return _from_numpy(canonical_nan(_unmove(gx, a.shape, dims)), a.shape)


def _correction(op: str, unbiased, correction) -> float:
    if unbiased is not None and correction is not None:
        raise ValueError(f"{op}: give either unbiased or correction, not both")
    if correction is not None:
        return float(correction)
    return 1.0 if unbiased is None or unbiased else 0.0


def _var_std(op: str, std: bool, input, dim, unbiased, keepdim, correction) -> Tensor:
    _check(op, input)
    if isinstance(dim, bool):  # torch's var(input, unbiased)
        dim, unbiased = None, dim
    if input.dtype is not float32:
        raise TypeError(f"{op}: expected a float32 tensor, got {input.dtype.name}")
    dims = _shape.norm_dims(op, dim, input.ndim)
    all_elements = dim is None or input.ndim == 0
    return Var.apply(input, dims, bool(keepdim), _correction(op, unbiased, correction), std, all_elements)


def var(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """Variance with torch's ``correction`` (default 1, Bessel's) or ``unbiased``."""
    return _var_std("var", False, input, dim, unbiased, keepdim, correction)


def std(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    return _var_std("std", True, input, dim, unbiased, keepdim, correction)


def var_mean(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    return var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    return std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


class Norm2(Function):
    """√Σx² (``kernels/moments.rs``); backward ``g·x/‖x‖`` in double,
    0 where the norm is 0 (torch's subgradient)."""

    @ieee_method
    def forward(self, a, dims, keepdim):
        self.dims, self.keepdim = dims, keepdim
        out = Tensor._empty(tuple(n for d, n in enumerate(a.shape) if d not in dims))
        _core.norm2(out, a, list(dims))
        self.save_for_backward(a, out)
        shape = _kept_shape(a.shape, dims, keepdim)
        return out._view(shape, _shape.contiguous_strides(shape))

    @ieee_method
    def backward(self, g):
        a, y = self.saved_tensors
        dims = self.dims
        x = _moved(a.numpy(force=True), dims).astype(np.float64)
        gk = g.numpy(force=True).reshape(x.shape[:-1] + (1,)).astype(np.float64)
        yk = y.numpy(force=True).reshape(x.shape[:-1] + (1,)).astype(np.float64)
        with ieee(), np.errstate(all="ignore"):
            gx = np.where(yk == 0, 0.0, gk * x / yk).astype(np.float32)
        return _from_numpy(canonical_nan(_unmove(gx, a.shape, dims)), a.shape)


class CountNonzero(Function):
    """The 0-"norm" (the count of nonzero elements, as float32); its
    gradient is zero, as torch's."""

    def forward(self, a, dims, keepdim):
        return sum((a != 0).float(), dims, keepdim)

    def backward(self, g):
        return Tensor._empty(self.input_meta[0][0], zeroed=True)


def norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """torch.norm for vectors: p = 2 ('fro'), 1, inf, -inf, 0 or any other
    real, over all elements or ``dim``. Matrix norms ('nuc') are not
    supported."""
    _check("norm", input)
    input = _with_dtype("norm", input, dtype)
    if p == "fro" or p is None:
        p = 2
    if isinstance(p, str):
        raise ValueError(f"norm: p={p!r} is not supported (vector norms only: a number, inf, -inf or 'fro')")
    return vector_norm(input, p, dim, keepdim)


def vector_norm(x, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002 - torch's name
    """torch.linalg.vector_norm."""
    from .pointwise import abs as _abs, pow as _pow

    _check("vector_norm", x)
    x = _with_dtype("vector_norm", x, dtype)
    if x.dtype is not float32:
        raise TypeError(f"vector_norm: expected a float32 tensor, got {x.dtype.name}")
    dims = _shape.norm_dims("vector_norm", dim, x.ndim)
    keepdim = bool(keepdim)
    p = float(ord)
    if p == 2:
        return Norm2.apply(x, dims, keepdim)
    if p == math.inf:
        return amax(_abs(x), dims, keepdim)
    if p == -math.inf:
        return amin(_abs(x), dims, keepdim)
    if p == 0:
        return CountNonzero.apply(x, dims, keepdim)
    if p == 1:
        return sum(_abs(x), dims, keepdim)
    return _pow(sum(_pow(_abs(x), p), dims, keepdim), 1.0 / p)


# ---------------------------------------------------------------------------
# logsumexp
# ---------------------------------------------------------------------------

def logsumexp(input, dim, keepdim: bool = False) -> Tensor:
    """``log(Σ exp(x − m)) + m`` with m the maximum (0 where it is ±inf, as
    torch), composed of the differentiable exp, double sum and log."""
    from .pointwise import exp as _exp, log as _log
    from .selection import where

    _check("logsumexp", input)
    if input.dtype is not float32:
        input = input.float()
    dims = _shape.norm_dims("logsumexp", dim, input.ndim)
    if builtins.any(input.shape[d] == 0 for d in dims):
        # An empty sum: log(0) = -inf, as torch (no maximum to subtract).
        return _log(sum(_exp(input), dims, bool(keepdim)))
    m = amax(input.detach(), dims, True)
    m = where(m.isinf(), 0.0, m)
    s = sum(_exp(input - m), dims, True)
    out = _log(s) + m
    if not keepdim:
        from .views import squeeze

        out = squeeze(out, dims) if dims else out
    return out


# ---------------------------------------------------------------------------
# Extrema
# ---------------------------------------------------------------------------

def _nan_first(fn_arg, a: np.ndarray, axis) -> np.ndarray:
    """argmax/argmin with torch's NaN rule: a NaN is the extremum (NumPy's
    argmax/argmin already return the first NaN)."""
    return fn_arg(a, axis=axis)


class Extremum(Function):
    """amax/amin (``whole`` False) and the whole-tensor max/min (True), with
    torch's two backward rules: amax/amin give ``(g / count) · mask`` (so
    −0.0 where g/count is negative, and NaN over a slice whose result is NaN,
    where no element equals it); max()/min() share g evenly among the
    elements equal to the result — the NaNs when it is NaN — and +0 elsewhere."""

    kind = "max"

    @ieee_method
    def forward(self, a, dims, keepdim, whole=False):
        self.dims, self.keepdim, self.whole = dims, keepdim, whole
        x = a.numpy(force=True)
        if builtins.any(a.shape[d] == 0 for d in dims):
            # torch refuses only a reduction over an empty set; (0, 4).amax(1) is (0,).
            raise ValueError(f"{self.kind}: cannot reduce over an empty dimension (shape {a.shape}, dims {dims})")
        fn = np.max if self.kind == "max" else np.min
        out = _from_numpy(fn(x, axis=dims, keepdims=True), _kept_shape(a.shape, dims, keepdim), a.dtype)
        self.save_for_backward(a, out)
        return out

    @ieee_method
    def backward(self, g):
        a, y = self.saved_tensors
        kept = _kept_shape(a.shape, self.dims, True)
        yv = y.numpy(force=True).reshape(kept)
        x = a.numpy(force=True)
        mask = x == yv
        if self.whole and np.isnan(yv).any():
            mask = np.isnan(x)
        count = mask.sum(axis=self.dims, keepdims=True).astype(np.float32)
        gk = g.numpy(force=True).reshape(kept)
        with ieee(), np.errstate(all="ignore"):
            share = (gk / count).astype(np.float32)  # one f32 division, as torch
            if self.whole:
                gx = np.where(mask, share, np.float32(0.0)).astype(np.float32)
            else:
                gx = (share * mask.astype(np.float32)).astype(np.float32)
        return _from_numpy(canonical_nan(gx), a.shape)


class Amin(Extremum):
    kind = "min"


def amax(input, dim=(), keepdim: bool = False) -> Tensor:
    _check("amax", input)
    dims = _shape.norm_dims("amax", None if dim == () else dim, input.ndim)
    return Extremum.apply(input, dims, bool(keepdim))


def amin(input, dim=(), keepdim: bool = False) -> Tensor:
    _check("amin", input)
    dims = _shape.norm_dims("amin", None if dim == () else dim, input.ndim)
    return Amin.apply(input, dims, bool(keepdim))


def argmax(input, dim=None, keepdim: bool = False) -> Tensor:
    """The index of the first maximum (the first NaN if any), flat over all
    elements when ``dim`` is None."""
    return _arg(np.argmax, "argmax", input, dim, keepdim)


def argmin(input, dim=None, keepdim: bool = False) -> Tensor:
    return _arg(np.argmin, "argmin", input, dim, keepdim)


def _arg(fn, op: str, input, dim, keepdim) -> Tensor:
    _check(op, input)
    x = input.numpy(force=True)
    if x.size == 0 and dim is None:
        raise ValueError(f"{op}: cannot reduce a tensor with no elements (shape {input.shape})")
    if dim is None:
        r = fn(x.reshape(-1))
        shape = (1,) * input.ndim if keepdim else ()
        return _from_numpy(np.int64(r), shape, int64)
    d = _shape.norm_dim(op, dim, input.ndim) if input.ndim else 0
    if input.ndim == 0:
        return _from_numpy(np.int64(0), (), int64)
    if input.shape[d] == 0:
        raise ValueError(f"{op}: dimension {dim} of shape {input.shape} is empty")
    r = fn(x, axis=d)
    return _from_numpy(r.astype(np.int64), _kept_shape(input.shape, (d,), bool(keepdim)), int64)


def _along_dim(kind: str, input: Tensor, dim, keepdim: bool):
    from .index import take_along_dim

    d = _shape.norm_dim(kind, dim, builtins.max(input.ndim, 1))
    if input.ndim == 0:
        return getattr(return_types, kind)(input.clone(), _from_numpy(np.int64(0), (), int64))
    idx = _arg(np.argmax if kind == "max" else np.argmin, kind, input, d, True)
    values = take_along_dim(input, idx, d)
    if not keepdim:
        from .views import squeeze

        values, idx = squeeze(values, d), squeeze(idx, d)
    return getattr(return_types, kind)(values, idx)


def _extremum_call(kind: str, input, dim, keepdim, other):
    _check(kind, input)
    if other is not None or isinstance(dim, Tensor):
        # torch.max(a, b): the element-wise form.
        from .selection import maximum, minimum

        b = other if other is not None else dim
        return (maximum if kind == "max" else minimum)(input, b)
    if dim is None:
        if keepdim:
            raise TypeError(f"{kind}: keepdim needs a dim")
        dims = tuple(range(input.ndim))
        return (Extremum if kind == "max" else Amin).apply(input, dims, False, True)
    return _along_dim(kind, input, dim, bool(keepdim))


def max(input, dim=None, keepdim: bool = False, *, other=None):  # noqa: A001 - torch's name
    """``max(x)``: the largest element (NaN if any); ``max(x, dim,
    keepdim=False)``: ``(values, indices)`` (first of equals); ``max(x, y)``:
    ``maximum``."""
    return _extremum_call("max", input, dim, keepdim, other)


def min(input, dim=None, keepdim: bool = False, *, other=None):  # noqa: A001 - torch's name
    return _extremum_call("min", input, dim, keepdim, other)


def aminmax(input, *, dim=None, keepdim: bool = False):
    return return_types.aminmax(amin(input, () if dim is None else dim, keepdim), amax(input, () if dim is None else dim, keepdim))


def count_nonzero(input, dim=None) -> Tensor:
    _check("count_nonzero", input)
    dims = _shape.norm_dims("count_nonzero", dim, input.ndim)
    return _int_reduce(np.sum, input != 0, dims, False)
