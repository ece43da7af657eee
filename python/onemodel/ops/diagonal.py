"""Diagonals: diagonal (a view), diag, diag_embed, diagflat, trace,
diagonal_scatter, fill_diagonal_, and the triangle index lists
tril_indices/triu_indices.

No sums except trace's, which is the double sum of the diagonal (increasing
index, rounded once). The backward of a view is a copy into zeros (the
diagonal's elements are distinct); the backward of an embedding is the
diagonal of the gradient.
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import _shape
from ..autograd.function import Function
from ..tensor import Tensor, int64
from .._kernels import clone_contiguous
from . import views
from .strided import strided_view


def _check_tensor(op: str, t) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(t).__name__}")


def _diag_geometry(offset: int, d1: int, d2: int):
    def geometry(shape, strides, off) -> tuple:
        n1, n2 = shape[d1], shape[d2]
        if offset >= 0:
            n = builtins.max(0, builtins.min(n1, n2 - offset))
            start = off + offset * strides[d2] if n else off
        else:
            n = builtins.max(0, builtins.min(n1 + offset, n2))
            start = off - offset * strides[d1] if n else off
        keep = [d for d in range(len(shape)) if d not in (d1, d2)]
        return (
            tuple(shape[d] for d in keep) + (n,),
            tuple(strides[d] for d in keep) + (strides[d1] + strides[d2],),
            start,
        )

    return geometry


def _diag_dims(op: str, ndim: int, dim1: int, dim2: int) -> tuple:
    if ndim < 2:
        raise RuntimeError(f"{op}: expected a tensor of at least 2 dimensions, got {ndim}")
    d1 = _shape.norm_dim(op, dim1, ndim)
    d2 = _shape.norm_dim(op, dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"{op}: diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """torch.diagonal: a view of the diagonal of dims (dim1, dim2) at
    `offset` (above the main one when positive), appended as the last dim."""
    _check_tensor("diagonal", input)
    d1, d2 = _diag_dims("diagonal", input.ndim, dim1, dim2)
    return strided_view(input, _diag_geometry(int(offset), d1, d2))


class DiagEmbed(Function):
    """out = zeros with `input` written along the diagonal of (d1, d2);
    backward: the diagonal of the gradient."""

    def forward(self, a, out_shape, geometry) -> Tensor:
        self.geometry = geometry
        out = Tensor._empty(out_shape, a.dtype, zeroed=True)
        shape, strides, off = geometry(out._shape, out._strides, 0)
        from .. import _core

        _core.copy_(out._view(shape, strides, off), a)
        return out

    def backward(self, g) -> Tensor:
        shape, strides, off = self.geometry(g._shape, g._strides, g._offset)
        return clone_contiguous(g._view(shape, strides, off))


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """torch.diag_embed: the last dim of `input` on the diagonals of two
    new dims (dim1, dim2) of the output."""
    _check_tensor("diag_embed", input)
    if input.ndim == 0:
        raise RuntimeError("diag_embed: expected a tensor of at least 1 dimension")
    nd = input.ndim + 1
    d1 = _shape.norm_dim("diag_embed", dim1, nd)
    d2 = _shape.norm_dim("diag_embed", dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diag_embed: diagonal dimensions cannot be identical {dim1}, {dim2}")
    offset = int(offset)
    n = input.shape[-1] + builtins.abs(offset)
    rest = list(input.shape[:-1])
    out_shape = []
    for d in range(nd):
        out_shape.append(n if d in (d1, d2) else rest.pop(0))
    return DiagEmbed.apply(input, tuple(out_shape), _diag_geometry(offset, d1, d2))


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """torch.diag: a 1-D input becomes a square matrix with it on the
    `diagonal`-th diagonal; a 2-D input gives (a copy of) that diagonal."""
    _check_tensor("diag", input)
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return views.contiguous(globals()["diagonal"](input, diagonal, 0, 1))
    raise RuntimeError(f"diag: expected a 1-D or 2-D tensor, got shape {tuple(input.shape)}")


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """torch.diagflat: the flattened input on the `offset`-th diagonal."""
    _check_tensor("diagflat", input)
    return diag_embed(views.reshape(input, (-1,)), offset, 0, 1)


def trace(input: Tensor) -> Tensor:
    """torch.trace: the sum of a matrix's main diagonal (int64 stays int64)."""
    _check_tensor("trace", input)
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with shape {tuple(input.shape)}")
    return globals()["diagonal"](input).sum()


