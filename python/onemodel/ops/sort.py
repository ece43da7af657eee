"""Sorting and order statistics: ``sort``/``argsort``/``msort`` (stable),
``topk``, ``kthvalue``, ``median``, ``mode``, ``unique``.

Orders are comparisons only (NumPy's stable sort): equal values keep their
index order — ascending and descending alike — and NaN sorts as the
largest value (last ascending, first descending; ``topk`` takes NaNs
first), as torch. The values are gathered from the input
(``take_along_dim``), so their gradient goes to the chosen indices.
Where torch's own order of equal values is unspecified (``topk``,
``kthvalue``, unstable ``sort``), onemodel's is the stable one.
"""

from __future__ import annotations

import numpy as np

from .. import _shape
from .. import return_types
from ..tensor import Tensor, float32, int64
from .index import take_along_dim
from .operands import from_array


def _order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable argsort along `axis`; descending keeps equal values in index
    order (a stable ascending sort of the reversed axis, reversed back)."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    rev = np.flip(x, axis)
    o = np.argsort(rev, axis=axis, kind="stable")
    return np.flip(n - 1 - o, axis)


def _check(op: str, input) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}")


def argsort(input, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
    _check("argsort", input)
    if input.ndim == 0:
        return from_array(np.zeros((), np.int64), int64)
    d = _shape.norm_dim("argsort", dim, input.ndim)
    return from_array(_order(input.numpy(force=True), d, bool(descending)).astype(np.int64), int64)


def sort(input, dim: int = -1, descending: bool = False, *, stable: bool = False):
    """(values, indices) along ``dim``, stable whatever ``stable`` says."""
    _check("sort", input)
    if input.ndim == 0:
        return return_types.sort(input.clone(), from_array(np.zeros((), np.int64), int64))
    d = _shape.norm_dim("sort", dim, input.ndim)
    idx = argsort(input, d, descending)
    return return_types.sort(take_along_dim(input, idx, d), idx)


def msort(input) -> Tensor:
    return sort(input, 0).values


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):  # noqa: A002 - torch's name
    """The ``k`` largest (or smallest) along ``dim`` as (values, indices),
    in order (``sorted`` is always honoured)."""
    _check("topk", input)
    if input.ndim == 0:
        if k not in (0, 1):
            raise ValueError(f"topk: k ({k}) is out of range for a 0-d tensor")
        return return_types.topk(input.clone(), from_array(np.zeros((), np.int64), int64))
    d = _shape.norm_dim("topk", dim, input.ndim)
    n = input.shape[d]
    k = int(k)
    if k < 0 or k > n:
        raise ValueError(f"topk: k ({k}) is out of range for dimension {d} of size {n}")
    o = _order(input.numpy(force=True), d, bool(largest))
    idx = from_array(np.ascontiguousarray(np.take(o, np.arange(k), axis=d)).astype(np.int64), int64)
    return return_types.topk(take_along_dim(input, idx, d), idx)


def kthvalue(input, k: int, dim: int = -1, keepdim: bool = False):
    """The k-th smallest (1-based) along ``dim`` as (values, indices)."""
    _check("kthvalue", input)
    d = _shape.norm_dim("kthvalue", dim, max(input.ndim, 1))
    n = input.shape[d] if input.ndim else 1
    if not 1 <= int(k) <= n:
        raise ValueError(f"kthvalue: k ({k}) is out of range for dimension {d} of size {n}")
    if input.ndim == 0:
        return return_types.kthvalue(input.clone(), from_array(np.zeros((), np.int64), int64))
    o = _order(input.numpy(force=True), d, False)
    idx = from_array(np.ascontiguousarray(np.take(o, [int(k) - 1], axis=d)).astype(np.int64), int64)
    values = take_along_dim(input, idx, d)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return return_types.kthvalue(values, idx)


