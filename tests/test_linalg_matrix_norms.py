"""linalg.matrix_norm / linalg.norm's matrix orders 1, −1, inf, −inf and
the linalg aliases (matmul, diagonal, vecdot), against NumPy's float64
norms and hand-derived gradients."""

import math

import numpy as np
import pytest

import onemodel as om

RNG = np.random.default_rng(13)
A = RNG.standard_normal((4, 5)).astype(np.float32)
X = RNG.standard_normal((2, 3, 4)).astype(np.float32)


@pytest.mark.parametrize("ord", [1, -1, math.inf, -math.inf, "fro"])
def test_matrix_norm_matches_numpy(ord):
    want = np.linalg.norm(A.astype(np.float64), ord)
    assert om.linalg.matrix_norm(om.tensor(A), ord).item() == pytest.approx(want, rel=1e-6)
    assert om.linalg.norm(om.tensor(A), ord).item() == pytest.approx(want, rel=1e-6)
    # Batched, over the first and last dims, kept.
    got = om.linalg.matrix_norm(om.tensor(X), ord, dim=(0, 2), keepdim=True).numpy()
    want = np.stack([np.linalg.norm(X[:, j, :].astype(np.float64), ord) for j in range(3)]).reshape(1, 3, 1)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_tied_columns_share_the_gradient():
    # Column sums of |T|: 4, 3, 4 — a tie; amax gives each half, and
    # d|t|/dt = sign(t).
    t = np.array([[1.0, -1.0, 2.0], [2.0, 0.5, -1.0], [-1.0, 1.5, 1.0]], np.float32)
    a = om.tensor(t)
    a.requires_grad_(True)
    om.linalg.matrix_norm(a, 1).backward()
    want = 0.5 * np.sign(t) * np.array([1.0, 0.0, 1.0], np.float32)
    np.testing.assert_array_equal(a.grad.numpy(), want)


def test_norm_dispatch_and_errors():
    v = om.tensor(A[0])
    assert om.linalg.norm(v, 1).item() == pytest.approx(np.abs(A[0].astype(np.float64)).sum(), rel=1e-6)
    # An int dim is a vector norm, a 2-tuple a matrix norm.
    np.testing.assert_allclose(om.linalg.norm(om.tensor(X), math.inf, 1).numpy(), np.abs(X).max(1))
    with pytest.raises(RuntimeError, match="must be 1D or 2D"):
        om.linalg.norm(om.tensor(X), 1)
    for ord in ("nuc", 2, -2):
        with pytest.raises(ValueError, match="singular values"):
            om.linalg.matrix_norm(om.tensor(A), ord)


def test_linalg_aliases():
    b = RNG.standard_normal((4, 2)).astype(np.float32)
    np.testing.assert_array_equal(om.linalg.matmul(om.tensor(X), om.tensor(b)).numpy(),
                                  om.matmul(om.tensor(X), om.tensor(b)).numpy())
    np.testing.assert_array_equal(om.linalg.diagonal(om.tensor(X), offset=1).numpy(),
                                  np.diagonal(X, 1, -2, -1))
    y = RNG.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(om.linalg.vecdot(om.tensor(X), om.tensor(y)).numpy(),
                               (X.astype(np.float64) * y).sum(-1), rtol=1e-6)
