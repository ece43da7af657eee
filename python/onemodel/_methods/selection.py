"""Selections: where, masked_fill, clamp/clip, maximum/minimum, tril/triu."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import ops as _ops

if TYPE_CHECKING:
    from ..tensor import Tensor


class SelectionMethods:
    __slots__ = ()

    def where(self, condition, other) -> Tensor:
        """``self`` where ``condition`` holds, else ``other`` (torch's
        ``Tensor.where``: the tensor is the first choice)."""
        return _ops.selection.where(condition, self, other)

    def masked_fill(self, mask, value) -> Tensor:
        return _ops.selection.masked_fill(self, mask, value)

    def masked_fill_(self, mask, value) -> Tensor:
        return _ops.selection.masked_fill_(self, mask, value)

    def clamp(self, min=None, max=None) -> Tensor:  # noqa: A002 - torch's names
        return _ops.selection.clamp(self, min, max)

    def clip(self, min=None, max=None) -> Tensor:  # noqa: A002
        return _ops.selection.clamp(self, min, max)

    def clamp_(self, min=None, max=None) -> Tensor:  # noqa: A002
        return _ops.selection.clamp_(self, min, max)

    def clip_(self, min=None, max=None) -> Tensor:  # noqa: A002
        return _ops.selection.clamp_(self, min, max)

    def clamp_min(self, min) -> Tensor:  # noqa: A002
        return _ops.selection.clamp(self, min, None)

    def clamp_max(self, max) -> Tensor:  # noqa: A002
        return _ops.selection.clamp(self, None, max)

    def clamp_min_(self, min) -> Tensor:  # noqa: A002
        return _ops.selection.clamp_(self, min, None)

    def clamp_max_(self, max) -> Tensor:  # noqa: A002
        return _ops.selection.clamp_(self, None, max)

    def maximum(self, other) -> Tensor:
        return _ops.selection.maximum(self, other)

    def minimum(self, other) -> Tensor:
        return _ops.selection.minimum(self, other)

    def tril(self, diagonal: int = 0) -> Tensor:
        return _ops.selection.tril(self, diagonal)

    def triu(self, diagonal: int = 0) -> Tensor:
        return _ops.selection.triu(self, diagonal)

    def tril_(self, diagonal: int = 0) -> Tensor:
        return _ops.selection.tril_(self, diagonal)

    def triu_(self, diagonal: int = 0) -> Tensor:
        return _ops.selection.triu_(self, diagonal)
