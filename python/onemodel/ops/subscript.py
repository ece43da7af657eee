"""Parsing a subscript (``t[index]``) as torch reads it: the basic part
(ints, slices, ``None``, ``...``, Python bools) becomes a view spec for
views.apply_index, the advanced part (integer arrays, bool masks) NumPy
arrays keyed by the view dim they index. The rules are in ops/index.py's
docstring and docs/tensor.md."""

from __future__ import annotations

import builtins
import numbers

import numpy as np

from .. import _shape
from ..tensor import Tensor, float32


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
