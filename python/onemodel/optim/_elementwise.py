"""The element-wise arithmetic of the NumPy-stepped optimizers (Adadelta,
Adagrad, RMSprop, Adamax, NAdam, RAdam).

Each update is a fixed sequence of float32 operations on NumPy arrays that
view the parameters and state in place: every operation is one IEEE
binary32 add, subtract, multiply, divide, square root, absolute value or
maximum, rounded separately (NumPy evaluates one ufunc at a time, never
fusing them), so the result is the same bits on every machine and NumPy
build. Scalars are computed in double precision and rounded once to
binary32 where they meet a tensor, as torch casts a Python scalar to the
tensor's dtype. Torch's operators are written out in its order:

* ``a.add(b, alpha=s)``       → a + f32(s)·b
* ``a.addcmul_(b, c, value=s)`` → a + (f32(s)·b)·c
* ``a.addcdiv_(b, c, value=s)`` → a + (f32(s)·b)/c
* ``a.lerp_(b, w)``           → a + f32(w)·(b − a) if |w| < 0.5,
                                 else b − (b − a)·(1 − f32(w))

β^t is the running double product of the steps (as Adam's, docs/optim.md),
and NAdam's 0.96^x is ``det_exp(x·ln 0.96)``, a double exp built from IEEE
operations in a fixed order (no libm), so the scalars are the same on every
platform too.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _core
from ..tensor import Tensor

F32 = np.float32


def f32(x: float) -> np.float32:
    return np.float32(x)


def view(t: Tensor) -> np.ndarray:
    """A writable NumPy view of a tensor's elements (no copy)."""
    return t._storage.numpy(list(t._shape), list(t._strides), t._offset)


def add_scaled(a: np.ndarray, s: float, b: np.ndarray) -> np.ndarray:
    """torch's a.add(b, alpha=s): a + f32(s)·b."""
    return a + f32(s) * b


def addcmul(a: np.ndarray, s: float, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """torch's a.addcmul(b, c, value=s): a + (f32(s)·b)·c."""
    return a + (f32(s) * b) * c


def addcdiv(a: np.ndarray, s: float, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """torch's a.addcdiv(b, c, value=s): a + (f32(s)·b)/c."""
    return a + (f32(s) * b) / c


def lerp(a: np.ndarray, b: np.ndarray, weight: float) -> np.ndarray:
    """torch's a.lerp(b, weight) with a scalar weight."""
    w = f32(weight)
    if abs(w) < 0.5:
        return a + w * (b - a)
    return b - (b - a) * (F32(1.0) - w)


def beta_power(beta: float, t: int) -> float:
    """β^t as the running double product ((1·β)·β)·… (t factors)."""
    return _core.beta_power(float(beta), int(t))


_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
# 1/k! for k = 13 .. 2, for Horner's rule on r (|r| <= ln2/2).
_INV_FACT = [1.0 / math.factorial(k) for k in range(13, 1, -1)]


def det_exp(x: float) -> float:
    """exp(x) in double precision from IEEE operations in a fixed order:
    x = k·ln2 + r (Cody-Waite, two-part ln2), exp(r) by a degree-13 Taylor
    polynomial in Horner form, then scaled by 2^k (exact). Within a couple
    of ulps of the correctly rounded value for |x| < 700; the same bits on
    every platform (Python floats are IEEE doubles and CPython does not
    fuse operations)."""
    if x != x:
        return x
    if x > 709.0:
        return math.inf
    if x < -745.0:
        return 0.0
    k = math.floor(x * _INV_LN2 + 0.5)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    p = _INV_FACT[0]
    for c in _INV_FACT[1:]:
        p = p * r + c
    p = p * r + 1.0
    p = p * r + 1.0
    return math.ldexp(p, int(k))


# ln(0.96) for the double 0.96, correctly rounded (decimal arithmetic at 60
# digits), pinned as a literal so no libm log is involved.
LN_0_96 = -0.040821994520255166
