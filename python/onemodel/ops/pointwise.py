"""Element-wise transcendental and selection operators: exp, log, sigmoid,
tanh, gelu, erf, sqrt, square, pow (scalar exponent), abs, clamp,
maximum/minimum and where, each a Function with its backward rule.

Every forward and backward runs on the Rust lane loops (docs/numerics.md):
the fixed transcendentals in both modes, the same bits on every kernel path;
exact mode writes NaN results as 0x7FC00000. Backward rules follow
torch's derivatives (autograd/derivatives.yaml):

* exp: g·y; log: g/x; sigmoid: g·(y·(1 − y)); tanh: g·(1 − y²);
* gelu: g·(Φ(x) + x·φ(x)) (recomputed from x); erf: g·(2/√π)·e^(−x²);
* sqrt: g/(2y); square: g·(2x); pow: g·(p·x^(p−1)) (0 for p = 0);
* abs: g·sign(x); clamp: g where min ≤ x ≤ max, else 0;
* maximum/minimum: g to the larger/smaller input, g/2 to each on a tie;
* where: g to the chosen side, 0 to the other (no gradient to the condition).
"""

from __future__ import annotations

import math
import numbers

from .. import _core, _shape
from ..autograd.function import Function
from ..tensor import Tensor, float32
from .arith import as_tensor_operand, binary_kernel, expand_to, sum_to, unary_kernel


def _unary_p(op: str, a: Tensor, p=None, q=None) -> Tensor:
    out = Tensor._empty(a._shape)
    _core.unary(op, out, a, p, q)
    return out


def _binary_p(op: str, a: Tensor, b: Tensor, p=None, q=None) -> Tensor:
    out = Tensor._empty(a._shape)
    _core.binary(op, out, a, b, p, q)
    return out


def _ternary(op: str, a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    shape = _shape.broadcast_shapes(op, a._shape, b._shape, c._shape)
    out = Tensor._empty(shape)
    _core.ternary(op, out, expand_to(a, shape, op), expand_to(b, shape, op), expand_to(c, shape, op))
    return out


# ---------------------------------------------------------------------------
# Functions (forward and backward side by side)
# ---------------------------------------------------------------------------

class Exp(Function):
    def forward(self, a):
        y = unary_kernel("exp", a)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        (y,) = self.saved_tensors
        return binary_kernel("exp_backward", g, y)


class Log(Function):
    def forward(self, a):
        self.save_for_backward(a)
        return unary_kernel("log", a)

    def backward(self, g):
        (a,) = self.saved_tensors
        return binary_kernel("log_backward", g, a)


class Sigmoid(Function):
    def forward(self, a):
        y = unary_kernel("sigmoid", a)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        (y,) = self.saved_tensors
        return binary_kernel("sigmoid_backward", g, y)


class Tanh(Function):
    def forward(self, a):
        y = unary_kernel("tanh", a)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        (y,) = self.saved_tensors
        return binary_kernel("tanh_backward", g, y)


class Gelu(Function):
    # Saves the input only: the slope is recomputed in backward (seed 000 §5).
    def forward(self, a):
        self.save_for_backward(a)
        return unary_kernel("gelu", a)

    def backward(self, g):
        (a,) = self.saved_tensors
        return binary_kernel("gelu_backward", g, a)


class Erf(Function):
    def forward(self, a):
        self.save_for_backward(a)
        return unary_kernel("erf", a)

    def backward(self, g):
        (a,) = self.saved_tensors
        return binary_kernel("erf_backward", g, a)


class Sqrt(Function):
    def forward(self, a):
        y = unary_kernel("sqrt", a)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        (y,) = self.saved_tensors
        return binary_kernel("sqrt_backward", g, y)


class Square(Function):
    def forward(self, a):
        self.save_for_backward(a)
        return unary_kernel("square", a)

    def backward(self, g):
        (a,) = self.saved_tensors
        return binary_kernel("square_backward", g, a)


class Abs(Function):
    def forward(self, a):
        self.save_for_backward(a)
        return unary_kernel("abs", a)

    def backward(self, g):
        (a,) = self.saved_tensors
        return binary_kernel("abs_backward", g, a)


class Pow(Function):
    def forward(self, a, exponent: float):
        self.exponent = exponent
        self.save_for_backward(a)
        return _unary_p("pow", a, exponent)

    def backward(self, g):
        (a,) = self.saved_tensors
        return _binary_p("pow_backward", g, a, self.exponent)


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


def exp(input) -> Tensor:
    return Exp.apply(_t(input, "exp"))


def log(input) -> Tensor:
    return Log.apply(_t(input, "log"))


def sigmoid(input) -> Tensor:
    return Sigmoid.apply(_t(input, "sigmoid"))


def tanh(input) -> Tensor:
    return Tanh.apply(_t(input, "tanh"))


def gelu(input, approximate: str = "none") -> Tensor:
    if approximate != "none":
        raise ValueError(f"gelu: approximate={approximate!r} is not supported; only 'none' (the erf form)")
    return Gelu.apply(_t(input, "gelu"))


def erf(input) -> Tensor:
    return Erf.apply(_t(input, "erf"))


def sqrt(input) -> Tensor:
    return Sqrt.apply(_t(input, "sqrt"))


def square(input) -> Tensor:
    return Square.apply(_t(input, "square"))


def abs(input) -> Tensor:  # noqa: A001 - torch's name
    return Abs.apply(_t(input, "abs"))


def pow(input, exponent) -> Tensor:  # noqa: A001 - torch's name
    if isinstance(exponent, Tensor):
        if exponent.numel() != 1 or exponent.requires_grad:
            raise TypeError("pow: only a scalar exponent is supported (a Python number or a 1-element tensor without grad)")
        exponent = exponent.item()
    if not isinstance(exponent, numbers.Real) or isinstance(exponent, bool):
        raise TypeError(f"pow: exponent must be a real number, got {type(exponent).__name__}")
    return Pow.apply(_t(input, "pow"), float(exponent))


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


__all__ = [
    "abs",
    "clamp",
    "clip",
    "erf",
    "exp",
    "gelu",
    "log",
    "maximum",
    "minimum",
    "pow",
    "sigmoid",
    "sqrt",
    "square",
    "tanh",
    "where",
]
