"""Element-wise binary and ternary maps: copysign, heaviside, fmax/fmin,
hypot, lerp, addcmul, addcdiv, xlogy and logit, each with torch's backward
(derivatives.yaml):

* copysign: g·(y/x) (0 where x = 0) to x, zero to the sign source;
* fmax (fmin): g to the larger (smaller) input or to the one that is not
  NaN, g/2 to each on a tie;
* hypot: g·x/y and g·o/y with y the result;
* lerp: g·(1 − w), g·w, and g·(end − start) to a tensor weight;
* addcmul: g, (g·t2)·v, (g·t1)·v; addcdiv: g, g·(v/t2), (((−g)·v)·t1)/(t2·t2);
* xlogy: xlogy(g, y) = g·log(y) (0 where g = 0, NaN where y is NaN), set
  to 0 where x = 0 and y ≤ 0, and g·x/y; logit: g/(x·(1 − x)),
  NaN outside [0, 1] (0 outside [eps, 1 − eps] with eps).

The forward formulas are torch's CPU kernels' in binary32 without
contraction (exact mode has no fma; torch's vectorised lerp uses one, so
lerp may differ from it in the last bit). hypot is
√(x² + y²) in binary64 from the exact binary64 squares, rounded once to
binary32 (within 0.5 ulp + 2^−28 of the exact result; IEEE's hypot(±inf,
NaN) = +inf kept). Selections and sign operations are exact (NumPy);
logs are the fixed log of the Rust lane loops.
"""

from __future__ import annotations

import numbers

import numpy as np

F32 = np.float32

from .._kernels import binary_kernel, scalar_tensor, sum_to, unary_kernel
from ..autograd.function import Function
from ..tensor import Tensor, float32
from .npwise import compute, floating_operand


def _f(x, op: str) -> Tensor:
    from .arith import as_tensor_operand

    return as_tensor_operand(floating_operand(x, op), op)


def _zeros(shape) -> Tensor:
    return Tensor._empty(shape, float32, zeroed=True)


def _mul(a, b):
    return binary_kernel("mul", a, b)


def _where(mask_fn, operands, a, b):
    """NumPy select of two float32 tensors by a mask computed from `operands`."""
    return compute("select", lambda *v: np.where(mask_fn(*v[:-2]), v[-2], v[-1]), [*operands, a, b], float32)


# -- copysign, heaviside, fmax/fmin ------------------------------------------------

class Copysign(Function):
    def forward(self, a, b):
        y = compute("copysign", np.copysign, [a, b], float32)
        self.save_for_backward(a, y)
        return y

    def backward(self, g):
        a, y = self.saved_tensors
        (sa, _), (sb, _) = self.input_meta
        ga = None
        if self.needs_input_grad[0]:
            ratio = compute("copysign", lambda x, r: np.where(x == 0, np.float32(0), r / x), [a, y], float32)
            ga = sum_to(_mul(g, ratio), sa)
        return ga, (_zeros(sb) if self.needs_input_grad[1] else None)


def copysign(input, other) -> Tensor:
    return Copysign.apply(_f(input, "copysign"), _f(other, "copysign"))


def heaviside(input, values) -> Tensor:
    if not isinstance(input, Tensor) or not isinstance(values, Tensor):
        raise TypeError("heaviside(): arguments 'input' and 'values' must be Tensors")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    fn = lambda x, v: np.where(x == 0, v, (x > 0).astype(x.dtype))  # noqa: E731 - NaN gives 0, as torch
    return compute("heaviside", fn, [input.detach(), values.detach()], input.dtype)


class _FExtremum(Function):
    def forward(self, a, b, op: str, fn, first):
        self.name, self.first = op, first
        self.save_for_backward(a, b)
        return compute(op, fn, [a, b], float32)

    def backward(self, g):
        a, b = self.saved_tensors
        (sa, _), (sb, _) = self.input_meta
        wins = self.first

        def share(x, y, gg):
            # g where this input wins (or the other is NaN), g/2 on a tie, else 0.
            return np.where(x == y, gg * F32(0.5), np.where(wins(x, y) | np.isnan(y), gg, F32(0)))

        ga = sum_to(compute("backward", share, [a, b, g], float32), sa) if self.needs_input_grad[0] else None
        gb = sum_to(compute("backward", share, [b, a, g], float32), sb) if self.needs_input_grad[1] else None
        return ga, gb


def _fextremum(op, fn, first, a, b):
    from .npwise import all_integral

    if all_integral(a, b):
        return compute(op, fn, [a, b], float32 if not isinstance(a, Tensor) else a.dtype)
    return _FExtremum.apply(_f(a, op), _f(b, op), op, fn, first)


