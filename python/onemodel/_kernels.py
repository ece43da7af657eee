"""Direct calls of the Rust kernels on tensors, without autograd: the
building blocks of the operators (``onemodel.ops``) and of the backward
engine (``onemodel.autograd.engine``).

This module imports only the tensor data model and the extension, so the
engine can use it without importing the operators (which import the
engine's ``Function``).

Broadcast operands are passed to the kernels as stride-0 views (no copy);
``sum_to`` undoes a broadcast with the double-precision sum (each output a
double chain in increasing element order, rounded once; docs/engine.md).
"""

from __future__ import annotations

from . import _core, _shape
from .tensor import Tensor, float32, from_core

# The small-op path (rust/src/py/fused.rs): check, broadcast, allocate and
# compute in one call; None where its case does not apply, and then the
# general path below runs (and raises the error naming the op).
_binary_new = _core.binary_new
_unary_new = _core.unary_new
_sum_all_new = _core.sum_all_new


def expand_to(t: Tensor, shape: tuple, op: str) -> Tensor:
    """A stride-0 broadcast view of `t` with `shape` (no copy)."""
    if t._shape == shape:
        return t
    return t._view(shape, _shape.expand_strides(op, t._shape, t._strides, shape))


def binary_kernel(op: str, a: Tensor, b: Tensor, name: str | None = None) -> Tensor:
    """A new float32 tensor ``op(a, b)`` over the broadcast shape."""
    r = _binary_new(op, a, b)
    if r is not None:
        return from_core(r)
    shape = _shape.broadcast_shapes(name or op, a._shape, b._shape)
    out = Tensor._empty(shape)
    _core.binary(op, out, expand_to(a, shape, op), expand_to(b, shape, op))
    return out


def unary_kernel(op: str, a: Tensor) -> Tensor:
    r = _unary_new(op, a)
    if r is not None:
        return from_core(r)
    out = Tensor._empty(a._shape)
    _core.unary(op, out, a)
    return out


def add_new(a: Tensor, b: Tensor) -> Tensor:
    return binary_kernel("add", a, b)


def add_into(dst: Tensor, src: Tensor) -> None:
    """dst += src in place (same shape), bumping dst's version."""
    src = expand_to(src, dst._shape, "add_")
    dst._bump()  # before the write, as every in-place op (ops/inplace.py, _write)
    _core.binary("add", dst, dst, src)


def fill_inplace(dst: Tensor, value) -> None:
    dst._bump()  # before the write, as every in-place op (ops/inplace.py, _write)
    _core.fill_(dst, value)


def clone_contiguous(t: Tensor) -> Tensor:
    out = Tensor._empty(t._shape, t._dtype)
    _core.copy_(out, t)
    return out


def contiguous_or_self(t: Tensor) -> Tensor:
    """`t` itself when contiguous, else a contiguous copy."""
    return t if t.is_contiguous() else clone_contiguous(t)


def ones_like_contiguous(t: Tensor) -> Tensor:
    out = Tensor._empty(t._shape, float32)
    _core.fill_(out, 1.0)
    return out


def scalar_tensor(value: float) -> Tensor:
    """A 0-d float32 tensor holding `value` (rounded to float32)."""
    t = Tensor._empty((), float32)
    _core.fill_(t, float(value))
    return t


def sum_kernel(t: Tensor, dims: tuple, keepdim: bool, mean: bool = False) -> Tensor:
    """The double-precision sum (or mean) of float32 `t` over `dims`."""
    if not keepdim and len(dims) == len(t._shape):
        r = _sum_all_new(t, mean)
        if r is not None:
            return from_core(r)
    kept = tuple(n for d, n in enumerate(t._shape) if d not in dims)
    out = Tensor._empty(kept)
    _core.sum(out, t, list(dims), mean)
    if keepdim:
        full = tuple(1 if d in dims else n for d, n in enumerate(t._shape))
        out = out._view(full, _shape.contiguous_strides(full))
    return out


def sum_to(g: Tensor, shape: tuple) -> Tensor:
    """Undo a broadcast: sum `g` down to `shape` (double accumulation)."""
    if g._shape == shape:
        return g
    lead = len(g._shape) - len(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g._shape[lead + i] != 1
    )
    out = sum_kernel(g, dims, keepdim=False)
    return out._view(shape, _shape.contiguous_strides(shape))
