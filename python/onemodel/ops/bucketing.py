"""Searching and counting: searchsorted, bucketize, bincount, histc, isin,
unique_consecutive, unravel_index. None is differentiable (as torch).

searchsorted runs torch's binary search step for step (``not (mid >= v)``
moves right for side='left', ``not (mid > v)`` for 'right'), so NaN and
unsorted inputs land where torch puts them. bincount's weighted counts are
double sums in increasing element order, rounded once (docs/engine.md, "Arithmetic rules").
histc finds the bin as torch's CPU kernel does, in float32:
``int((x - lo) * bins / (hi - lo))``, the top edge in the last bin.
"""

from __future__ import annotations

import builtins
import numbers

import numpy as np

from .. import _shape
from .._numpy_exact import canonical_nan, ieee
from ..tensor import Tensor, bool_, float32, int64
from .operands import from_array


def _values(op: str, x, like: Tensor) -> np.ndarray:
    if isinstance(x, Tensor):
        return x.numpy(force=True)
    if isinstance(x, (bool, numbers.Number)):
        return np.asarray(x, like.numpy(force=True).dtype)
    raise TypeError(f"{op}: expected a Tensor or a number, got {type(x).__name__}")


def _index_dtype(op: str, out_int32: bool):
    if out_int32:
        raise TypeError(f"{op}: out_int32=True asks for int32 indices; onemodel computes indices in int64 only")
    return int64


