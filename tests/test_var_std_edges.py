"""var and std gradients at their edges, against torch's rules
(FunctionsManual.cpp, ``std_backward`` and ``var_backward``) derived by
hand here: std first forms g/(2·std), set to 0 where std is 0; var's rule
is g·2(x − mean)/(n − c) with a ``dim``; over every element with
n − c ≤ 0 it is g·inf, NaN where x equals the mean."""

import math

import numpy as np
import pytest

import onemodel as om


def grad_of(fn, x):
    a = om.tensor(np.asarray(x, dtype=np.float32))
    a.requires_grad_(True)
    fn(a).sum().backward()
    return a.grad.numpy()


@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("dim", [None, 1, (0, 1)])
def test_std_of_a_constant_input_has_a_zero_gradient(correction, dim):
    # std = 0 (or NaN when n − c ≤ 0 over all elements): torch's mask
    # gives 0 where the std is 0, never the 0/0 of the plain formula.
    x = np.full((2, 3), 1.25)
    g = grad_of(lambda a: a.std(dim=dim, correction=correction), x)
    n = 6 if dim in (None, (0, 1)) else 3
    if n - correction > 0:
        assert np.array_equal(g, np.zeros((2, 3))), g
    else:
        assert np.isnan(g).all(), g


def test_std_of_a_single_element_has_a_zero_gradient():
    g = grad_of(lambda a: om.std(a, dim=1, correction=0), [[3.0], [-2.0]])
    assert np.array_equal(g, [[0.0], [0.0]])


def test_var_with_a_dim_divides_by_n_minus_c_as_it_is():
    # n = 2, c = 3: 2/(n − c) = −2; x − mean = ∓0.5: gradient ±1.
    g = grad_of(lambda a: om.var(a, dim=1, correction=3), [[0.5, 1.5]])
    assert g.tolist() == [[1.0, -1.0]]
    # n = 1, c = 2: −2·(x − mean) = −2·0 = −0.
    g = grad_of(lambda a: om.var(a, dim=1, correction=2), [[4.0]])
    assert g.tolist() == [[0.0]] and math.copysign(1.0, g[0, 0]) == -1.0


def test_var_over_every_element_with_no_dof_is_inf_or_nan():
    # n = 3, c = 3: g·inf where x ≠ mean, NaN where x = mean (1.5).
    g = grad_of(lambda a: om.var(a, correction=3), [0.5, 1.5, 2.5])
    assert g[0] == math.inf and math.isnan(g[1]) and g[2] == math.inf


def test_ordinary_std_gradient_unchanged():
    # (x − mean)/((n − 1)·std) for x = [0, 1, 2]: std = 1, mean = 1.
    g = grad_of(lambda a: a.std(), [0.0, 1.0, 2.0])
    assert g.tolist() == [-0.5, 0.0, 0.5]
