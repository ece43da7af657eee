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

import builtins
import numbers

import numpy as np

from .. import _core, _shape
from .._kernels import clone_contiguous, sum_to
from .._numpy_exact import canonical_nan, ieee, ieee_method
from ..autograd.function import Function
from ..tensor import Tensor, float32, int64
from .views import Index, apply_index


def _from_numpy(a: np.ndarray, dt) -> Tensor:
    out = Tensor._empty(a.shape, dt)
    if a.size:
        out.numpy(force=True)[...] = a
    return out


# ---------------------------------------------------------------------------
# Index parsing
# ---------------------------------------------------------------------------

def _index_array(op: str, item) -> np.ndarray | None:
    """An advanced index item as a NumPy int64 or bool array, or None if the
    item is basic."""
    if isinstance(item, Tensor):
        if item.dtype is float32:
            raise IndexError(f"{op}: tensors used as indices must be int64 or bool tensors, got float32")
        return item.numpy(force=True)
    if isinstance(item, (list, np.ndarray)) or (isinstance(item, tuple) and False):
        a = np.asarray(item.numpy(force=True) if isinstance(item, Tensor) else [
            x.item() if isinstance(x, Tensor) else x for x in item] if isinstance(item, list) else item)
        if a.size == 0 and a.dtype.kind == "f":
            a = a.astype(np.int64)
        if a.dtype == np.bool_:
            return a
        if a.dtype.kind not in "iu":
            raise IndexError(f"{op}: an index array must hold integers or bools, got {a.dtype}")
        return a.astype(np.int64)
    return None


def _basic(op: str, shape: tuple, index: tuple):
    """The spec of an index made only of ints, slices, None and one
    Ellipsis (the common case, parsed without the general machinery), or
    None if it holds anything else."""
    consumed = 0
    ellipsis = False
    for item in index:
        t = type(item)
        if t is int or t is slice:
            consumed += 1
        elif item is Ellipsis:
            if ellipsis:
                return None
            ellipsis = True
        elif item is not None:
            return None
    if consumed > len(shape):
        raise IndexError(f"{op}: too many indices for a tensor of {len(shape)} dimensions (shape {tuple(shape)})")
    spec = []
    dim = 0
    for item in index:
        if item is None:
            spec.append(("new",))
        elif item is Ellipsis:
            for _ in range(len(shape) - consumed):
                spec.append(("slice", 0, shape[dim], 1))
                dim += 1
        elif type(item) is int:
            n = shape[dim]
            if item < -n or item >= n:
                raise IndexError(f"{op}: index {item} is out of bounds for dimension {dim} with size {n}")
            spec.append(("int", item % n))
            dim += 1
        else:
            n = shape[dim]
            step = 1 if item.step is None else int(item.step)
            if step <= 0:
                raise ValueError(f"{op}: slice step must be positive, got {step}")
            start, stop, _ = item.indices(n)
            spec.append(("slice", start, stop if stop > start else start, step))
            dim += 1
    while dim < len(shape):
        spec.append(("slice", 0, shape[dim], 1))
        dim += 1
    return tuple(spec)


def _sequence_as_tuple(index: list) -> bool:
    """torch's (and old NumPy's) legacy rule: a list index of fewer than 32
    items holding a sequence, tensor, slice, None or Ellipsis is read as a
    tuple (``x[[[0], [1]]]`` is ``x[[0], [1]]``; torch warns that this
    changes in a future release)."""
    if len(index) >= 32:
        return False
    return any(isinstance(i, (list, tuple, slice, Tensor, np.ndarray)) or i is None or i is Ellipsis for i in index)


