"""Indexing as torch: integer lists and int64 tensors as indices (one or
several dims, broadcast together), bool masks, negative indices, and
assignment through all of them; ``gather``, ``take_along_dim``,
``index_select``, ``masked_select``, ``nonzero`` and the scatters
(``scatter``, ``scatter_add``, ``scatter_reduce``, ``index_add``,
``index_copy``, ``index_fill``, ``index_put``, ``masked_scatter``).

Rules (docs/tensor.md):

* An index is split into its basic part (ints, slices, ``None``, ``...``,
  Python bools), which selects a view, and its advanced part (integer
  arrays and bool masks, a k-dim mask standing for k integer arrays, its
  nonzero positions). Integer scalars are basic, as in torch (not NumPy):
  ``x[0, :, [1, 2]]`` has shape (n1, 2). The advanced arrays broadcast
  together; their dims replace the indexed dims where those are adjacent,
  else they go first.
* Reading copies (a gather); its backward is a scatter-add whose sum over
  repeated indices is one double chain per element, over the positions of
  the indexed result in increasing order, rounded once (``np.add.at`` on
  float64 applies its indices in that order).
* Writing (``x[idx] = v``, ``scatter``, ``index_copy``): where an index
  repeats, the last write in index order wins (NumPy's sequential
  assignment). ``x[idx] += v`` reads ``x[idx]`` first, so each position
  gets ``x + v`` once, however often it repeats (as torch and NumPy);
  ``index_put_(..., accumulate=True)``, ``index_add_`` and
  ``scatter_add`` accumulate instead: per element one double chain from
  the old value over the sources in increasing source position, rounded
  once.

Indices must be int64 (or bool masks); out-of-range ones raise IndexError
naming the dim and the size, before anything is written.
"""

from __future__ import annotations

import numpy as np

from .. import _core, _shape
from .._kernels import clone_contiguous
from ..tensor import Tensor, float32
from .gather import (  # noqa: F401  (ops.index keeps the names of the operators in ops/gather.py and ops/scatter.py)
    argwhere, gather, index_select, masked_select, nonzero, one_hot, take_along_dim,
)
from .scatter import (  # noqa: F401
    ScatterReduce, index_add, index_add_, index_copy, index_copy_, index_fill, index_fill_, masked_scatter,
    masked_scatter_, scatter, scatter_, scatter_add, scatter_add_, scatter_reduce, scatter_reduce_,
)
from .subscript import _region_index, numpy_index, parse
from .take_put import Put, Take, _cast_value, _from_numpy, _scatter_add64  # noqa: F401  (Take, _from_numpy: imported from ops.index)
from .views import Index, apply_index


# ---------------------------------------------------------------------------
# t[index] and t[index] = value
# ---------------------------------------------------------------------------

def getitem(input: Tensor, index) -> Tensor:
    spec, adv = parse("getitem", input._shape, index)
    view = Index.apply(input, spec)
    if not adv:
        return view
    return Take.apply(view, numpy_index(view.ndim, adv))


def setitem(input: Tensor, index, value) -> None:
    """``t[index] = value``: an in-place write (value broadcast to the
    indexed shape and cast to t's dtype), bumping t's version."""
    from .inplace import write_through

    spec, adv = parse("setitem", input._shape, index)
    v = _cast_value(value, input.dtype, "setitem")
    if not adv:
        write_through(input, "setitem", lambda t: _assign_basic(t, spec, v), lambda t: _put_basic(t, spec, v), (v,))
        return
    write_through(input, "setitem", lambda t: _assign_adv(t, spec, adv, v), lambda t: _put_adv(t, spec, adv, v), (v,))


def _assign_basic(t: Tensor, spec, v: Tensor) -> None:
    shape, strides, offset = apply_index(t._shape, t._strides, t._offset, spec)
    target = t._view(shape, strides, offset)
    src = v._view(shape, _shape.expand_strides("setitem", v._shape, v._strides, shape)) if v._shape != shape else v
    if v._storage is t._storage:
        src = clone_contiguous(src)
    _core.copy_(target, src)


def _assign_adv(t: Tensor, spec, adv, v: Tensor) -> None:
    shape, strides, offset = apply_index(t._shape, t._strides, t._offset, spec)
    view = t._view(shape, strides, offset).numpy(force=True)
    idx = numpy_index(len(shape), adv)
    vals = v.numpy(force=True)
    if v._storage is t._storage:
        vals = np.array(vals, copy=True)
    try:
        view[idx] = vals
    except ValueError:
        raise ValueError(f"setitem: a value of shape {tuple(v.shape)} cannot be broadcast to the indexed shape {view[idx].shape}") from None


def _put_basic(t: Tensor, spec, v: Tensor) -> Tensor:
    """Out of place: t with the basic region replaced by v (differentiable)."""
    region = _region_index(t.shape, spec, {})
    return Put.apply(t, v, region, False)


def _put_adv(t: Tensor, spec, adv, v: Tensor) -> Tensor:
    region = _region_index(t.shape, spec, adv)
    return Put.apply(t, v, region, False)


def index_put(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """Out of place ``index_put``: ``indices`` is a tuple of index tensors
    (None for a full slice)."""
    idx = tuple(slice(None) if i is None else i for i in indices)
    spec, adv = parse("index_put", input.shape, idx)
    v = _cast_value(values, input.dtype, "index_put")
    return Put.apply(input, v, _region_index(input.shape, spec, adv), bool(accumulate))


def index_put_(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    from .inplace import write_through

    idx = tuple(slice(None) if i is None else i for i in indices)
    spec, adv = parse("index_put_", input.shape, idx)
    v = _cast_value(values, input.dtype, "index_put_")
    region = _region_index(input.shape, spec, adv)

    def assign(t):
        o = t.numpy(force=True)
        vals = np.broadcast_to(v.numpy(force=True), o[region].shape)
        if accumulate:
            if t.dtype is float32:
                o[...] = _scatter_add64(o.shape, region, vals, init=o)
            else:
                np.add.at(o, region, vals.astype(o.dtype))
        else:
            o[region] = vals

    write_through(input, "index_put_", assign, lambda t: Put.apply(t, v, region, bool(accumulate)), (v,))
    return input
