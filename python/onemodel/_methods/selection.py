"""Element-wise selections: clamp/clip, maximum/minimum, where."""

from __future__ import annotations

from .. import ops as _ops


class SelectionMethods:
    __slots__ = ()

    def clamp(self, min=None, max=None):  # noqa: A002 - torch's names
        return _ops.selection.clamp(self, min, max)

    def clip(self, min=None, max=None):  # noqa: A002
        return _ops.selection.clip(self, min, max)

    def maximum(self, other):
        return _ops.selection.maximum(self, other)

    def minimum(self, other):
        return _ops.selection.minimum(self, other)

    def where(self, condition, other):
        """``self`` where ``condition`` holds, else ``other`` (torch's
        ``Tensor.where``: the tensor is the first choice)."""
        return _ops.selection.where(condition, self, other)
