"""max_pool2d and avg_pool2d (NCHW or CHW), torch's signatures, sizes and
divisors; kernels in rust/src/kernels/pool.rs."""

from __future__ import annotations

from typing import Any

from .. import _core
from ..autograd.function import Function
from ..tensor import Tensor, int64
from .operands import batched, check_float, contig, pair, pool_stride


class _PoolFn(Function):
    def _start(self, x, geo, shape) -> tuple:
        """Keeps the geometry; returns the contiguous input and the output."""
        self.geo = geo
        return contig(x), Tensor._empty(shape)

    def _input_grad(self) -> Tensor:
        return Tensor._empty(self.input_meta[0][0])


class MaxPool2dFn(_PoolFn):
    name = "MaxPool2d"

    def forward(self, x, geo, shape):
        x, out = self._start(x, geo, shape)
        idx = Tensor._empty(shape, int64)
        _core.max_pool2d_forward(out, idx, x, *geo)
        self.save_for_backward(idx)
        return out

    def backward(self, g):
        (idx,) = self.saved_tensors
        dx = self._input_grad()
        _core.max_pool2d_backward(dx, contig(g), idx, *self.geo)
        return dx


class AvgPool2dFn(_PoolFn):
    name = "AvgPool2d"

    def forward(self, x, geo, shape):
        x, out = self._start(x, geo, shape)
        _core.avg_pool2d(out, x, *geo, False)
        return out

    def backward(self, g):
        dx = self._input_grad()
        _core.avg_pool2d(dx, contig(g), *self.geo, True)
        return dx


def _geometry(op, input, kernel_size, stride, padding, dilation, ceil_mode):
    """Arguments as pairs, and the batched output shape from the core's
    geometry (``_core.pool2d_geometry``: torch's sizes, ceil_mode's rule)."""
    check_float(op, input=input)
    k = pair(op, "kernel_size", kernel_size, 1)
    s = pool_stride(op, stride, k)
    p = pair(op, "padding", padding, 0)
    d = pair(op, "dilation", dilation, 1)
    shape = tuple(_core.pool2d_geometry(op, tuple(input.shape), k, s, p, d, bool(ceil_mode)))
    x, squeeze = batched(op, input, 4)
    return x, squeeze, k, s, p, d, shape


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False) -> Any:
    """torch.nn.functional.max_pool2d. The first of equal maxima wins; a NaN
    wins only a window of NaNs. Indices are flat positions in the plane."""
    x, squeeze, k, s, p, d, shape = _geometry("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
    out = MaxPool2dFn.apply(x, (k, s, p, d), shape)
    if return_indices:
        if out._record is not None:
            (idx,) = out._record.saved_tensors
        else:  # not recorded, so nothing kept them: run the kernel for the indices
            idx = Tensor._empty(out.shape, int64)
            _core.max_pool2d_forward(Tensor._empty(out.shape), idx, contig(x), k, s, p, d)
        return (out.squeeze(0), idx.squeeze(0)) if squeeze else (out, idx)
    return out.squeeze(0) if squeeze else out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None) -> Tensor:
    """torch.nn.functional.avg_pool2d."""
    x, squeeze, k, s, p, _d, shape = _geometry("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and int(divisor_override) <= 0:
        raise ValueError(f"avg_pool2d: divisor_override must be positive, got {divisor_override}")
    geo = (k, s, p, bool(count_include_pad), None if divisor_override is None else int(divisor_override))
    out = AvgPool2dFn.apply(x, geo, shape)
    return out.squeeze(0) if squeeze else out