def parse(op: str, shape: tuple, index):
    """Split `index` into a basic spec (for views.apply_index) and the
    advanced arrays keyed by their dim in the basic view. Returns
    (spec, adv) with adv a dict {view_dim: int64 array} (bools expanded)."""
    if isinstance(index, list) and _sequence_as_tuple(index):
        index = tuple(index)
    if not isinstance(index, tuple):
        index = (index,)
    spec = _basic(op, shape, index)
    if spec is not None:
        return spec, {}
    items = []
    for item in index:
        if isinstance(item, Tensor) and item.ndim == 0 and item.dtype is not float32:
            item = item.item()  # a 0-d int64/bool tensor acts as a number
        if isinstance(item, np.generic) and item.dtype.kind in "iub":
            item = item.item()
        items.append(item)
    # Expand the ellipsis.
    consumed = 0
    for item in items:
        if item is None or item is Ellipsis or isinstance(item, bool):
            continue
        a = _index_array(op, item)
        consumed += a.ndim if a is not None and a.dtype == np.bool_ else 1
    if builtins.sum(1 for i in items if i is Ellipsis) > 1:
        raise IndexError(f"{op}: an index can only have a single ellipsis ('...')")
    if consumed > len(shape):
        raise IndexError(f"{op}: too many indices for a tensor of {len(shape)} dimensions (shape {tuple(shape)})")
    expanded = []
    for item in items:
        if item is Ellipsis:
            expanded.extend([slice(None)] * (len(shape) - consumed))
        else:
            expanded.append(item)
    spec, adv = [], {}
    dim = 0  # dim of `shape` being consumed
    vdim = 0  # dim of the basic view being produced
    for item in expanded:
        if item is None:
            spec.append(("new",))
            vdim += 1
            continue
        if isinstance(item, bool):
            # torch: a Python bool is a new axis indexed by [0] (True) or [] (False).
            spec.append(("new",))
            adv[vdim] = np.zeros(1 if item else 0, np.int64)
            vdim += 1
            continue
        if isinstance(item, slice):
            n = shape[dim]
            step = 1 if item.step is None else int(item.step)
            if step <= 0:
                raise ValueError(f"{op}: slice step must be positive, got {step}")
            start, stop, _ = slice(item.start, item.stop, step).indices(n)
            spec.append(("slice", start, builtins.max(stop, start), step))
            dim += 1
            vdim += 1
            continue
        if isinstance(item, numbers.Integral):
            n = shape[dim]
            i = int(item)
            if i < -n or i >= n:
                raise IndexError(f"{op}: index {i} is out of bounds for dimension {dim} with size {n}")
            spec.append(("int", i % n))
            dim += 1
            continue
        a = _index_array(op, item)
        if a is None:
            raise IndexError(
                f"{op}: only integers, slices (`:`), ellipsis (`...`), None, bools and int64 or bool "
                f"tensors/lists are valid indices (got {type(item).__name__})"
            )
        if a.dtype == np.bool_:
            k = builtins.max(a.ndim, 1)
            if a.ndim == 0:  # a 0-d bool array: as a Python bool
                spec.append(("new",))
                adv[vdim] = np.zeros(1 if bool(a) else 0, np.int64)
                vdim += 1
                continue
            if tuple(a.shape) != tuple(shape[dim : dim + k]):
                raise IndexError(
                    f"{op}: the shape of the mask {list(a.shape)} at index {dim} does not match the shape "
                    f"of the indexed tensor {list(shape)} at index {dim}"
                )
            for j, pos in enumerate(np.nonzero(a)):
                spec.append(("slice", 0, shape[dim + j], 1))
                adv[vdim] = pos.astype(np.int64)
                vdim += 1
            dim += k
            continue
        n = shape[dim]
        if a.size and (a.min() < -n or a.max() >= n):
            bad = int(a[(a < -n) | (a >= n)].ravel()[0])
            raise IndexError(f"{op}: index {bad} is out of bounds for dimension {dim} with size {n}")
        spec.append(("slice", 0, n, 1))
        adv[vdim] = np.where(a < 0, a + n, a)
        dim += 1
        vdim += 1
    while dim < len(shape):
        spec.append(("slice", 0, shape[dim], 1))
        dim += 1
    if adv:
        try:
            arrays = np.broadcast_arrays(*adv.values())
        except ValueError:
            shapes = ", ".join(str(list(a.shape)) for a in adv.values())
            raise IndexError(f"{op}: indexing tensors could not be broadcast together with shapes {shapes}") from None
        adv = dict(zip(adv.keys(), arrays))
    return tuple(spec), adv


