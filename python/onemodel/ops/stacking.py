"""Stacking, splitting and grids built on cat, views and gathers:
concat/concatenate, hstack/vstack/dstack/column_stack/row_stack,
tensor_split/hsplit/vsplit/dsplit, atleast_1d/2d/3d, meshgrid,
broadcast_tensors, cartesian_prod, combinations, ravel, take, rot90,
select_scatter, slice_scatter, narrow_copy, block_diag.

Nothing here sums except the backward of a gather (take, combinations),
which is the indexing scatter-add (docs/tensor.md, "Indexing"); every other result and gradient
is a copy or a view.
"""

from __future__ import annotations

from typing import Any

import builtins
import itertools

import numpy as np

from .. import _core, _shape
from .._kernels import clone_contiguous
from ..autograd.function import Function
from ..tensor import Tensor, int64
from . import views
from .join import cat, stack
from .operands import from_array


def _tensors(op: str, tensors) -> list:
    if isinstance(tensors, Tensor):
        raise TypeError(f"{op}(): argument 'tensors' must be a tuple or list of Tensors, not Tensor")
    ts = list(tensors)
    for t in ts:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): expected a sequence of Tensors, got an element of type {type(t).__name__}")
    return ts


def concat(tensors, dim: int = 0) -> Tensor:
    return cat(_tensors("concat", tensors), dim)


def concatenate(tensors, axis: int = 0) -> Tensor:
    return cat(_tensors("concatenate", tensors), axis)


def _atleast(n: int, t: Tensor) -> Tensor:
    if t.ndim >= n:
        return t
    if n == 1:
        return views.reshape(t, (1,))
    if n == 2:
        return views.reshape(t, (1,) * (2 - t.ndim) + tuple(t.shape))
    # 3: () -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1)
    if t.ndim == 0:
        return views.reshape(t, (1, 1, 1))
    if t.ndim == 1:
        return views.reshape(t, (1, t.shape[0], 1))
    return views.reshape(t, tuple(t.shape) + (1,))


def _atleast_many(n: int, args):
    if len(args) == 1 and not isinstance(args[0], Tensor):
        seq = _tensors(f"atleast_{n}d", args[0])
        return tuple(_atleast(n, t) for t in seq)
    for t in args:
        if not isinstance(t, Tensor):
            raise TypeError(f"atleast_{n}d(): expected Tensors, got {type(t).__name__}")
    if len(args) == 1:
        return _atleast(n, args[0])
    return tuple(_atleast(n, t) for t in args)


def atleast_1d(*tensors) -> Any:
    return _atleast_many(1, tensors)


def atleast_2d(*tensors) -> Any:
    return _atleast_many(2, tensors)


def atleast_3d(*tensors) -> Any:
    return _atleast_many(3, tensors)


def hstack(tensors) -> Tensor:
    ts = [_atleast(1, t) for t in _tensors("hstack", tensors)]
    if not ts:
        raise RuntimeError("hstack expects a non-empty TensorList")
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    ts = [_atleast(2, t) for t in _tensors("vstack", tensors)]
    if not ts:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat(ts, 0)


row_stack = vstack


def dstack(tensors) -> Tensor:
    ts = [_atleast(3, t) for t in _tensors("dstack", tensors)]
    if not ts:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return cat(ts, 2)


def column_stack(tensors) -> Tensor:
    ts = _tensors("column_stack", tensors)
    if not ts:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    ts = [views.reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in ts]
    return cat(ts, 1)


def _narrow(t: Tensor, dim: int, start: int, stop: int) -> Tensor:
    index = (slice(None),) * dim + (slice(start, stop),)
    return t[index]


