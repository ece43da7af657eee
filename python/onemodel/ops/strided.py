"""A view given by a geometry function, with its backward.

``StridedView.apply(a, geometry)`` shows `a`'s memory as
``geometry(shape, strides, offset) -> (shape, strides, offset)`` (diagonal,
unfold, as_strided). The backward lays the gradient into zeros of the
input's shape at the same geometry over the contiguous gradient buffer:
a copy when the view's elements are distinct, else (overlapping windows)
the indexing scatter-add (docs/tensor.md, "Indexing") — each input element one double chain over
the view's positions in increasing row-major order, rounded once.
"""

from __future__ import annotations

import numpy as np

from .. import _core, _shape
from .._numpy_exact import canonical_nan, ieee
from ..autograd.function import Function
from ..tensor import Tensor, float32
from .operands import from_array


def flat_positions(shape: tuple, strides: tuple, offset: int) -> np.ndarray:
    """The memory position of every element of a view, row-major."""
    flat = np.full((), offset, np.int64)
    for n, s in zip(shape, strides):
        flat = flat[..., None] + np.arange(n, dtype=np.int64) * s
    return flat.reshape(shape)


def overlaps(shape: tuple, strides: tuple) -> bool:
    """Whether two elements of the view share memory (a conservative test:
    sorted by stride, each dim must step over the extent of the smaller ones)."""
    dims = sorted((abs(s), n) for n, s in zip(shape, strides) if n > 1)
    extent = 1
    for s, n in dims:
        if s < extent:
            return True
        extent = s * (n - 1) + extent
    return False


class StridedView(Function):
    def forward(self, a, geometry) -> Tensor:
        self.geometry = geometry
        shape, strides, offset = geometry(a._shape, a._strides, a._offset)
        return a._view(shape, strides, offset)

    def backward(self, g) -> Tensor:
        in_shape = self.input_meta[0][0]
        base = _shape.contiguous_strides(in_shape)
        shape, strides, offset = self.geometry(in_shape, base, 0)
        if not overlaps(shape, strides):
            out = Tensor._empty(in_shape, float32, zeroed=True)
            _core.copy_(out._view(shape, strides, offset), g)
            return out
        pos = flat_positions(shape, strides, offset).ravel()
        with ieee():
            acc = np.zeros(_shape.numel(in_shape), np.float64)
            np.add.at(acc, pos, np.ascontiguousarray(g.numpy(force=True)).ravel().astype(np.float64))
            r = canonical_nan(acc.astype(np.float32))
        return from_array(r.reshape(in_shape), float32)


def strided_view(a: Tensor, geometry) -> Tensor:
    return StridedView.apply(a, geometry)
