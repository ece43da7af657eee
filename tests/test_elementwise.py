"""The element-wise transcendental and selection operators: every kernel
path gives the scalar path's bits at every length and start offset (NaN,
infinities, signed zeros, subnormals included), special values, exact-mode
NaN canonicalisation, broadcast and strided operands, and GradientCheck on
every operator."""

import math

import numpy as np
import pytest

import onemodel as om
from onemodel.gradcheck import gradient_check

from conftest import PATHS, bits

GEN = om.Generator().manual_seed(7)


def pool(n=400, seed=3):
    special = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, np.inf, -np.inf, np.nan, 1e-45, -3e-42, 1.2e-38, 3.4e38, -88.0,
               89.0, -104.0, 0.625, 1.25, -0.25, 0.875, 7.0, -11.0, 15.5, 30.0]
    rng = np.random.default_rng(seed)
    rnd = rng.uniform(-12, 12, size=n - len(special)).astype(np.float32)
    rnd[::5] = rng.integers(0, 2**32, size=len(rnd[::5]), dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([np.array(special, np.float32), rnd])


UNARY = {
    "exp": om.exp,
    "log": om.log,
    "sigmoid": om.sigmoid,
    "tanh": om.tanh,
    "gelu": om.functional.gelu,
    "erf": om.erf,
    "sqrt": om.sqrt,
    "square": om.square,
    "abs": om.abs,
    "pow2.5": lambda x: om.pow(x, 2.5),
    "pow-3": lambda x: om.pow(x, -3),
    "clamp": lambda x: om.clamp(x, -1.0, 2.0),
    "relu": om.relu,
}
BINARY = {
    "maximum": om.maximum,
    "minimum": om.minimum,
    "where": lambda a, b: om.where(a.numpy() > 0, a, b),
}


def run_on(path, fn, *args):
    om.compute.set_kernel_path(path)
    try:
        return bits(fn(*args).numpy())
    finally:
        om.compute.set_kernel_path(None)


@pytest.mark.parametrize("mode", ["fast", "exact"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_every_path_gives_the_scalar_bits_at_every_length_and_offset(name, mode):
    om.compute.set_mode(mode)
    fn = UNARY[name]
    base = om.tensor(pool())
    for length in list(range(1, 41)) + [63, 64, 65, 100, 127, 128, 129, 150]:
        for off in (0, 1, 3, 7, 8, 15):
            x = base[off:off + length]
            want = run_on("scalar", fn, x)
            for p in PATHS:
                got = run_on(p, fn, x)
                if mode == "exact":
                    np.testing.assert_array_equal(got, want, err_msg=f"{name} {p} len={length} off={off}")
                else:
                    nan = np.isnan(want.view(np.float32))
                    assert np.array_equal(nan, np.isnan(got.view(np.float32)))
                    np.testing.assert_array_equal(got[~nan], want[~nan], err_msg=f"{name} {p} len={length} off={off}")


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_ops_on_every_path_broadcast_and_strided(name):
    om.compute.set_mode("exact")
    fn = BINARY[name]
    p = pool(600, seed=5)
    a = om.tensor(p[:300].reshape(20, 15)).t()  # transposed (strided) view, (15, 20)
    b = om.tensor(p[300:320])  # broadcast over rows
    want = run_on("scalar", fn, a, b)
    for path in PATHS:
        np.testing.assert_array_equal(run_on(path, fn, a, b), want, err_msg=f"{name} {path}")
    for length in range(1, 151, 7):
        x, y = om.tensor(p[:length]), om.tensor(p[300:300 + length])
        want = run_on("scalar", fn, x, y)
        for path in PATHS:
            np.testing.assert_array_equal(run_on(path, fn, x, y), want, err_msg=f"{name} {path} len={length}")


def test_special_values():
    inf, nan = math.inf, math.nan
    t = om.tensor
    assert om.exp(t([-inf])).item() == 0.0
    assert math.isnan(om.exp(t([nan])).item())
    assert om.exp(t([inf])).item() == inf
    assert om.log(t([0.0])).item() == -inf
    assert om.log(t([-0.0])).item() == -inf
    assert math.isnan(om.log(t([-1.0])).item())
    assert om.log(t([1.0])).item() == 0.0
    assert om.tanh(t([inf])).item() == 1.0
    assert om.tanh(t([-inf])).item() == -1.0
    assert bits(om.tanh(t([-0.0])).numpy())[0] == 0x80000000
    assert om.sigmoid(t([inf])).item() == 1.0
    assert om.sigmoid(t([-inf])).item() == 0.0
    assert om.erf(t([inf])).item() == 1.0 and om.erf(t([-inf])).item() == -1.0
    assert om.functional.gelu(t([inf])).item() == inf
    assert om.sqrt(t([4.0])).item() == 2.0
    assert om.pow(t([2.0]), 3).item() == 8.0
    assert math.isnan(om.pow(t([-8.0]), 1 / 3).item())
    # torch.maximum propagates NaN and prefers +0 over -0.
    assert math.isnan(om.maximum(t([nan]), t([1.0])).item())
    assert bits(om.maximum(t([-0.0]), t([0.0])).numpy())[0] == 0
    assert bits(om.minimum(t([0.0]), t([-0.0])).numpy())[0] == 0x80000000


def test_exact_mode_writes_the_canonical_nan():
    x = om.tensor(np.array([0x7FC01234, 0xFFC00000, 0x7F800001], np.uint32).view(np.float32))
    om.compute.set_mode("exact")
    for fn in (om.exp, om.tanh, om.sigmoid, om.erf, om.functional.gelu, om.log, om.sqrt):
        assert (bits(fn(x).numpy()) == 0x7FC00000).all(), fn
    assert bits(om.log(om.tensor([-1.0])).numpy())[0] == 0x7FC00000


def test_values_against_numpy_float64():
    # Independent reference: numpy in float64, rounded; the fixed functions
    # are within 2 ulp (docs/numerics.md has the exhaustive table).
    x = np.linspace(-9, 9, 2001).astype(np.float32)
    x64 = x.astype(np.float64)
    refs = {
        om.exp: np.exp(x64),
        om.tanh: np.tanh(x64),
        om.sigmoid: 1 / (1 + np.exp(-x64)),
        om.square: x64 * x64,
    }
    for fn, ref in refs.items():
        got = fn(om.tensor(x)).numpy().astype(np.float64)
        ulp = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
        assert (np.abs(got - ref) <= 2 * ulp).all(), fn
    pos = np.abs(x) + 0.01
    got = om.log(om.tensor(pos)).numpy().astype(np.float64)
    ref = np.log(pos.astype(np.float64))
    assert (np.abs(got - ref) <= np.spacing(np.abs(ref).astype(np.float32)) + 1e-45).all()


def test_gelu_refuses_an_unknown_approximation():
    # approximate='tanh' is torch's tanh form now (tests/math_cases.py checks it
    # against torch); any other string is torch's RuntimeError.
    om.functional.gelu(om.tensor([1.0]), approximate="tanh")
    with pytest.raises(RuntimeError, match="none or tanh"):
        om.functional.gelu(om.tensor([1.0]), approximate="erf")


def leaf(*shape, lo=-2.0, hi=2.0, seed=0):
    rng = np.random.default_rng(seed)
    return om.tensor(rng.uniform(lo, hi, size=shape).astype(np.float32)).requires_grad_()


def strided_leaf(rows, cols, lo=-2.0, hi=2.0):
    rng = np.random.default_rng(11)
    base = om.tensor(rng.uniform(lo, hi, size=(cols * 2, rows)).astype(np.float32))
    return base[::2].t().detach().requires_grad_()


def away_from(v, *shape, gap=0.05, seed=1):
    """Values at least `gap` away from `v` (kinks of abs/clamp/max)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, size=shape)
    x = np.where(np.abs(x - v) < gap, x + 2 * gap, x)
    return om.tensor(x.astype(np.float32)).requires_grad_()


GRAD_CASES = {
    "exp": (om.exp, lambda: (leaf(3, 4),)),
    "exp_strided": (om.exp, lambda: (strided_leaf(3, 4),)),
    "log": (om.log, lambda: (leaf(4, 5, lo=0.5, hi=3.0),)),
    "sigmoid": (om.sigmoid, lambda: (strided_leaf(4, 3),)),
    "tanh": (om.tanh, lambda: (leaf(5, 3),)),
    "gelu": (om.functional.gelu, lambda: (leaf(6, 4, lo=-4, hi=4),)),
    "erf": (om.erf, lambda: (leaf(7),)),
    "sqrt": (om.sqrt, lambda: (leaf(5, lo=0.5, hi=4.0),)),
    "square": (om.square, lambda: (strided_leaf(2, 3),)),
    "pow": (lambda x: om.pow(x, 2.5), lambda: (leaf(6, lo=0.5, hi=2.0),)),
    "pow_int": (lambda x: x ** 3, lambda: (leaf(6),)),
    "abs": (om.abs, lambda: (away_from(0.0, 3, 4),)),
    "clamp": (lambda x: om.clamp(x, -1.0, 1.0), lambda: (away_from(1.0, 8, seed=2),)),
    "clamp_min": (lambda x: om.clamp(x, min=0.3), lambda: (away_from(0.3, 8, seed=3),)),
    "maximum_broadcast": (om.maximum, lambda: (leaf(3, 4, seed=4), leaf(4, seed=5))),
    "minimum_strided": (om.minimum, lambda: (strided_leaf(3, 4), leaf(3, 1, seed=6))),
    "where_broadcast": (lambda a, b: om.where(np.array([[True, False, True, True]]), a, b), lambda: (leaf(3, 4, seed=8), leaf(4, seed=9))),
}


@pytest.mark.parametrize("mode", ["fast", "exact"])
@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_gradient_check(case, mode):
    om.compute.set_mode(mode)
    fn, make = GRAD_CASES[case]
    report = gradient_check(fn, make(), name=case)
    assert report is not None


def test_maximum_tie_splits_the_gradient():
    a = om.tensor([1.0, 2.0, 3.0]).requires_grad_()
    b = om.tensor([1.0, 1.0, 5.0]).requires_grad_()
    om.maximum(a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.5, 1.0, 0.0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.5, 0.0, 1.0])
