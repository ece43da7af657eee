"""Reductions, scans, sorting and the softmax family."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import ops as _ops

if TYPE_CHECKING:
    from ..tensor import Tensor
    from .. import return_types


class ReductionMethods:
    __slots__ = ()

    def sum(self, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
        return _ops.reduce.sum(self, dim, keepdim, dtype=dtype)

    def nansum(self, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
        return _ops.reduce.nansum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
        return _ops.reduce.mean(self, dim, keepdim, dtype=dtype)

    def nanmean(self, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
        return _ops.reduce.nanmean(self, dim, keepdim, dtype=dtype)

    def prod(self, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
        return _ops.reduce.prod(self, dim, keepdim, dtype=dtype)

    def var(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
        return _ops.reduce.var(self, dim, unbiased, keepdim, correction=correction)

    def std(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
        return _ops.reduce.std(self, dim, unbiased, keepdim, correction=correction)

    def norm(self, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
        return _ops.reduce.norm(self, p, dim, keepdim, dtype)

    def logsumexp(self, dim, keepdim: bool = False) -> Tensor:
        return _ops.reduce.logsumexp(self, dim, keepdim)

    def max(self, dim=None, keepdim: bool = False) -> Any:
        """``max()``: the largest element; ``max(dim, keepdim=False)``:
        ``(values, indices)``; ``max(other)``: element-wise maximum."""
        return _ops.reduce.max(self, dim, keepdim)

    def min(self, dim=None, keepdim: bool = False) -> Any:
        return _ops.reduce.min(self, dim, keepdim)

    def amax(self, dim=(), keepdim: bool = False) -> Tensor:
        return _ops.reduce.amax(self, dim, keepdim)

    def amin(self, dim=(), keepdim: bool = False) -> Tensor:
        return _ops.reduce.amin(self, dim, keepdim)

    def aminmax(self, *, dim=None, keepdim: bool = False) -> return_types.aminmax:
        return _ops.reduce.aminmax(self, dim=dim, keepdim=keepdim)

    def argmax(self, dim=None, keepdim: bool = False) -> Tensor:
        return _ops.reduce.argmax(self, dim, keepdim)

    def argmin(self, dim=None, keepdim: bool = False) -> Tensor:
        return _ops.reduce.argmin(self, dim, keepdim)

    def count_nonzero(self, dim=None) -> Tensor:
        return _ops.reduce.count_nonzero(self, dim)

    def cumsum(self, dim, *, dtype=None) -> Tensor:
        return _ops.scan.cumsum(self, dim, dtype=dtype)

    def cumprod(self, dim, *, dtype=None) -> Tensor:
        return _ops.scan.cumprod(self, dim, dtype=dtype)

    def cummax(self, dim) -> return_types.cummax:
        return _ops.scan.cummax(self, dim)

    def cummin(self, dim) -> return_types.cummin:
        return _ops.scan.cummin(self, dim)

    def sort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> return_types.sort:
        return _ops.sort.sort(self, dim, descending, stable=stable)

    def argsort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
        return _ops.sort.argsort(self, dim, descending, stable=stable)

    def msort(self) -> Tensor:
        return _ops.sort.msort(self)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> return_types.topk:  # noqa: A002
        return _ops.sort.topk(self, k, dim, largest, sorted)

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> return_types.kthvalue:
        return _ops.sort.kthvalue(self, k, dim, keepdim)

    def mode(self, dim: int = -1, keepdim: bool = False) -> return_types.mode:
        return _ops.sort.mode(self, dim, keepdim)

    def median(self, dim=None, keepdim: bool = False) -> Any:
        return _ops.sort.median(self, dim, keepdim)

    def quantile(self, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
        return _ops.quantile.quantile(self, q, dim, keepdim, interpolation=interpolation)

    def nanquantile(self, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
        return _ops.quantile.nanquantile(self, q, dim, keepdim, interpolation=interpolation)

    def unique(self, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False, dim=None) -> Any:  # noqa: A002
        return _ops.sort.unique(self, sorted, return_inverse, return_counts, dim)

    def softmax(self, dim=None) -> Tensor:
        return _ops.softmax.softmax(self, dim)

    def log_softmax(self, dim=None) -> Tensor:
        return _ops.softmax.log_softmax(self, dim)
