"""Gradients where the formula divides 0 by 0: torch's chosen values,
derived by hand here, instead of NaN.

* atan2 at the origin: torch 2.x sets 1/(y² + x²) to 0 where that sum is
  0, so the gradients are g·x·0 = ±0 and g·(−y)·0 = ∓0;
* a norm at the zero vector has gradient 0 (torch's norm backward masks
  norm == 0), so normalize(x) = x / max(‖x‖, eps) of a zero vector has the
  gradient g/eps, and cosine_similarity the gradient (b/‖b‖)/eps."""

import math

import numpy as np
import pytest

import onemodel as om
import onemodel.nn.functional as F


def leaf(values):
    t = om.tensor(np.asarray(values, np.float32))
    t.requires_grad_(True)
    return t


@pytest.mark.parametrize("y0,x0", [(0.0, 0.0), (0.0, -0.0), (-0.0, 0.0), (1e-30, 0.0)])
def test_atan2_at_the_origin(y0, x0):
    y, x = leaf([y0]), leaf([x0])
    om.atan2(y, x).sum().backward()
    gy, gx = y.grad.item(), x.grad.item()
    assert gy == 0.0 and gx == 0.0
    # Signs: g·x·0 and g·(−y)·0.
    assert math.copysign(1, gy) == math.copysign(1, x0)
    assert math.copysign(1, gx) == -math.copysign(1, y0 if y0 != 1e-30 else 1.0)


def test_atan2_with_a_subnormal_sum_stays_infinite():
    # y² + x² = 2e-40 is subnormal, not 0: 1/2e-40 overflows to inf.
    y, x = leaf([1e-20]), leaf([1e-20])
    om.atan2(y, x).sum().backward()
    assert y.grad.item() == math.inf and x.grad.item() == -math.inf


@pytest.mark.parametrize("p", [2.0, 3.0, 1.0])
def test_normalize_of_a_zero_vector(p):
    x = leaf(np.zeros(3))
    y = F.normalize(x, p=p, dim=0)
    assert y.tolist() == [0.0, 0.0, 0.0]
    y.sum().backward()
    assert x.grad.tolist() == [float(np.float32(1) / np.float32(1e-12))] * 3


def test_cosine_similarity_with_a_zero_vector():
    a, b = leaf(np.zeros(3)), leaf(np.ones(3))
    F.cosine_similarity(a, b, dim=0).backward()
    want = float(np.float32(1 / math.sqrt(3)) / np.float32(1e-8))
    np.testing.assert_allclose(a.grad.numpy(), [want] * 3, rtol=1e-6)
    assert b.grad.tolist() == [0.0, 0.0, 0.0]


def test_sinc_gradient_is_zero_where_x_squared_underflows():
    # sinc'(x) = (πx·cos πx − sin πx)/(πx²): 0/0 once x² underflows; torch
    # masks where x·x·π == 0. At 0.25 the formula holds (no cancellation).
    x = leaf([0.0, 1e-30, -1e-30, 1e-45, 0.25])
    om.sinc(x).sum().backward()
    g = x.grad.tolist()
    assert g[:4] == [0.0, 0.0, 0.0, 0.0]
    px = math.pi * 0.25
    assert g[4] == pytest.approx((px * math.cos(px) - math.sin(px)) / (math.pi * 0.25 ** 2), rel=1e-5)
