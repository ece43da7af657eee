"""Activations built from compares, selects and IEEE operations (torch's CPU
kernels' formulas, binary32, no contraction), each forward next to its
backward (derivatives.yaml / torch's *_backward kernels):

* leaky_relu: x > 0 ? x : x·s; slope 1 or s (s at 0);
* hardtanh (relu6 = hardtanh(0, 6)): clamp; slope 1 strictly inside, 0 at
  and beyond the bounds (g at NaN, as torch);
* hardsigmoid: min(max(x + 3, 0), 6)/6; slope 1/6 strictly inside (−3, 3);
* hardswish: x·min(max(x + 3, 0), 6)/6; slope 0 up to −3 (inclusive),
  x/3 + 1/2 below 3, 1 from 3 (and at NaN);
* softshrink: x ∓ λ outside [−λ, λ], +0 inside; slope 0 on [−λ, λ];
* hardshrink: 0 on [−λ, λ], else x; threshold: x ≤ t ? v : x (slope 0 there);
* prelu: x > 0 ? x : w·x; g or w·g to x, x·g (0 where x > 0) summed to w;
* rrelu: leaky_relu with slope (lower + upper)/2 in eval; in training each
  element x ≤ 0 gets its own slope drawn uniformly from [lower, upper) by
  onemodel's generator (the stream differs from torch's by design);
* silu: x·σ(x); slope σ·(1 + x·(1 − σ)); gelu(approximate='tanh'):
  0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) with torch's backward;
* softsign, tanhshrink, glu, softmin: torch's own compositions.

The compare/select forms run as NumPy ufuncs (exact: ops/npwise.py); σ and
tanh are the fixed functions of the Rust lane loops. ``inplace=True`` and
the ``F.xxx_`` forms write the result into the input (ops/inplace.py:
rebased onto the graph while recording, with torch's version checks).
"""

from __future__ import annotations

import numbers

import numpy as np

from .._kernels import binary_kernel, scalar_tensor, sum_to, unary_kernel
from ..autograd.function import Function
from ..tensor import Tensor, float32
from .npwise import compute

F32 = np.float32