def _fmax(x, y):
    # The NaN-ignoring maximum; between equal values (±0) the first, as torch.
    return np.where(np.isnan(x), y, np.where(np.isnan(y) | (x >= y), x, y))


def _fmin(x, y):
    return np.where(np.isnan(x), y, np.where(np.isnan(y) | (x <= y), x, y))


def fmax(input, other) -> Tensor:
    return _fextremum("fmax", _fmax, lambda x, y: x > y, input, other)


def fmin(input, other) -> Tensor:
    return _fextremum("fmin", _fmin, lambda x, y: x < y, input, other)


# -- hypot ---------------------------------------------------------------------------

def _hypot(x, y):
    x64, y64 = np.asarray(x, np.float64), np.asarray(y, np.float64)
    r = np.sqrt(x64 * x64 + y64 * y64).astype(np.float32)
    return np.where(np.isinf(x64) | np.isinf(y64), np.float32(np.inf), r)


class Hypot(Function):
    def forward(self, a, b):
        y = compute("hypot", _hypot, [a, b], float32)
        self.save_for_backward(a, b, y)
        return y

    def backward(self, g):
        a, b, y = self.saved_tensors
        (sa, _), (sb, _) = self.input_meta
        ga = sum_to(binary_kernel("div", _mul(g, a), y), sa) if self.needs_input_grad[0] else None
        gb = sum_to(binary_kernel("div", _mul(g, b), y), sb) if self.needs_input_grad[1] else None
        return ga, gb


def hypot(input, other) -> Tensor:
    return Hypot.apply(_f(input, "hypot"), _f(other, "hypot"))


# -- lerp, addcmul, addcdiv ------------------------------------------------------------

def _lerp_np(s, e, w):
    d = e - s
    small = np.abs(w) < np.float32(0.5)
    return np.where(small, s + w * d, e - d * (np.float32(1) - w))


class Lerp(Function):
    def forward(self, start, end, weight):
        self.save_for_backward(start, end, weight)
        return compute("lerp", _lerp_np, [start, end, weight], float32)

    def backward(self, g):
        s, e, w = self.saved_tensors
        (ss, _), (se, _), (sw, _) = self.input_meta
        one_minus = binary_kernel("sub", scalar_tensor(1.0), w)
        gs = sum_to(_mul(g, one_minus), ss) if self.needs_input_grad[0] else None
        ge = sum_to(_mul(g, w), se) if self.needs_input_grad[1] else None
        gw = sum_to(_mul(g, binary_kernel("sub", e, s)), sw) if self.needs_input_grad[2] else None
        return gs, ge, gw


def lerp(input, end, weight) -> Tensor:
    if not isinstance(weight, (Tensor, numbers.Real)) or isinstance(weight, bool):
        raise TypeError(f"lerp: weight must be a number or a Tensor, got {type(weight).__name__}")
    return Lerp.apply(_f(input, "lerp"), _f(end, "lerp"), _f(weight, "lerp"))


class Addcmul(Function):
    def forward(self, s, t1, t2, value: float):
        self.value = value
        # Only what the backward reads, as torch: a tensor that needs no
        # gradient saved for nothing would refuse addcmul_ into its alias.
        n = self.needs_input_grad
        self.save_for_backward(t1 if n[2] else None, t2 if n[1] else None)
        v = scalar_tensor(value)
        return binary_kernel("add", s, _mul(_mul(v, t1), t2))

    def backward(self, g):
        t1, t2 = self.saved_tensors
        (ss, _), (s1, _), (s2, _) = self.input_meta
        v = scalar_tensor(self.value)
        gs = sum_to(g, ss) if self.needs_input_grad[0] else None
        g1 = sum_to(_mul(_mul(g, t2), v), s1) if self.needs_input_grad[1] else None
        g2 = sum_to(_mul(_mul(g, t1), v), s2) if self.needs_input_grad[2] else None
        return gs, g1, g2


class Addcdiv(Function):
    def forward(self, s, t1, t2, value: float):
        self.value = value
        n = self.needs_input_grad  # what the backward reads, as Addcmul
        self.save_for_backward(t1 if n[2] else None, t2 if n[1] or n[2] else None)
        v = scalar_tensor(value)
        return binary_kernel("add", s, binary_kernel("div", _mul(v, t1), t2))

    def backward(self, g):
        t1, t2 = self.saved_tensors
        (ss, _), (s1, _), (s2, _) = self.input_meta
        v = scalar_tensor(self.value)
        gs = sum_to(g, ss) if self.needs_input_grad[0] else None
        g1 = sum_to(_mul(g, binary_kernel("div", v, t2)), s1) if self.needs_input_grad[1] else None
        g2 = None
        if self.needs_input_grad[2]:
            num = _mul(_mul(unary_kernel("neg", g), v), t1)
            g2 = sum_to(binary_kernel("div", num, _mul(t2, t2)), s2)
        return gs, g1, g2


