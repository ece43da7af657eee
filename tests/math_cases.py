"""Element-wise math and activations against PyTorch (a case table of
tests/tensor_cases.py's format, fixture testdata/tensor/math.npz written by
``tools/tensor_oracle.py math_cases``): rounding and sign, division in all
its forms, int64 arithmetic and promotion, the binary maps, the
transcendentals and the activations, on special values (NaN, ±inf, ±0,
ties, bounds), broadcasting, views (transposed, sliced), 0-d and
zero-size tensors.

Tolerances: None = torch's bits (exact operations and single IEEE
operations); otherwise the allowed error scaled by the largest reference
value (onemodel's fixed transcendentals are within 2 ulp of the exact
result, torch's are its own: they need not round the same way).
"""

from __future__ import annotations

import numpy as np

from tensor_cases import ints, normal, registrar, special, ties

CASES: dict = {}
case = registrar(CASES)


def halves(rng, *shape):
    """Multiples of 1/2 in [−4, 4]: the ties of rounding and the bounds of
    the piecewise activations."""
    return (rng.integers(-8, 9, size=shape) / 2).astype(np.float32)


def wide(rng, *shape):
    """Normals scaled to ±8 with the special values mixed in."""
    return (special(rng, *shape) * np.float32(4)).astype(np.float32)


def rng_open(rng, *shape):
    """Uniform in (−0.95, 0.95): inside the domains of asin, acos, atanh."""
    return rng.uniform(-0.95, 0.95, size=shape).astype(np.float32)


def positive(rng, *shape):
    return (np.abs(normal(rng, *shape)) + np.float32(0.1)).astype(np.float32)


# ---------------------------------------------------------------------------
# Rounding and sign (exact: torch's bits); gradients are zero
# ---------------------------------------------------------------------------

case("rounding_special", lambda r: [wide(r, 4, 6)],
     lambda T, x: [T.floor(x), T.ceil(x), T.trunc(x), T.round(x), x.fix(), T.sign(x), T.sgn(x), x.frac()])
case("rounding_ties", lambda r: [halves(r, 5, 6)], lambda T, x: [x.round(), x.floor(), x.ceil(), (x * 0.5).round(), T.sign(x), x.frac()])
case("round_decimals", lambda r: [normal(r, 3, 5) * 30],
     lambda T, x: [T.round(x, decimals=1), x.round(decimals=2), T.round(x, decimals=-1), x.round(decimals=0)])
case("rounding_views", lambda r: [normal(r, 4, 5) * 3], lambda T, x: [x.t().floor(), x[:, 1:4].ceil(), x[::2].round(), x[1].sign()])
case("rounding_int", lambda r: [ints(r, -9, 9, 3, 4)], lambda T, i: [i.floor(), i.ceil(), i.round(), i.trunc(), i.sign(), T.sign(i)], grad=False)
case("rounding_zero_size_and_0d", lambda r: [np.zeros((0, 3), np.float32), np.array(-2.5, np.float32)],
     lambda T, e, s: [e.floor(), e.sign(), s.round(), s.floor(), s.frac(), s.sign()])
case("nan_to_num", lambda r: [wide(r, 4, 5)],
     lambda T, x: [T.nan_to_num(x), x.nan_to_num(nan=1.5), T.nan_to_num(x, posinf=9.0, neginf=-9.0), T.nan_to_num(x, 0.0, 1e30)])
case("reciprocal_rsqrt", lambda r: [wide(r, 4, 5), positive(r, 3, 4)],
     lambda T, x, p: [T.reciprocal(x), x.reciprocal(), T.rsqrt(p), p.rsqrt(), T.rsqrt(x)], grad_tol=1e-6)
case("reciprocal_int", lambda r: [ints(r, -4, 5, 6)], lambda T, i: [i.reciprocal(), T.rsqrt(i.abs() if hasattr(i, "abs") else i)], grad=False)
case("deg2rad_rad2deg", lambda r: [normal(r, 3, 4) * 180], lambda T, x: [T.deg2rad(x), x.rad2deg(), T.rad2deg(T.deg2rad(x))])

