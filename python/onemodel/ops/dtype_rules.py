"""torch's type-promotion queries: promote_types, result_type, can_cast.

They answer for every dtype torch names (float16, float64, int32, ...),
also those onemodel does not compute in, so that a program's dtype logic
gives torch's answer; making a tensor of such a dtype stays a TypeError.

promote_types: the higher category wins (bool < integer < floating <
complex); within a category the wider type, with torch's two exceptions
uint8 + int8 → int16 and float16 + bfloat16 → float32 (and complex64 with
float64 → complex128). result_type: torch's three priority classes —
tensors with dims, 0-d tensors, Python numbers — where a lower class
raises the result only by category (a Python float makes an int64 tensor's
result the default float32).
"""

from __future__ import annotations

import numbers

import sys

from ..tensor import Tensor, dtype

_t = sys.modules["onemodel.tensor"]  # (the package's `tensor` attribute is the function)


def _cat(d: dtype) -> int:
    if d is _t.bool_:
        return 0
    if d in (_t.complex64, _t.complex128):
        return 3
    return 2 if d.is_floating_point else 1


def _check(op: str, d) -> dtype:
    if not isinstance(d, dtype):
        raise TypeError(f"{op}(): argument must be a onemodel dtype, not {type(d).__name__}")
    return d


def promote_types(type1: dtype, type2: dtype) -> dtype:
    a, b = _check("promote_types", type1), _check("promote_types", type2)
    if a is b:
        return a
    ca, cb = _cat(a), _cat(b)
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        if _cat(hi) == 3 and lo is _t.float64:
            return _t.complex128
        return hi
    if ca == 1:
        if _t.uint8 in (a, b):
            other = b if a is _t.uint8 else a
            return _t.int16 if other is _t.int8 else other
        return a if a.itemsize > b.itemsize else b
    if ca == 2:
        if {a, b} == {_t.float16, _t.bfloat16}:
            return _t.float32
        return a if a.itemsize > b.itemsize else b
    return a if a.itemsize > b.itemsize else b


def _promote_opt(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return promote_types(a, b)


def _combine(higher, lower):
    """torch's combine_categories."""
    if higher is not None and _cat(higher) == 3:
        return higher
    if lower is not None and _cat(lower) == 3:
        if higher is not None and _cat(higher) == 2:
            return _t.complex128 if higher is _t.float64 else _t.complex64
        return lower
    if higher is not None and _cat(higher) == 2:
        return higher
    if higher is _t.bool_ or (lower is not None and _cat(lower) == 2):
        return _promote_opt(higher, lower)
    if higher is not None:
        return higher
    return lower


def _wrapped(x) -> dtype:
    if isinstance(x, bool):
        return _t.bool_
    if isinstance(x, numbers.Integral):
        return _t.int64
    if isinstance(x, numbers.Real):
        return _t.float32
    if isinstance(x, numbers.Complex):
        return _t.complex64
    raise TypeError(f"result_type(): expected Tensors or numbers, got {type(x).__name__}")


def result_type(tensor, other) -> dtype:
    """torch.result_type: the dtype an arithmetic op on the two gives."""
    dim = zero = wrapped = None
    for x in (tensor, other):
        if isinstance(x, Tensor):
            if x.ndim:
                dim = _promote_opt(dim, x.dtype)
            else:
                zero = _promote_opt(zero, x.dtype)
        else:
            wrapped = _promote_opt(wrapped, _wrapped(x))
    if not isinstance(tensor, Tensor) and not isinstance(other, Tensor):
        raise TypeError("result_type(): at least one argument must be a Tensor")
    return _combine(dim, _combine(zero, wrapped))


def can_cast(from_: dtype, to: dtype) -> bool:
    """torch.can_cast: whether a same-kind cast is allowed (no complex to
    real, no floating to integer, nothing but bool to bool)."""
    a, b = _check("can_cast", from_), _check("can_cast", to)
    ca, cb = _cat(a), _cat(b)
    if ca == 3 and cb != 3:
        return False
    if ca == 2 and cb < 2:
        return False
    if ca != 0 and cb == 0:
        return False
    return True
