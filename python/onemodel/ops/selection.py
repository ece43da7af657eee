"""Element-wise selections: clamp/clip, maximum/minimum and where, each a
Function with its backward rule (torch's derivatives.yaml):

* clamp: g where min ≤ x ≤ max, else 0;
* maximum/minimum: g to the larger/smaller input, g/2 to each on a tie;
* where: g to the chosen side, 0 to the other (no gradient to the condition).

Forward and backward run on the Rust lane loops (compare-and-select, one
IEEE operation per element), the same bits on every kernel path.
"""

from __future__ import annotations

import math
import numbers

from .. import _core, _shape
from .._kernels import binary_kernel, expand_to, sum_to
from ..autograd.function import Function
from ..tensor import Tensor, float32
from .arith import as_tensor_operand
from .pointwise import _binary_p, _unary_p


def _ternary(op: str, a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    shape = _shape.broadcast_shapes(op, a._shape, b._shape, c._shape)
    out = Tensor._empty(shape)
    _core.ternary(op, out, expand_to(a, shape, op), expand_to(b, shape, op), expand_to(c, shape, op))
    return out


class Clamp(Function):
    def forward(self, a, lo: float, hi: float):
        self.bounds = (lo, hi)
        self.save_for_backward(a)
        return _unary_p("clamp", a, lo, hi)

    def backward(self, g):
        (a,) = self.saved_tensors
        return _binary_p("clamp_backward", g, a, *self.bounds)


class Maximum(Function):
    op = "maximum"

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return binary_kernel(self.op, a, b)

    def backward(self, g):
        a, b = self.saved_tensors
        (sa, _), (sb, _) = self.input_meta
        shape = g._shape
        av, bv = expand_to(a, shape, self.op), expand_to(b, shape, self.op)
        rule = self.op + "_backward"
        ga = sum_to(_ternary(rule, g, av, bv), sa) if self.needs_input_grad[0] else None
        gb = sum_to(_ternary(rule, g, bv, av), sb) if self.needs_input_grad[1] else None
        return ga, gb


class Minimum(Maximum):
    op = "minimum"


class Where(Function):
    # Inputs: (a, b, condition); the condition (float32 0/1, detached) never
    # receives a gradient.
    def forward(self, a, b, cond: Tensor):
        self.cond = cond
        return _ternary("where", cond, a, b)

    def backward(self, g):
        (sa, _), (sb, _), _ = self.input_meta
        zero = Tensor._empty(())
        _core.fill_(zero, 0.0)
        ga = sum_to(_ternary("where", self.cond, g, zero), sa) if self.needs_input_grad[0] else None
        gb = sum_to(_ternary("where", self.cond, zero, g), sb) if self.needs_input_grad[1] else None
        return ga, gb, None


# ---------------------------------------------------------------------------
# Public functions (torch's names and signatures)
# ---------------------------------------------------------------------------

def _t(x, name: str) -> Tensor:
    return as_tensor_operand(x, name)


def clamp(input, min=None, max=None) -> Tensor:  # noqa: A002 - torch's names
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    for v, nm in ((min, "min"), (max, "max")):
        if v is not None and (not isinstance(v, numbers.Real) or isinstance(v, bool)):
            raise TypeError(f"clamp: {nm} must be a real number or None, got {type(v).__name__}")
    lo = math.nan if min is None else float(min)
    hi = math.nan if max is None else float(max)
    return Clamp.apply(_t(input, "clamp"), lo, hi)


def clip(input, min=None, max=None) -> Tensor:  # noqa: A002
    return clamp(input, min, max)


def maximum(input, other) -> Tensor:
    return Maximum.apply(_t(input, "maximum"), _t(other, "maximum"))


def minimum(input, other) -> Tensor:
    return Minimum.apply(_t(input, "minimum"), _t(other, "minimum"))


def _condition(cond, name: str) -> Tensor:
    """The condition as a float32 0/1 tensor (from a bool/int/float tensor,
    a numpy array or a nested list)."""
    if isinstance(cond, Tensor):
        if cond.requires_grad:
            cond = cond.detach()
        if cond.dtype is float32:
            return cond
        arr = cond.numpy()
    else:
        import numpy as np

        arr = np.asarray(cond)
    from ..creation import tensor as make_tensor

    return make_tensor((arr != 0).astype("float32"))


def where(condition, input, other) -> Tensor:
    c = _condition(condition, "where")
    a, b = _t(input, "where"), _t(other, "where")
    return Where.apply(a, b, c)


__all__ = ["clamp", "clip", "maximum", "minimum", "where"]
