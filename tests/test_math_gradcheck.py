"""GradientCheck (central differences against the backward rules) for every
differentiable element-wise math operator and activation, with
broadcasting and strided views, in both modes. Inputs are kept away from
the kinks and jumps of the piecewise functions (a difference quotient across
a kink measures neither side's slope)."""

import numpy as np
import pytest

import onemodel as om
from onemodel.gradcheck import gradient_check

F = om.nn.functional


def leaf(*shape, lo=-3.0, hi=3.0, seed=0, avoid=(), step=None):
    """Uniform values in [lo, hi), at least 0.01 away from each point of
    `avoid` and (with `step`) from every multiple of `step`."""
    rng = np.random.default_rng([seed, len(shape), *shape])
    x = rng.uniform(lo, hi, size=shape)
    for _ in range(50):
        bad = np.zeros(shape, bool)
        for p in avoid:
            bad |= np.abs(x - p) < 0.01
        if step is not None:
            bad |= np.abs(x / step - np.round(x / step)) * step < 0.01
        if not bad.any():
            break
        x = np.where(bad, rng.uniform(lo, hi, size=shape), x)
    return om.tensor(x.astype(np.float32)).requires_grad_()


def strided(rows, cols, **kw):
    base = leaf(cols * 2, rows, **kw).detach()
    return base[::2].t().detach().requires_grad_()


@pytest.fixture(params=["fast", "exact"])
def mode(request):
    om.compute.set_mode(request.param)
    return request.param


