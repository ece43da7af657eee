"""The parts of the added surface that a torch fixture cannot pin: random
fills and draws (onemodel's streams; their distributions checked against
the closed-form moments), alpha dropout's formula on onemodel's own mask,
gumbel_softmax's hard sample, LazyLinear's in-place materialisation,
conversions to dtypes onemodel does not compute in, set_printoptions, and
the errors named in docs/api.md."""

from __future__ import annotations

import math

import numpy as np
import pytest

import onemodel as om
import onemodel.nn as nn
import onemodel.nn.functional as F


def _gen(seed=3):
    return om.Generator().manual_seed(seed)


def test_random_fills_have_their_distributions_and_repeat():
    n = 200_000
    g = om.empty(n).geometric_(0.25, generator=_gen()).numpy()
    assert g.min() >= 1 and np.all(g == np.round(g))
    assert abs(g.mean() - 4.0) < 0.05 and abs(g.var() - 12.0) < 0.4  # mean 1/p, var (1-p)/p^2
    ln = om.empty(n).log_normal_(0.5, 0.4, generator=_gen()).numpy().astype(np.float64)
    assert abs(np.log(ln).mean() - 0.5) < 0.005 and abs(np.log(ln).std() - 0.4) < 0.005
    c = om.empty(n).cauchy_(1.0, 2.0, generator=_gen()).numpy().astype(np.float64)
    q1, med, q3 = np.quantile(c, [0.25, 0.5, 0.75])  # Cauchy: median m, quartiles m ± σ
    assert abs(med - 1.0) < 0.05 and abs(q1 + 1.0) < 0.06 and abs(q3 - 3.0) < 0.06
    a = om.empty(1000).cauchy_(generator=_gen(9)).numpy()
    b = om.empty(1000).cauchy_(generator=_gen(9)).numpy()
    assert np.array_equal(a.view(np.uint32), b.view(np.uint32))
    with pytest.raises(RuntimeError):
        om.empty(3).geometric_(1.5)
    with pytest.raises(RuntimeError):
        om.zeros(3, requires_grad=True).log_normal_()


def test_alpha_dropout_is_torchs_formula_on_its_mask():
    x = om.randn(400, 50, generator=_gen())
    p = 0.3
    y = F.alpha_dropout(x, p, training=True, generator=_gen(5)).numpy().astype(np.float64)
    alpha = 1.7580993408473766
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    b = alpha * a * p
    xn = x.numpy().astype(np.float64)
    kept = np.isclose(y, xn * a + b, rtol=1e-6, atol=1e-6)
    dropped = np.isclose(y, -alpha * a + b, rtol=1e-6, atol=1e-6)
    assert np.all(kept | dropped)
    assert abs(dropped.mean() - p) < 0.01
    # SELU-normalised input keeps mean ≈ 0 and variance ≈ 1
    assert abs(y.mean()) < 0.02 and abs(y.var() - 1.0) < 0.03
    f = F.feature_alpha_dropout(om.randn(20, 30, 4, generator=_gen()), 0.5, training=True, generator=_gen(6)).numpy()
    assert f.shape == (20, 30, 4)
    assert F.alpha_dropout(x, 0.3, training=False) is x


def test_gumbel_softmax_hard_is_one_hot_with_soft_gradient():
    logits = om.randn(6, 5, generator=_gen()).requires_grad_()
    y = F.gumbel_softmax(logits, tau=0.5, hard=True, generator=_gen(1))
    yn = y.detach().numpy()
    assert np.array_equal(yn.sum(1), np.ones(6, np.float32)) and set(np.unique(yn)) <= {0.0, 1.0}
    (y * om.arange(5.0)).sum().backward()
    assert logits.grad is not None and np.abs(logits.grad.numpy()).max() > 0
    soft = F.gumbel_softmax(logits.detach(), generator=_gen(1)).numpy()
    assert np.allclose(soft.sum(1), 1.0, atol=1e-6)


def test_lazy_linear_materialises_in_place():
    m = nn.LazyLinear(3, generator=_gen())
    w = m.weight
    opt = om.optim.SGD(m.parameters(), lr=0.1)
    y = m(om.randn(4, 7, generator=_gen()))
    assert y.shape == (4, 3) and type(m) is nn.Linear and m.in_features == 7
    assert m.weight is w and tuple(w.shape) == (3, 7)
    bound = 1 / math.sqrt(7)
    assert np.abs(w.detach().numpy()).max() <= bound
    y.sum().backward()
    opt.step()  # the optimizer made before the first call updates the materialised weight


@pytest.mark.parametrize("method,name", [("byte", "uint8"), ("char", "int8"), ("short", "int16"), ("half", "float16"), ("double", "float64"), ("bfloat16", "bfloat16")])
def test_conversions_to_uncomputed_dtypes_raise_naming_them(method, name):
    with pytest.raises(TypeError, match=name):
        getattr(om.zeros(2), method)()


def test_set_printoptions():
    x = om.tensor([1.23456, 100.5])
    try:
        om.set_printoptions(precision=2)
        assert "1.23" in repr(x) and "1.2346" not in repr(x)
        om.set_printoptions(threshold=5, edgeitems=1)
        assert "..." in repr(om.arange(100.0))
        om.set_printoptions(profile="full")
        assert "..." not in repr(om.arange(2000.0))
    finally:
        om.set_printoptions(profile="default")
    assert "1.2346" in repr(x)
    with pytest.raises(ValueError):
        om.set_printoptions(profile="nope")


def test_errors_named_in_the_docs():
    with pytest.raises(TypeError):
        om.dot(om.tensor([1, 2]), om.tensor([3, 4]))  # int64 products need float32 (matmul's rule)
    with pytest.raises(TypeError, match="int64"):
        om.searchsorted(om.tensor([1.0, 2.0]), om.tensor([1.5]), out_int32=True)
    with pytest.raises(NotImplementedError, match="reflection"):
        F.grid_sample(om.randn(1, 1, 2, 2), om.zeros(1, 1, 1, 2), padding_mode="reflection")
    with pytest.raises(NotImplementedError):
        F.affine_grid(om.randn(1, 3, 4), (1, 1, 2, 2, 2))
    with pytest.raises(RuntimeError, match="value"):
        F.pad(om.randn(1, 2, 3), (1, 1), mode="reflect", value=2.0)
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2d(1, 1, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="zeros"):
        nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect")
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        om.zeros(2).register_hook(lambda g: g)


def test_hook_handles_and_tensor_hooks_with_autograd_grad():
    x = om.randn(3, generator=_gen()).requires_grad_()
    calls = []
    h = x.register_hook(lambda g: calls.append(1) or g * 3.0)
    (gx,) = om.autograd.grad((x * 2.0).sum(), [x])
    assert np.allclose(gx.numpy(), 6.0) and calls == [1]
    h.remove()
    (x * 2.0).sum().backward()
    assert np.allclose(x.grad.numpy(), 2.0)
