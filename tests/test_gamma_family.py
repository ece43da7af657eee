"""lgamma, digamma, polygamma and mvlgamma against mpmath (50 digits,
rounded once to binary32: testdata/math/gamma.npz, written by
tools/gamma_reference.py), torch's conventions at the poles and at
infinity (torch 2.15's outputs quoted), their gradients (each the next
function of the family, checked against the reference values), and
torch's errors."""

import math
from pathlib import Path

import numpy as np
import pytest

import onemodel as om

REF = np.load(Path(__file__).resolve().parent.parent / "testdata" / "math" / "gamma.npz")
X = REF["x"]

# The largest distance in binary32 ulps from the correctly rounded value
# over the reference's 17 973 arguments, as measured when the functions
# were written (docs/numerics.md, "The gamma family"): every function is
# correctly rounded on every one of them (the binary64 evaluation's error
# stays below the distance of these arguments' results to a rounding
# boundary).
MAX_ULPS = {"lgamma": 0, "polygamma0": 0, "polygamma1": 0, "polygamma2": 0, "polygamma3": 0, "polygamma4": 0}


def ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in binary32 ulps (0 for two NaNs or two equal infinities)."""
    ia = a.astype(np.float32).view(np.int32).astype(np.int64)
    ib = b.astype(np.float32).view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    d = np.abs(ia - ib)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    return np.where(nan_a & nan_b, 0, np.where(nan_a | nan_b, 1 << 40, d))


def _value(name: str, x: np.ndarray) -> np.ndarray:
    t = om.tensor(x)
    if name == "lgamma":
        return om.lgamma(t).numpy()
    n = int(name[-1])
    return (om.digamma(t) if n == 0 else om.polygamma(n, t)).numpy()


@pytest.mark.parametrize("name", list(MAX_ULPS))
def test_against_mpmath(name):
    got, want = _value(name, X), REF[name]
    d = ulps(got, want)
    assert d.max() <= MAX_ULPS[name], (name, float(X[np.argmax(d)]), got[np.argmax(d)], want[np.argmax(d)], int(d.max()))


def test_poles_and_infinities_follow_torch():
    x = om.tensor([0.0, -0.0, -1.0, -30.0, math.inf, -math.inf, math.nan, 1e-45])
    inf, nan = math.inf, math.nan
    # torch 2.15 on these arguments.
    np.testing.assert_array_equal(om.lgamma(x).numpy(), [inf, inf, inf, inf, inf, inf, nan, np.float32(103.27893)])
    np.testing.assert_array_equal(om.digamma(x).numpy(), [-inf, inf, nan, nan, inf, nan, nan, -inf])
    np.testing.assert_array_equal(om.polygamma(2, x).numpy(), [-inf, -inf, -inf, -inf, nan, -inf, nan, -inf])
    np.testing.assert_array_equal(om.polygamma(3, x).numpy(), [inf, inf, inf, inf, nan, inf, nan, inf])
    # ψ′ is 0 at +inf and NaN at −inf as torch's; at the negative integers
    # onemodel gives the pole's +inf where torch's binary32 sin(πx) is not
    # exactly 0 (torch: 1.29e15 at −1, 1.74e14 at −30).
    np.testing.assert_array_equal(om.polygamma(1, x).numpy(), [inf, inf, inf, inf, 0.0, nan, nan, inf])


def test_int_inputs_compute_in_float32_and_methods_agree():
    t = om.tensor([1, 2, 3, 4])
    assert om.lgamma(t).dtype == om.float32
    np.testing.assert_array_equal(om.lgamma(t).numpy(), np.float32([0.0, 0.0, math.log(2), math.log(6)]))
    x = om.tensor([0.3, 2.5, 7.0])
    assert x.lgamma().numpy().tolist() == om.lgamma(x).numpy().tolist()
    assert x.digamma().numpy().tolist() == om.special.psi(x).numpy().tolist() == om.special.digamma(x).numpy().tolist()
    assert x.polygamma(2).numpy().tolist() == om.special.polygamma(2, x).numpy().tolist()
    assert om.special.gammaln(x).numpy().tolist() == om.lgamma(x).numpy().tolist()
    y = x.clone()
    y.lgamma_()
    assert y.numpy().tolist() == om.lgamma(x).numpy().tolist()
    y = x.clone()
    y.polygamma_(1)
    assert y.numpy().tolist() == om.polygamma(1, x).numpy().tolist()


@pytest.mark.parametrize("fn, order", [(om.lgamma, 0), (om.digamma, 1), (lambda t: om.polygamma(1, t), 2), (lambda t: om.polygamma(3, t), 4)])
def test_gradient_is_the_next_function(fn, order):
    pick = (np.abs(X) < 25) & (np.abs(X - np.round(X)) > 1e-3)
    x = om.tensor(X[pick][::7], requires_grad=True)
    fn(x).backward(om.ones(x.shape))
    # g = 1, so the gradient is the next function's value exactly as
    # onemodel computes it; compare with the reference within its ulps.
    d = ulps(x.grad.numpy(), REF[f"polygamma{order}"][pick][::7])
    assert d.max() <= MAX_ULPS[f"polygamma{order}"], int(d.max())


def test_mvlgamma_is_the_sum_of_shifted_lgammas():
    x = np.array([[1.2, 3.5], [7.25, 2.0]], np.float32)
    for p in (1, 2, 3, 5):
        t = om.tensor(x + (p - 1) / 2, requires_grad=True)
        got = om.mvlgamma(t, p)
        xs = (x + (p - 1) / 2).astype(np.float64)
        want = p * (p - 1) / 4 * math.log(math.pi) + sum(np.vectorize(math.lgamma)(xs - i / 2) for i in range(p))
        np.testing.assert_allclose(got.detach().numpy(), want, rtol=3e-6)
        got.sum().backward()
        dwant = sum(np.float64(REF_DIGAMMA(xs - i / 2)) for i in range(p))
        np.testing.assert_allclose(t.grad.numpy(), dwant, rtol=1e-5)
    assert om.special.multigammaln(om.tensor(x + 2), 3).numpy().tolist() == om.mvlgamma(om.tensor(x + 2), 3).numpy().tolist()


def REF_DIGAMMA(v: np.ndarray) -> np.ndarray:
    """ψ by central differences of math.lgamma in double (error ~1e-8)."""
    h = 1e-5
    return (np.vectorize(math.lgamma)(v + h) - np.vectorize(math.lgamma)(v - h)) / (2 * h)


def test_errors():
    with pytest.raises(RuntimeError, match="negative n"):
        om.polygamma(-1, om.tensor([1.0]))
    with pytest.raises(TypeError, match="polygamma"):
        om.polygamma(1.5, om.tensor([1.0]))
    # torch 2.15 computes below (p − 1)/2 (3.7380 and inf here) instead of
    # refusing.
    np.testing.assert_allclose(om.mvlgamma(om.tensor([0.4, -0.5]), 2).numpy(), [3.7380, np.inf], rtol=1e-4)
    with pytest.raises(RuntimeError, match="p has to be"):
        om.mvlgamma(om.tensor([3.0]), 0)
    with pytest.raises(TypeError, match="lgamma"):
        om.lgamma([1.0, 2.0])