# ---------------------------------------------------------------------------
# Division: // % fmod, rounding modes, int64 and promotion
# ---------------------------------------------------------------------------

case("floor_divide_remainder_float", lambda r: [wide(r, 4, 6), ties(r, 6)],
     lambda T, a, b: [a // b, a % b, T.floor_divide(a, b), T.remainder(a, b), T.fmod(a, b), a.fmod(b), a.remainder(b)], no_grad=(0, 1), grad=False)
case("remainder_grad", lambda r: [normal(r, 3, 5) * 5, positive(r, 5) * 2], lambda T, a, b: [a % b, T.fmod(a, b), T.remainder(a, -b)])
case("remainder_scalars", lambda r: [normal(r, 3, 5) * 5],
     lambda T, a: [a % 2.5, a % -1.5, T.fmod(a, -2.0), T.remainder(a, 1e-3), T.fmod(a, 0.3)])
case("floor_divide_scalars", lambda r: [normal(r, 3, 5) * 5], lambda T, a: [a // 0.75, a // -2, 3.0 // a, a // 1e-3, 7.5 % a], grad=False)
case("division_signed_zeros", lambda r: [np.array([-4.0, 4.0, -0.0, 0.0, 1.0, -1.0, np.inf, -np.inf, 3.0, -3.0], np.float32)],
     lambda T, a: [a % 2, a % -2, a // 2, a // -2, T.fmod(a, 2), T.fmod(a, -2), a // 0.0, a % 0.0, a % np.inf, a // np.inf], grad=False)
case("divide_rounding_modes", lambda r: [wide(r, 4, 5), ties(r, 5)],
     lambda T, a, b: [T.divide(a, b), T.div(a, b, rounding_mode="trunc"), T.div(a, b, rounding_mode="floor"), a.divide(b, rounding_mode="trunc"), T.true_divide(a, b)], grad=False)
case("divide_rounding_mode_grad", lambda r: [normal(r, 3, 4) * 4, positive(r, 4)],
     lambda T, a, b: [T.div(a, b, rounding_mode="floor") + a, T.div(a, b, rounding_mode="trunc") * b])
case("int64_division", lambda r: [ints(r, -20, 20, 3, 5), np.array([3, -3, 7, -7, 1], np.int64)],
     lambda T, a, b: [a // b, a % b, T.fmod(a, b), T.div(a, b, rounding_mode="trunc"), T.div(a, b, rounding_mode="floor"), a / b, a // 4, a % -4, T.fmod(a, 3)], grad=False)
case("int64_divide_by_zero", lambda r: [ints(r, -5, 5, 4)], lambda T, a: a // T.zeros(4, dtype=T.long), grad=False)
case("int64_remainder_by_zero", lambda r: [ints(r, -5, 5, 4)], lambda T, a: a % 0, grad=False)
case("int64_arithmetic_python_ints", lambda r: [ints(r, -100, 100, 3, 4)],
     lambda T, a: [a + 1, 2 - a, a * 3, -a, a - a, a * a, a + True, 1 + a, a ** 2, a ** 0, 2 ** a.abs() if hasattr(a, "abs") else a], grad=False)
case("int64_promotion_float", lambda r: [ints(r, -50, 50, 3, 4), normal(r, 4)],
     lambda T, a, x: [a + 1.5, a * x, x - a, a / 4, a / a.clamp(min=1), 0.5 * a, a ** 0.5, a + T.tensor(2.5), x / a.clamp(min=1)])
case("int64_large_to_float", lambda r: [np.array([16777217, -16777219, 2**40 + 1, 3], np.int64)], lambda T, a: [a * 1.0, a + 0.5, a / 1], grad=False)
case("bool_arithmetic", lambda r: [np.array([True, False, True, False]), np.array([True, True, False, False])],
     lambda T, p, q: [p + q, p * q, p + 1, p * 2.5, p / 2], grad=False)
case("bool_subtract_refused", lambda r: [np.array([True, False])], lambda T, p: p - p, grad=False)
case("int64_negative_power_refused", lambda r: [ints(r, 1, 5, 3)], lambda T, a: a ** -1, grad=False)
case("int64_inplace", lambda r: [ints(r, -9, 9, 3, 4)],
     lambda T, a: (lambda b: (b.add_(2), b.mul_(3), b.sub_(1), b.__ifloordiv__(2), b.__imod__(5), b)[-1])(a.clone()), grad=False)
case("int64_inplace_float_refused", lambda r: [ints(r, -9, 9, 3)], lambda T, a: a.clone().add_(1.5), grad=False)

# ---------------------------------------------------------------------------
# Binary and ternary maps
# ---------------------------------------------------------------------------

case("copysign_special", lambda r: [wide(r, 4, 5), wide(r, 5)], lambda T, a, b: [T.copysign(a, b), a.copysign(-1.0), T.copysign(a, 0.0)], grad=False)
case("copysign_grad", lambda r: [np.array([[1.5, -2.0, 0.0, -0.0, 3.0]], np.float32), normal(r, 2, 5)], lambda T, a, b: T.copysign(a, b))
case("heaviside", lambda r: [wide(r, 4, 5), normal(r, 5)], lambda T, x, v: [T.heaviside(x, v), x.heaviside(v[:1] * 0 + 0.5)], grad=False)
case("heaviside_int", lambda r: [ints(r, -2, 3, 6), ints(r, 5, 9, 6)], lambda T, x, v: T.heaviside(x, v), grad=False)
case("fmax_fmin_nan", lambda r: [wide(r, 4, 5), wide(r, 5)], lambda T, a, b: [T.fmax(a, b), T.fmin(a, b), a.fmax(b), a.fmin(b)], grad=False)
case("fmax_fmin_grad", lambda r: [ties(r, 4, 5), ties(r, 5)], lambda T, a, b: [T.fmax(a, b), T.fmin(a, b)])
case("fmax_fmin_int", lambda r: [ints(r, -5, 5, 3, 4), ints(r, -5, 5, 4)], lambda T, a, b: [T.fmax(a, b), T.fmin(a, b)], grad=False)
case("hypot", lambda r: [normal(r, 3, 4) * 3, normal(r, 4) * 3], lambda T, a, b: [T.hypot(a, b), a.hypot(b.t() if b.dim() > 1 else b)], tol=1e-6, grad_tol=2e-6)
case("hypot_special", lambda r: [np.array([np.inf, -np.inf, np.nan, 0.0, 3e38, 1e-45, 3.0], np.float32), np.array([np.nan, 1.0, np.inf, -0.0, 3e38, 1e-45, -4.0], np.float32)],
     lambda T, a, b: T.hypot(a, b), grad=False)
case("lerp_scalar_and_tensor_weight", lambda r: [normal(r, 3, 4), normal(r, 3, 4), np.array([0.1, 0.5, 0.9, 1.7], np.float32)],
     lambda T, s, e, w: [T.lerp(s, e, 0.25), s.lerp(e, 0.75), T.lerp(s, e, w)], tol=2e-7)
case("addcmul_addcdiv", lambda r: [normal(r, 3, 4), normal(r, 3, 4), positive(r, 4) + 0.5],
     lambda T, s, a, b: [T.addcmul(s, a, b), T.addcmul(s, a, b, value=0.5), s.addcdiv(a, b, value=-2.0), T.addcdiv(s, a, b)], tol=2e-7)
case("addcmul_inplace_optimizer_style", lambda r: [normal(r, 3, 4), positive(r, 3, 4)],
     lambda T, g, v: (lambda m, s: (m.mul_(0.9).add_(g, alpha=0.1), s.mul_(0.999).addcmul_(g, g, value=0.001), m.addcdiv_(g, s.sqrt().add_(1e-8), value=-0.01), [m, s])[-1])(v.clone().detach(), v.clone().detach()),
     grad=False, tol=2e-7)
case("xlogy", lambda r: [np.array([0.0, 0.0, 1.5, -2.0, 0.0, 3.0], np.float32), np.array([0.0, np.nan, 2.0, 0.5, 4.0, np.inf], np.float32)],
     lambda T, x, y: [T.xlogy(x, y), x.xlogy(2.0)], tol=2e-7, grad=False)
case("xlogy_grad", lambda r: [normal(r, 3, 4), positive(r, 4)], lambda T, x, y: T.xlogy(x, y), tol=2e-7, grad_tol=1e-6)
case("logit", lambda r: [np.array([0.0, 1e-4, 0.25, 0.5, 0.9, 1.0, 1.5, -0.5], np.float32)],
     lambda T, x: [T.logit(x), x.logit(eps=1e-3), T.logit(x, 0.3)], tol=4e-7, grad_tol=2e-6)

# ---------------------------------------------------------------------------
# Activations without a new transcendental
# ---------------------------------------------------------------------------

_F = lambda T: T.nn.functional  # noqa: E731

case("leaky_relu_bounds", lambda r: [halves(r, 4, 6)],
     lambda T, x: [_F(T).leaky_relu(x), _F(T).leaky_relu(x, 0.2), T.nn.LeakyReLU(0.5)(x), _F(T).leaky_relu(x, -1.5)])
case("leaky_relu_special", lambda r: [special(r, 4, 5)], lambda T, x: _F(T).leaky_relu(x, 0.1), grad=False)
case("hardtanh_relu6_bounds", lambda r: [halves(r, 4, 8) * 2],
     lambda T, x: [_F(T).hardtanh(x), _F(T).hardtanh(x, -2.0, 3.0), _F(T).relu6(x), T.nn.ReLU6()(x), T.nn.Hardtanh(0.0, 1.0)(x)])
case("hardtanh_special", lambda r: [special(r, 4, 5)], lambda T, x: [_F(T).hardtanh(x), _F(T).relu6(x * 4)])
case("hardsigmoid_hardswish", lambda r: [halves(r, 4, 8) * 1.5],
     lambda T, x: [_F(T).hardsigmoid(x), _F(T).hardswish(x), T.nn.Hardsigmoid()(x), T.nn.Hardswish()(x)], tol=2e-7)
case("hardsigmoid_hardswish_normal", lambda r: [normal(r, 5, 6) * 3], lambda T, x: [_F(T).hardsigmoid(x), _F(T).hardswish(x)], tol=2e-7)
case("shrink_threshold_bounds", lambda r: [halves(r, 4, 6)],
     lambda T, x: [_F(T).hardshrink(x), _F(T).hardshrink(x, 1.5), _F(T).threshold(x, 0.5, -3.0), T.nn.Threshold(-1.0, 7.0)(x), x.hardshrink(0.5)])
case("shrink_special", lambda r: [special(r, 4, 5)], lambda T, x: [_F(T).hardshrink(x), _F(T).threshold(x, 0.0, 2.0)], grad=False)
# softshrink: torch's own sign of a zero inside the band depends on the
# element's position (its vector loop gives +0, its scalar tail x·0), so the
# values are compared without the sign of zero (tol=0 is still exact).
case("softshrink_bounds", lambda r: [halves(r, 4, 6)], lambda T, x: [_F(T).softshrink(x), _F(T).softshrink(x, 1.0), T.nn.Softshrink(0.0)(x)], tol=0.0)
case("softshrink_special", lambda r: [special(r, 4, 5)], lambda T, x: _F(T).softshrink(x), grad=False, tol=0.0)
case("prelu_shared_and_channels", lambda r: [normal(r, 2, 3, 4), np.array([0.25], np.float32), np.array([0.1, -0.5, 2.0], np.float32)],
     lambda T, x, w1, w3: [_F(T).prelu(x, w1), _F(T).prelu(x, w3), T.prelu(x[:, :, 0], w3), x.prelu(w1)])
case("prelu_special", lambda r: [special(r, 2, 3), np.array([0.25, 0.5, -1.0], np.float32)], lambda T, x, w: _F(T).prelu(x, w))
case("prelu_mismatch", lambda r: [normal(r, 2, 3, 4), np.array([0.1, 0.2], np.float32)], lambda T, x, w: _F(T).prelu(x, w), grad=False)
case("rrelu_eval", lambda r: [halves(r, 4, 5)], lambda T, x: [_F(T).rrelu(x), _F(T).rrelu(x, 0.1, 0.3), T.nn.RReLU(0.2, 0.4).eval()(x)], tol=2e-7)
case("silu", lambda r: [wide(r, 4, 6)], lambda T, x: [_F(T).silu(x), T.nn.SiLU()(x)], tol=4e-7, grad_tol=4e-6)
case("gelu_tanh", lambda r: [wide(r, 4, 6)], lambda T, x: [_F(T).gelu(x, approximate="tanh"), T.nn.GELU("tanh")(x)], tol=4e-7, grad_tol=4e-6)
case("softsign_tanhshrink", lambda r: [wide(r, 4, 5)], lambda T, x: [_F(T).softsign(x), T.nn.Softsign()(x), _F(T).tanhshrink(x * 0.25)], tol=4e-7, grad_tol=4e-6)
case("glu", lambda r: [normal(r, 3, 4, 6)], lambda T, x: [_F(T).glu(x), _F(T).glu(x, 1), T.nn.GLU(0)(x[:2]), _F(T).glu(x.transpose(1, 2), -1)], tol=4e-7, grad_tol=2e-6)
case("glu_odd_refused", lambda r: [normal(r, 3, 5)], lambda T, x: _F(T).glu(x), grad=False)
case("softmin", lambda r: [normal(r, 3, 5)], lambda T, x: [_F(T).softmin(x, dim=1), T.nn.Softmin(0)(x), _F(T).softmin(x, -1)], tol=4e-7, grad_tol=2e-6)


def _inplace_graph(T, x):
    F = _F(T)
    y = x * 2.0
    a = F.leaky_relu(y, 0.2, inplace=True)
    b = F.hardtanh(x * 3.0, -1.0, 1.0, inplace=True)
    c = F.relu(x - 0.5, inplace=True)
    d = F.threshold(x + 0.1, 0.0, -1.0, inplace=True)
    e = T.nn.ReLU6(inplace=True)(x * 5.0)
    f = F.relu_(x * -1.0)
    return [a, b, c, d, e, f, y]


case("activation_inplace_in_graph", lambda r: [halves(r, 3, 4) * 0.5 + 0.125], _inplace_graph)


def _inplace_tensor_methods(T, x):
    outs = []
    for name in ("floor_", "ceil_", "round_", "trunc_", "sign_", "frac_", "reciprocal_", "neg_", "abs_"):
        y = x * 1.0
        getattr(y, name)()
        outs.append(y)
    return outs


case("rounding_inplace_in_graph", lambda r: [normal(r, 3, 4) * 3 + 0.01], _inplace_tensor_methods)


# ---------------------------------------------------------------------------
# Transcendentals (onemodel's fixed functions: within 2 ulp, so compared with
# a tolerance; special values exactly)
# ---------------------------------------------------------------------------

def unit(rng, *shape):
    """Uniform in (−1, 1) with ±1, ±0 and ±0.5 planted."""
    x = rng.uniform(-1, 1, size=shape).astype(np.float32).ravel()
    x[:6] = [1.0, -1.0, 0.0, -0.0, 0.5, -0.5]
    return x.reshape(shape)


def big_args(rng, *shape):
    """Arguments up to 1e30 for the trigonometric reduction."""
    e = rng.uniform(0, 30, size=shape)
    return (np.sign(rng.standard_normal(shape)) * 10.0**e).astype(np.float32)


_TR = 3e-7  # 2-3 ulp of values up to 1 (the results are scaled by max(1, |ref|))

case("trig_forward_backward", lambda r: [wide(r, 4, 6)],
     lambda T, x: [T.sin(x), T.cos(x), x.sin(), x.cos(), T.tan(x * 0.3)], tol=_TR, grad_tol=4e-6)
case("trig_huge_arguments", lambda r: [big_args(r, 6, 8)], lambda T, x: [T.sin(x), T.cos(x), T.tan(x)], tol=_TR, grad=False)
case("trig_special_values", lambda r: [np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-40, 3e38, 6400.0, 1.5707964], np.float32)],
     lambda T, x: [T.sin(x), T.cos(x), T.tan(x)], tol=_TR, grad=False)
case("trig_views_and_broadcast", lambda r: [normal(r, 4, 5) * 3, normal(r, 5)],
     lambda T, x, y: [x.t().sin(), x[:, 1:4].cos(), T.sin(x + y), T.atan2(x, y), T.atan2(y, x.t()[:1].t())], tol=_TR, grad_tol=4e-6)
case("inverse_trig", lambda r: [unit(r, 4, 6), wide(r, 4, 6)],
     lambda T, u, x: [T.asin(u), T.acos(u), T.atan(x), u.arcsin(), x.arctan(), T.asin(u * 1.5)], tol=_TR, grad=False)
case("inverse_trig_grad", lambda r: [rng_open(r, 3, 5), normal(r, 3, 5) * 3],
     lambda T, u, x: [T.asin(u), T.acos(u), T.atan(x)], tol=_TR, grad_tol=2e-5)
case("atan2_special", lambda r: [np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, np.inf, np.inf, -np.inf, 1.0, np.nan, 3.0], np.float32),
                                 np.array([0.0, 0.0, -0.0, -0.0, 0.0, -0.0, 1.0, np.inf, -np.inf, -np.inf, 1.0, -4.0], np.float32)],
     lambda T, y, x: T.atan2(y, x), tol=_TR, grad=False)
case("atan2_grad", lambda r: [normal(r, 3, 4), normal(r, 4)], lambda T, y, x: [T.atan2(y, x), y.atan2(x)], tol=_TR, grad_tol=4e-6)
case("hyperbolic", lambda r: [wide(r, 4, 6), positive(r, 3, 4) + 1.0, unit(r, 3, 4)],
     lambda T, x, p, u: [T.sinh(x), T.cosh(x), T.asinh(x), T.acosh(p), T.atanh(u * 0.999), T.tanh(x)], tol=_TR, grad=False)
case("hyperbolic_grad", lambda r: [normal(r, 3, 4) * 2, positive(r, 3, 4) + 1.0, rng_open(r, 3, 4)],
     lambda T, x, p, u: [T.sinh(x), T.cosh(x), T.asinh(x), T.acosh(p), T.atanh(u)], tol=3e-6, grad_tol=2e-5)
case("hyperbolic_large", lambda r: [np.array([-100.0, -89.4, -20.0, 9.5, 88.5, 89.4, 89.5, 1e20, -1e30, 3e38], np.float32)],
     lambda T, x: [T.sinh(x), T.cosh(x), T.asinh(x)], tol=_TR, grad=False)
case("exp_log_family", lambda r: [wide(r, 4, 6), positive(r, 3, 5) * 10],
     lambda T, x, p: [T.expm1(x), T.exp2(x), T.log1p(p), T.log2(p), T.log10(p), T.log1p(x), T.log2(x), T.log10(x)], tol=_TR, grad=False)
case("exp_log_family_grad", lambda r: [normal(r, 3, 4), positive(r, 3, 4) * 5],
     lambda T, x, p: [T.expm1(x), T.exp2(x), T.log1p(p), T.log2(p), T.log10(p)], tol=_TR, grad_tol=4e-6)
case("exp_log_tiny_and_exact", lambda r: [np.array([1e-30, -1e-30, 1e-10, -1e-8, 3e-4, -1.0, -0.99999994, 1.0, 8.0, 1024.0, 1e-3, 0.0], np.float32)],
     lambda T, x: [T.expm1(x), T.log1p(x), T.exp2(x * 1e6), T.log2(x.abs()), T.log10(x.abs())], tol=_TR, grad=False)
case("sinc", lambda r: [np.concatenate([wide(r, 10), np.array([0.0, -0.0, 1.0, 2.0, -3.0, 0.5], np.float32)])], lambda T, x: T.sinc(x), tol=_TR, grad=False)
case("sinc_grad", lambda r: [normal(r, 3, 4) * 2], lambda T, x: T.sinc(x), tol=_TR, grad_tol=4e-6)
case("logaddexp", lambda r: [wide(r, 3, 4), wide(r, 4)], lambda T, a, b: [T.logaddexp(a, b), T.logaddexp2(a, b)], tol=_TR, grad=False)
case("logaddexp_grad", lambda r: [normal(r, 3, 4) * 3, normal(r, 4)], lambda T, a, b: [T.logaddexp(a, b), a.logaddexp2(b)], tol=_TR, grad_tol=4e-6)
case("pow_tensor_exponent", lambda r: [positive(r, 3, 4) * 2, normal(r, 4)], lambda T, x, p: [T.pow(x, p), x ** p, 2.0 ** p, T.pow(x, p.abs() + 1)], tol=_TR, grad_tol=4e-6)
case("pow_negative_bases", lambda r: [halves(r, 4, 5), np.array([2.0, 3.0, 0.5, -1.0, -2.0], np.float32)],
     lambda T, x, p: [T.pow(x, p), x ** 2, x ** 3, x ** -1, x ** 0.5, x ** 2.5, (-x) ** 3], tol=_TR, grad=False)
case("pow_special_values", lambda r: [np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0], np.float32)],
     lambda T, x: [x ** 0, x ** 0.5, x ** -0.5, x ** -2, x ** 3, T.pow(x, T.tensor(np.inf)), T.pow(x, x), 1.0 ** x], tol=_TR, grad=False)
case("pow_int_tensor_exponent", lambda r: [ints(r, 0, 4, 5), normal(r, 5)], lambda T, i, x: [T.pow(2, i), i ** i, x ** i, i ** 2.5], tol=_TR, grad=False)

# ---------------------------------------------------------------------------
# Activations on expm1 and ln(1 + e^x)
# ---------------------------------------------------------------------------

case("softplus", lambda r: [wide(r, 4, 6) * 4],
     lambda T, x: [_F(T).softplus(x), _F(T).softplus(x, beta=2.0), _F(T).softplus(x, 0.5, 3.0), T.nn.Softplus(3, 10)(x)], tol=_TR, grad_tol=4e-6)
case("softplus_threshold_switch", lambda r: [np.array([19.5, 20.0, 20.5, 9.999, 10.0, 10.001, -20.0, -100.0], np.float32)],
     lambda T, x: [_F(T).softplus(x), _F(T).softplus(x, beta=2.0)], tol=_TR, grad_tol=1e-6)
case("elu_selu_celu", lambda r: [wide(r, 4, 6)],
     lambda T, x: [_F(T).elu(x), _F(T).elu(x, 0.5), _F(T).selu(x), _F(T).celu(x, 2.0), T.nn.ELU(1.5)(x), T.nn.SELU()(x), T.nn.CELU()(x)], tol=_TR, grad_tol=4e-6)
case("elu_at_zero_and_bounds", lambda r: [halves(r, 4, 6)], lambda T, x: [_F(T).elu(x), _F(T).selu(x), _F(T).celu(x, 0.5)], tol=_TR, grad_tol=1e-6)
case("mish_logsigmoid", lambda r: [wide(r, 4, 6) * 3],
     lambda T, x: [_F(T).mish(x), _F(T).logsigmoid(x), T.nn.Mish()(x), T.nn.LogSigmoid()(x)], tol=_TR, grad_tol=4e-6)
case("smooth_inplace_in_graph", lambda r: [normal(r, 3, 4)],
     lambda T, x: [_F(T).elu(x * 1.0, inplace=True), _F(T).selu(x * 2.0, inplace=True), _F(T).celu(x * 1.0, 0.7, inplace=True), T.nn.Mish(inplace=True)(x * 1.0)],
     tol=_TR, grad_tol=4e-6)
case("transcendental_inplace_methods", lambda r: [rng_open(r, 3, 4)],
     lambda T, x: [(x * 1.0).sin_(), (x * 1.0).cos_(), (x * 0.5).tan_(), (x * 1.0).asin_(), (x * 1.0).expm1_(), (x + 1.0).log1p_(),
                   (x * 1.0).exp2_(), (x + 2.0).log2_(), (x + 2.0).log10_(), (x * 1.0).sinh_(), (x * 1.0).atan_()], tol=_TR, grad_tol=4e-6)
case("transcendental_int_and_0d", lambda r: [ints(r, -3, 4, 5), np.array(0.75, np.float32), np.zeros((0, 2), np.float32)],
     lambda T, i, s, e: [T.sin(i), T.exp2(i), T.atan(i), s.sin(), s.acos(), e.cos(), e.log1p(), T.atan2(i, i + 1)], tol=_TR, grad=False)

# ---------------------------------------------------------------------------
# erfc, erfinv; atan2 with subnormal operands; pow with large |p·ln x|
# ---------------------------------------------------------------------------

case("erfc", lambda r: [wide(r, 4, 6), np.array([0.0, -0.0, 0.3, 0.5, 0.875, 2.0, 5.0, 9.0, 9.5, 10.0, 10.1, 26.0, -0.5, -3.0, -10.0,
                                                   np.inf, -np.inf, np.nan, 1e-30, -1e-40], np.float32)],
     lambda T, x, s: [T.erfc(x), x.erfc(), T.erfc(s), T.erfc(x * 3.0)], tol=_TR, grad=False)
case("erfc_grad", lambda r: [normal(r, 3, 4) * 2, normal(r, 4)], lambda T, x, y: [T.erfc(x), (x + y).erfc(), T.erfc(x.t())], tol=_TR, grad_tol=4e-6)
case("erfinv", lambda r: [unit(r, 4, 6), np.array([0.0, -0.0, 0.25, 0.5, -0.5, 0.9, 0.99, 0.999, 0.99999, 0.99999994, -0.99999994, 1.0, -1.0,
                                                     1.5, -2.0, np.inf, np.nan, 1e-30, -1e-40, 0.49999997], np.float32)],
     lambda T, u, s: [T.erfinv(u), u.erfinv(), T.erfinv(s), T.erfinv(u * 0.999)], tol=_TR, grad=False)
case("erfinv_grad", lambda r: [rng_open(r, 3, 4), rng_open(r, 4)], lambda T, u, v: [T.erfinv(u), (u * v).erfinv(), T.erfinv(u.t())],
     tol=_TR, grad_tol=2e-5)
case("erf_family_inplace", lambda r: [rng_open(r, 3, 4)], lambda T, x: [(x * 1.0).erfc_(), (x * 0.9).erfinv_()], tol=_TR, grad_tol=2e-5)
case("atan2_subnormal", lambda r: [np.array([2.04e-42, -1e-45, 1e-40, 3e-39, 1.2e-38, 5e-44, 1e-30, 1.0, 0.0, -2e-42], np.float32),
                                   np.array([3.5722557e-8, 1e-30, -1e-38, 2e-39, 1e-45, -7e-45, 1e-40, 1e-44, 1e-45, -3e-20], np.float32)],
     lambda T, y, x: [T.atan2(y, x), T.atan2(x, y)], tol=_TR, grad=False)
# pow with large |p·ln x| (up to 80 here): its float-float logarithm keeps
# it within the 2-3 ulp of the other transcendentals (docs/numerics.md, "Methods, per function").
_POW_AMPLIFIED = _TR
case("pow_large_exponents", lambda r: [rng_open(r, 4, 5) * 0.05 + 1.0, normal(r, 5) * 400.0],
     lambda T, x, p: [T.pow(x, p), x ** 25.1, x ** -13.3, T.pow(x * 3.0, p * 0.05), (x * 2.0) ** 100.0], tol=_POW_AMPLIFIED, grad=False)
case("pow_huge_and_integer_exponents", lambda r: [np.array([-2.0, -0.5, -1.0, 2.0, -3.0, 0.999, -1.001, 1e-40, -1e-40, 7.0], np.float32),
                                                  np.array([1e30, -1e30, 3e38, 16777215.0, 33.0, 2e5, -1e6, 0.5, -3.0, -41.0], np.float32)],
     lambda T, x, p: [T.pow(x, p), T.pow(x, 31.0), T.pow(x, -7.0), T.pow(x, 1e30)], tol=_POW_AMPLIFIED, grad=False)