CASES = {
    # rounding: zero slopes; frac: slope 1
    "floor_ceil_round_trunc": (lambda x: om.floor(x) + om.ceil(x) * 2 + om.round(x) * 3 + om.trunc(x) + x.sign() + x, lambda: (leaf(3, 4, step=0.5),)),
    "frac_strided": (lambda x: x.frac() * 2.0, lambda: (strided(3, 4, step=1.0),)),
    "round_decimals": (lambda x: x.round(decimals=1) + x, lambda: (leaf(5, step=0.05),)),
    "nan_to_num": (lambda x: om.nan_to_num(x) * 1.5, lambda: (leaf(6),)),
    "reciprocal": (lambda x: om.reciprocal(x), lambda: (leaf(3, 4, lo=0.5, hi=3.0),)),
    "rsqrt": (lambda x: om.rsqrt(x), lambda: (strided(2, 3, lo=0.5, hi=4.0),)),
    "deg2rad_rad2deg": (lambda x: om.deg2rad(x) + om.rad2deg(x) * 0.01, lambda: (leaf(4),)),
    # division
    "remainder_broadcast": (lambda a, b: a % b, lambda: (leaf(3, 4, lo=-5, hi=5, step=1.0), leaf(4, lo=1.0, hi=1.0001))),
    "fmod_divisor_grad": (lambda a, b: om.fmod(a, b), lambda: (leaf(5, lo=0.1, hi=0.9), leaf(5, lo=2.0, hi=3.0))),
    "divide_trunc_plus": (lambda a, b: om.div(a, b, rounding_mode="trunc") + a * b, lambda: (leaf(4, lo=0.1, hi=0.9), leaf(4, lo=2.0, hi=3.0))),
    # binary maps
    "copysign": (lambda a, b: om.copysign(a, b), lambda: (leaf(3, 4, avoid=(0,)), leaf(4, avoid=(0,)))),
    "fmax_fmin": (lambda a, b: om.fmax(a, b) + om.fmin(a, b) * 2, lambda: (leaf(3, 4, seed=1), leaf(4, seed=2))),
    "hypot": (lambda a, b: om.hypot(a, b), lambda: (leaf(3, 4, avoid=(0,)), strided(3, 4, avoid=(0,)))),
    "lerp_tensor_weight": (lambda s, e, w: om.lerp(s, e, w), lambda: (leaf(3, 4), leaf(3, 4, seed=3), leaf(4, lo=0, hi=1))),
    "lerp_scalar_weight": (lambda s, e: om.lerp(s, e, 0.7), lambda: (leaf(5), leaf(5, seed=4))),
    "addcmul": (lambda s, a, b: om.addcmul(s, a, b, value=0.5), lambda: (leaf(3, 4), leaf(4), leaf(3, 1))),
    "addcdiv": (lambda s, a, b: om.addcdiv(s, a, b, value=-2.0), lambda: (leaf(3, 4), leaf(3, 4, seed=5), leaf(4, lo=1.0, hi=2.0))),
    "xlogy": (lambda x, y: om.xlogy(x, y), lambda: (leaf(3, 4), leaf(4, lo=0.5, hi=3.0))),
    "logit": (lambda x: om.logit(x), lambda: (leaf(6, lo=0.05, hi=0.95),)),
    "special_entr_xlog1py_ndtr": (lambda p, x, y: om.special.entr(p) + om.special.xlog1py(x, y) + om.special.ndtr(x),
                                  lambda: (leaf(3, 4, lo=0.2, hi=2.0), leaf(3, 4, seed=6), leaf(4, lo=-0.5, hi=2.0))),
    "logit_eps": (lambda x: om.logit(x, eps=0.01), lambda: (leaf(6, lo=0.05, hi=0.95),)),
    # activations
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda: (leaf(3, 4, avoid=(0,)),)),
    "leaky_relu_inplace": (lambda x: F.leaky_relu(x * 1.0, 0.3, inplace=True), lambda: (strided(3, 4, avoid=(0,)),)),
    "hardtanh_relu6": (lambda x: F.hardtanh(x, -1.5, 2.0) + F.relu6(x * 3), lambda: (leaf(4, 5, lo=-4, hi=4, avoid=(-1.5, 2.0, 0.0, 6.0 / 3)),)),
    "hardsigmoid_hardswish": (lambda x: F.hardsigmoid(x) + F.hardswish(x), lambda: (leaf(4, 5, lo=-5, hi=5, avoid=(-3.0, 3.0)),)),
    "softshrink_hardshrink": (lambda x: F.softshrink(x, 0.5) + F.hardshrink(x, 1.0), lambda: (leaf(4, 5, avoid=(-1, -0.5, 0.5, 1)),)),
    "threshold": (lambda x: F.threshold(x, 0.25, -2.0), lambda: (leaf(6, avoid=(0.25,)),)),
    "prelu_channels": (lambda x, w: F.prelu(x, w), lambda: (leaf(2, 3, 4, avoid=(0,)), leaf(3))),
    "prelu_shared": (lambda x, w: F.prelu(x, w), lambda: (strided(3, 4, avoid=(0,)), leaf(1))),
    "rrelu_eval": (lambda x: F.rrelu(x, 0.1, 0.3), lambda: (leaf(6, avoid=(0,)),)),
    "silu": (lambda x: F.silu(x), lambda: (leaf(3, 4),)),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), lambda: (leaf(3, 4),)),
    "softsign_tanhshrink": (lambda x: F.softsign(x) + F.tanhshrink(x), lambda: (leaf(3, 4, avoid=(0,)),)),
    "glu": (lambda x: F.glu(x, 1), lambda: (leaf(2, 4, 3),)),
    "softmin": (lambda x: F.softmin(x, 1), lambda: (leaf(3, 5),)),
    # the fixed transcendentals
    "sin_cos_tan": (lambda x: om.sin(x) + om.cos(x) * 2 + om.tan(x * 0.4), lambda: (leaf(3, 4),)),
    "trig_strided": (lambda x: x.sin() * x.cos(), lambda: (strided(3, 4),)),
    "asin_acos": (lambda x: om.asin(x) + om.acos(x) * 0.5, lambda: (leaf(3, 4, lo=-0.9, hi=0.9),)),
    "atan": (lambda x: om.atan(x), lambda: (leaf(3, 4, lo=-4, hi=4),)),
    "atan2_broadcast": (lambda y, x: om.atan2(y, x), lambda: (leaf(3, 4, avoid=(0,)), leaf(4, avoid=(0,)))),
    "sinh_cosh": (lambda x: om.sinh(x) + om.cosh(x), lambda: (leaf(3, 4),)),
    "asinh_acosh_atanh": (lambda x, p, u: om.asinh(x) + om.acosh(p) + om.atanh(u), lambda: (leaf(4), leaf(4, lo=1.2, hi=4.0), leaf(4, lo=-0.9, hi=0.9))),
    "expm1_log1p": (lambda x, p: om.expm1(x) + om.log1p(p), lambda: (leaf(3, 4), leaf(3, 4, lo=-0.5, hi=3.0))),
    "erfc": (lambda x: om.erfc(x) + x.erfc() * 0.5, lambda: (leaf(3, 4, lo=-2.5, hi=2.5),)),
    "erfc_strided": (lambda x: om.erfc(x), lambda: (strided(3, 4, lo=0.2, hi=3.0),)),
    "erfinv": (lambda u: om.erfinv(u), lambda: (leaf(3, 4, lo=-0.9, hi=0.9),)),
    "erfinv_broadcast": (lambda u, v: (u * v).erfinv(), lambda: (leaf(3, 4, lo=-0.9, hi=0.9), leaf(4, lo=0.5, hi=1.0))),
    "exp2_log2_log10": (lambda x, p: om.exp2(x) + om.log2(p) + om.log10(p), lambda: (leaf(5), leaf(5, lo=0.3, hi=5.0))),
    "sinc": (lambda x: om.sinc(x), lambda: (leaf(6, avoid=(0,)),)),
    "logaddexp": (lambda a, b: om.logaddexp(a, b) + om.logaddexp2(a, b), lambda: (leaf(3, 4), leaf(4))),
    "pow_tensor_exponent": (lambda x, p: om.pow(x, p), lambda: (leaf(3, 4, lo=0.5, hi=2.0), leaf(4, lo=-2, hi=2))),
    "pow_scalar_base": (lambda p: 2.0 ** p, lambda: (leaf(5),)),
    # activations on expm1 and ln(1 + e^x)
    "softplus": (lambda x: F.softplus(x) + F.softplus(x, beta=2.0, threshold=3.0), lambda: (leaf(3, 4, avoid=(1.5,)),)),
    "elu_selu_celu": (lambda x: F.elu(x) + F.selu(x) + F.celu(x, 0.5), lambda: (leaf(3, 4, avoid=(0,)),)),
    "mish_logsigmoid": (lambda x: F.mish(x) + F.logsigmoid(x), lambda: (leaf(3, 4),)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_check(case, mode):
    fn, make = CASES[case]
    report = gradient_check(fn, make(), name=case)
    assert report.passed
    assert report.max_scaled_error <= 1.0


def test_rrelu_training_slopes_are_the_drawn_noise():
    """In training each non-positive element gets its own slope in
    [lower, upper); the gradient is that slope (1 for positive inputs)."""
    om.manual_seed(3)
    x = leaf(200, avoid=(0,))
    y = F.rrelu(x, 0.1, 0.3, training=True)
    y.sum().backward()
    xv, yv, g = x.detach().numpy(), y.detach().numpy(), x.grad.numpy()
    neg = xv <= 0
    assert np.all(g[~neg] == 1) and np.array_equal(yv[~neg], xv[~neg])
    assert np.all((g[neg] >= 0.1) & (g[neg] < 0.3)) and len(np.unique(g[neg])) > 10
    np.testing.assert_array_equal(yv[neg], (xv[neg] * g[neg]).astype(np.float32))


def test_inplace_activation_after_a_saved_output_is_refused():
    """torch's version-counter rule: sigmoid saved its output, relu_ changed it."""
    x = leaf(4)
    y = x.sigmoid()
    F.leaky_relu(y, 0.1, inplace=True)
    with pytest.raises(om.TensorVersionError):
        y.sum().backward()


def test_inplace_on_a_leaf_that_requires_grad_is_refused():
    with pytest.raises(RuntimeError, match="leaf"):
        F.hardtanh(leaf(3), inplace=True)


def test_float_power_is_refused_with_the_reason():
    """torch.float_power computes in float64, which onemodel does not have."""
    with pytest.raises(TypeError, match="float64"):
        om.float_power(om.ones(3), 2)