def _value(value, op: str) -> float:
    if isinstance(value, Tensor):
        value = value.item()
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{op}: value must be a number, got {type(value).__name__}")
    return float(value)


def addcmul(input, tensor1, tensor2, *, value=1) -> Tensor:
    return Addcmul.apply(_f(input, "addcmul"), _f(tensor1, "addcmul"), _f(tensor2, "addcmul"), _value(value, "addcmul"))


def addcdiv(input, tensor1, tensor2, *, value=1) -> Tensor:
    for t in (tensor1, tensor2):
        if isinstance(t, Tensor) and t.dtype is not float32:
            raise RuntimeError("addcdiv: integer division with addcdiv is no longer supported; use true_divide/floor_divide (as torch)")
    return Addcdiv.apply(_f(input, "addcdiv"), _f(tensor1, "addcdiv"), _f(tensor2, "addcdiv"), _value(value, "addcdiv"))


# -- xlogy, logit ----------------------------------------------------------------------

def _x_log_backward(gg, a, b, lb, pole=np.float32(0)):
    """torch's gradient to x of x·log(y) (x·log1p(y) with pole −1):
    xlogy(g, log's argument) — NaN where y is NaN, 0 where g is 0, else
    g·log — then 0 where x = 0 and y ≤ the pole (derivatives.yaml)."""
    d = np.where(np.isnan(b), np.float32(np.nan), np.where(gg == 0, np.float32(0), gg * lb))
    return np.where((a == 0) & (b <= pole), np.float32(0), d)


class Xlogy(Function):
    def forward(self, x, y):
        log_y = unary_kernel("log", y)
        self.save_for_backward(x, y, log_y)
        fn = lambda a, b, lb: np.where(np.isnan(b), np.float32(np.nan), np.where(a == 0, np.float32(0), a * lb))  # noqa: E731
        return compute("xlogy", fn, [x, y, log_y], float32)

    def backward(self, g):
        x, y, log_y = self.saved_tensors
        (sx, _), (sy, _) = self.input_meta
        gx = gy = None
        if self.needs_input_grad[0]:
            gx = sum_to(compute("xlogy_backward", _x_log_backward, [g, x, y, log_y], float32), sx)
        if self.needs_input_grad[1]:
            gy = sum_to(binary_kernel("div", _mul(g, x), y), sy)
        return gx, gy


def xlogy(input, other) -> Tensor:
    return Xlogy.apply(_f(input, "xlogy"), _f(other, "xlogy"))


class Logit(Function):
    def forward(self, x, eps):
        self.eps = eps
        self.save_for_backward(x)
        if eps is None:
            z = x
        else:
            lo, hi = np.float32(eps), np.float32(1) - np.float32(eps)
            z = compute("logit", lambda v: np.where(v < lo, lo, np.where(v > hi, hi, v)), [x], float32)
        ratio = compute("logit", lambda v: v / (np.float32(1) - v), [z], float32)
        return unary_kernel("log", ratio)

    def backward(self, g):
        (x,) = self.saved_tensors
        if self.eps is None:
            outside, fill = (lambda v: (v < 0) | (v > 1)), np.float32(np.nan)
        else:
            lo, hi = np.float32(self.eps), np.float32(1) - np.float32(self.eps)
            outside, fill = (lambda v: (v < lo) | (v > hi)), np.float32(0)
        fn = lambda gg, v: np.where(outside(v), fill, gg / (v * (np.float32(1) - v)))  # noqa: E731
        return compute("logit_backward", fn, [g, x], float32)


def logit(input, eps=None) -> Tensor:
    return Logit.apply(_f(input, "logit"), None if eps is None else float(eps))


__all__ = ["addcdiv", "addcmul", "copysign", "fmax", "fmin", "heaviside", "hypot", "lerp", "logit", "xlogy"]


def ldexp(input, other) -> Tensor:
    """torch.ldexp: ``input · 2**other``, as torch computes it
    (``input * pow(2.0, other)``: the power is exact for integer exponents,
    2^−149 … 2^127, then one rounded product); int inputs give float32."""
    from .arith import as_tensor_operand
    from .pointwise import pow as _pow

    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"ldexp: expected a Tensor, got {type(input).__name__} and {type(other).__name__}")
    x = _f(input, "ldexp")
    e = other if isinstance(other, Tensor) else as_tensor_operand(other, x)
    return x * _pow(2.0, e)
