"""Copies and conversions: ``clone``, ``to`` and the dtype shorthands."""

from __future__ import annotations

from .. import ops as _ops


class ConversionMethods:
    __slots__ = ()

    def clone(self, *, memory_format=None):
        """A differentiable copy (the gradient passes through unchanged)."""
        return _ops.convert.clone(self)

    def to(self, *args, **kwargs):
        """torch's three forms: ``to(dtype)``, ``to(device=None, dtype=None)``
        and ``to(other)`` (other's device and dtype), each with
        ``non_blocking=False`` (ignored: there is nothing to overlap) and
        ``copy=False``. The device is always the CPU (``"cuda"`` raises)."""
        return _ops.convert.to(self, *args, **kwargs)

    def float(self):
        return _ops.convert.to(self, "float32")

    def long(self):
        return _ops.convert.to(self, "int64")

    def cpu(self, memory_format=None):
        return self
