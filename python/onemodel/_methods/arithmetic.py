"""Arithmetic and products: ``+ - * / @``, their reflected and in-place
forms, and the in-place writes (``zero_``, ``fill_``, ``copy_``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import ops as _ops

if TYPE_CHECKING:
    from ..tensor import Tensor


class ArithmeticMethods:
    __slots__ = ()

    def add(self, other, *, alpha=1) -> Tensor:
        return _ops.arith.add(self, other, alpha=alpha)

    def sub(self, other, *, alpha=1) -> Tensor:
        return _ops.arith.sub(self, other, alpha=alpha)

    def mul(self, other) -> Tensor:
        return _ops.arith.mul(self, other)

    def div(self, other, *, rounding_mode=None) -> Tensor:
        return _ops.arith.div(self, other, rounding_mode=rounding_mode)

    def neg(self) -> Tensor:
        return _ops.arith.neg(self)

    def relu(self) -> Tensor:
        return _ops.arith.relu(self)

    def matmul(self, other) -> Tensor:
        return _ops.linalg.matmul(self, other)

    def mm(self, mat2) -> Tensor:
        return _ops.linalg.mm(self, mat2)

    def bmm(self, mat2) -> Tensor:
        return _ops.linalg.bmm(self, mat2)

    # -- in place: direct kernels, or rebased onto the graph while recording
    # (ops/inplace.py) ----------------------------------------------------------
    def add_(self, other, *, alpha=1) -> Tensor:
        return _ops.inplace.run(self, "add_", lambda t: _ops.arith.add(t, other, alpha=alpha), lambda: _ops.arith.add_(self, other, alpha=alpha), (other,))

    def sub_(self, other, *, alpha=1) -> Tensor:
        return _ops.inplace.run(self, "sub_", lambda t: _ops.arith.sub(t, other, alpha=alpha), lambda: _ops.arith.sub_(self, other, alpha=alpha), (other,))

    def mul_(self, other) -> Tensor:
        return _ops.inplace.run(self, "mul_", lambda t: _ops.arith.mul(t, other), lambda: _ops.arith.mul_(self, other), (other,))

    def div_(self, other, *, rounding_mode=None) -> Tensor:
        if rounding_mode is not None:
            return _ops.inplace.assign_result(self, "div_", lambda t: _ops.arith.div(t, other, rounding_mode=rounding_mode), (other,))
        return _ops.inplace.run(self, "div_", lambda t: _ops.arith.div(t, other), lambda: _ops.arith.div_(self, other), (other,))

    def neg_(self) -> Tensor:
        return _ops.inplace.run(self, "neg_", _ops.arith.neg, lambda: _ops.arith.neg_(self))

    def relu_(self) -> Tensor:
        return _ops.inplace.run(self, "relu_", _ops.arith.relu, lambda: _ops.arith.relu_(self))

    def zero_(self) -> Tensor:
        return _ops.inplace.run(self, "zero_", lambda t: _ops.inplace.filled(t, 0), lambda: _ops.arith.zero_(self))

    def fill_(self, value) -> Tensor:
        return _ops.inplace.run(self, "fill_", lambda t: _ops.inplace.filled(t, value), lambda: _ops.arith.fill_(self, value), (value,))

    def copy_(self, src, non_blocking: bool = False) -> Tensor:
        return _ops.inplace.run(self, "copy_", lambda t: _ops.inplace.copied(t, src), lambda: _ops.arith.copy_(self, src), (src,))

    # -- Python operators -------------------------------------------------------
    def __add__(self, other) -> Tensor:
        return _ops.arith.add(self, other)

    def __radd__(self, other) -> Tensor:
        return _ops.arith.add(other, self)

    def __sub__(self, other) -> Tensor:
        return _ops.arith.sub(self, other)

    def __rsub__(self, other) -> Tensor:
        return _ops.arith.sub(other, self)

    def __mul__(self, other) -> Tensor:
        return _ops.arith.mul(self, other)

    def __rmul__(self, other) -> Tensor:
        return _ops.arith.mul(other, self)

    def __truediv__(self, other) -> Tensor:
        return _ops.arith.div(self, other)

    def __rtruediv__(self, other) -> Tensor:
        return _ops.arith.div(other, self)

    def __neg__(self) -> Tensor:
        return _ops.arith.neg(self)

    def __pos__(self) -> Tensor:
        return self

    def __matmul__(self, other) -> Tensor:
        return _ops.linalg.matmul(self, other)

    def __rmatmul__(self, other) -> Tensor:
        return _ops.linalg.matmul(other, self)

    def __iadd__(self, other) -> Tensor:
        return self.add_(other)

    def __isub__(self, other) -> Tensor:
        return self.sub_(other)

    def __imul__(self, other) -> Tensor:
        return self.mul_(other)

    def __itruediv__(self, other) -> Tensor:
        return self.div_(other)