def numpy_index(ndim: int, adv: dict) -> tuple:
    """The NumPy index over the basic view: the advanced arrays at their
    dims, full slices elsewhere (NumPy then places the broadcast dims as
    torch does: in place when adjacent, else first)."""
    return tuple(adv.get(d, slice(None)) for d in range(ndim))


# ---------------------------------------------------------------------------
# Gather and scatter primitives
# ---------------------------------------------------------------------------

def _scatter_add64(shape: tuple, idx: tuple, g: np.ndarray, init: np.ndarray | None = None) -> np.ndarray:
    """`init` (zeros by default) plus g's values added at `idx`, each element
    one double chain in the order of g's positions, rounded once."""
    with ieee():
        buf = np.zeros(shape, np.float64) if init is None else init.astype(np.float64)
        np.add.at(buf, idx, g.astype(np.float64))
        out = buf.astype(np.float32)
    return canonical_nan(out)


class Take(Function):
    """``input[idx]`` for a NumPy index tuple (arrays and slices): a copy.
    Backward: the scatter-add of the gradient into zeros of the input's
    shape (double chains in increasing result position)."""

    def forward(self, a, idx):
        self.idx = idx
        r = a.numpy(force=True)[idx]
        return _from_numpy(np.ascontiguousarray(r), a.dtype)

    def backward(self, g):
        return _from_numpy(_scatter_add64(self.input_meta[0][0], self.idx, g.numpy(force=True)), float32)


class Put(Function):
    """``out = input.clone(); out[idx] = values`` (``accumulate``: ``+=``
    with repeats summed). Backward: the input gets g with the written
    positions zeroed (all of g when accumulating); the values get g at the
    indexed positions, summed back to their shape."""

    def forward(self, a, v, idx, accumulate):
        self.idx, self.accumulate = idx, accumulate
        out = clone_contiguous(a)
        o = out.numpy(force=True)
        vals = v.numpy(force=True)
        target_shape = o[idx].shape
        self.vshape = tuple(v.shape)
        if accumulate:
            if a.dtype is float32:
                o[...] = _scatter_add64(o.shape, idx, np.broadcast_to(vals, target_shape), init=o)
            else:
                np.add.at(o, idx, np.broadcast_to(vals.astype(o.dtype), target_shape))
        else:
            o[idx] = np.broadcast_to(vals, target_shape)
        return out

    def backward(self, g):
        ga = gv = None
        gn = g.numpy(force=True)
        if self.needs_input_grad[0]:
            if self.accumulate:
                ga = g
            else:
                z = np.array(gn, copy=True)
                z[self.idx] = 0.0
                ga = _from_numpy(z, float32)
        if self.needs_input_grad[1]:
            picked = _from_numpy(np.ascontiguousarray(gn[self.idx]), float32)
            gv = sum_to(picked, _broadcast_undo_shape(picked.shape, self.vshape))
            gv = gv._view(self.vshape, _shape.contiguous_strides(self.vshape))
        return ga, gv


def _broadcast_undo_shape(full: tuple, small: tuple) -> tuple:
    return tuple(small)


def _cast_value(value, dt, op: str) -> Tensor:
    """An assigned value as a tensor of dtype `dt` (numbers and other dtypes
    converted as torch casts them)."""
    if isinstance(value, Tensor):
        if value.dtype is not dt:
            if value.requires_grad and dt is float32:
                return value
            from .convert import convert

            return convert(value, dt)
        return value
    arr = np.asarray(value)
    if arr.dtype == object:
        raise TypeError(f"{op}: cannot assign a value of type {type(value).__name__}")
    out = Tensor._empty(arr.shape, dt)
    with np.errstate(invalid="ignore", over="ignore"):
        np.copyto(out.numpy(force=True), arr, casting="unsafe")
    return out


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


