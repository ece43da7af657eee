"""onemodel.special: torch.special's names. Expected values from Python's
float64 math module (erf, log, log1p), published normal-table values, and
torch 2.15's gradient rules for xlogy/xlog1py/entr written out by hand
(derivatives.yaml: xlogy(g, y) masked to 0 where x = 0 and y ≤ 0; ≤ −1 for
xlog1py; entr −(1 + log x))."""

import math

import numpy as np
import pytest

import onemodel as om
from onemodel import special

XS = np.array([-30.0, -9.0, -3.5, -2.0, -1.0, -0.3, 0.0, 0.2, 1.0, 2.5, 6.0, 30.0], np.float32)


def test_ndtr_matches_the_normal_cdf():
    got = special.ndtr(om.tensor(XS)).numpy()
    # At t = x·√½ rounded to float32, as the kernel forms it (in the lower
    # tail Φ moves by about 2t² times the rounding of t, 5e-6 relative at
    # x = −9); Φ(−30) = 5e-198 underflows float32 to 0.
    t = (XS * np.float32(math.sqrt(0.5))).astype(np.float64)
    want = np.array([0.5 * math.erfc(-v) for v in t])
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-45)
    # Published table values: Φ(1) = 0.8413447461, Φ(−2) = 0.0227501319.
    assert special.ndtr(om.tensor([1.0, -2.0])).tolist() == pytest.approx([0.8413447461, 0.0227501319], rel=1e-6)
    x = om.tensor(XS)
    x.requires_grad_(True)
    special.ndtr(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(-XS.astype(np.float64) ** 2 / 2) / math.sqrt(2 * math.pi),
                               rtol=2e-6, atol=1e-30)


def test_entr_values_and_gradient():
    x = om.tensor([0.0, 0.5, 2.0, -1.0, float("nan")])
    x.requires_grad_(True)
    y = special.entr(x)
    v = y.tolist()
    assert v[0] == 0.0 and v[3] == -math.inf and math.isnan(v[4])
    assert v[1:3] == pytest.approx([0.5 * math.log(2.0), -2.0 * math.log(2.0)], rel=1e-6)
    y.sum().backward()
    g = x.grad.tolist()
    assert g[0] == math.inf and math.isnan(g[3]) and math.isnan(g[4])
    assert g[1:3] == pytest.approx([-(1 + math.log(0.5)), -(1 + math.log(2.0))], rel=1e-6)


@pytest.mark.parametrize("name,pole,log", [("xlogy", 0.0, math.log), ("xlog1py", -1.0, math.log1p)])
def test_x_log_gradient_rules(name, pole, log):
    fn = getattr(special, name)
    xs = [0.0, 0.0, 0.0, 2.0, 0.0]
    ys = [0.5, pole, pole - 1.0, 0.5, float("nan")]
    x, y = om.tensor(xs), om.tensor(ys)
    x.requires_grad_(True)
    y.requires_grad_(True)
    out = fn(x, y)
    assert out.tolist()[:4] == pytest.approx([0.0, 0.0, 0.0, 2.0 * log(0.5)], rel=1e-6)
    assert math.isnan(out.tolist()[4])
    out.sum().backward()
    gx, gy = x.grad.tolist(), y.grad.tolist()
    # x = 0 with y above the pole: log(y) (torch ≥ 2.1), 0 at or below it.
    assert gx[:4] == pytest.approx([log(0.5), 0.0, 0.0, log(0.5)], rel=1e-6) and math.isnan(gx[4])
    # g·x/y (g·x/(1 + y)): 0/0 at the pole is NaN.
    assert math.isnan(gy[1]) and gy[3] == pytest.approx(2.0 / (0.5 - pole), rel=1e-6)


def test_aliases_are_the_library_functions():
    x = om.tensor(np.linspace(-3, 3, 13, dtype=np.float32))
    for name, same in [("expit", om.sigmoid), ("erf", om.erf), ("erfc", om.erfc), ("expm1", om.expm1),
                       ("exp2", om.exp2), ("log1p", lambda t: om.log1p(t.abs())), ("sinc", om.sinc), ("round", om.round)]:
        arg = x.abs() if name == "log1p" else x
        assert np.array_equal(getattr(special, name)(arg).numpy(), same(x).numpy()), name
    m = om.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert np.array_equal(special.softmax(m, 1).numpy(), om.softmax(m, 1).numpy())
    assert np.array_equal(special.log_softmax(m, 0).numpy(), om.log_softmax(m, 0).numpy())
    assert np.array_equal(special.logsumexp(m, 1).numpy(), om.logsumexp(m, 1).numpy())
    p = om.tensor([0.25, 0.5])
    assert special.logit(p).tolist() == pytest.approx([math.log(1 / 3), 0.0], abs=1e-7)
