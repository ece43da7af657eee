"""Comparisons (``== != < <= > >=``), logic (``& | ^ ~``), truth
reductions and the tests of special values; results are bool tensors."""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

from .. import ops as _ops

if TYPE_CHECKING:
    from ..tensor import Tensor


def _comparable(other) -> bool:
    from ..tensor import Tensor

    return isinstance(other, (Tensor, numbers.Number)) and not isinstance(other, complex)


class ComparisonMethods:
    __slots__ = ()

    def eq(self, other) -> Tensor:
        return _ops.compare.eq(self, other)

    def ne(self, other) -> Tensor:
        return _ops.compare.ne(self, other)

    def lt(self, other) -> Tensor:
        return _ops.compare.lt(self, other)

    def le(self, other) -> Tensor:
        return _ops.compare.le(self, other)

    def gt(self, other) -> Tensor:
        return _ops.compare.gt(self, other)

    def ge(self, other) -> Tensor:
        return _ops.compare.ge(self, other)

    greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne

    def equal(self, other) -> bool:
        return _ops.compare.equal(self, other)

    def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
        return _ops.compare.isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
        return _ops.compare.allclose(self, other, rtol, atol, equal_nan)

    # Element-wise, as torch: `t == 0` is a bool tensor. Other operand types
    # fall back to Python's rules (`t == None` is False).
    def __eq__(self, other) -> Tensor:
        return _ops.compare.eq(self, other) if _comparable(other) else NotImplemented

    def __ne__(self, other) -> Tensor:
        return _ops.compare.ne(self, other) if _comparable(other) else NotImplemented

    def __lt__(self, other) -> Tensor:
        return _ops.compare.lt(self, other) if _comparable(other) else NotImplemented

    def __le__(self, other) -> Tensor:
        return _ops.compare.le(self, other) if _comparable(other) else NotImplemented

    def __gt__(self, other) -> Tensor:
        return _ops.compare.gt(self, other) if _comparable(other) else NotImplemented

    def __ge__(self, other) -> Tensor:
        return _ops.compare.ge(self, other) if _comparable(other) else NotImplemented

    # -- logic ------------------------------------------------------------------
    def logical_and(self, other) -> Tensor:
        return _ops.compare.logical_and(self, other)

    def logical_or(self, other) -> Tensor:
        return _ops.compare.logical_or(self, other)

    def logical_xor(self, other) -> Tensor:
        return _ops.compare.logical_xor(self, other)

    def logical_not(self) -> Tensor:
        return _ops.compare.logical_not(self)

    def logical_and_(self, other) -> Tensor:
        return _ops.compare.logical_and_(self, other)

    def logical_or_(self, other) -> Tensor:
        return _ops.compare.logical_or_(self, other)

    def bitwise_and(self, other) -> Tensor:
        return _ops.compare.bitwise_and(self, other)

    def bitwise_or(self, other) -> Tensor:
        return _ops.compare.bitwise_or(self, other)

    def bitwise_xor(self, other) -> Tensor:
        return _ops.compare.bitwise_xor(self, other)

    def bitwise_not(self) -> Tensor:
        return _ops.compare.bitwise_not(self)

    def bitwise_left_shift(self, other) -> Tensor:
        return _ops.compare.bitwise_left_shift(self, other)

    def bitwise_right_shift(self, other) -> Tensor:
        return _ops.compare.bitwise_right_shift(self, other)

    def bitwise_left_shift_(self, other) -> Tensor:
        return _ops.compare.bitwise_left_shift_(self, other)

    def bitwise_right_shift_(self, other) -> Tensor:
        return _ops.compare.bitwise_right_shift_(self, other)

    def __lshift__(self, other) -> Tensor:
        return _ops.compare.bitwise_left_shift(self, other)

    def __rlshift__(self, other) -> Tensor:
        return _ops.compare.bitwise_left_shift(other, self)

    def __rshift__(self, other) -> Tensor:
        return _ops.compare.bitwise_right_shift(self, other)

    def __rrshift__(self, other) -> Tensor:
        return _ops.compare.bitwise_right_shift(other, self)

    def __ilshift__(self, other) -> Tensor:
        return _ops.compare.bitwise_left_shift_(self, other)

    def __irshift__(self, other) -> Tensor:
        return _ops.compare.bitwise_right_shift_(self, other)

    def __and__(self, other) -> Tensor:
        return _ops.compare.bitwise_and(self, other)

    def __rand__(self, other) -> Tensor:
        return _ops.compare.bitwise_and(other, self)

    def __or__(self, other) -> Tensor:
        return _ops.compare.bitwise_or(self, other)

    def __ror__(self, other) -> Tensor:
        return _ops.compare.bitwise_or(other, self)

    def __xor__(self, other) -> Tensor:
        return _ops.compare.bitwise_xor(self, other)

    def __rxor__(self, other) -> Tensor:
        return _ops.compare.bitwise_xor(other, self)

    def __invert__(self) -> Tensor:
        return _ops.compare.bitwise_not(self)

    def __iand__(self, other) -> Tensor:
        return _ops.compare.bitwise_and_(self, other)

    def __ior__(self, other) -> Tensor:
        return _ops.compare.bitwise_or_(self, other)

    def __ixor__(self, other) -> Tensor:
        return _ops.compare.bitwise_xor_(self, other)

    # -- truth reductions and special values -------------------------------------
    def any(self, dim=None, keepdim: bool = False) -> Tensor:
        return _ops.compare.any(self, dim, keepdim)

    def all(self, dim=None, keepdim: bool = False) -> Tensor:
        return _ops.compare.all(self, dim, keepdim)

    def isnan(self) -> Tensor:
        return _ops.compare.isnan(self)

    def isinf(self) -> Tensor:
        return _ops.compare.isinf(self)

    def isfinite(self) -> Tensor:
        return _ops.compare.isfinite(self)

    def isposinf(self) -> Tensor:
        return _ops.compare.isposinf(self)

    def isneginf(self) -> Tensor:
        return _ops.compare.isneginf(self)

    def signbit(self) -> Tensor:
        return _ops.compare.signbit(self)
