"""The two Functions every indexing operator is built from: Take (a
gather by a NumPy index, backward a double-chain scatter-add) and Put (a
write or an accumulation at a NumPy index), plus the value casting of
assignments. The rules are in ops/index.py's docstring."""

from __future__ import annotations

import numpy as np

from .. import _shape
from .._kernels import clone_contiguous, sum_to
from .._numpy_exact import canonical_nan, ieee
from ..autograd.function import Function
from ..tensor import Tensor, float32
from .operands import from_array as _from_numpy


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