def _spec_index(ndim: int, spec) -> tuple:
    """The basic spec as a NumPy index into the full tensor."""
    out = []
    for s in spec:
        if s[0] == "new":
            out.append(None)
        elif s[0] == "int":
            out.append(s[1])
        else:
            out.append(slice(s[1], s[2], s[3]))
    return tuple(out)


def _put_basic(t: Tensor, spec, v: Tensor) -> Tensor:
    """Out of place: t with the basic region replaced by v (differentiable)."""
    region = _region_index(t.shape, spec, {})
    return Put.apply(t, v, region, False)


def _put_adv(t: Tensor, spec, adv, v: Tensor) -> Tensor:
    region = _region_index(t.shape, spec, adv)
    return Put.apply(t, v, region, False)


def _region_index(shape: tuple, spec, adv) -> tuple:
    """A NumPy index into the full tensor equal to the basic view followed by
    the advanced part: applied to an array of `shape`, it selects the same
    elements in the same order as ``view[numpy_index(adv)]``."""
    basic = _spec_index(len(shape), spec)
    if not adv:
        return basic
    # Compose through explicit coordinates: index an array of flat element
    # positions with the two steps, then address those positions.
    flat = np.arange(_shape.numel(shape), dtype=np.int64).reshape(shape)
    v = flat[basic]
    pos = v[numpy_index(v.ndim, adv)]
    return np.unravel_index(pos, shape) if len(shape) else ()


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


# ---------------------------------------------------------------------------
# gather, take_along_dim, index_select, masked_select, nonzero
# ---------------------------------------------------------------------------

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
    a = input.numpy(force=True)
    nz = np.nonzero(a) if a.ndim else np.nonzero(a.reshape(1))
    if as_tuple:
        return tuple(_from_numpy(p.astype(np.int64), int64) for p in nz)
    return _from_numpy(np.stack(nz, axis=1).astype(np.int64) if a.ndim else np.zeros((len(nz[0]), 0), np.int64), int64)


def argwhere(input: Tensor) -> Tensor:
    return nonzero(input)


# ---------------------------------------------------------------------------
# Scatters
# ---------------------------------------------------------------------------

def _scatter_index(op: str, input: Tensor, dim: int, index: Tensor, src_shape: tuple | None) -> tuple:
    ix = _check_index(op, index)
    d = _shape.norm_dim(op, dim, builtins.max(input.ndim, 1))
    if ix.ndim != input.ndim:
        raise ValueError(f"{op}: index of shape {tuple(index.shape)} must have the input's {input.ndim} dimensions")
    for k in range(ix.ndim):
        if k != d and ix.shape[k] > input.shape[k]:
            raise ValueError(f"{op}: index of shape {tuple(index.shape)} is larger than the input {tuple(input.shape)} in dimension {k}")
        if src_shape is not None and ix.shape[k] > src_shape[k]:
            raise ValueError(f"{op}: index of shape {tuple(index.shape)} is larger than the source {tuple(src_shape)} in dimension {k}")
    return d, _along(op, input, d, ix)


def _src_values(op: str, input: Tensor, src, index: Tensor) -> Tensor:
    """The source restricted to the index's shape (its leading corner, as torch)."""
    if not isinstance(src, Tensor):
        t = Tensor._empty(tuple(index.shape), input.dtype)
        _core.fill_(t, src)
        return t
    if src.ndim != index.ndim:
        raise ValueError(f"{op}: src of shape {tuple(src.shape)} must have the index's {index.ndim} dimensions")
    if tuple(src.shape) == tuple(index.shape):
        return src
    return src[tuple(slice(0, n) for n in index.shape)]


