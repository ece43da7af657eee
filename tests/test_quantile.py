"""quantile / nanquantile against NumPy's (float64, the same five
interpolation methods: NumPy's 'linear', 'lower', 'higher', 'midpoint',
'nearest' are torch's), the shapes torch gives, gradients through the
picked elements, and torch's errors."""

import numpy as np
import pytest

import onemodel as om

RNG = np.random.default_rng(17)
X = RNG.standard_normal((3, 5, 4)).astype(np.float32)
MODES = ["linear", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("q", [0.0, 0.3, 0.5, 1.0, [0.1, 0.5, 0.95]])
def test_quantile_matches_numpy(mode, dim, q):
    qt = om.tensor(np.array(q, np.float32)) if isinstance(q, list) else q
    got = om.quantile(om.tensor(X), qt, dim, interpolation=mode).numpy()
    want = np.quantile(X.astype(np.float64), np.array(q, np.float32).astype(np.float64), axis=dim, method=mode)
    assert got.shape == want.shape
    # The rank q·(n−1) is float32 in torch (and here): a rank that lands a
    # hair off an integer moves the weight by ≤ 1e-7 relative.
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
    kept = om.quantile(om.tensor(X), qt, dim, keepdim=True, interpolation=mode)
    assert tuple(kept.shape) == np.quantile(X, np.array(q, np.float32), axis=dim, method=mode, keepdims=True).shape


def test_nanquantile_skips_nans_and_quantile_propagates_them():
    x = X.copy()
    x[0, 1, 2] = np.nan
    x[2, 0, :] = np.nan
    for mode in MODES:
        got = om.nanquantile(om.tensor(x), 0.3, -1, interpolation=mode).numpy()
        with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
            want = np.nanquantile(x.astype(np.float64), np.float32(0.3).astype(np.float64), axis=-1, method=mode)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
    q = om.quantile(om.tensor(x), 0.3, -1).numpy()
    assert np.isnan(q[0, 1]) and np.isnan(q[2, 0]) and not np.isnan(q[1]).any()


def test_gradient_goes_to_the_neighbouring_elements():
    # [4, 1, 3, 2]: sorted 1 2 3 4; q = 0.5 → rank 1.5 → half to 2 (index
    # 3) and half to 3 (index 2).
    a = om.tensor([4.0, 1.0, 3.0, 2.0])
    a.requires_grad_(True)
    om.quantile(a, 0.5).backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.5, 0.5]
    b = om.tensor([4.0, 1.0, 3.0, 2.0])
    b.requires_grad_(True)
    b.quantile(0.5, interpolation="higher").backward()
    assert b.grad.tolist() == [0.0, 0.0, 1.0, 0.0]


def test_errors_as_torch():
    x = om.tensor(X)
    with pytest.raises(ValueError, match=r"q values must be in the range \[0, 1\]"):
        om.quantile(x, 1.5)
    with pytest.raises(ValueError, match="interpolation must be one of"):
        om.quantile(x, 0.5, interpolation="cubic")
    with pytest.raises(ValueError, match="must be non-empty"):
        om.quantile(om.tensor(np.zeros((0,), np.float32)), 0.5)
    with pytest.raises(TypeError, match="must be a float tensor"):
        om.quantile(om.tensor([1, 2, 3]), 0.5)
    with pytest.raises(ValueError, match="scalar or 1D"):
        om.quantile(x, om.tensor(np.full((2, 2), 0.5, np.float32)))
