"""Element-wise math: the transcendentals, powers and absolute value."""

from __future__ import annotations

from .. import ops as _ops


class MathMethods:
    __slots__ = ()

    def exp(self):
        return _ops.pointwise.exp(self)

    def log(self):
        return _ops.pointwise.log(self)

    def sigmoid(self):
        return _ops.pointwise.sigmoid(self)

    def tanh(self):
        return _ops.pointwise.tanh(self)

    def erf(self):
        return _ops.pointwise.erf(self)

    def sqrt(self):
        return _ops.pointwise.sqrt(self)

    def square(self):
        return _ops.pointwise.square(self)

    def abs(self):
        return _ops.pointwise.abs(self)

    def pow(self, exponent):
        return _ops.pointwise.pow(self, exponent)

    def __abs__(self):
        return _ops.pointwise.abs(self)

    def __pow__(self, exponent):
        return _ops.pointwise.pow(self, exponent)
