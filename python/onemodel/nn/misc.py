"""Small modules over the functional operators: constant padding
(ZeroPad1d/2d/3d, ConstantPad1d/2d/3d), PixelShuffle/PixelUnshuffle,
CosineSimilarity, PairwiseDistance (torch's arguments and printouts)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import functional as F
from .module import Module

if TYPE_CHECKING:
    from ..tensor import Tensor


def pad_tuple(value, n: int, name: str) -> tuple:
    """A padding module's `padding`: an int for every side, or the 2n
    sides in F.pad's order."""
    if isinstance(value, int):
        return (value,) * (2 * n)
    value = tuple(value)
    if len(value) != 2 * n:
        raise ValueError(f"{name}: padding must be an int or a {2 * n}-tuple, got {value!r}")
    return value


class _ConstantPadNd(Module):
    _n = 1

    def __init__(self, padding, value: float) -> None:
        super().__init__()
        self.padding = pad_tuple(padding, self._n, type(self).__name__)
        self.value = value

    def forward(self, input) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    _n = 3


class _ZeroPadNd(_ConstantPadNd):
    """ZeroPad1d/2d/3d: the ConstantPad of that rank with 0.0, printed as
    torch prints them (the padding alone)."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd, ConstantPad1d):
    pass


class ZeroPad2d(_ZeroPadNd, ConstantPad2d):
    pass


class ZeroPad3d(_ZeroPadNd, ConstantPad3d):
    pass


class PixelShuffle(Module):
    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class CosineSimilarity(Module):
    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "PixelShuffle", "PixelUnshuffle",
           "CosineSimilarity", "PairwiseDistance"]
