"""Adaptive pooling (torch.nn.functional.adaptive_avg_pool1d/2d and
adaptive_max_pool1d/2d): output cell i of a dimension of size n → o covers
input positions [floor(i·n/o), ceil((i+1)·n/o)), torch's windows.

When every window has the same size and stride (n divisible by o) the
operator is avg_pool2d / max_pool2d with that window, so the kernels' bits
are used. Otherwise the windows are summed here with NumPy in the same
order as the pooling kernel (docs/ops.md): taps widened to double and added
in (row, column) order from 0, divided by the window's size in double,
rounded once; the backward adds g / size (double) into a double plane in
increasing output order and rounds once. Max pooling follows max_pool2d:
the first of equal maxima wins and a NaN only wins a window of NaNs; its
backward adds each gradient to its winner in increasing output order, in
double."""

from __future__ import annotations

import numbers

import numpy as np

from .. import _core
from ..autograd.function import Function
from ..tensor import Tensor, int64
from . import views
from .operands import check_float
from .pool import avg_pool2d, max_pool2d


def _windows(n: int, o: int) -> list:
    return _core.adaptive_windows(n, o)


def _output_size(op: str, size, input_shape: tuple) -> tuple:
    """(oh, ow) of ``output_size`` (an int or a pair, None keeping the
    input's size), from the core's geometry."""
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        size = (int(size), int(size))
    else:
        size = tuple(size)
        if len(size) != 2:
            raise ValueError(f"{op}: output_size must be an int or a pair, got {size!r}")
    size = tuple(None if s is None else int(s) for s in size)
    if any(s is not None and s <= 0 for s in size):
        raise ValueError(f"{op}: output_size must be positive, got {size!r}")
    return tuple(_core.adaptive_pool_geometry(op, tuple(input_shape), size))[2:]


def _from_numpy(a: np.ndarray, dtype=None) -> Tensor:
    from ..creation import tensor as make_tensor

    return make_tensor(a) if dtype is None else make_tensor(a, dtype=dtype)


class AdaptiveAvgPool2dFn(Function):
    name = "AdaptiveAvgPool2d"

    def forward(self, x, out_hw):
        n, c, h, w = x.shape
        self.rows, self.cols = _windows(h, out_hw[0]), _windows(w, out_hw[1])
        a = x.numpy(force=True)
        out = np.empty((n, c) + tuple(out_hw), dtype=np.float32)
        for i, (r0, r1) in enumerate(self.rows):
            for j, (c0, c1) in enumerate(self.cols):
                acc = np.zeros((n, c), dtype=np.float64)
                for r in range(r0, r1):
                    for q in range(c0, c1):
                        acc = acc + a[:, :, r, q].astype(np.float64)
                out[:, :, i, j] = (acc / float((r1 - r0) * (c1 - c0))).astype(np.float32)
        return _from_numpy(out)

    def backward(self, g):
        shape = self.input_meta[0][0]
        ga = g.numpy(force=True)
        dx = np.zeros(shape, dtype=np.float64)
        for i, (r0, r1) in enumerate(self.rows):
            for j, (c0, c1) in enumerate(self.cols):
                share = ga[:, :, i, j].astype(np.float64) / float((r1 - r0) * (c1 - c0))
                for r in range(r0, r1):
                    for q in range(c0, c1):
                        dx[:, :, r, q] = dx[:, :, r, q] + share
        return _from_numpy(dx.astype(np.float32))