class DiagonalScatter(Function):
    """out = input with `src` written on a diagonal. Backward: input gets g
    with the diagonal zeroed, src the diagonal of g."""

    def forward(self, a, src, geometry) -> Tensor:
        self.geometry = geometry
        out = clone_contiguous(a)
        shape, strides, off = geometry(out._shape, out._strides, 0)
        if tuple(src.shape) != shape:
            raise RuntimeError(f"diagonal_scatter: src must have the shape of the diagonal {shape}, got {tuple(src.shape)}")
        from .. import _core

        _core.copy_(out._view(shape, strides, off), src)
        return out

    def backward(self, g) -> Tensor:
        from .. import _core

        ga = gs = None
        shape, strides, off = self.geometry(g._shape, g._strides, g._offset)
        if self.needs_input_grad[1]:
            gs = clone_contiguous(g._view(shape, strides, off))
        if self.needs_input_grad[0]:
            ga = clone_contiguous(g)
            s2, st2, o2 = self.geometry(ga._shape, ga._strides, 0)
            _core.fill_(ga._view(s2, st2, o2), 0.0)
        return ga, gs


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    _check_tensor("diagonal_scatter", input)
    _check_tensor("diagonal_scatter", src)
    d1, d2 = _diag_dims("diagonal_scatter", input.ndim, dim1, dim2)
    if src.dtype is not input.dtype:
        src = src.to(input.dtype)
    return DiagonalScatter.apply(input, src, _diag_geometry(int(offset), d1, d2))


def fill_diagonal_(input: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """torch.Tensor.fill_diagonal_: the main diagonal (all dims equal index)
    set to `fill_value`; a tall matrix with ``wrap=True`` restarts the
    diagonal every ncols + 1 rows."""
    _check_tensor("fill_diagonal_", input)
    if input.ndim < 2:
        raise RuntimeError("fill_diagonal_: dimensions must larger than 1")
    if input.ndim > 2 and len(set(input.shape)) != 1:
        raise RuntimeError("fill_diagonal_: all dimensions of input must be of equal length")
    shape = tuple(input.shape)
    idx = np.zeros(shape, bool)
    n = builtins.min(shape)
    if input.ndim == 2:
        rows, cols = shape
        step = cols + 1
        total = rows * cols
        stop = total if (wrap and rows > cols + 1) else builtins.min(rows, cols) * cols
        flat = np.arange(0, builtins.min(stop, total), step)
        idx.reshape(-1)[flat] = True
    else:
        r = np.arange(n)
        idx[(r,) * input.ndim] = True
    from .inplace import assign_result
    from .selection import masked_fill

    from ..tensor import bool_
    from .operands import from_array

    mask = from_array(idx, bool_)
    return assign_result(input, "fill_diagonal_", lambda t: masked_fill(t, mask, fill_value), others=(fill_value,))


def _tri_indices(op: str, row: int, col: int, offset: int, dtype, upper: bool) -> Tensor:
    for name, v in (("row", row), ("col", col)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError(f"{op}: {name} must be an int, got {type(v).__name__}")
    if row < 0 or col < 0:
        raise RuntimeError(f"{op}: row and col must be non-negative, got {row} and {col}")
    if dtype is not None and dtype is not int64:
        from ..tensor import int32

        if dtype is not int32:
            raise RuntimeError(f"{op}: dtype must be an integer type, got {dtype}")
        raise TypeError(f"{op}: onemodel computes indices in int64 only (dtype {dtype.name} asked)")
    r, c = np.meshgrid(np.arange(row), np.arange(col), indexing="ij")
    keep = (c - r >= offset) if upper else (c - r <= offset)
    from .operands import from_array

    return from_array(np.stack([r[keep], c[keep]]).astype(np.int64).reshape(2, -1), int64)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """torch.tril_indices: the [2, N] coordinates of the lower triangle, row-major."""
    return _tri_indices("tril_indices", row, col, offset, dtype, upper=False)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """torch.triu_indices: the [2, N] coordinates of the upper triangle, row-major."""
    return _tri_indices("triu_indices", row, col, offset, dtype, upper=True)
