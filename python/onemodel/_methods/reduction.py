"""Reductions and the softmax family."""

from __future__ import annotations

from .. import ops as _ops


class ReductionMethods:
    __slots__ = ()

    def sum(self, dim=None, keepdim: bool = False):
        return _ops.reduce.sum(self, dim, keepdim)

    def mean(self, dim=None, keepdim: bool = False):
        return _ops.reduce.mean(self, dim, keepdim)

    def softmax(self, dim=None):
        return _ops.softmax.softmax(self, dim)

    def log_softmax(self, dim=None):
        return _ops.softmax.log_softmax(self, dim)