#: The most parts tensor_split makes (2**28 tensors are tens of GB).
_MAX_PARTS = 2**28


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    """torch.tensor_split: `sections` parts (the first n % sections one
    longer) or the parts between the given indices; views."""
    if not isinstance(input, Tensor):
        raise TypeError(f"tensor_split: expected a Tensor, got {type(input).__name__}")
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _shape.norm_dim("tensor_split", dim, input.ndim)
    n = input.shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios.dtype is not int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have int64 dtype, but got {ios.dtype.name}")
        if ios.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor")
        ios = ios.item() if ios.ndim == 0 else [int(v) for v in ios.tolist()]
    if isinstance(ios, (int, np.integer)) and not isinstance(ios, bool):
        sections = int(ios)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        if sections > _MAX_PARTS:
            # Past the elements every part is an empty view; billions of
            # them are memory no process has (and minutes of Python loop).
            raise MemoryError(f"tensor_split: {sections} sections would be {sections} tensors (at most {_MAX_PARTS})")
        q, r = divmod(n, sections)
        bounds, start = [], 0
        for i in range(sections):
            size = q + (1 if i < r else 0)
            bounds.append((start, start + size))
            start += size
    else:
        idx = [int(i) for i in ios]
        bounds, start = [], 0
        for i in idx + [n]:
            # Python slicing of [previous index, index): negative counts from the end.
            lo = builtins.min(builtins.max(start + n if start < 0 else start, 0), n)
            hi = builtins.min(builtins.max(i + n if i < 0 else i, 0), n)
            bounds.append((lo, builtins.max(lo, hi)))
            start = i
    return tuple(_narrow(input, d, a, b) for a, b in bounds)


def _xsplit(op: str, input: Tensor, ios, dim: int, min_ndim: int) -> tuple:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}")
    if input.ndim < min_ndim:
        raise RuntimeError(f"torch.{op} requires a tensor with at least {min_ndim} dimension, but got a tensor with {input.ndim} dimensions!")
    if isinstance(ios, (int, np.integer)) and not isinstance(ios, bool):
        if ios == 0 or input.shape[dim] % ios:
            raise RuntimeError(
                f"torch.{op} attempted to split along dimension {dim}, but the size of the dimension {input.shape[dim]} "
                f"is not divisible by the split_size {ios}!"
            )
    return tensor_split(input, ios, dim)


def hsplit(input: Tensor, indices_or_sections) -> tuple:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("hsplit", input)
    return _xsplit("hsplit", input, indices_or_sections, 0 if input.ndim == 1 else 1, 1)


