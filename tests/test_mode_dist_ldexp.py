"""torch.mode, torch.dist and torch.ldexp: values from hand counts, a
float64 NumPy norm and exact powers of two; torch 2.15's outputs for the
same inputs are quoted where they fix a convention (which index, which
zero)."""

import math

import numpy as np
import pytest

import onemodel as om

ROWS = np.array([[1.0, 2, 2, 1, 3], [5, 5, 4, 4, 4], [3, 1, 2, 0, 9]], np.float32)


def test_mode_is_the_most_frequent_the_smallest_on_a_tie_at_its_last_index():
    # By hand: row 0 has 1 and 2 twice each (1 is smaller, last at 3);
    # row 1 has 4 three times (last at 4); row 2 has no repeat (0, at 3).
    # torch 2.15 gives values [1, 4, 0], indices [3, 4, 3].
    v, i = om.mode(om.tensor(ROWS), 1)
    assert v.numpy().tolist() == [1.0, 4.0, 0.0]
    assert i.numpy().tolist() == [3, 4, 3]
    # Down the columns [1 5 3], [2 5 1], [2 4 2], [1 4 0], [3 4 9]: only the
    # third repeats (2, last at row 2); the others give their smallest.
    # torch 2.15: values [1, 1, 2, 0, 3], indices [0, 2, 2, 2, 0].
    v0, i0 = om.mode(om.tensor(ROWS), 0, keepdim=True)
    assert v0.shape == (1, 5) and i0.shape == (1, 5)
    assert v0.numpy().tolist() == [[1.0, 1.0, 2.0, 0.0, 3.0]]
    assert i0.numpy().tolist() == [[0, 2, 2, 2, 0]]


def test_mode_counts_signed_zeros_as_one_value_and_handles_int_and_0d():
    v, i = om.mode(om.tensor([-0.0, 0.0, 0.0, -0.0, 1.0]))
    # Four zeros; the last is −0 at index 3 (torch 2.15: -0., 3).
    assert float(v) == 0.0 and math.copysign(1, float(v)) == -1 and int(i) == 3
    v, i = om.mode(om.tensor([[2, 2, 1, 1], [0, 3, 3, 1]]), 1)
    assert v.dtype == om.int64 and v.numpy().tolist() == [1, 3] and i.numpy().tolist() == [3, 2]
    v, i = om.mode(om.tensor(3.5))
    assert float(v) == 3.5 and int(i) == 0 and v.shape == ()
    assert om.tensor(ROWS).mode().values.numpy().tolist() == [1.0, 4.0, 0.0]


def test_mode_gradient_goes_to_the_index_and_empty_rows_are_refused():
    x = om.tensor(ROWS, requires_grad=True)
    om.mode(x, 1).values.sum().backward()
    want = np.zeros_like(ROWS)
    want[[0, 1, 2], [3, 4, 3]] = 1
    np.testing.assert_array_equal(x.grad.numpy(), want)
    with pytest.raises(ValueError, match="mode"):
        om.mode(om.zeros(2, 0), 1)
    with pytest.raises(TypeError, match="mode"):
        om.mode(ROWS)


@pytest.mark.parametrize("p", [2, 1, 0, 3.5, math.inf, -math.inf])
def test_dist_is_the_p_norm_of_the_broadcast_difference(p):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    d = np.abs((a - b).astype(np.float64)).ravel()
    want = {0: np.count_nonzero(d), math.inf: d.max(), -math.inf: d.min()}.get(p)
    if want is None:
        want = (d**p).sum() ** (1 / p)
    got = om.dist(om.tensor(a), om.tensor(b), p)
    assert got.shape == ()
    np.testing.assert_allclose(float(got), want, rtol=3e-6)
    assert float(om.tensor(a).dist(om.tensor(b), p)) == float(got)


def test_dist_gradient_and_the_zero_difference():
    a = om.tensor([[3.0, 0.0]], requires_grad=True)
    b = om.tensor([0.0, 4.0])
    om.dist(a, b).backward()  # ∂‖a − b‖/∂a = (a − b)/5
    np.testing.assert_allclose(a.grad.numpy(), [[0.6, -0.8]], rtol=1e-6)
    c = om.tensor([1.0, 2.0], requires_grad=True)
    om.dist(c, c.detach()).backward()
    assert c.grad.numpy().tolist() == [0.0, 0.0]  # torch's subgradient at 0
    with pytest.raises(TypeError, match="dist"):
        om.dist(om.tensor([1, 2]), om.tensor([1, 2]))


def test_ldexp_multiplies_by_an_exact_power_of_two():
    x = om.tensor([1.5, 3.0, -2.0, 1.0])
    got = om.ldexp(x, om.tensor([2, -130, 0, 127])).numpy()
    want = np.array([6.0, 3.0 * 2.0**-130, -2.0, 2.0**127], np.float32)
    np.testing.assert_array_equal(got, want)
    assert om.ldexp(om.tensor([1, 2]), om.tensor([3, 4])).dtype == om.float32
    assert om.ldexp(om.tensor([1, 2]), om.tensor([3, 4])).numpy().tolist() == [8.0, 32.0]
    assert x.ldexp(om.tensor([1, 1, 1, 1])).numpy().tolist() == [3.0, 6.0, -4.0, 2.0]
    y = om.tensor([1.0, 2.0])
    y.ldexp_(om.tensor([1, -1]))
    assert y.numpy().tolist() == [2.0, 1.0]


def test_ldexp_gradients():
    x = om.tensor([1.5, -1.0], requires_grad=True)
    e = om.tensor([2.0, 0.5], requires_grad=True)
    om.ldexp(x, e).sum().backward()
    # d/dx = 2^e; d/de = x·2^e·ln 2.
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 2**0.5], rtol=1e-6)
    np.testing.assert_allclose(e.grad.numpy(), [1.5 * 4 * math.log(2), -(2**0.5) * math.log(2)], rtol=1e-6)


def test_mode_matches_a_counting_reference_on_random_rows():
    rng = np.random.default_rng(8)
    x = rng.integers(-3, 4, (200, 17)).astype(np.float32)
    v, i = om.mode(om.tensor(x), 1)
    for r, row in enumerate(x):
        values, counts = np.unique(row, return_counts=True)  # ascending values
        want = values[np.argmax(counts)]
        assert v.numpy()[r] == want
        assert i.numpy()[r] == np.flatnonzero(row == want)[-1]
