"""The transcendental functions added by the math work: sin cos tan, asin
acos atan atan2, sinh cosh asinh acosh atanh, expm1 log1p exp2 log2 log10, erfc erfinv,
sinc, logaddexp/logaddexp2 and pow with a tensor exponent, each a Function
with torch's backward formula (derivatives.yaml), forward next to backward.

Every forward value is one of onemodel's fixed functions (rust/src/math:
polynomials and float-float compositions of IEEE operations, the same bits
on every kernel path, ≤ 2 ulp; docs/numerics.md); the backward formulas
compose the fixed functions with binary32 IEEE operations in torch's order.
int64/bool inputs compute in float32, as torch promotes them.
"""

from __future__ import annotations

import numpy as np

from .._kernels import binary_kernel, unary_kernel
from ..autograd.function import Function
from ..tensor import Tensor, float32
from .npwise import compute, floating_operand

F32 = np.float32
_LN2 = F32(0.693147180559945309417232121458176568)
_LN10 = F32(2.30258509299404568401799145468436421)
_PI = F32(np.pi)


def _u(op: str, a: Tensor) -> Tensor:
    return unary_kernel(op, a)


def _np(op: str, fn, *ts) -> Tensor:
    return compute(op, fn, list(ts), float32)


# -- backward rules: (g, x, y) → dx, in torch's operation order ------------------------

def _sin_b(g, x, y):
    return binary_kernel("mul", g, _u("cos", x))


def _cos_b(g, x, y):
    return binary_kernel("mul", g, _u("neg", _u("sin", x)))


def _tan_b(g, x, y):
    return _np("tan_backward", lambda gg, yy: gg * (F32(1) + yy * yy), g, y)


def _asin_b(g, x, y):
    return _np("asin_backward", lambda gg, v: gg * (F32(1) / np.sqrt(-v * v + F32(1))), g, x)


def _acos_b(g, x, y):
    return _np("acos_backward", lambda gg, v: gg * -(F32(1) / np.sqrt(-v * v + F32(1))), g, x)


def _atan_b(g, x, y):
    return _np("atan_backward", lambda gg, v: gg / (v * v + F32(1)), g, x)


def _sinh_b(g, x, y):
    return binary_kernel("mul", g, _u("cosh", x))


def _cosh_b(g, x, y):
    return binary_kernel("mul", g, _u("sinh", x))


def _asinh_b(g, x, y):
    return _np("asinh_backward", lambda gg, v: gg * (F32(1) / np.sqrt(v * v + F32(1))), g, x)


def _acosh_b(g, x, y):
    return _np("acosh_backward", lambda gg, v: gg * (F32(1) / np.sqrt(v * v - F32(1))), g, x)


def _atanh_b(g, x, y):
    return _np("atanh_backward", lambda gg, v: gg * F32(1) / (F32(1) - v * v), g, x)


def _expm1_b(g, x, y):
    return _np("expm1_backward", lambda gg, yy: gg * (yy + F32(1)), g, y)


def _log1p_b(g, x, y):
    return _np("log1p_backward", lambda gg, v: gg / (v + F32(1)), g, x)


def _exp2_b(g, x, y):
    return _np("exp2_backward", lambda gg, yy: gg * yy * _LN2, g, y)


def _log2_b(g, x, y):
    return _np("log2_backward", lambda gg, v: gg / (v * _LN2), g, x)


def _log10_b(g, x, y):
    return _np("log10_backward", lambda gg, v: gg / (v * _LN10), g, x)


def _erfc_b(g, x, y):
    # torch: −2/√π·e^(−x²)·g; the fixed erf slope on the exact −x², negated.
    return _u("neg", binary_kernel("erf_backward", g, x))


_HALF_SQRT_PI = F32(0.886226925452758013649083741671)


def _erfinv_b(g, x, y):
    # torch: 0.5·√π·e^(y²)·g with y = erfinv(x), in that order.
    e = _u("exp", binary_kernel("mul", y, y))
    return _np("erfinv_backward", lambda gg, ee: (_HALF_SQRT_PI * ee) * gg, g, e)