def vsplit(input: Tensor, indices_or_sections) -> tuple:
    return _xsplit("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: Tensor, indices_or_sections) -> tuple:
    return _xsplit("dsplit", input, indices_or_sections, 2, 3)


def broadcast_tensors(*tensors) -> tuple:
    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        tensors = tuple(tensors[0])
    ts = _tensors("broadcast_tensors", tensors)
    try:
        shape = _shape.broadcast_shapes("broadcast_tensors", *(tuple(t.shape) for t in ts))
    except ValueError as e:
        raise RuntimeError(str(e)) from None
    return tuple(t if tuple(t.shape) == shape else views.expand(t, shape) for t in ts)


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """torch.meshgrid: views of each 1-D (or 0-D) input expanded over the
    grid; ``indexing`` 'ij' (torch's default) or 'xy' (first two swapped)."""
    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        tensors = tuple(tensors[0])
    ts = _tensors("meshgrid", tensors)
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing is None:
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in ts:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {tuple(t.shape)}")
    if len({t.dtype for t in ts}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    flat = [views.reshape(t, (-1,)) for t in ts]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = tuple(t.shape[0] for t in flat)
    out = []
    for i, t in enumerate(flat):
        sh = [1] * len(flat)
        sh[i] = shape[i]
        out.append(views.expand(views.reshape(t, tuple(sh)), shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def cartesian_prod(*tensors) -> Tensor:
    ts = _tensors("cartesian_prod", tensors)
    for t in ts:
        if t.ndim != 1:
            raise RuntimeError(f"cartesian_prod expects 1D tensors, got shape {tuple(t.shape)}")
    if len(ts) == 1:
        return ts[0]
    grids = meshgrid(*ts, indexing="ij")
    return stack([views.reshape(g, (-1,)) for g in grids], dim=1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """torch.combinations: the r-length combinations of a 1-D tensor's
    elements (itertools' order), as rows."""
    if not isinstance(input, Tensor):
        raise TypeError(f"combinations: expected a Tensor, got {type(input).__name__}")
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {tuple(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input[:0]
    fn = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(fn(range(input.shape[0]), r)), np.int64).reshape(-1, r)
    return input[from_array(idx, int64)]


def ravel(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("ravel", input)
    return views.reshape(input, (-1,))


def take(input: Tensor, index: Tensor) -> Tensor:
    """torch.take: the flattened input at `index` (int64, any shape)."""
    if not isinstance(input, Tensor) or not isinstance(index, Tensor):
        raise TypeError("take(): expected Tensors for input and index")
    if index.dtype is not int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {index.dtype.name}")
    flat = views.reshape(input, (-1,))
    n = flat.shape[0]
    ix = index.numpy(force=True)
    if ix.size and (ix.min() < -n or ix.max() >= n):
        bad = int(ix[(ix < -n) | (ix >= n)].ravel()[0])
        raise IndexError(f"take(): index {bad} out of range for tensor of size {tuple(input.shape)}.")
    return flat[views.reshape(index, (-1,))].reshape(tuple(index.shape))


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """torch.rot90: rotate by 90° k times from dims[0] towards dims[1]."""
    if not isinstance(input, Tensor):
        raise TypeError(f"rot90: expected a Tensor, got {type(input).__name__}")
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0 = _shape.norm_dim("rot90", dims[0], input.ndim)
    d1 = _shape.norm_dim("rot90", dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k = k % 4
    if k == 1:
        return views.transpose(input.flip([d1]), d0, d1)
    if k == 2:
        return input.flip([d0, d1])
    if k == 3:
        return views.transpose(input.flip([d0]), d0, d1)
    return input.clone()


class RegionScatter(Function):
    """out = input with `src` written at a basic-index region (a view).
    Backward: input gets g with the region zeroed, src g's region."""

    def forward(self, a, src, index) -> Tensor:
        self.index = index
        out = clone_contiguous(a)
        target = out[index]
        if tuple(src.shape) != tuple(target.shape):
            raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, slice size = {list(target.shape)}")
        _core.copy_(target, src)
        return out

    def backward(self, g) -> Tensor:
        ga = gs = None
        if self.needs_input_grad[1]:
            gs = clone_contiguous(g[self.index])
        if self.needs_input_grad[0]:
            ga = clone_contiguous(g)
            _core.fill_(ga[self.index], 0.0)
        return ga, gs


def _scatter_region(op: str, input: Tensor, src: Tensor, index) -> Tensor:
    if not isinstance(input, Tensor) or not isinstance(src, Tensor):
        raise TypeError(f"{op}: expected Tensors for input and src")
    if src.dtype is not input.dtype:
        raise RuntimeError(f"{op}: expected src to have the dtype of input ({input.dtype.name}), got {src.dtype.name}")
    return RegionScatter.apply(input, src, index)


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    d = _shape.norm_dim("select_scatter", dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select_scatter(): index {index} out of range for tensor of size {tuple(input.shape)} at dimension {dim}")
    return _scatter_region("select_scatter", input, src, (slice(None),) * d + (index % n,))


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("slice_scatter", input)
    d = _shape.norm_dim("slice_scatter", dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return _scatter_region("slice_scatter", input, src, (slice(None),) * d + (slice(start, end, step),))


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    from .rearrange import narrow

    return views.contiguous(narrow(input, dim, start, length)).clone()


def block_diag(*tensors) -> Tensor:
    """torch.block_diag: the inputs (0-D, 1-D as a row, 2-D) on the diagonal
    of a zero matrix (constant pads, then one cat)."""
    ts = _tensors("block_diag", tensors)
    mats = []
    for i, t in enumerate(ts):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.ndim} dimensions")
        mats.append(views.reshape(t, (1, 1)) if t.ndim == 0 else views.reshape(t, (1, t.shape[0])) if t.ndim == 1 else t)
    if not mats:
        return Tensor._empty((1, 0))
    dtypes = {m.dtype for m in mats}
    if len(dtypes) > 1:
        from .convert import convert
        from ..tensor import float32 as f32

        mats = [m if m.dtype is f32 else convert(m, f32) for m in mats]
    width = builtins.sum(m.shape[1] for m in mats)
    from .shape_ops import pad

    rows, col = [], 0
    for m in mats:
        rows.append(pad(m, (col, width - col - m.shape[1])))
        col += m.shape[1]
    return cat(rows, 0)
