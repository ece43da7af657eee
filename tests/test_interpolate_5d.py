"""interpolate of 5-D inputs ('trilinear', 'nearest') against a float64
NumPy reference written from the definition (PyTorch's source-index rule:
half-pixel centres clamped at 0, or align_corners' end-to-end map; the two
neighbours' weights 1 − λ and λ per dim; nearest reads floor(dst·in/out))."""

import numpy as np
import pytest

import onemodel as om
import onemodel.nn.functional as F

RNG = np.random.default_rng(41)
X = RNG.standard_normal((2, 3, 4, 5, 6)).astype(np.float32)


def linear_taps(n_in, n_out, align):
    dst = np.arange(n_out, dtype=np.float64)
    if align:
        src = dst * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
    else:
        src = np.maximum((dst + 0.5) * (n_in / n_out) - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(int), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = src - i0
    return i0, i1, lam


def trilinear64(x, size, align):
    y = x.astype(np.float64)
    for axis, n_out in zip((2, 3, 4), size):
        i0, i1, lam = linear_taps(y.shape[axis], n_out, align)
        shape = [1] * y.ndim
        shape[axis] = n_out
        lam = lam.reshape(shape)
        y = np.take(y, i0, axis) * (1 - lam) + np.take(y, i1, axis) * lam
    return y


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", [(7, 3, 9), (4, 5, 6), (8, 10, 12), (1, 1, 1)])
def test_trilinear_matches_the_definition(align, size):
    got = F.interpolate(om.tensor(X), size=size, mode="trilinear", align_corners=align).numpy()
    np.testing.assert_allclose(got, trilinear64(X, size, align), rtol=1e-5, atol=1e-6)


def test_trilinear_gradient_is_the_transposed_map():
    # The map is linear: <interp(x), g> = <x, interp^T(g)>; check it with
    # the float64 reference applied to unit impulses of a small volume.
    x = om.tensor(X[:1, :1, :2, :3, :2])
    x.requires_grad_(True)
    g = RNG.standard_normal((1, 1, 3, 4, 3))
    (F.interpolate(x, size=(3, 4, 3), mode="trilinear") * om.tensor(g.astype(np.float32))).sum().backward()
    want = np.zeros((2, 3, 2))
    for idx in np.ndindex(2, 3, 2):
        e = np.zeros((1, 1, 2, 3, 2))
        e[(0, 0) + idx] = 1
        want[idx] = (trilinear64(e, (3, 4, 3), False) * g).sum()
    np.testing.assert_allclose(x.grad.numpy()[0, 0], want, rtol=1e-5, atol=1e-6)


def test_nearest_5d_and_upsample():
    got = F.interpolate(om.tensor(X), size=(7, 3, 9), mode="nearest").numpy()
    idx = [np.minimum(np.floor(np.arange(o) * (i / o)).astype(int), i - 1) for i, o in zip((4, 5, 6), (7, 3, 9))]
    want = X[:, :, idx[0]][:, :, :, idx[1]][:, :, :, :, idx[2]]
    np.testing.assert_array_equal(got, want)
    up = om.nn.Upsample(scale_factor=2, mode="trilinear")(om.tensor(X)).numpy()
    np.testing.assert_allclose(up, trilinear64(X, (8, 10, 12), False), rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match="trilinear 5-D"):
        F.interpolate(om.tensor(X[0]), scale_factor=2, mode="trilinear")
