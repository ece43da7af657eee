"""Scans along a dim: ``cumsum``, ``cumprod`` (float32: a double running
value in index order, each output rounded once; int64/bool: int64), and
``cummax``/``cummin`` (comparisons only).

Orders: the running value is ``np.add.accumulate`` /
``np.multiply.accumulate`` on float64, which are sequential (output k is
output k−1 plus/times term k). Backward:

* cumsum: each input's gradient is the double sum of the gradients of the
  outputs at and after it, accumulated from the last output down, rounded
  once;
* cumprod: ``dx_i = Σ_{k≥i} g_k·Π_{j≤k, j≠i} x_j`` in double, rounded
  once; evaluated as ``(Σ_{k≥i} g_k·y_k)/x_i`` (sums from the last output
  down) before a row's first zero, directly at that zero, and 0 after it;
* cummax/cummin: the gradient goes to the index each output took (a
  scatter-add in output order, ops/index.py).
"""

from __future__ import annotations

import numpy as np

from .. import _shape
from .. import return_types
from .._numpy_exact import canonical_nan, ieee, ieee_method
from ..autograd.function import Function
from ..tensor import Tensor, as_dtype, float32, int64
from .operands import from_array


def _prep(op: str, input: Tensor, dim, dtype) -> tuple:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}")
    dt = as_dtype(dtype, op)
    if dt is not None and dt is not input.dtype:
        input = input.to(dt)
    d = _shape.norm_dim(op, dim, max(input.ndim, 1))
    return input, d


def _revcumsum64(g: np.ndarray, axis: int) -> np.ndarray:
    """Σ_{k≥i} g_k along `axis`, accumulated from the last element down."""
    return np.flip(np.add.accumulate(np.flip(g, axis), axis=axis), axis)


def _scan64(a: Tensor, scan) -> Tensor:
    """``scan`` of a's values in float64, rounded once to float32 (a 0-d
    tensor is its own scan)."""
    x = a.numpy(force=True).astype(np.float64)
    with ieee():
        y = scan(x).astype(np.float32) if x.ndim else x.astype(np.float32)
    return from_array(canonical_nan(y), float32)


class Cumsum(Function):
    @ieee_method
    def forward(self, a, dim):
        self.dim = dim
        return _scan64(a, lambda x: np.add.accumulate(x, axis=dim))

    @ieee_method
    def backward(self, g):
        return _scan64(g, lambda x: _revcumsum64(x, self.dim))


class Cumprod(Function):
    @ieee_method
    def forward(self, a, dim):
        self.dim = dim
        self.save_for_backward(a)
        return _scan64(a, lambda x: np.multiply.accumulate(x, axis=dim))

    @ieee_method
    def backward(self, g):
        (a,) = self.saved_tensors
        if a.ndim == 0 or a.numel() == 0:
            return g if a.ndim == 0 else from_array(np.zeros(a.shape, np.float32), float32)
        x = np.moveaxis(a.numpy(force=True).astype(np.float64), self.dim, -1)
        gn = np.moveaxis(g.numpy(force=True).astype(np.float64), self.dim, -1)
        moved_shape = x.shape
        n = x.shape[-1]
        x, gn = x.reshape(-1, n), gn.reshape(-1, n)
        with ieee(), np.errstate(all="ignore"):
            y = np.multiply.accumulate(x, axis=-1)
            tail = _revcumsum64(gn * y, -1)
            dx = np.where(x != 0, tail / np.where(x != 0, x, 1.0), 0.0)
            zero = x == 0
            for r in np.nonzero(zero.any(axis=-1))[0]:
                i = int(np.argmax(zero[r]))  # the row's first zero
                row_x, row_g = x[r], gn[r]
                before = np.multiply.accumulate(row_x[:i])[-1] if i else 1.0
                after = np.multiply.accumulate(np.concatenate([[before], row_x[i + 1 :]]))
                dx[r, i] = np.add.accumulate(row_g[i:] * after[: n - i])[-1]
                dx[r, i + 1 :] = 0.0
            out = dx.astype(np.float32).reshape(moved_shape)
        return from_array(canonical_nan(np.ascontiguousarray(np.moveaxis(out, -1, self.dim))), float32)


def _cumulative(op: str, fn, ints, input, dim: int, dtype) -> Tensor:
    """cumsum / cumprod: the float32 record `fn`, or NumPy's exact int64
    scan `ints` for integer and bool inputs (no gradient)."""
    input, d = _prep(op, input, dim, dtype)
    if input.dtype is not float32:
        a = input.numpy(force=True).astype(np.int64)
        return from_array(ints(a, axis=d) if a.ndim else a, int64)
    return fn.apply(input, d)


def cumsum(input, dim: int, *, dtype=None) -> Tensor:
    return _cumulative("cumsum", Cumsum, np.cumsum, input, dim, dtype)


def cumprod(input, dim: int, *, dtype=None) -> Tensor:
    return _cumulative("cumprod", Cumprod, np.cumprod, input, dim, dtype)


def _cum_extreme(kind: str, input: Tensor, dim: int):
    from .index import take_along_dim

    input, d = _prep(kind, input, dim, None)
    x = input.numpy(force=True)
    if x.ndim == 0:
        return getattr(return_types, kind)(input.clone(), from_array(np.zeros((), np.int64), int64))
    xm = np.moveaxis(x, d, -1)
    idx = np.zeros(xm.shape, np.int64)
    n = xm.shape[-1]
    if n:
        best = xm[..., 0].copy()
        cur = np.zeros(xm.shape[:-1], np.int64)
        isnan = np.isnan(best) if xm.dtype.kind == "f" else np.zeros(best.shape, bool)
        for k in range(n):
            v = xm[..., k]
            vnan = np.isnan(v) if xm.dtype.kind == "f" else np.zeros(v.shape, bool)
            # torch: a NaN takes over and stays; otherwise ties move to the later index.
            better = (v >= best) if kind == "cummax" else (v <= best)
            take = (~isnan & (better | vnan)) | (k == 0)
            best = np.where(take, v, best)
            cur = np.where(take, k, cur)
            isnan = isnan | vnan
            idx[..., k] = cur
    index = from_array(np.ascontiguousarray(np.moveaxis(idx, -1, d)), int64)
    return getattr(return_types, kind)(take_along_dim(input, index, d), index)


def cummax(input, dim: int):
    """(values, indices): the running maximum; ties take the later index,
    and a NaN, once seen, is the value (with its index), as torch."""
    return _cum_extreme("cummax", input, dim)


def cummin(input, dim: int):
    return _cum_extreme("cummin", input, dim)
