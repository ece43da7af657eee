"""max_pool2d and avg_pool2d (NCHW or CHW), torch's signatures, sizes and
divisors; kernels in rust/src/kernels/pool.rs."""

from __future__ import annotations

from typing import Any

from .. import _core
from ..autograd.function import Function
from ..tensor import Tensor, int64
from .operands import batched, check_float, contig, pair


def pool_out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    span = d * (k - 1) + 1
    num = size + 2 * p - span
    if num < 0:
        return 0
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


class MaxPool2dFn(Function):
    name = "MaxPool2d"

    def forward(self, x, geo, out_hw):
        self.geo = geo
        x = contig(x)
        shape = x.shape[:2] + out_hw
        out = Tensor._empty(shape)
        idx = Tensor._empty(shape, int64)
        _core.max_pool2d_forward(out, idx, x, *geo)
        self.save_for_backward(idx)
        return out

    def backward(self, g):
        (idx,) = self.saved_tensors
        dx = Tensor._empty(self.input_meta[0][0])
        _core.max_pool2d_backward(dx, contig(g), idx, *self.geo)
        return dx


class AvgPool2dFn(Function):
    name = "AvgPool2d"

    def forward(self, x, geo, out_hw):
        self.geo = geo
        x = contig(x)
        out = Tensor._empty(x.shape[:2] + out_hw)
        _core.avg_pool2d(out, x, *geo, False)
        return out

    def backward(self, g):
        dx = Tensor._empty(self.input_meta[0][0])
        _core.avg_pool2d(dx, contig(g), *self.geo, True)
        return dx


def _geometry(op, input, kernel_size, stride, padding, dilation, ceil_mode):
    check_float(op, input=input)
    x, squeeze = batched(op, input, 4)
    k = pair(op, "kernel_size", kernel_size, 1)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else pair(op, "stride", stride, 1)
    p = pair(op, "padding", padding, 0)
    d = pair(op, "dilation", dilation, 1)
    for i in range(2):
        if p[i] > k[i] // 2:
            raise ValueError(f"{op}: padding {p} should be at most half of the kernel size {k}")
    out_hw = tuple(pool_out_size(x.shape[2 + i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(2))
    if out_hw[0] <= 0 or out_hw[1] <= 0:
        raise ValueError(
            f"{op}: kernel {k} (dilation {d}) is larger than the padded input {x.shape[2] + 2 * p[0]}x{x.shape[3] + 2 * p[1]} "
            f"(input shape {tuple(input.shape)})"
        )
    return x, squeeze, k, s, p, d, out_hw


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False) -> Any:
    """torch.nn.functional.max_pool2d. The first of equal maxima wins; a NaN
    wins only a window of NaNs. Indices are flat positions in the plane."""
    x, squeeze, k, s, p, d, out_hw = _geometry("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)
    out = MaxPool2dFn.apply(x, (k, s, p, d), out_hw)
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
    x, squeeze, k, s, p, _d, out_hw = _geometry("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and int(divisor_override) <= 0:
        raise ValueError(f"avg_pool2d: divisor_override must be positive, got {divisor_override}")
    geo = (k, s, p, bool(count_include_pad), None if divisor_override is None else int(divisor_override))
    out = AvgPool2dFn.apply(x, geo, out_hw)
    return out.squeeze(0) if squeeze else out
