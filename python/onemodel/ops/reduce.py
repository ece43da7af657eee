"""Reductions: sum and mean over all or given dimensions. Each output is a
double-precision sum of its terms in increasing element order, rounded once
(mean divides the double sum before that rounding)."""

from __future__ import annotations

from .. import _core, _shape
from ..autograd.function import Function
from ..tensor import Tensor, float32
from .._kernels import expand_to, sum_kernel


def _grad_to_input(g: Tensor, in_shape: tuple, dims: tuple, keepdim: bool) -> Tensor:
    """Broadcast an output gradient back over the reduced dims (contiguous)."""
    kept_shape = tuple(1 if d in dims else n for d, n in enumerate(in_shape))
    g = g._view(kept_shape, _shape.contiguous_strides(kept_shape)) if not keepdim else g
    out = Tensor._empty(in_shape)
    _core.copy_(out, expand_to(g, in_shape, "sum"))
    return out


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
        divisor = Tensor._empty(())
        _core.fill_(divisor, float(count))
        _core.binary("div", full, full, expand_to(divisor, in_shape, "mean"))
        return full


def _check(op: str, input) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}")
    if input.dtype is not float32:
        raise TypeError(f"{op}: expected a float32 tensor, got {input.dtype.name}")


def sum(input, dim=None, keepdim: bool = False) -> Tensor:
    _check("sum", input)
    dims = _shape.norm_dims("sum", dim, input.ndim)
    return Sum.apply(input, dims, bool(keepdim))


def mean(input, dim=None, keepdim: bool = False) -> Tensor:
    _check("mean", input)
    dims = _shape.norm_dims("mean", dim, input.ndim)
    return Mean.apply(input, dims, bool(keepdim))
