"""Element-wise transcendental operators: exp, log, sigmoid, tanh, gelu,
erf, sqrt, square, pow (scalar exponent) and abs, each a Function with its
backward rule (the selections clamp, maximum/minimum and where are in
ops/selection.py).

Every forward and backward runs on the Rust lane loops (docs/numerics.md):
the fixed transcendentals in both modes, the same bits on every kernel path;
exact mode writes NaN results as 0x7FC00000. Backward rules follow
torch's derivatives (autograd/derivatives.yaml):

* exp: g·y; log: g/x; sigmoid: g·(y·(1 − y)); tanh: g·(1 − y²);
* gelu: g·(Φ(x) + x·φ(x)) (recomputed from x); erf: g·(2/√π)·e^(−x²);
* sqrt: g/(2y); square: g·(2x); pow: g·(p·x^(p−1)) (0 for p = 0);
* abs: g·sign(x).
"""

from __future__ import annotations

import numbers

from .. import _core
from ..autograd.function import Function
from ..tensor import Tensor, float32
from .._kernels import binary_kernel, unary_kernel
from .arith import as_tensor_operand


def _unary_p(op: str, a: Tensor, p=None, q=None) -> Tensor:
    out = Tensor._empty(a._shape)
    _core.unary(op, out, a, p, q)
    return out


def _binary_p(op: str, a: Tensor, b: Tensor, p=None, q=None) -> Tensor:
    out = Tensor._empty(a._shape)
    _core.binary(op, out, a, b, p, q)
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
    # Saves the input only: the slope is recomputed in backward (gelu_slope, docs/numerics.md, "Methods, per function").
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
    if approximate == "tanh":
        from .activation import GeluTanh

        return GeluTanh.apply(_t(input, "gelu"))
    if approximate != "none":
        raise RuntimeError(f"gelu: approximate argument must be either none or tanh, got {approximate!r}")
    return Gelu.apply(_t(input, "gelu"))


def erf(input) -> Tensor:
    return Erf.apply(_t(input, "erf"))


def sqrt(input) -> Tensor:
    return Sqrt.apply(_t(input, "sqrt"))


def square(input) -> Tensor:
    return Square.apply(_t(input, "square"))


def abs(input) -> Tensor:  # noqa: A001 - torch's name
    if isinstance(input, Tensor) and input.dtype is not float32:
        import numpy as np

        from .npwise import compute

        return compute("abs", np.abs, [input], input.dtype)
    return Abs.apply(_t(input, "abs"))


def _pow_tensor_exponent(input, exponent) -> Tensor:
    from .transcendental import pow_tensor

    return pow_tensor(input, exponent)


def pow(input, exponent) -> Tensor:  # noqa: A001 - torch's name
    from .npwise import all_integral

    if not isinstance(input, Tensor):
        if not isinstance(exponent, Tensor):
            raise TypeError("pow: at least one operand must be a Tensor")
        if all_integral(input, exponent):
            from .division import int_pow

            return int_pow(input, exponent)
        return _pow_tensor_exponent(input, exponent)
    if isinstance(input, Tensor) and input.dtype is not float32:
        if all_integral(input, exponent):
            from .division import int_pow

            return int_pow(input, exponent)
        from .npwise import floating_operand

        input = floating_operand(input, "pow")
    if isinstance(exponent, Tensor) and exponent.dtype is not float32 and exponent.numel() == 1:
        exponent = exponent.item()
    if isinstance(exponent, Tensor):
        if exponent.numel() != 1 or exponent.requires_grad or exponent.dim() > input.dim():
            return _pow_tensor_exponent(input, exponent)
        exponent = exponent.item()
    if not isinstance(exponent, numbers.Real) or isinstance(exponent, bool):
        raise TypeError(f"pow: exponent must be a real number, got {type(exponent).__name__}")
    return Pow.apply(_t(input, "pow"), float(exponent))


__all__ = [
    "abs",
    "erf",
    "exp",
    "gelu",
    "log",
    "pow",
    "sigmoid",
    "sqrt",
    "square",
    "tanh",
]