_BACKWARD = {
    "sin": _sin_b, "cos": _cos_b, "tan": _tan_b, "asin": _asin_b, "acos": _acos_b, "atan": _atan_b,
    "sinh": _sinh_b, "cosh": _cosh_b, "asinh": _asinh_b, "acosh": _acosh_b, "atanh": _atanh_b,
    "expm1": _expm1_b, "log1p": _log1p_b, "exp2": _exp2_b, "log2": _log2_b, "log10": _log10_b,
    "erfc": _erfc_b, "erfinv": _erfinv_b,
}


class FixedUnary(Function):
    """y = f(x) for a fixed function f of the Rust kernels; backward by rule."""

    def forward(self, a, op: str):
        self.name = op
        y = _u(op, a)
        self.save_for_backward(a, y)
        return y

    def backward(self, g):
        a, y = self.saved_tensors
        return _BACKWARD[self.name](g, a, y)


def _operand(x, op: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    return floating_operand(x, op)


def _unary(op: str):
    def fn(input) -> Tensor:
        return FixedUnary.apply(_operand(input, op), op)

    fn.__name__ = op
    fn.__doc__ = f"torch.{op}: onemodel's fixed {op} (docs/numerics.md), torch's backward."
    return fn


sin, cos, tan = _unary("sin"), _unary("cos"), _unary("tan")
asin, acos, atan = _unary("asin"), _unary("acos"), _unary("atan")
sinh, cosh = _unary("sinh"), _unary("cosh")
asinh, acosh, atanh = _unary("asinh"), _unary("acosh"), _unary("atanh")
expm1, log1p, exp2 = _unary("expm1"), _unary("log1p"), _unary("exp2")
log2, log10 = _unary("log2"), _unary("log10")
erfc, erfinv = _unary("erfc"), _unary("erfinv")
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh
special_expm1, special_exp2, special_log1p, special_erfc, special_erfinv = expm1, exp2, log1p, erfc, erfinv


# -- atan2 ------------------------------------------------------------------------------

def _atan2_recip(a, b):
    s = a * a + b * b
    return np.where(s == 0, F32(0), F32(1) / s)


class Atan2(Function):
    def forward(self, y, x):
        self.save_for_backward(y, x)
        return binary_kernel("atan2", y, x)

    def backward(self, g):
        from .._kernels import sum_to

        y, x = self.saved_tensors
        (sy, _), (sx, _) = self.input_meta
        # torch 2.x: 1/(y² + x²), set to 0 where that sum is exactly 0 (at
        # the origin, or where both squares underflow), so the gradient
        # there is ±0, not NaN; a subnormal sum still gives ±inf.
        recip = _np("atan2_backward", _atan2_recip, y, x)
        gy = sum_to(_np("atan2_backward", lambda gg, b, r: gg * b * r, g, x, recip), sy) if self.needs_input_grad[0] else None
        gx = sum_to(_np("atan2_backward", lambda gg, a, r: gg * -a * r, g, y, recip), sx) if self.needs_input_grad[1] else None
        return gy, gx


def _f(x, op: str) -> Tensor:
    from .arith import as_tensor_operand

    return as_tensor_operand(floating_operand(x, op), op)


def atan2(input, other) -> Tensor:
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("atan2: at least one operand must be a Tensor")
    return Atan2.apply(_f(input, "atan2"), _f(other, "atan2"))


arctan2 = atan2


# -- pow with a tensor exponent ---------------------------------------------------------------

class PowTensor(Function):
    """x^p element-wise; dx = g·(p·x^(p−1)) (0 where p = 0),
    dp = g·(y·ln x) (0 where x = 0 and p ≥ 0), as torch."""

    def forward(self, x, p):
        y = binary_kernel("pow", x, p)
        self.save_for_backward(x, p, y)
        return y

    def backward(self, g):
        from .._kernels import sum_to

        x, p = self.saved_tensors[:2]
        y = self.saved_tensors[2]
        (sx, _), (sp, _) = self.input_meta
        gx = gp = None
        if self.needs_input_grad[0]:
            pm1 = _np("pow_backward", lambda e: e - F32(1), p)
            slope = _np("pow_backward", lambda e, q: np.where(e == 0, F32(0), e * q), p, binary_kernel("pow", x, pm1))
            gx = sum_to(binary_kernel("mul", g, slope), sx)
        if self.needs_input_grad[1]:
            fn = lambda gg, b, e, r, lb: gg * np.where((b == 0) & (e >= 0), F32(0), r * lb)  # noqa: E731
            gp = sum_to(_np("pow_backward", fn, g, x, p, y, _u("log", x)), sp)
        return gx, gp


def pow_tensor(input, exponent) -> Tensor:
    return PowTensor.apply(_f(input, "pow"), _f(exponent, "pow"))


def float_power(input, exponent) -> Tensor:
    raise TypeError("float_power: the result is float64, which onemodel does not compute in (use pow in float32)")


# -- sinc, logaddexp, logaddexp2 ------------------------------------------------------------

class Sinc(Function):
    def forward(self, x):
        self.save_for_backward(x)
        px = _np("sinc", lambda v: _PI * v, x)
        s = _u("sin", px)
        return _np("sinc", lambda v, p, sv: np.where(v == 0, F32(1), sv / p), x, px, s)

    def backward(self, g):
        (x,) = self.saved_tensors
        px = _np("sinc", lambda v: _PI * v, x)
        s, c = _u("sin", px), _u("cos", px)
        # 0 where torch's denominator x·x·π is 0 — at 0 and wherever x²
        # underflows (|x| < 2e-23), which would otherwise give 0/0 = NaN.
        fn = lambda gg, v, p, sv, cv: gg * np.where(v * v * _PI == 0, F32(0), (p * cv - sv) / (p * v))  # noqa: E731
        return _np("sinc_backward", fn, g, x, px, s, c)


def sinc(input) -> Tensor:
    return Sinc.apply(_operand(input, "sinc"))


class LogAddExp(Function):
    """torch's kernel: a if both are the same infinity, else
    max + log1p(exp(−|a − b|)) (base 2: log1p(exp2(−|a − b|))/ln 2)."""

    def forward(self, a, b, base2: bool):
        self.base2 = base2
        self.save_for_backward(a, b)
        d = _np("logaddexp", lambda x, y: -np.abs(x - y), a, b)
        if base2:
            t = _np("logaddexp2", lambda v: v / _LN2, _u("log1p", _u("exp2", d)))
        else:
            t = _u("log1pexp", d)
        fn = lambda x, y, tv: np.where(np.isinf(x) & (x == y), x, np.maximum(x, y) + tv)  # noqa: E731
        return _np("logaddexp", fn, a, b, t)

    def backward(self, g):
        from .._kernels import sum_to

        a, b = self.saved_tensors
        (sa, _), (sb, _) = self.input_meta
        grow = "exp2" if self.base2 else "exp"

        def share(x, y):
            e = _u(grow, _np("logaddexp", lambda u, v: u - v, y, x))
            return _np("logaddexp_backward", lambda gg, ev: gg / (F32(1) + ev), g, e)

        ga = sum_to(share(a, b), sa) if self.needs_input_grad[0] else None
        gb = sum_to(share(b, a), sb) if self.needs_input_grad[1] else None
        return ga, gb


def logaddexp(input, other) -> Tensor:
    return LogAddExp.apply(_f(input, "logaddexp"), _f(other, "logaddexp"), False)


def logaddexp2(input, other) -> Tensor:
    return LogAddExp.apply(_f(input, "logaddexp2"), _f(other, "logaddexp2"), True)


__all__ = [
    "acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "asin", "asinh", "atan",
    "atan2", "atanh", "cos", "cosh", "exp2", "expm1", "float_power", "log10", "log1p", "log2", "logaddexp", "logaddexp2",
    "sin", "sinc", "sinh", "tan",
]