def mode(input, dim: int = -1, keepdim: bool = False):
    """The most frequent value along ``dim`` as (values, indices): among
    values equally frequent the smallest, and its last index in the input
    (torch's CPU kernel gives that index on short rows; its index on long
    rows with repeats, and its handling of NaN, follow its unstable sort
    and are not reproduced: here +0 and −0 count as one value, NaNs as
    one value that sorts last). The gradient goes to that index."""
    _check("mode", input)
    d = _shape.norm_dim("mode", dim, max(input.ndim, 1))
    if input.ndim == 0:
        return return_types.mode(input.clone(), from_array(np.zeros((), np.int64), int64))
    n = input.shape[d]
    if n == 0:
        raise ValueError(f"mode: dimension {d} of shape {tuple(input.shape)} is empty")
    x = np.moveaxis(input.numpy(force=True), d, -1)
    rows = x.reshape(-1, n)
    order = np.argsort(rows, axis=1, kind="stable")
    s = np.take_along_axis(rows, order, 1)
    if s.dtype.kind == "f":
        same = (s[:, 1:] == s[:, :-1]) | (np.isnan(s[:, 1:]) & np.isnan(s[:, :-1]))
    else:
        same = s[:, 1:] == s[:, :-1]
    # Each run of equal sorted values: its length, recorded at its last
    # position; the longest run's first occurrence (argmax) is the smallest
    # of the most frequent values, and its last position the last index.
    at = np.broadcast_to(np.arange(n), rows.shape)
    starts = np.concatenate([np.ones((rows.shape[0], 1), bool), ~same], 1)
    ends = np.concatenate([~same, np.ones((rows.shape[0], 1), bool)], 1)
    first = np.maximum.accumulate(np.where(starts, at, 0), axis=1)
    length = np.where(ends, at - first + 1, 0)
    pick = np.take_along_axis(order, np.argmax(length, axis=1)[:, None], 1)[:, 0].astype(np.int64)
    idx_np = pick.reshape(x.shape[:-1] + (1,))
    idx = from_array(np.ascontiguousarray(np.moveaxis(idx_np, -1, d)), int64)
    values = take_along_dim(input, idx, d)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return return_types.mode(values, idx)


def median(input, dim=None, keepdim: bool = False):
    """The lower median ((n−1)//2-th smallest); a NaN in the reduced
    elements makes it NaN (at the first NaN's index), as torch. Without
    ``dim``: the value only."""
    _check("median", input)
    if dim is None:
        flat = input.reshape(-1)
        if flat.numel() == 0:
            if input.dtype is not float32:
                raise ValueError(f"median: cannot take the median of an empty {input.dtype.name} tensor (torch returns int64's minimum)")
            return from_array(np.full((), np.nan, np.float32), float32)  # torch: NaN
        return median(flat, 0).values.reshape(())
    d = _shape.norm_dim("median", dim, max(input.ndim, 1))
    if input.ndim == 0:
        return return_types.median(input.clone(), from_array(np.zeros((), np.int64), int64))
    x = input.numpy(force=True)
    n = x.shape[d]
    if n == 0:
        raise ValueError(f"median: dimension {d} of shape {tuple(input.shape)} is empty")
    o = _order(x, d, False)
    pick = np.take(o, [(n - 1) // 2], axis=d)
    if x.dtype.kind == "f":
        nan = np.isnan(x)
        if nan.any():
            first_nan = np.argmax(nan, axis=d)
            pick = np.where(np.expand_dims(nan.any(axis=d), d), np.expand_dims(first_nan, d), pick)
    idx = from_array(np.ascontiguousarray(pick).astype(np.int64), int64)
    values = take_along_dim(input, idx, d)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return return_types.median(values, idx)


def unique(input, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False, dim=None):  # noqa: A002
    """The distinct values (sorted), with the inverse indices and counts on
    request (no gradient)."""
    _check("unique", input)
    x = input.numpy(force=True)
    axis = None if dim is None else _shape.norm_dim("unique", dim, input.ndim)
    vals, inv, counts = np.unique(x, return_inverse=True, return_counts=True, axis=axis)
    out = [from_array(vals, input.dtype)]
    if return_inverse:
        out.append(from_array(inv.reshape(x.shape if axis is None else (x.shape[axis],)).astype(np.int64), int64))
    if return_counts:
        out.append(from_array(counts.astype(np.int64), int64))
    return out[0] if len(out) == 1 else tuple(out)
