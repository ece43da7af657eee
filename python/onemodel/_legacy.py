"""torch's legacy typed constructors: ``FloatTensor``, ``LongTensor``,
``BoolTensor`` (``LongTensor(ids)``, ``FloatTensor(2, 3)``). Each call
makes a Tensor of its dtype from sizes (zeros, where torch leaves memory
uninitialised) or from data (a copy); ``isinstance(t, LongTensor)`` is
true for an int64 tensor, as torch's CPU tensor types answer."""

from __future__ import annotations

from .tensor import Tensor, bool_, float32, int64


class _TypedTensorMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls._dtype


def make_typed(dt, args):
    """A `dt` tensor from torch's legacy constructor arguments (Tensor, LongTensor, ...)."""
    from . import creation, _shape

    if not args:
        return creation.empty(0, dtype=dt)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return creation.zeros(*args, dtype=dt)
    if len(args) == 1:
        (a,) = args
        if isinstance(a, _shape.Size):
            return creation.zeros(tuple(a), dtype=dt)
        if isinstance(a, Tensor):
            if a.dtype is not dt:
                raise TypeError(f"expected a {dt.name} tensor, got {a.dtype.name} (as torch: convert it with .to())")
            return a
        return creation.tensor(a, dtype=dt)
    raise TypeError(f"expected sizes (ints) or one sequence of data, got {args!r}")


class FloatTensor(metaclass=_TypedTensorMeta):
    _dtype = float32

    def __new__(cls, *args) -> Tensor:
        return make_typed(cls._dtype, args)


class LongTensor(metaclass=_TypedTensorMeta):
    _dtype = int64

    def __new__(cls, *args) -> Tensor:
        return make_typed(cls._dtype, args)


class BoolTensor(metaclass=_TypedTensorMeta):
    _dtype = bool_

    def __new__(cls, *args) -> Tensor:
        return make_typed(cls._dtype, args)