def _check(x, op: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if x.dtype is not float32:
        raise TypeError(f"{op}: expected a float32 tensor, got {x.dtype.name} (as torch, activations need floating point)")
    return x


def _number(v, op: str, what: str) -> float:
    if isinstance(v, Tensor):
        v = v.item()
    if not isinstance(v, numbers.Real) or isinstance(v, bool):
        raise TypeError(f"{op}: {what} must be a number, got {type(v).__name__}")
    return float(v)


class Pointwise(Function):
    """y = fwd(x), dx = bwd(g, x): both NumPy maps of binary32 arrays."""

    def forward(self, a, op: str, fwd, bwd):
        self.name, self.bwd = op, bwd
        self.save_for_backward(a)
        return compute(op, fwd, [a], float32)

    def backward(self, g):
        (a,) = self.saved_tensors
        return compute(self.name + "_backward", self.bwd, [g, a], float32)


def _maybe_inplace(input: Tensor, op: str, inplace: bool, outofplace):
    if not inplace:
        return outofplace(input)
    from .inplace import assign_result

    return assign_result(input, op + "_", outofplace, ())


# -- the compare-and-select family ---------------------------------------------------

def _leaky(x, s):
    return Pointwise.apply(x, "leaky_relu", lambda v: np.where(v > 0, v, v * s), lambda g, v: np.where(v > 0, g, g * s))


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    x = _check(input, "leaky_relu")
    s = F32(_number(negative_slope, "leaky_relu", "negative_slope"))
    return _maybe_inplace(x, "leaky_relu", inplace, lambda t: _leaky(t, s))


def leaky_relu_(input, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


def _hardtanh(x, lo, hi):
    # clamp as torch (NaN propagates; a zero on a zero bound keeps its sign).
    fwd = lambda v: np.where(v < lo, lo, np.where(v > hi, hi, v))  # noqa: E731
    bwd = lambda g, v: np.where((v <= lo) | (v >= hi), F32(0), g)  # noqa: E731
    return Pointwise.apply(x, "hardtanh", fwd, bwd)


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    x = _check(input, "hardtanh")
    lo, hi = F32(_number(min_val, "hardtanh", "min_val")), F32(_number(max_val, "hardtanh", "max_val"))
    if lo > hi:
        raise ValueError("hardtanh: min_val cannot be greater than max_val")
    return _maybe_inplace(x, "hardtanh", inplace, lambda t: _hardtanh(t, lo, hi))


def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0.0, 6.0, inplace)


def _hardsigmoid(x):
    fwd = lambda v: np.minimum(np.maximum(v + F32(3), F32(0)), F32(6)) / F32(6)  # noqa: E731
    bwd = lambda g, v: np.where((v > -3) & (v < 3), g * F32(1.0 / 6.0), F32(0))  # noqa: E731
    return Pointwise.apply(x, "hardsigmoid", fwd, bwd)


def hardsigmoid(input, inplace: bool = False) -> Tensor:
    return _maybe_inplace(_check(input, "hardsigmoid"), "hardsigmoid", inplace, _hardsigmoid)


def _hardswish(x):
    fwd = lambda v: v * np.minimum(np.maximum(v + F32(3), F32(0)), F32(6)) / F32(6)  # noqa: E731
    bwd = lambda g, v: np.where(v <= -3, F32(0), np.where(v < 3, g * (v / F32(3) + F32(0.5)), g))  # noqa: E731
    return Pointwise.apply(x, "hardswish", fwd, bwd)


def hardswish(input, inplace: bool = False) -> Tensor:
    return _maybe_inplace(_check(input, "hardswish"), "hardswish", inplace, _hardswish)


def softshrink(input, lambd: float = 0.5) -> Tensor:
    x = _check(input, "softshrink")
    lam = F32(_number(lambd, "softshrink", "lambd"))
    if lam < 0:
        raise RuntimeError(f"softshrink: lambda must be greater or equal to 0, but found to be {float(lam)}.")
    # +0 inside the band: torch's vectorised loop gives +0 there (its scalar
    # tail loop gives x·0, so torch itself differs by position; docs/api.md).
    fwd = lambda v: np.where(v > lam, v - lam, np.where(v < -lam, v + lam, np.where(np.isnan(v), v, F32(0))))  # noqa: E731
    bwd = lambda g, v: np.where((v >= -lam) & (v <= lam), F32(0), g)  # noqa: E731
    return Pointwise.apply(x, "softshrink", fwd, bwd)


def hardshrink(input, lambd: float = 0.5) -> Tensor:
    x = _check(input, "hardshrink")
    lam = F32(_number(lambd, "hardshrink", "lambd"))
    fwd = lambda v: np.where((v >= -lam) & (v <= lam), F32(0), v)  # noqa: E731
    bwd = lambda g, v: np.where((v >= -lam) & (v <= lam), F32(0), g)  # noqa: E731
    return Pointwise.apply(x, "hardshrink", fwd, bwd)


def _threshold(x, t, v):
    return Pointwise.apply(x, "threshold", lambda a: np.where(a <= t, v, a), lambda g, a: np.where(a <= t, F32(0), g))


def threshold(input, threshold: float, value: float, inplace: bool = False) -> Tensor:
    x = _check(input, "threshold")
    t, v = F32(_number(threshold, "threshold", "threshold")), F32(_number(value, "threshold", "value"))
    return _maybe_inplace(x, "threshold", inplace, lambda a: _threshold(a, t, v))


def threshold_(input, threshold: float, value: float) -> Tensor:
    return globals()["threshold"](input, threshold, value, inplace=True)


def relu_(input) -> Tensor:
    return input.relu_()


# -- prelu, rrelu ----------------------------------------------------------------------

class PRelu(Function):
    def forward(self, x, w):
        self.save_for_backward(x, w)
        return compute("prelu", lambda a, b: np.where(a > 0, a, b * a), [x, w], float32)

    def backward(self, g):
        x, w = self.saved_tensors
        (_, _), (sw, _) = self.input_meta
        gx = compute("prelu_backward", lambda gg, a, b: np.where(a > 0, gg, b * gg), [g, x, w], float32) if self.needs_input_grad[0] else None
        gw = None
        if self.needs_input_grad[1]:
            gw = sum_to(compute("prelu_backward", lambda gg, a: np.where(a > 0, F32(0), a * gg), [g, x], float32), sw)
        return gx, gw


def prelu(input, weight) -> Tensor:
    x = _check(input, "prelu")
    if not isinstance(weight, Tensor) or weight.dtype is not float32:
        raise TypeError("prelu: weight must be a float32 Tensor")
    n = weight.numel()
    if weight.dim() > 1:
        raise ValueError(f"prelu: weight must be 1-D (got shape {tuple(weight.shape)})")
    if n != 1:
        if x.dim() < 2 or x.shape[1] != n:
            raise ValueError(
                f"prelu: mismatch of parameter numbers and input channel size: found {n} parameters "
                f"for an input of shape {tuple(x.shape)} (channels are dim 1)"
            )
        w = weight.reshape((n,) + (1,) * (x.dim() - 2))
    else:
        w = weight.reshape(())
    return PRelu.apply(x, w)


class _Noise(Function):
    """y = x·r where x ≤ 0 (r drawn per element), else x; dx = g·r or g."""

    def forward(self, x, noise):
        self.save_for_backward(noise)
        return compute("rrelu", lambda a, r: np.where(a <= 0, a * r, a), [x, noise], float32)

    def backward(self, g):
        (r,) = self.saved_tensors
        return binary_kernel("mul", g, r), None


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, inplace: bool = False) -> Tensor:
    x = _check(input, "rrelu")
    lo, hi = _number(lower, "rrelu", "lower"), _number(upper, "rrelu", "upper")
    if not training:
        return leaky_relu(x, (lo + hi) / 2, inplace)

    def draw(t):
        from .random import uniform_

        r = Tensor._empty(t._shape, float32)
        uniform_(r, lo, hi)
        noise = compute("rrelu", lambda a, u: np.where(a <= 0, u, F32(1)), [t.detach(), r], float32)
        return _Noise.apply(t, noise)

    return _maybe_inplace(x, "rrelu", inplace, draw)


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    return rrelu(input, lower, upper, training, inplace=True)


