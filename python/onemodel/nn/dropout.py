"""Dropout modules: Dropout, Dropout1d, Dropout2d, Dropout3d. Masks are
counter-based draws from a generator (the module's ``generator`` or the
default one), the same at every thread count; p = 0 and eval mode return
the input itself. ``inplace=True`` is accepted and computed out of place
(the returned values are the same; the input is left unchanged)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import functional as F
from .module import Module

if TYPE_CHECKING:
    from ..tensor import Tensor


class _DropoutNd(Module):
    _fn = "dropout"

    def __init__(self, p: float = 0.5, inplace: bool = False, generator=None) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace, self.generator = p, inplace, generator

    def forward(self, input) -> Tensor:
        return getattr(F, self._fn)(input, self.p, self.training, False, generator=self.generator)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    _fn = "dropout"


class Dropout1d(_DropoutNd):
    _fn = "dropout1d"


class Dropout2d(_DropoutNd):
    _fn = "dropout2d"


class Dropout3d(_DropoutNd):
    _fn = "dropout3d"


__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d"]
