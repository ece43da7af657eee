"""Copies and conversions: ``clone``, ``to``, ``type`` and the dtype
shorthands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import ops as _ops

if TYPE_CHECKING:
    from ..tensor import Tensor


class ConversionMethods:
    __slots__ = ()

    def clone(self, *, memory_format=None) -> Tensor:
        """A differentiable copy (the gradient passes through unchanged)."""
        return _ops.convert.clone(self)

    def to(self, *args, **kwargs) -> Tensor:
        """torch's three forms: ``to(dtype)``, ``to(device=None, dtype=None)``
        and ``to(other)`` (other's device and dtype), each with
        ``non_blocking=False`` (ignored: there is nothing to overlap) and
        ``copy=False``. The device is always the CPU (``"cuda"`` raises)."""
        return _ops.convert.to(self, *args, **kwargs)

    def type(self, dtype=None, non_blocking: bool = False, **kwargs) -> str | Tensor:
        """Without ``dtype``: torch's type string (``'torch.FloatTensor'``,
        ``'torch.LongTensor'``, ``'torch.BoolTensor'``). With one (a dtype or
        such a string): the tensor converted to it (itself if unchanged)."""
        return _ops.convert.type_(self, dtype)

    def type_as(self, other) -> Tensor:
        from ..tensor import Tensor
        from .. import _shape
        if not isinstance(other, Tensor):
            raise _shape.not_a_tensor("type_as", other, "other")
        return _ops.convert.to(self, other.dtype)

    def float(self, memory_format=None) -> Tensor:
        return _ops.convert.to(self, "float32")

    def long(self, memory_format=None) -> Tensor:
        return _ops.convert.to(self, "int64")

    def bool(self, memory_format=None) -> Tensor:
        return _ops.convert.to(self, "bool")

    def int(self, memory_format=None) -> Tensor:
        return _ops.convert.to(self, "int32")  # a TypeError naming int32

    def double(self, memory_format=None) -> Tensor:
        return _ops.convert.to(self, "float64")  # a TypeError naming float64

    def half(self, memory_format=None) -> Tensor:
        return _ops.convert.to(self, "float16")  # a TypeError naming float16

    def cpu(self, memory_format=None) -> Tensor:
        return self

    def cuda(self, device=None, non_blocking: bool = False, memory_format=None) -> Tensor:
        return _ops.convert.to(self, "cuda" if device is None else device)  # a RuntimeError: CPU only