def scatter(input: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce: str | None = None) -> Tensor:
    """``out = input.clone(); out[index[i][j]][j] = src[i][j]`` (dim 0); a
    repeated target keeps the last source in index order. ``reduce='add'``
    / ``'multiply'`` combine instead (torch's deprecated form)."""
    if src is None:
        src = value
    if reduce is not None:
        return scatter_reduce(input, dim, index, src if isinstance(src, Tensor) else _src_values("scatter", input, src, index),
                              {"add": "sum", "multiply": "prod"}[reduce])
    d, idx = _scatter_index("scatter", input, dim, index, src.shape if isinstance(src, Tensor) else None)
    v = _src_values("scatter", input, src, index)
    return Put.apply(input, v, idx, False)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """``out = input.clone(); out[index[i][j]][j] += src[i][j]``: per element
    one double chain from the old value over its sources in increasing
    source position, rounded once."""
    d, idx = _scatter_index("scatter_add", input, dim, index, src.shape)
    return Put.apply(input, _src_values("scatter_add", input, src, index), idx, True)


class ScatterReduce(Function):
    """scatter_reduce for 'sum', 'prod', 'mean', 'amax', 'amin' (double
    arithmetic in source order for sum/prod/mean; comparisons for the
    extrema). Backward as torch: sum passes g; mean g/count; amax/amin share
    g evenly among the elements equal to the result; prod g·out/x
    (recomputed without the element where it is 0)."""

    @ieee_method
    def forward(self, a, v, idx, reduce, include_self):
        self.idx, self.reduce, self.include_self = idx, reduce, include_self
        x = a.numpy(force=True)
        vals = v.numpy(force=True)
        touched = np.zeros(x.shape, bool)
        touched[idx] = True
        self.touched = touched
        if a.dtype is float32:
            with ieee(), np.errstate(all="ignore"):
                out = self._reduce64(x.astype(np.float64), vals.astype(np.float64), idx, touched)
                res = canonical_nan(out.astype(np.float32))
        else:
            res = self._reduce64(x.copy(), vals, idx, touched).astype(x.dtype)
        out_t = _from_numpy(res, a.dtype)
        self.save_for_backward(a, v, out_t)
        return out_t

    def _reduce64(self, x, vals, idx, touched):
        r = self.reduce
        ident = {"sum": 0, "mean": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}[r]
        buf = x.copy()
        if not self.include_self:
            if np.issubdtype(buf.dtype, np.integer) and r in ("amax", "amin"):
                ident = np.iinfo(buf.dtype).min if r == "amax" else np.iinfo(buf.dtype).max
            buf[touched] = ident
        ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[r]
        ufunc.at(buf, idx, vals)
        if r == "mean":
            count = np.zeros(x.shape, np.int64)
            np.add.at(count, idx, 1)
            if self.include_self:
                count += 1
            count = np.maximum(count, 1)
            buf = buf / count if np.issubdtype(buf.dtype, np.floating) else buf // count
            self.count = count
        return buf

    @ieee_method
    def backward(self, g):
        a, v, out = self.saved_tensors
        r = self.reduce
        gn = g.numpy(force=True).astype(np.float64)
        x = a.numpy(force=True).astype(np.float64)
        vals = v.numpy(force=True).astype(np.float64)
        o = out.numpy(force=True).astype(np.float64)
        idx = self.idx
        with ieee(), np.errstate(all="ignore"):
            if r == "sum":
                gx = gn if self.include_self else np.where(self.touched, 0.0, gn)
                gv = gn[idx]
            elif r == "mean":
                gx = gn / self.count if self.include_self else np.where(self.touched, 0.0, gn)
                gv = (gn / self.count)[idx]
            elif r in ("amax", "amin"):
                hit_x = (x == o) & (self.touched if not self.include_self else True)
                if not self.include_self:
                    hit_x = np.zeros(x.shape, bool) | ((x == o) & ~self.touched)
                hit_v = vals == o[idx]
                count = hit_x.astype(np.float64)
                np.add.at(count, idx, hit_v.astype(np.float64))
                share = gn / np.maximum(count, 1)
                gx = np.where(hit_x, share, 0.0)
                gv = np.where(hit_v, share[idx], 0.0)
            else:  # prod
                gx = np.where(self.touched & ~self.include_self, 0.0, np.where(x != 0, gn * o / x, 0.0))
                gv = np.where(vals != 0, gn[idx] * o[idx] / vals, 0.0)
        ga = _from_numpy(canonical_nan(gx.astype(np.float32)), float32) if self.needs_input_grad[0] else None
        gvt = _from_numpy(canonical_nan(np.ascontiguousarray(gv).astype(np.float32)), float32) if self.needs_input_grad[1] else None
        return ga, gvt


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True) -> Tensor:
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise ValueError(f"scatter_reduce: reduce must be 'sum', 'prod', 'mean', 'amax' or 'amin', got {reduce!r}")
    d, idx = _scatter_index("scatter_reduce", input, dim, index, src.shape)
    return ScatterReduce.apply(input, _src_values("scatter_reduce", input, src, index), idx, reduce, bool(include_self))


