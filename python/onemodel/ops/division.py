"""Division in all of torch's forms and arithmetic across dtypes:
``divide(rounding_mode=)``/``true_divide``, ``floor_divide`` (``//``),
``remainder`` (``%``, the divisor's sign), ``fmod`` (the dividend's sign),
and the int64/bool forms of ``+ - * /`` with torch's promotion (used by
ops/arith.py when an operand is not float32).

Float rules are torch's (div_floor_floating and the remainder kernel): the
quotient of floor division comes from fmod so that it is exact, and a
remainder that is zero keeps fmod's sign. Integer division by zero raises
RuntimeError, as torch does. Gradients (derivatives.yaml): remainder
g and −g·floor(a/b); fmod g and −g·trunc(a/b); the rounding modes of
divide give zero; floor_divide has none (torch's is not implemented).
"""

from __future__ import annotations

import numpy as np

from .._kernels import binary_kernel, sum_to, unary_kernel
from ..autograd.function import Function
from ..tensor import Tensor, bool_, float32, int64
from .npwise import (
    all_integral,
    check_int_divisor,
    compute,
    floating_operand,
    floor_divide_f32,
    remainder_f32,
    result_dtype,
    trunc_divide_f32,
)


def _operands(op: str, a, b):
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"{op}: at least one operand must be a Tensor")
    return a, b


def _as_f32_tensor(x, op: str) -> Tensor:
    from .arith import as_tensor_operand

    return as_tensor_operand(floating_operand(x, op), op)


class _DivRemainder(Function):
    """remainder / fmod of float32 tensors: g to a, −g·q to b with q the
    floor (remainder) or truncated (fmod) quotient."""

    def forward(self, a, b, op: str, fn, quotient):
        self.name, self.quotient = op, quotient
        self.save_for_backward(a, b)
        return compute(op, fn, [a, b], float32)

    def backward(self, g):
        a, b = self.saved_tensors
        (sa, _), (sb, _) = self.input_meta
        ga = sum_to(g, sa) if self.needs_input_grad[0] else None
        gb = None
        if self.needs_input_grad[1]:
            q = compute("backward", self.quotient, [a, b], float32)
            gb = sum_to(binary_kernel("mul", unary_kernel("neg", g), q), sb)
        return ga, gb


def _int_trunc_divide(a, b):
    q = np.floor_divide(a, b)
    return np.where((np.remainder(a, b) != 0) & ((a < 0) != (b < 0)), q + 1, q)


def _integral_or(op: str, input, other, int_fn):
    """The operands, and the int64 result when they are integral (the
    divisor checked for zero as torch does), else None (float32 follows)."""
    a, b = _operands(op, input, other)
    dt = result_dtype(op, a, b)
    if dt is float32:
        return a, b, None
    check_int_divisor(op, b, dt)
    return a, b, compute(op, int_fn, [a, b], int64)


def remainder(input, other) -> Tensor:
    a, b, r = _integral_or("remainder", input, other, np.remainder)
    if r is not None:
        return r
    return _DivRemainder.apply(_as_f32_tensor(a, "remainder"), _as_f32_tensor(b, "remainder"), "remainder", remainder_f32, floor_divide_f32)


def fmod(input, other) -> Tensor:
    a, b, r = _integral_or("fmod", input, other, np.fmod)
    if r is not None:
        return r
    return _DivRemainder.apply(_as_f32_tensor(a, "fmod"), _as_f32_tensor(b, "fmod"), "fmod", np.fmod, trunc_divide_f32)


def floor_divide(input, other) -> Tensor:
    a, b, r = _integral_or("floor_divide", input, other, np.floor_divide)
    if r is not None:
        return r
    return compute("floor_divide", floor_divide_f32, [a, b], float32)


class _RoundedDivide(Function):
    """divide with rounding_mode on float32: zero gradients (as torch)."""

    def forward(self, a, b, fn):
        return compute("div", fn, [a, b], float32)

    def backward(self, g):
        (sa, _), (sb, _) = self.input_meta
        z = Tensor._empty(g._shape, float32, zeroed=True)
        return sum_to(z, sa), sum_to(z, sb)


def divide(input, other, *, rounding_mode=None) -> Tensor:
    from . import arith

    if rounding_mode is None:
        return arith.div(input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found {rounding_mode!r}")
    int_fn = np.floor_divide if rounding_mode == "floor" else _int_trunc_divide
    a, b, r = _integral_or("div", input, other, int_fn)
    if r is not None:
        return r
    fn = floor_divide_f32 if rounding_mode == "floor" else trunc_divide_f32
    return _RoundedDivide.apply(_as_f32_tensor(a, "div"), _as_f32_tensor(b, "div"), fn)


def true_divide(input, other) -> Tensor:
    from . import arith

    return arith.div(input, other)


# -- + − × / with an int64 or bool tensor ------------------------------------------

_INT = {"add": np.add, "sub": np.subtract, "mul": np.multiply}


def promoted(op: str, cls, a, b) -> Tensor:
    """``cls`` (a float32 Function of ops/arith.py) on promoted operands, or
    the integer operation when no operand is floating (true division always
    computes in float32, as torch)."""
    from .arith import as_tensor_operand

    if op == "div" or not all_integral(a, b):
        return cls.apply(as_tensor_operand(floating_operand(a, op), op), as_tensor_operand(floating_operand(b, op), op))
    dt = result_dtype(op, a, b)
    if dt is bool_:
        if op == "sub":
            raise RuntimeError("sub: subtraction, the `-` operator, with two bool tensors is not supported; use the `^` or logical_xor() operator instead")
        return compute(op, np.logical_or if op == "add" else np.logical_and, [a, b], bool_)
    return compute(op, _INT[op], [a, b], int64)


def int_pow(a, exponent) -> Tensor:
    """int64 (or bool) tensor ** int: int64 with wrap-around, as torch; a
    negative exponent is refused as torch refuses it."""
    if isinstance(exponent, Tensor):
        if bool(np.any(exponent.numpy(force=True) < 0)):
            raise RuntimeError("pow: Integers to negative integer powers are not allowed.")
    elif exponent < 0:
        raise RuntimeError("pow: Integers to negative integer powers are not allowed.")
    return compute("pow", np.power, [a, exponent], int64)


__all__ = ["divide", "floor_divide", "fmod", "remainder", "true_divide"]
