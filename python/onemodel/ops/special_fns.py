"""The torch.special functions that are not plain aliases: ``entr``,
``xlog1py`` and ``ndtr``, with torch's forward and backward
(derivatives.yaml). Logs and erf are the library's fixed functions (Rust
lane loops); selections are exact (NumPy)."""

from __future__ import annotations

import math

import numpy as np

from .._kernels import binary_kernel, sum_to, unary_kernel
from ..autograd.function import Function
from ..tensor import Tensor, float32
from .binary_math import _f, _mul, _x_log_backward
from .npwise import compute

F32 = np.float32


class Entr(Function):
    """−x·log(x) for x > 0, 0 at 0, −inf below 0 (NaN stays NaN);
    backward g·(−(1 + log x))."""

    def forward(self, x):
        log_x = unary_kernel("log", x)
        self.save_for_backward(log_x)
        fn = lambda a, la: np.where(np.isnan(a), a, np.where(a > 0, -(a * la), np.where(a == 0, F32(0), F32(-np.inf))))  # noqa: E731
        return compute("entr", fn, [x, log_x], float32)

    def backward(self, g):
        (log_x,) = self.saved_tensors
        return compute("entr_backward", lambda gg, la: gg * -(F32(1) + la), [g, log_x], float32)


class Xlog1py(Function):
    """x·log1p(y), 0 where x = 0 unless y is NaN; backward xlog1py(g, y)
    (0 where x = 0 and y ≤ −1) and g·x/(1 + y)."""

    def forward(self, x, y):
        l1p = unary_kernel("log1p", y)
        self.save_for_backward(x, y, l1p)
        fn = lambda a, b, lb: np.where(np.isnan(b), F32(np.nan), np.where(a == 0, F32(0), a * lb))  # noqa: E731
        return compute("xlog1py", fn, [x, y, l1p], float32)

    def backward(self, g):
        x, y, l1p = self.saved_tensors
        (sx, _), (sy, _) = self.input_meta
        gx = gy = None
        if self.needs_input_grad[0]:
            fn = lambda gg, a, b, lb: _x_log_backward(gg, a, b, lb, F32(-1))  # noqa: E731
            gx = sum_to(compute("xlog1py_backward", fn, [g, x, y, l1p], float32), sx)
        if self.needs_input_grad[1]:
            one_plus = compute("xlog1py", lambda b: F32(1) + b, [y], float32)
            gy = sum_to(binary_kernel("div", _mul(g, x), one_plus), sy)
        return gx, gy


_SQRT1_2 = F32(math.sqrt(0.5))
_INV_SQRT_2PI = F32(1.0 / math.sqrt(2.0 * math.pi))


class Ndtr(Function):
    """The standard normal CDF in Cephes' form (``ndtr``, as SciPy's): with
    z = |x/√2|, 0.5 + 0.5·erf(x/√2) for z < √½, else 0.5·erfc(z), mirrored
    (1 − y) for x > 0, so the lower tail keeps its relative accuracy
    (torch 2.15's float32 ndtr is a multiple of 2⁻²⁵ there, and 0 from x = −5.6
    down); backward
    g·exp(−x²/2)/√(2π)."""

    def forward(self, x):
        t = compute("ndtr", lambda a: a * _SQRT1_2, [x], float32)
        z = compute("ndtr", np.abs, [t], float32)
        erf_t, erfc_z = unary_kernel("erf", t), unary_kernel("erfc", z)
        self.save_for_backward(x)

        def fn(tt, zz, e, ec):
            y = np.where(zz < _SQRT1_2, F32(0.5) + F32(0.5) * e, F32(0.5) * ec)
            return np.where((zz >= _SQRT1_2) & (tt > 0), F32(1) - y, y)

        return compute("ndtr", fn, [t, z, erf_t, erfc_z], float32)

    def backward(self, g):
        (x,) = self.saved_tensors
        e = unary_kernel("exp", compute("ndtr_backward", lambda a: -(a * a) / F32(2), [x], float32))
        return compute("ndtr_backward", lambda gg, ee: gg * (ee * _INV_SQRT_2PI), [g, e], float32)


def entr(input) -> Tensor:
    return Entr.apply(_f(input, "entr"))


def xlog1py(input, other) -> Tensor:
    return Xlog1py.apply(_f(input, "xlog1py"), _f(other, "xlog1py"))


def ndtr(input) -> Tensor:
    return Ndtr.apply(_f(input, "ndtr"))
