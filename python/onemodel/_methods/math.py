"""Element-wise math: the transcendentals, powers, rounding and sign,
division in torch's forms, the binary maps, and their in-place forms
(``x.sin_()`` ...: the out-of-place result written into the tensor, rebased
onto the graph while recording, ops/inplace.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .. import ops as _ops

if TYPE_CHECKING:
    from ..tensor import Tensor


def _inplace(name: str, fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``Tensor.<name>_``: ``fn(self, *args)`` written into self."""

    def method(self, *args, **kwargs) -> Tensor:
        others = tuple(a for a in (*args, *kwargs.values()))
        return _ops.inplace.assign_result(self, name + "_", lambda t: fn(t, *args, **kwargs), others)

    method.__name__ = name + "_"
    method.__doc__ = f"In-place form of ``{name}``."
    return method


def _op(module: str, name: str) -> Callable[..., Tensor]:
    return lambda *a, **k: getattr(getattr(_ops, module), name)(*a, **k)


class MathMethods:
    __slots__ = ()

    def exp(self) -> Tensor:
        return _ops.pointwise.exp(self)

    def log(self) -> Tensor:
        return _ops.pointwise.log(self)

    def sigmoid(self) -> Tensor:
        return _ops.pointwise.sigmoid(self)

    def tanh(self) -> Tensor:
        return _ops.pointwise.tanh(self)

    def erf(self) -> Tensor:
        return _ops.pointwise.erf(self)

    def sqrt(self) -> Tensor:
        return _ops.pointwise.sqrt(self)

    def square(self) -> Tensor:
        return _ops.pointwise.square(self)

    def abs(self) -> Tensor:
        return _ops.pointwise.abs(self)

    absolute = abs

    def pow(self, exponent) -> Tensor:
        return _ops.pointwise.pow(self, exponent)

    def __abs__(self) -> Tensor:
        return _ops.pointwise.abs(self)

    def __pow__(self, exponent) -> Tensor:
        return _ops.pointwise.pow(self, exponent)

    def __rpow__(self, base) -> Tensor:
        return _ops.pointwise.pow(base, self)

    def __ipow__(self, exponent) -> Tensor:
        return self.pow_(exponent)

    # -- rounding and sign -------------------------------------------------------
    def sign(self) -> Tensor:
        return _ops.rounding.sign(self)

    def sgn(self) -> Tensor:
        return _ops.rounding.sgn(self)

    def floor(self) -> Tensor:
        return _ops.rounding.floor(self)

    def ceil(self) -> Tensor:
        return _ops.rounding.ceil(self)

    def trunc(self) -> Tensor:
        return _ops.rounding.trunc(self)

    def fix(self) -> Tensor:
        return _ops.rounding.fix(self)

    def round(self, *, decimals: int = 0) -> Tensor:
        return _ops.rounding.round(self, decimals=decimals)

    def frac(self) -> Tensor:
        return _ops.rounding.frac(self)

    def reciprocal(self) -> Tensor:
        return _ops.rounding.reciprocal(self)

    def rsqrt(self) -> Tensor:
        return _ops.rounding.rsqrt(self)

    def nan_to_num(self, nan: float = 0.0, posinf=None, neginf=None) -> Tensor:
        return _ops.rounding.nan_to_num(self, nan, posinf, neginf)

    def deg2rad(self) -> Tensor:
        return _ops.rounding.deg2rad(self)

    def rad2deg(self) -> Tensor:
        return _ops.rounding.rad2deg(self)

    # -- division ------------------------------------------------------------------
    def divide(self, other, *, rounding_mode=None) -> Tensor:
        return _ops.division.divide(self, other, rounding_mode=rounding_mode)

    def true_divide(self, other) -> Tensor:
        return _ops.division.true_divide(self, other)

    def floor_divide(self, other) -> Tensor:
        return _ops.division.floor_divide(self, other)

    def remainder(self, other) -> Tensor:
        return _ops.division.remainder(self, other)

    def fmod(self, other) -> Tensor:
        return _ops.division.fmod(self, other)

    def multiply(self, other) -> Tensor:
        return _ops.arith.mul(self, other)

    def subtract(self, other, *, alpha=1) -> Tensor:
        return _ops.arith.sub(self, other, alpha=alpha)

    def negative(self) -> Tensor:
        return _ops.arith.neg(self)

    def positive(self) -> Tensor:
        return self

    def __floordiv__(self, other) -> Tensor:
        return _ops.division.floor_divide(self, other)

    def __rfloordiv__(self, other) -> Tensor:
        return _ops.division.floor_divide(other, self)

    def __mod__(self, other) -> Tensor:
        return _ops.division.remainder(self, other)

    def __rmod__(self, other) -> Tensor:
        return _ops.division.remainder(other, self)

    def __ifloordiv__(self, other) -> Tensor:
        return self.floor_divide_(other)

    def __imod__(self, other) -> Tensor:
        return self.remainder_(other)

    # -- binary maps -------------------------------------------------------------------
    def copysign(self, other) -> Tensor:
        return _ops.binary_math.copysign(self, other)

    def heaviside(self, values) -> Tensor:
        return _ops.binary_math.heaviside(self, values)

    def fmax(self, other) -> Tensor:
        return _ops.binary_math.fmax(self, other)

    def fmin(self, other) -> Tensor:
        return _ops.binary_math.fmin(self, other)

    def hypot(self, other) -> Tensor:
        return _ops.binary_math.hypot(self, other)

    def lerp(self, end, weight) -> Tensor:
        return _ops.binary_math.lerp(self, end, weight)

    def addcmul(self, tensor1, tensor2, *, value=1) -> Tensor:
        return _ops.binary_math.addcmul(self, tensor1, tensor2, value=value)

    def addcdiv(self, tensor1, tensor2, *, value=1) -> Tensor:
        return _ops.binary_math.addcdiv(self, tensor1, tensor2, value=value)

    def xlogy(self, other) -> Tensor:
        return _ops.binary_math.xlogy(self, other)

    def ldexp(self, other) -> Tensor:
        return _ops.binary_math.ldexp(self, other)

    def dist(self, other, p: float = 2) -> Tensor:
        return _ops.distance.dist(self, other, p)

    def logit(self, eps=None) -> Tensor:
        return _ops.binary_math.logit(self, eps)

    # -- the fixed transcendentals (ops/transcendental.py) ---------------------------------
    def sin(self) -> Tensor:
        return _ops.transcendental.sin(self)

    def cos(self) -> Tensor:
        return _ops.transcendental.cos(self)

    def tan(self) -> Tensor:
        return _ops.transcendental.tan(self)

    def asin(self) -> Tensor:
        return _ops.transcendental.asin(self)

    def acos(self) -> Tensor:
        return _ops.transcendental.acos(self)

    def atan(self) -> Tensor:
        return _ops.transcendental.atan(self)

    arcsin, arccos, arctan = asin, acos, atan

    def atan2(self, other) -> Tensor:
        return _ops.transcendental.atan2(self, other)

    arctan2 = atan2

    def sinh(self) -> Tensor:
        return _ops.transcendental.sinh(self)

    def cosh(self) -> Tensor:
        return _ops.transcendental.cosh(self)

    def asinh(self) -> Tensor:
        return _ops.transcendental.asinh(self)

    def acosh(self) -> Tensor:
        return _ops.transcendental.acosh(self)

    def atanh(self) -> Tensor:
        return _ops.transcendental.atanh(self)

    arcsinh, arccosh, arctanh = asinh, acosh, atanh

    def erfc(self) -> Tensor:
        return _ops.transcendental.erfc(self)

    def erfinv(self) -> Tensor:
        return _ops.transcendental.erfinv(self)

    def lgamma(self) -> Tensor:
        return _ops.gamma_fns.lgamma(self)

    def digamma(self) -> Tensor:
        return _ops.gamma_fns.digamma(self)

    def polygamma(self, n: int) -> Tensor:
        return _ops.gamma_fns.polygamma(n, self)

    def mvlgamma(self, p: int) -> Tensor:
        return _ops.gamma_fns.mvlgamma(self, p)

    def expm1(self) -> Tensor:
        return _ops.transcendental.expm1(self)

    def log1p(self) -> Tensor:
        return _ops.transcendental.log1p(self)

    def exp2(self) -> Tensor:
        return _ops.transcendental.exp2(self)

    def log2(self) -> Tensor:
        return _ops.transcendental.log2(self)

    def log10(self) -> Tensor:
        return _ops.transcendental.log10(self)

    def sinc(self) -> Tensor:
        return _ops.transcendental.sinc(self)

    def logaddexp(self, other) -> Tensor:
        return _ops.transcendental.logaddexp(self, other)

    def logaddexp2(self, other) -> Tensor:
        return _ops.transcendental.logaddexp2(self, other)

    def float_power(self, exponent) -> Tensor:
        return _ops.transcendental.float_power(self, exponent)

    # -- activations that are Tensor methods in torch -------------------------------------
    def hardshrink(self, lambd: float = 0.5) -> Tensor:
        return _ops.activation.hardshrink(self, lambd)

    def prelu(self, weight) -> Tensor:
        return _ops.activation.prelu(self, weight)

    # -- in place ---------------------------------------------------------------------------
    exp_ = _inplace("exp", _op("pointwise", "exp"))
    log_ = _inplace("log", _op("pointwise", "log"))
    sigmoid_ = _inplace("sigmoid", _op("pointwise", "sigmoid"))
    tanh_ = _inplace("tanh", _op("pointwise", "tanh"))
    erf_ = _inplace("erf", _op("pointwise", "erf"))
    sqrt_ = _inplace("sqrt", _op("pointwise", "sqrt"))
    square_ = _inplace("square", _op("pointwise", "square"))
    abs_ = _inplace("abs", _op("pointwise", "abs"))
    absolute_ = abs_
    pow_ = _inplace("pow", _op("pointwise", "pow"))
    sign_ = _inplace("sign", _op("rounding", "sign"))
    sgn_ = _inplace("sgn", _op("rounding", "sgn"))
    floor_ = _inplace("floor", _op("rounding", "floor"))
    ceil_ = _inplace("ceil", _op("rounding", "ceil"))
    trunc_ = _inplace("trunc", _op("rounding", "trunc"))
    fix_ = _inplace("fix", _op("rounding", "fix"))
    round_ = _inplace("round", _op("rounding", "round"))
    frac_ = _inplace("frac", _op("rounding", "frac"))
    reciprocal_ = _inplace("reciprocal", _op("rounding", "reciprocal"))
    rsqrt_ = _inplace("rsqrt", _op("rounding", "rsqrt"))
    nan_to_num_ = _inplace("nan_to_num", _op("rounding", "nan_to_num"))
    deg2rad_ = _inplace("deg2rad", _op("rounding", "deg2rad"))
    rad2deg_ = _inplace("rad2deg", _op("rounding", "rad2deg"))
    divide_ = _inplace("divide", _op("division", "divide"))
    true_divide_ = _inplace("true_divide", _op("division", "true_divide"))
    floor_divide_ = _inplace("floor_divide", _op("division", "floor_divide"))
    remainder_ = _inplace("remainder", _op("division", "remainder"))
    fmod_ = _inplace("fmod", _op("division", "fmod"))
    multiply_ = _inplace("multiply", _op("arith", "mul"))
    subtract_ = _inplace("subtract", _op("arith", "sub"))
    negative_ = _inplace("negative", _op("arith", "neg"))
    copysign_ = _inplace("copysign", _op("binary_math", "copysign"))
    hypot_ = _inplace("hypot", _op("binary_math", "hypot"))
    lerp_ = _inplace("lerp", _op("binary_math", "lerp"))
    addcmul_ = _inplace("addcmul", _op("binary_math", "addcmul"))
    addcdiv_ = _inplace("addcdiv", _op("binary_math", "addcdiv"))
    xlogy_ = _inplace("xlogy", _op("binary_math", "xlogy"))
    ldexp_ = _inplace("ldexp", _op("binary_math", "ldexp"))
    logit_ = _inplace("logit", _op("binary_math", "logit"))
    sin_ = _inplace("sin", _op("transcendental", "sin"))
    cos_ = _inplace("cos", _op("transcendental", "cos"))
    tan_ = _inplace("tan", _op("transcendental", "tan"))
    asin_ = _inplace("asin", _op("transcendental", "asin"))
    acos_ = _inplace("acos", _op("transcendental", "acos"))
    atan_ = _inplace("atan", _op("transcendental", "atan"))
    atan2_ = _inplace("atan2", _op("transcendental", "atan2"))
    sinh_ = _inplace("sinh", _op("transcendental", "sinh"))
    cosh_ = _inplace("cosh", _op("transcendental", "cosh"))
    asinh_ = _inplace("asinh", _op("transcendental", "asinh"))
    acosh_ = _inplace("acosh", _op("transcendental", "acosh"))
    atanh_ = _inplace("atanh", _op("transcendental", "atanh"))
    erfc_ = _inplace("erfc", _op("transcendental", "erfc"))
    erfinv_ = _inplace("erfinv", _op("transcendental", "erfinv"))
    lgamma_ = _inplace("lgamma", _op("gamma_fns", "lgamma"))
    digamma_ = _inplace("digamma", _op("gamma_fns", "digamma"))
    polygamma_ = _inplace("polygamma", lambda t, n: _ops.gamma_fns.polygamma(n, t))
    mvlgamma_ = _inplace("mvlgamma", _op("gamma_fns", "mvlgamma"))
    expm1_ = _inplace("expm1", _op("transcendental", "expm1"))
    log1p_ = _inplace("log1p", _op("transcendental", "log1p"))
    exp2_ = _inplace("exp2", _op("transcendental", "exp2"))
    log2_ = _inplace("log2", _op("transcendental", "log2"))
    log10_ = _inplace("log10", _op("transcendental", "log10"))
    sinc_ = _inplace("sinc", _op("transcendental", "sinc"))
    arcsin_, arccos_, arctan_, arctan2_ = asin_, acos_, atan_, atan2_
    arcsinh_, arccosh_, arctanh_ = asinh_, acosh_, atanh_