def _binary_search(seq: np.ndarray, vals: np.ndarray, right: bool) -> np.ndarray:
    """Per row of `seq` [R, n] and `vals` [R, m]: torch's lower/upper bound."""
    r, n = seq.shape
    start = np.zeros(vals.shape, np.int64)
    end = np.full(vals.shape, n, np.int64)
    rows = np.arange(r)[:, None]
    with np.errstate(invalid="ignore"):
        while True:
            active = start < end
            if not active.any():
                break
            mid = start + ((end - start) >> 1)
            m = seq[rows, np.minimum(mid, n - 1)] if n else np.zeros(vals.shape, seq.dtype)
            go_right = ~(m > vals) if right else ~(m >= vals)
            start = np.where(active & go_right, mid + 1, start)
            end = np.where(active & ~go_right, mid, end)
    return start


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False, right: bool = False, side: str | None = None, sorter=None) -> Tensor:
    """torch.searchsorted: for each value the index where it would be
    inserted into the (last dim of the) sorted sequence."""
    op = "searchsorted"
    if not isinstance(sorted_sequence, Tensor):
        raise TypeError(f"{op}: sorted_sequence must be a Tensor, got {type(sorted_sequence).__name__}")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True")
        right = side == "right"
    dt = _index_dtype(op, out_int32)
    seq = sorted_sequence.numpy(force=True)
    scalar = not isinstance(input, Tensor)
    vals = _values(op, input, sorted_sequence)
    if isinstance(input, Tensor) and input.dtype is not sorted_sequence.dtype:
        raise RuntimeError(
            f"torch.searchsorted(): input value tensor and boundaries tensor should have same dtype, "
            f"but got {sorted_sequence.dtype.name} and {input.dtype.name}"
        )
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension")
    if sorter is not None:
        if not isinstance(sorter, Tensor) or sorter.dtype is not int64:
            raise RuntimeError("torch.searchsorted(): sorter must be an int64 tensor")
        if tuple(sorter.shape) != tuple(sorted_sequence.shape):
            raise RuntimeError(
                f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor "
                f"{list(sorted_sequence.shape)}and got sorter tensor {list(sorter.shape)}"
            )
        s = sorter.numpy(force=True)
        n = seq.shape[-1]
        if s.size and (s.min() < 0 or s.max() >= n):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        seq = np.take_along_axis(seq, s, axis=-1)
    if seq.ndim > 1:
        if scalar or vals.ndim == 0:
            raise RuntimeError("torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1")
        if seq.shape[:-1] != vals.shape[:-1] or vals.ndim != seq.ndim:
            raise RuntimeError(
                f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor "
                f"and input value tensor must match, but we got boundaries tensor {list(seq.shape)} and input value tensor {list(vals.shape)}"
            )
        rows = seq.reshape(-1, seq.shape[-1])
        v = vals.reshape(rows.shape[0], -1)
    else:
        rows = seq.reshape(1, -1)
        v = vals.reshape(1, -1)
    res = _binary_search(rows, v, right).reshape(vals.shape)
    return from_array(res.astype(np.int64), dt)


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """torch.bucketize: the bucket of each value given 1-D boundaries
    (right=False: boundaries[i-1] < x <= boundaries[i])."""
    if not isinstance(boundaries, Tensor):
        raise TypeError(f"bucketize: boundaries must be a Tensor, got {type(boundaries).__name__}")
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """torch.bincount: counts of each value of a 1-D non-negative int64
    tensor (weighted: the weights' double sums, rounded once)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bincount: expected a Tensor, got {type(input).__name__}")
    if input.dtype is not int64:
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs, got dtype {input.dtype.name}")
    if input.ndim != 1:
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs, got shape {tuple(input.shape)}")
    if minlength < 0:
        raise RuntimeError(f"minlength should be >= 0, got {minlength}")
    x = input.numpy(force=True)
    if x.size and x.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    n = builtins.max(int(x.max()) + 1 if x.size else 0, int(minlength))
    if weights is None:
        return from_array(np.bincount(x, minlength=n).astype(np.int64), int64)
    if not isinstance(weights, Tensor):
        raise TypeError(f"bincount: weights must be a Tensor, got {type(weights).__name__}")
    if tuple(weights.shape) != tuple(input.shape):
        raise RuntimeError(f"weights should be 1-d and have the same length as input, got {tuple(weights.shape)} for input {tuple(input.shape)}")
    w = weights.numpy(force=True)
    with ieee():
        acc = np.zeros(n, np.float64)
        np.add.at(acc, x, w.astype(np.float64))
        res = canonical_nan(acc.astype(np.float32))
    # (int64 / bool weights: torch counts in double; onemodel has no float64.)
    return from_array(res, float32)


def histc(input: Tensor, bins: int = 100, min=0, max=0) -> Tensor:  # noqa: A002 - torch's names
    """torch.histc: `bins` equal-width bins between min and max (both 0:
    the data's own range); values outside (and NaN) are ignored."""
    if not isinstance(input, Tensor):
        raise TypeError(f"histc: expected a Tensor, got {type(input).__name__}")
    if input.dtype is not float32:
        raise RuntimeError(f"\"histogram_cpu\" not implemented for '{input.dtype.name}'")
    if not isinstance(bins, numbers.Integral) or isinstance(bins, bool):
        raise TypeError(f"histc: bins must be an int, got {type(bins).__name__}")
    if bins <= 0:
        raise RuntimeError(f"torch.histc(): bins must be > 0, but got {bins}")
    if bins >= 2**63:
        raise ValueError(f"histc: bins {bins} is outside int64")
    # The output first: a bin count the machine cannot hold is refused
    # before NumPy's bincount tries it.
    Tensor._empty((int(bins),), float32)
    x = input.numpy(force=True).ravel()
    lo, hi = np.float32(min), np.float32(max)
    if lo > hi:
        raise RuntimeError(f"torch.histc(): max must be larger than min, but got min {min} max {max}")
    if lo == hi and x.size:
        finite = x[np.isfinite(x)] if np.isnan(x).any() else x
        lo, hi = (np.float32(finite.min()), np.float32(finite.max())) if finite.size else (lo, hi)
    if lo == hi:
        lo, hi = np.float32(lo - 1), np.float32(hi + 1)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc(): range of [{lo}, {hi}] is not finite")
    with ieee(), np.errstate(invalid="ignore", over="ignore"):
        keep = (x >= lo) & (x <= hi)
        v = x[keep]
        pos = ((v - lo) * np.float32(bins) / (hi - lo)).astype(np.int64)
        pos = np.minimum(pos, bins - 1)
    counts = np.bincount(pos, minlength=bins).astype(np.float32)
    return from_array(counts, float32)


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """torch.isin: whether each element is among test_elements (either may
    be a number; NaN is never found)."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): at least one of elements and test_elements must be a Tensor")
    like = elements if isinstance(elements, Tensor) else test_elements
    e = _values("isin", elements, like)
    t = _values("isin", test_elements, like)
    res = np.isin(e, t, invert=invert)
    return from_array(np.asarray(res, bool), bool_)


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None) -> Tensor | tuple[Tensor, ...]:
    """torch.unique_consecutive: one element (or slice along `dim`) per run
    of equal neighbours (NaN never equals NaN)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"unique_consecutive: expected a Tensor, got {type(input).__name__}")
    a = input.numpy(force=True)
    if dim is None:
        flat = a.ravel()
        if flat.size == 0:
            starts = np.zeros(0, np.int64)
        else:
            with np.errstate(invalid="ignore"):
                new = np.concatenate([[True], flat[1:] != flat[:-1]])
            starts = np.flatnonzero(new)
        values = flat[starts]
        group = np.cumsum(np.concatenate([[True], flat[1:] != flat[:-1]])) - 1 if flat.size else np.zeros(0, np.int64)
        inverse = group.reshape(a.shape)
        n = flat.size
    else:
        d = _shape.norm_dim("unique_consecutive", dim, input.ndim)
        moved = np.moveaxis(a, d, 0)
        m = moved.shape[0]
        if m == 0:
            new = np.zeros(0, bool)
        else:
            rest = moved.reshape(m, -1)
            with np.errstate(invalid="ignore"):
                diff = (rest[1:] != rest[:-1]).any(axis=1)
            new = np.concatenate([[True], diff])
        starts = np.flatnonzero(new)
        values = np.moveaxis(moved[starts], 0, d)
        inverse = np.cumsum(new) - 1
        n = m
    counts = np.diff(np.concatenate([starts, [n]])).astype(np.int64)
    out = [from_array(np.ascontiguousarray(values), input.dtype)]
    if return_inverse:
        out.append(from_array(np.asarray(inverse, np.int64), int64))
    if return_counts:
        out.append(from_array(counts, int64))
    return out[0] if len(out) == 1 else tuple(out)


def unravel_index(indices, shape) -> tuple:
    """torch.unravel_index: the coordinates of flat indices in `shape`."""
    if isinstance(indices, Tensor):
        if indices.dtype is not int64:
            raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype.name}")
        ix = indices.numpy(force=True)
    elif isinstance(indices, (int, np.integer)) and not isinstance(indices, bool):
        if not -(2**63) <= int(indices) < 2**63:
            raise ValueError(f"unravel_index: index {indices} is outside int64")
        ix = np.asarray(indices, np.int64)
    else:
        raise TypeError(f"unravel_index: expected 'indices' to be an integer tensor, got {type(indices).__name__}")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise RuntimeError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    if any(s >= 2**63 for s in shape):
        raise ValueError(f"unravel_index: shape {shape} has a size outside int64")
    # As torch: no range check; each coordinate is the floor remainder of
    # the running floor quotient, from the last dim (so -1 is the last element).
    coords, rest = [], ix.astype(np.int64)
    for n in reversed(shape):
        if n == 0:
            coords.append(np.zeros_like(rest))
            continue
        coords.append(np.mod(rest, n))
        rest = np.floor_divide(rest, n)
    coords = coords[::-1]
    return tuple(from_array(np.asarray(c, np.int64), int64) for c in coords)