class AdaptiveMaxPool2dFn(Function):
    name = "AdaptiveMaxPool2d"

    def forward(self, x, out_hw):
        n, c, h, w = x.shape
        rows, cols = _windows(h, out_hw[0]), _windows(w, out_hw[1])
        a = x.numpy(force=True)
        out = np.empty((n, c) + tuple(out_hw), dtype=np.float32)
        idx = np.empty((n, c) + tuple(out_hw), dtype=np.int64)
        for i, (r0, r1) in enumerate(rows):
            for j, (c0, c1) in enumerate(cols):
                best = a[:, :, r0, c0].copy()
                arg = np.full((n, c), r0 * w + c0, dtype=np.int64)
                for r in range(r0, r1):
                    for q in range(c0, c1):
                        v = a[:, :, r, q]
                        # max_pool2d's rule: the first of equal maxima wins,
                        # a NaN only wins a window of NaNs.
                        take = (v > best) | (np.isnan(best) & ~np.isnan(v))
                        best = np.where(take, v, best)
                        arg = np.where(take, r * w + q, arg)
                out[:, :, i, j] = best
                idx[:, :, i, j] = arg
        self.idx = idx
        self.hw = (h, w)
        return _from_numpy(out)

    def backward(self, g):
        n, c, h, w = self.input_meta[0][0]
        ga = g.numpy(force=True).astype(np.float64).reshape(n * c, -1)
        flat_idx = self.idx.reshape(n * c, -1)
        dx = np.zeros((n * c, h * w), dtype=np.float64)
        rows = np.arange(n * c)
        for k in range(flat_idx.shape[1]):  # increasing output order
            np.add.at(dx, (rows, flat_idx[:, k]), ga[:, k])
        return _from_numpy(dx.astype(np.float32).reshape(n, c, h, w))


def _as_4d(op: str, input: Tensor, dims: int):
    check_float(op, input=input)
    if input.ndim == dims + 1:
        return views.unsqueeze(input, 0), True
    if input.ndim != dims + 2:
        raise ValueError(f"{op}: expected a {dims + 1}-D or {dims + 2}-D input, got shape {tuple(input.shape)}")
    if any(s == 0 for s in input.shape[2:]):
        raise ValueError(f"{op}: input of shape {tuple(input.shape)} has an empty spatial dimension")
    return input, False


def _uniform(n: int, o: int):
    """(kernel, stride) when every window has the same size and step."""
    return (n // o, n // o) if n % o == 0 else None


def adaptive_avg_pool2d(input, output_size) -> Tensor:
    op = "adaptive_avg_pool2d"
    x, unbatched = _as_4d(op, input, 2)
    out_hw = _output_size(op, output_size, x.shape)
    ur, uc = _uniform(x.shape[2], out_hw[0]), _uniform(x.shape[3], out_hw[1])
    if ur and uc:
        out = avg_pool2d(x, (ur[0], uc[0]), (ur[1], uc[1]))
    else:
        out = AdaptiveAvgPool2dFn.apply(x.contiguous(), out_hw)
    return views.squeeze(out, 0) if unbatched else out


def adaptive_max_pool2d(input, output_size, return_indices: bool = False):
    op = "adaptive_max_pool2d"
    x, unbatched = _as_4d(op, input, 2)
    out_hw = _output_size(op, output_size, x.shape)
    ur, uc = _uniform(x.shape[2], out_hw[0]), _uniform(x.shape[3], out_hw[1])
    if ur and uc:
        res = max_pool2d(x, (ur[0], uc[0]), (ur[1], uc[1]), return_indices=return_indices)
        out, idx = res if return_indices else (res, None)
    else:
        out = AdaptiveMaxPool2dFn.apply(x.contiguous(), out_hw)
        idx = None
        if return_indices:
            rec = out._record
            if rec is None:  # not recorded: run again for the indices
                fn = AdaptiveMaxPool2dFn.__new__(AdaptiveMaxPool2dFn)
                fn.forward(x.contiguous(), out_hw)
                rec = fn
            idx = _from_numpy(rec.idx, int64)
    if unbatched:
        out = views.squeeze(out, 0)
        idx = views.squeeze(idx, 0) if idx is not None else None
    return (out, idx) if return_indices else out


def _one_d(fn, op, input, output_size, **kw):
    check_float(op, input=input)
    if input.ndim not in (2, 3):
        raise ValueError(f"{op}: expected a 2-D or 3-D input, got shape {tuple(input.shape)}")
    size = output_size if isinstance(output_size, numbers.Integral) else tuple(output_size)[0]
    res = fn(views.unsqueeze(input, -2), (1, size), **kw)
    if isinstance(res, tuple):
        return tuple(views.squeeze(r, -2) for r in res)
    return views.squeeze(res, -2)


def adaptive_avg_pool1d(input, output_size) -> Tensor:
    return _one_d(adaptive_avg_pool2d, "adaptive_avg_pool1d", input, output_size)


def adaptive_max_pool1d(input, output_size, return_indices: bool = False):
    return _one_d(adaptive_max_pool2d, "adaptive_max_pool1d", input, output_size, return_indices=return_indices)


__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d"]
