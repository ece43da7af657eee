"""Rounding and sign: sign/sgn, floor, ceil, trunc/fix, round (half to even,
``decimals=``), frac, nan_to_num, and the one-IEEE-operation maps
reciprocal, rsqrt, deg2rad, rad2deg; each a Function with torch's backward
(derivatives.yaml):

* sign, floor, ceil, trunc, round: zero (the functions are piecewise
  constant; torch returns zeros, also at the jumps);
* frac: g; nan_to_num: g where the input is finite, else 0;
* reciprocal: −g·(y·y); rsqrt: (−0.5·g)·(y·y·y);
* deg2rad/rad2deg: g times the same binary32 constant.

Rounding and sign are exact (NumPy, ops/npwise.py); reciprocal, rsqrt and
the degree conversions are one or two IEEE operations per element on the
Rust lane loops. int64 inputs: the rounding functions return a copy, sign
the integer sign, the others compute in float32 as torch promotes.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._kernels import binary_kernel, clone_contiguous, scalar_tensor, unary_kernel
from ..autograd.function import Function
from ..tensor import Tensor, float32
from .npwise import compute, f32, floating_operand


def _tensor(x, op: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    return x


def _zeros(shape) -> Tensor:
    return Tensor._empty(shape, float32, zeroed=True)


class _Constant(Function):
    """A piecewise-constant map (zero gradient)."""

    def forward(self, a, op: str, fn):
        self.name = op
        return compute(op, fn, [a], float32)

    def backward(self, g):
        return _zeros(g._shape)


class _PassThrough(Function):
    """A map whose slope is 1 where `mask(x)` holds, else 0 (frac: always)."""

    def forward(self, a, op: str, fn, mask=None):
        self.name = op
        self.mask = mask
        if mask is not None:
            self.save_for_backward(a)
        return compute(op, fn, [a], float32)

    def backward(self, g):
        if self.mask is None:
            return g
        (a,) = self.saved_tensors
        keep = compute("backward", lambda x: self.mask(x).astype(np.float32), [a], float32)
        return binary_kernel("mul", g, keep)


def _rounding(op: str, input, fn):
    x = _tensor(input, op)
    if x.dtype is not float32:
        return clone_contiguous(x)
    return _Constant.apply(x, op, fn)


def floor(input) -> Tensor:
    return _rounding("floor", input, np.floor)


def ceil(input) -> Tensor:
    return _rounding("ceil", input, np.ceil)


def trunc(input) -> Tensor:
    return _rounding("trunc", input, np.trunc)


fix = trunc


def round(input, *, decimals: int = 0) -> Tensor:  # noqa: A001 - torch's name
    """Half to even; with ``decimals`` as torch: rint(x·10^d)/10^d (for d < 0:
    rint(x/10^−d)·10^−d), 10^|d| rounded to binary32 once."""
    if not isinstance(decimals, numbers.Integral) or isinstance(decimals, bool):
        raise TypeError(f"round: decimals must be an int, got {type(decimals).__name__}")
    if decimals == 0:
        return _rounding("round", input, np.rint)
    ten = f32(math.pow(10, abs(decimals)))
    if decimals > 0:
        fn = lambda x: np.rint(x * ten) / ten  # noqa: E731
    else:
        fn = lambda x: np.rint(x / ten) * ten  # noqa: E731
    return _rounding("round", input, fn)


def _sign_f32(x):
    # torch: (0 < x) − (x < 0): +0 for ±0 and for NaN.
    return (x > 0).astype(np.float32) - (x < 0).astype(np.float32)


def sign(input) -> Tensor:
    x = _tensor(input, "sign")
    if x.dtype is not float32:
        return compute("sign", np.sign, [x], x.dtype)
    return _Constant.apply(x, "sign", _sign_f32)


sgn = sign


def frac(input) -> Tensor:
    x = _tensor(input, "frac")
    if x.dtype is not float32:
        raise TypeError(f"frac: not implemented for {x.dtype.name} tensors (as torch)")
    return _PassThrough.apply(x, "frac", lambda v: v - np.trunc(v))


def nan_to_num(input, nan: float = 0.0, posinf=None, neginf=None) -> Tensor:
    x = _tensor(input, "nan_to_num")
    if x.dtype is not float32:
        return clone_contiguous(x)
    info = np.finfo(np.float32)
    vals = (f32(nan), f32(info.max if posinf is None else posinf), f32(info.min if neginf is None else neginf))

    def fn(v):
        v = np.where(np.isnan(v), vals[0], v)
        v = np.where(v == np.inf, vals[1], v)
        return np.where(v == -np.inf, vals[2], v)

    return _PassThrough.apply(x, "nan_to_num", fn, np.isfinite)


# -- one or two IEEE operations on the lane loops ----------------------------------

class Reciprocal(Function):
    def forward(self, a):
        y = binary_kernel("div", scalar_tensor(1.0), a)
        self.save_for_backward(y)
        return y

    def backward(self, g):
        (y,) = self.saved_tensors
        return unary_kernel("neg", binary_kernel("mul", g, binary_kernel("mul", y, y)))


class Rsqrt(Function):
    def forward(self, a):
        y = binary_kernel("div", scalar_tensor(1.0), unary_kernel("sqrt", a))
        self.save_for_backward(y)
        return y

    def backward(self, g):
        (y,) = self.saved_tensors
        cube = binary_kernel("mul", binary_kernel("mul", y, y), y)
        return binary_kernel("mul", binary_kernel("mul", scalar_tensor(-0.5), g), cube)


class _Scale(Function):
    """x·c for a binary32 constant c (deg2rad, rad2deg); backward g·c."""

    def forward(self, a, op: str, c: float):
        self.name, self.c = op, c
        return binary_kernel("mul", a, scalar_tensor(c))

    def backward(self, g):
        return binary_kernel("mul", g, scalar_tensor(self.c))


def reciprocal(input) -> Tensor:
    return Reciprocal.apply(floating_operand(_tensor(input, "reciprocal"), "reciprocal"))


def rsqrt(input) -> Tensor:
    return Rsqrt.apply(floating_operand(_tensor(input, "rsqrt"), "rsqrt"))


# torch multiplies by these double constants, rounded to the tensor's dtype.
_PI_180 = 0.017453292519943295769236907684886127134428718885417
_180_PI = 57.295779513082320876798154814105170332405472466564


def deg2rad(input) -> Tensor:
    return _Scale.apply(floating_operand(_tensor(input, "deg2rad"), "deg2rad"), "deg2rad", _PI_180)


def rad2deg(input) -> Tensor:
    return _Scale.apply(floating_operand(_tensor(input, "rad2deg"), "rad2deg"), "rad2deg", _180_PI)


__all__ = ["ceil", "deg2rad", "fix", "floor", "frac", "nan_to_num", "rad2deg", "reciprocal", "round", "rsqrt", "sgn", "sign", "trunc"]
