"""The activations built on expm1 and ln(1 + e^x): softplus, elu, selu,
celu, mish and logsigmoid, forward next to backward, in torch's CPU
kernels' order (binary32, no contraction), with onemodel's fixed
functions for the transcendental steps (rust/src/math, docs/numerics.md):

* softplus(β, threshold): x where x·β > threshold, else ln(1 + e^(x·β))/β
  (the fixed ln(1 + e^u), accurate down to e^u in the subnormals);
  slope 1 there, else (g·z)/(z + 1) with z = e^(x·β);
* elu/selu/celu (torch's elu with alpha, scale, input_scale):
  x ≤ 0 ? expm1(x·s_in)·(α·s) : x·s; slope g·s_in·(α·s)·e^(x·s_in) or g·s;
* mish: x·tanh(ln(1 + e^x)); slope tanh_sp + x·σ(x)·(1 − tanh_sp²);
* logsigmoid: −ln(1 + e^−x); slope as torch's log_sigmoid_backward.
"""

from __future__ import annotations


import numpy as np

from .._kernels import unary_kernel
from ..autograd.function import Function
from ..tensor import Tensor, float32
from .activation import _check, _maybe_inplace
from .npwise import compute

F32 = np.float32
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


from .activation import _number  # noqa: E402  (one number check for every activation)


def _np(op: str, fn, *ts) -> Tensor:
    return compute(op, fn, list(ts), float32)


class Softplus(Function):
    def forward(self, x, beta: np.float32, threshold: np.float32):
        self.beta, self.threshold = beta, threshold
        self.save_for_backward(x)
        u = _np("softplus", lambda v: v * beta, x)
        sp = unary_kernel("log1pexp", u)
        return _np("softplus", lambda v, uu, s: np.where(uu > threshold, v, s / beta), x, u, sp)

    def backward(self, g):
        (x,) = self.saved_tensors
        beta, threshold = self.beta, self.threshold
        u = _np("softplus", lambda v: v * beta, x)
        z = unary_kernel("exp", u)
        return _np("softplus_backward", lambda gg, uu, zz: np.where(uu > threshold, gg, gg * zz / (zz + F32(1))), g, u, z)


def softplus(input, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    x = _check(input, "softplus")
    return Softplus.apply(x, F32(_number(beta, "softplus", "beta")), F32(_number(threshold, "softplus", "threshold")))


class Elu(Function):
    """torch's elu kernel with (alpha, scale, input_scale)."""

    def forward(self, x, negcoef, poscoef, negiptcoef):
        self.coefs = (negcoef, poscoef, negiptcoef)
        self.save_for_backward(x)
        em1 = unary_kernel("expm1", _np("elu", lambda v: v * negiptcoef, x))
        return _np("elu", lambda v, e: np.where(v <= 0, e * negcoef, v * poscoef), x, em1)

    def backward(self, g):
        (x,) = self.saved_tensors
        negcoef, poscoef, negiptcoef = self.coefs
        e = unary_kernel("exp", _np("elu", lambda v: v * negiptcoef, x))
        fn = lambda gg, v, ev: np.where(v <= 0, gg * negiptcoef * negcoef * ev, gg * poscoef)  # noqa: E731
        return _np("elu_backward", fn, g, x, e)


def _elu(x, alpha: float, scale: float, input_scale: float, op: str, inplace: bool):
    negcoef = F32(alpha) * F32(scale)
    return _maybe_inplace(x, op, inplace, lambda t: Elu.apply(t, negcoef, F32(scale), F32(input_scale)))


def elu(input, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    x = _check(input, "elu")
    return _elu(x, _number(alpha, "elu", "alpha"), 1.0, 1.0, "elu", inplace)


def elu_(input, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def selu(input, inplace: bool = False) -> Tensor:
    return _elu(_check(input, "selu"), SELU_ALPHA, SELU_SCALE, 1.0, "selu", inplace)


def selu_(input) -> Tensor:
    return selu(input, inplace=True)


def celu(input, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    a = _number(alpha, "celu", "alpha")
    if a == 0:
        raise RuntimeError("ZeroDivisionError: celu with alpha = 0")
    return _elu(_check(input, "celu"), a, 1.0, 1.0 / a, "celu", inplace)


def celu_(input, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


class Mish(Function):
    def forward(self, x):
        self.save_for_backward(x)
        t = unary_kernel("tanh", unary_kernel("log1pexp", x))
        return _np("mish", lambda v, tv: v * tv, x, t)

    def backward(self, g):
        (x,) = self.saved_tensors
        s = unary_kernel("sigmoid", x)
        t = unary_kernel("tanh", unary_kernel("log1pexp", x))
        fn = lambda gg, v, sv, tv: gg * (tv + v * sv * (F32(1) - tv * tv))  # noqa: E731
        return _np("mish_backward", fn, g, x, s, t)


def mish(input, inplace: bool = False) -> Tensor:
    return _maybe_inplace(_check(input, "mish"), "mish", inplace, Mish.apply)


class LogSigmoid(Function):
    def forward(self, x):
        self.save_for_backward(x)
        sp = unary_kernel("log1pexp", _np("logsigmoid", lambda v: -v, x))
        return _np("logsigmoid", lambda s: -s, sp)

    def backward(self, g):
        (x,) = self.saved_tensors
        z = unary_kernel("exp", _np("logsigmoid", lambda v: -np.abs(v), x))

        def fn(gg, v, zz):
            neg = v < 0
            max_deriv = np.where(neg, F32(1), F32(0))
            sign = np.where(neg, F32(1), F32(-1))
            return gg * (max_deriv - sign * (zz / (F32(1) + zz)))

        return _np("logsigmoid_backward", fn, g, x, z)


def logsigmoid(input) -> Tensor:
    return LogSigmoid.apply(_check(input, "logsigmoid"))


__all__ = ["celu", "celu_", "elu", "elu_", "logsigmoid", "mish", "selu", "selu_", "softplus"]
