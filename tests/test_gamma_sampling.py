"""The gamma and Poisson samplers (onemodel._standard_gamma, poisson and
the Gamma / Beta / Dirichlet / Chi2 / Poisson distributions' sample):
moments and frequencies against the distributions' exact values, within
five standard errors (fixed seeds, so each check is one deterministic
draw), shapes, and the same stream for the same seed."""

import math

import numpy as np
import pytest

import onemodel as om

N = 40000
D = om.distributions


def _within(sample: np.ndarray, mean: float, var: float) -> None:
    sample = sample.astype(np.float64)
    se = math.sqrt(var / sample.size)
    assert abs(sample.mean() - mean) < 5 * se, (sample.mean(), mean, se)
    # The sample variance's standard error, from the fourth moment.
    m4 = ((sample - mean) ** 4).mean()
    se_var = math.sqrt(max(m4 - var**2, 1e-30) / sample.size)
    assert abs(sample.var() - var) < 5 * se_var, (sample.var(), var, se_var)


@pytest.mark.parametrize("alpha", [0.05, 0.3, 1.0, 2.5, 40.0])
def test_standard_gamma_moments(alpha):
    g = om.Generator().manual_seed(11)
    x = om._standard_gamma(om.full((N,), alpha), generator=g).numpy()
    assert (x > 0).all()
    _within(x, alpha, alpha)  # Gamma(α, 1): mean α, variance α


@pytest.mark.parametrize("rate", [0.0, 0.5, 4.0, 9.9, 10.0, 25.0, 300.0])
def test_poisson_moments_and_integers(rate):
    g = om.Generator().manual_seed(12)
    x = om.poisson(om.full((N,), rate), generator=g).numpy()
    assert (x == np.floor(x)).all() and (x >= 0).all()
    if rate == 0:
        assert (x == 0).all()
        return
    _within(x, rate, rate)


def test_poisson_frequencies_match_the_pmf():
    g = om.Generator().manual_seed(13)
    for rate in (2.0, 30.0):  # multiplication, PTRS
        x = om.poisson(om.full((N,), rate), generator=g).numpy().astype(np.int64)
        for k in range(max(0, int(rate) - 3), int(rate) + 4):
            p = math.exp(k * math.log(rate) - rate - math.lgamma(k + 1))
            freq = (x == k).mean()
            assert abs(freq - p) < 5 * math.sqrt(p * (1 - p) / N), (rate, k, freq, p)


def test_distribution_samples():
    om.manual_seed(5)
    b = D.Beta(2.0, 5.0).sample((N,)).numpy()
    _within(b, 2 / 7, 2 * 5 / (49 * 8))
    c = D.Chi2(om.full((N,), 3.0)).sample().numpy()
    _within(c, 3.0, 6.0)
    gm = D.Gamma(om.full((N,), 2.0), 4.0).sample().numpy()
    _within(gm, 0.5, 2.0 / 16)
    d = D.Dirichlet(om.tensor([1.0, 2.0, 3.0])).sample((N,)).numpy()
    np.testing.assert_allclose(d.sum(-1), 1.0, rtol=1e-6)
    for i, a in enumerate((1.0, 2.0, 3.0)):
        _within(d[:, i], a / 6, a * (6 - a) / (36 * 7))
    p = D.Poisson(om.full((N,), 7.0)).sample().numpy()
    _within(p, 7.0, 7.0)
    assert D.Gamma(om.ones(2, 3), 2.0).sample((4,)).shape == (4, 2, 3)
    assert D.Dirichlet(om.ones(2, 3)).sample((5,)).shape == (5, 2, 3)
    assert D.Poisson(om.ones(3)).sample((2,)).shape == (2, 3)


def test_same_seed_same_stream_and_errors():
    a = om._standard_gamma(om.full((100,), 0.7), generator=om.Generator().manual_seed(9)).numpy()
    b = om._standard_gamma(om.full((100,), 0.7), generator=om.Generator().manual_seed(9)).numpy()
    assert a.tobytes() == b.tobytes()
    with pytest.raises(RuntimeError, match="non-negative"):
        om.poisson(om.tensor([1.0, -1.0]))
    with pytest.raises(NotImplementedError, match="rsample"):
        D.Gamma(1.0, 1.0).rsample()
