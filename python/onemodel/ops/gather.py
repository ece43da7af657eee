"""Reading along a dim by index: ``gather``, ``take_along_dim``,
``index_select``, ``masked_select``, ``nonzero``/``argwhere`` and
``one_hot`` (rules in ops/index.py's docstring)."""

from __future__ import annotations

import builtins

import numpy as np

from .. import _shape
from ..tensor import Tensor, int64
from .subscript import numpy_index, parse
from .take_put import Take, _from_numpy


def _check_index(op: str, index, floor: int = 0) -> np.ndarray:
    if not isinstance(index, Tensor) or index.dtype is not int64:
        raise TypeError(f"{op}: index must be an int64 tensor, got {getattr(index, 'dtype', type(index).__name__)}")
    return index.numpy(force=True)


def _along(op: str, input: Tensor, dim: int, index: np.ndarray, shape: tuple | None = None) -> tuple:
    """The NumPy index tuple of a gather/scatter along `dim`: `index` in
    dim, the element's own coordinate in every other dim."""
    shape = index.shape if shape is None else shape
    n = input.shape[dim] if input.ndim else 1
    if index.size and (index.min() < -n or index.max() >= n):
        bad = int(index[(index < -n) | (index >= n)].ravel()[0])
        raise IndexError(f"{op}: index {bad} is out of bounds for dimension {dim} with size {n}")
    index = np.where(index < 0, index + n, index)
    grids = np.indices(shape, sparse=True)
    return tuple(index if d == dim else grids[d] for d in range(len(shape)))


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j][k] = input[index[i][j][k]][j][k]`` (dim 0), index of the
    input's rank with ``index.size(d) <= input.size(d)`` for d ≠ dim."""
    ix = _check_index("gather", index)
    d = _shape.norm_dim("gather", dim, builtins.max(input.ndim, 1))
    if ix.ndim != builtins.max(input.ndim, 1) and not (input.ndim == 0 and ix.ndim <= 1):
        raise ValueError(f"gather: index of shape {tuple(index.shape)} must have the input's {input.ndim} dimensions (shape {tuple(input.shape)})")
    for k in range(ix.ndim):
        if k != d and input.ndim and ix.shape[k] > input.shape[k]:
            raise ValueError(f"gather: index of shape {tuple(index.shape)} is larger than the input of shape {tuple(input.shape)} in dimension {k}")
    if input.ndim == 0:
        return Take.apply(input.reshape(1), (np.where(ix < 0, ix + 1, ix).reshape(ix.shape),)).reshape(index.shape)
    return Take.apply(input, _along("gather", input, d, ix))


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """torch.take_along_dim: gather with the index broadcast against the
    input (dims other than ``dim``); ``dim=None`` indexes the flattened input."""
    ix = _check_index("take_along_dim", indices)
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    d = _shape.norm_dim("take_along_dim", dim, input.ndim)
    if ix.ndim != input.ndim:
        raise ValueError(f"take_along_dim: indices of shape {tuple(indices.shape)} must have the input's {input.ndim} dimensions")
    a_shape = list(input.shape)
    a_shape[d] = 1
    i_shape = list(ix.shape)
    i_shape[d] = 1
    b = _shape.broadcast_shapes("take_along_dim", tuple(a_shape), tuple(i_shape))
    full_in = list(b)
    full_in[d] = input.shape[d]
    full_ix = list(b)
    full_ix[d] = ix.shape[d]
    src = input.expand(tuple(full_in)) if tuple(full_in) != tuple(input.shape) else input
    ixb = np.broadcast_to(ix, tuple(full_ix))
    return Take.apply(src, _along("take_along_dim", src, d, ixb))


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    ix = _check_index("index_select", index)
    if ix.ndim > 1:
        raise ValueError(f"index_select: index must be 1-D, got shape {tuple(index.shape)}")
    d = _shape.norm_dim("index_select", dim, builtins.max(input.ndim, 1))
    spec, adv = parse("index_select", input.shape, (slice(None),) * d + (ix.reshape(-1),))
    return Take.apply(input, numpy_index(input.ndim, adv))


def masked_select(input: Tensor, mask) -> Tensor:
    """The elements where the (broadcast) bool mask is True, as a 1-D tensor
    in row-major order."""
    m = mask.numpy(force=True) if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise TypeError(f"masked_select: mask must be a bool tensor, got {m.dtype}")
    shape = _shape.broadcast_shapes("masked_select", input.shape, m.shape)
    src = input.expand(shape) if tuple(input.shape) != shape else input
    return Take.apply(src, np.nonzero(np.broadcast_to(m, shape)))


def nonzero(input: Tensor, *, as_tuple: bool = False):
    """The indices of the nonzero elements, row-major: an [n, ndim] int64
    tensor, or (as_tuple) one 1-D tensor per dim."""
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("nonzero", input)
    a = input.numpy(force=True)
    nz = np.nonzero(a) if a.ndim else np.nonzero(a.reshape(1))
    if as_tuple:
        return tuple(_from_numpy(p.astype(np.int64), int64) for p in nz)
    return _from_numpy(np.stack(nz, axis=1).astype(np.int64) if a.ndim else np.zeros((len(nz[0]), 0), np.int64), int64)


def argwhere(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("argwhere", input)
    return nonzero(input)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """torch.nn.functional.one_hot: int64 [..., num_classes] with a 1 at each
    index (``num_classes=-1``: one more than the largest index)."""
    ix = _check_index("one_hot", tensor)
    if ix.size and ix.min() < 0:
        raise ValueError("one_hot: class values must be non-negative")
    n = int(ix.max()) + 1 if num_classes == -1 and ix.size else int(num_classes)
    if num_classes == -1 and not ix.size:
        raise ValueError("one_hot: cannot infer num_classes from an empty tensor")
    if ix.size and ix.max() >= n:
        raise ValueError(f"one_hot: class value {int(ix.max())} is out of range for num_classes={n}")
    out = np.zeros(ix.shape + (n,), np.int64)
    np.put_along_axis(out, ix[..., None], 1, axis=-1)
    return _from_numpy(out, int64)