def _index_dim(op: str, input: Tensor, dim: int, index: Tensor, source_shape: tuple | None) -> tuple:
    ix = _check_index(op, index)
    if ix.ndim > 1:
        raise ValueError(f"{op}: index must be 1-D, got shape {tuple(index.shape)}")
    ix = ix.reshape(-1)
    d = _shape.norm_dim(op, dim, builtins.max(input.ndim, 1))
    if source_shape is not None:
        want = tuple(input.shape[:d]) + (ix.size,) + tuple(input.shape[d + 1 :])
        if tuple(source_shape) != want and not (input.ndim == 0 and ix.size == 1):
            raise ValueError(f"{op}: source of shape {tuple(source_shape)} must have shape {want} (input {tuple(input.shape)}, index of {ix.size})")
    spec, adv = parse(op, input.shape, (slice(None),) * d + (ix,))
    return _region_index(input.shape, spec, adv)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """``out = input.clone(); out.select(dim, index[i]) += alpha·source.select(dim, i)``
    (double chains in source order, rounded once)."""
    if alpha != 1:
        source = source * alpha
    region = _index_dim("index_add", input, dim, index, source.shape)
    return Put.apply(input, source, region, True)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    region = _index_dim("index_copy", input, dim, index, source.shape)
    return Put.apply(input, source, region, False)


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    region = _index_dim("index_fill", input, dim, index, None)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"index_fill: value must be a number or a 0-d tensor, got shape {tuple(value.shape)}")
        v = value if value.dtype is input.dtype else _cast_value(value, input.dtype, "index_fill")
    else:
        v = _cast_value(value, input.dtype, "index_fill")
    return Put.apply(input, v, region, False)


def masked_scatter(input: Tensor, mask, source: Tensor) -> Tensor:
    """The source's first elements (row-major) written where the broadcast
    mask is True."""
    m = mask.numpy(force=True) if isinstance(mask, Tensor) else np.asarray(mask)
    shape = _shape.broadcast_shapes("masked_scatter", input.shape, m.shape)
    if shape != tuple(input.shape):
        raise ValueError(f"masked_scatter: the mask of shape {m.shape} must broadcast to the input's {tuple(input.shape)}")
    region = np.nonzero(np.broadcast_to(m, shape))
    k = len(region[0]) if region else 0
    if source.numel() < k:
        raise ValueError(f"masked_scatter: the source has {source.numel()} elements, fewer than the {k} the mask selects")
    return Put.apply(input, source.reshape(-1)[:k], region, False)


# -- in-place forms ------------------------------------------------------------

def _inplace(op: str, fn):
    def method(self, *args, **kwargs):
        from .inplace import assign_result

        return assign_result(self, op, lambda t: fn(t, *args, **kwargs), args + tuple(kwargs.values()))

    method.__name__ = op
    return method


scatter_ = _inplace("scatter_", scatter)
scatter_add_ = _inplace("scatter_add_", scatter_add)
scatter_reduce_ = _inplace("scatter_reduce_", scatter_reduce)
index_add_ = _inplace("index_add_", index_add)
index_copy_ = _inplace("index_copy_", index_copy)
index_fill_ = _inplace("index_fill_", index_fill)
masked_scatter_ = _inplace("masked_scatter_", masked_scatter)


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