# -- sigmoid- and tanh-based ------------------------------------------------------------

class Silu(Function):
    def forward(self, x):
        s = unary_kernel("sigmoid", x)
        self.save_for_backward(x, s)
        return binary_kernel("mul", x, s)

    def backward(self, g):
        x, s = self.saved_tensors
        fn = lambda gg, a, sg: gg * (sg * (F32(1) + a * (F32(1) - sg)))  # noqa: E731
        return compute("silu_backward", fn, [g, x, s], float32)


def silu(input, inplace: bool = False) -> Tensor:
    return _maybe_inplace(_check(input, "silu"), "silu", inplace, Silu.apply)


_K_BETA = F32(np.sqrt(2.0) * (2.0 / np.sqrt(np.pi)) * 0.5)
_K_KAPPA = F32(0.044715)


class GeluTanh(Function):
    """torch's gelu(approximate='tanh') kernel and its backward."""

    def forward(self, x):
        inner = compute("gelu", lambda v: _K_BETA * (v + _K_KAPPA * (v * v * v)), [x], float32)
        t = unary_kernel("tanh", inner)
        self.save_for_backward(x, t)
        return compute("gelu", lambda v, th: F32(0.5) * v * (F32(1) + th), [x, t], float32)

    def backward(self, g):
        x, t = self.saved_tensors

        def fn(gg, v, th):
            left_d = F32(0.5) * (F32(1) + th)
            inner_d = _K_BETA * (F32(1) + F32(3) * _K_KAPPA * (v * v))
            right_d = F32(0.5) * v * (F32(1) - th * th) * inner_d
            return gg * (left_d + right_d)

        return compute("gelu_backward", fn, [g, x, t], float32)


def softsign(input) -> Tensor:
    x = _check(input, "softsign")
    return x / (x.abs() + 1)


def tanhshrink(input) -> Tensor:
    x = _check(input, "tanhshrink")
    return x - x.tanh()


def glu(input, dim: int = -1) -> Tensor:
    x = _check(input, "glu")
    if x.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim + x.dim() if dim < 0 else dim
    n = x.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a, b = x.narrow(d, 0, n // 2), x.narrow(d, n // 2, n // 2)
    return a * b.sigmoid()


def _softmax_dim(ndim: int) -> int:
    return 0 if ndim in (0, 1, 3) else 1


def softmin(input, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    from .softmax import softmax

    x = _check(input, "softmin")
    if dim is None:
        dim = _softmax_dim(x.dim())
    if dtype is not None:
        x = x.to(dtype)
    return softmax(-x, dim)


__all__ = [
    "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_", "leaky_relu", "leaky_relu_", "prelu",
    "relu6", "relu_", "rrelu", "rrelu_", "silu", "softmin", "softshrink", "softsign", "tanhshrink", "threshold", "threshold_",
]
