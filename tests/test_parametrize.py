"""nn.utils.parametrize and parametrizations.weight_norm: torch's structure
(class names, parameter and state-dict keys, errors, as torch 2.15 gives
them for the same calls) and values against float64 NumPy formulas."""

import copy
import pickle

import numpy as np
import pytest

import onemodel as om
from onemodel import nn
from onemodel.nn.utils import parametrize

RNG = np.random.default_rng(5)
W = RNG.standard_normal((3, 4)).astype(np.float32)
X = RNG.standard_normal((5, 4)).astype(np.float32)


def linear_with(w):
    lin = nn.Linear(w.shape[1], w.shape[0])
    with om.no_grad():
        lin.weight.copy_(om.tensor(w))
        lin.bias.zero_()
    return lin


def norm_except(v, dim):
    if dim is None:
        return np.sqrt((v * v).sum())
    others = tuple(i for i in range(v.ndim) if i != dim % v.ndim)
    return np.sqrt((v * v).sum(others, keepdims=True))


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_values_gradients_and_keys(dim):
    lin = nn.utils.parametrizations.weight_norm(linear_with(W), dim=dim)
    assert type(lin).__name__ == "ParametrizedLinear"
    assert [n for n, _ in lin.named_parameters()] == [
        "bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    w64 = W.astype(np.float64)
    g = norm_except(w64, dim)
    np.testing.assert_allclose(lin.parametrizations.weight.original0.detach().numpy(), g, rtol=1e-6)
    np.testing.assert_allclose(lin.weight.detach().numpy(), w64, rtol=1e-6, atol=1e-7)
    y = lin(om.tensor(X))
    (y * y).sum().backward()
    # d/dw of Σ(x·wᵀ)² = 2·yᵀ·x; through w = g·v/‖v‖: dg = Σ_except(dw·v)/‖v‖,
    # dv = g/‖v‖·dw − g·v·Σ_except(dw·v)/‖v‖³ (v = w at the start).
    dw = 2 * (X.astype(np.float64) @ w64.T).T @ X.astype(np.float64)
    n = norm_except(w64, dim)
    s = (dw * w64).sum() if dim is None else (dw * w64).sum(tuple(i for i in range(2) if i != dim % 2), keepdims=True)
    np.testing.assert_allclose(lin.parametrizations.weight.original0.grad.numpy(), s / n, rtol=1e-4)
    np.testing.assert_allclose(lin.parametrizations.weight.original1.grad.numpy(), g / n * dw - g * w64 * s / n**3,
                               rtol=1e-4, atol=1e-4)


def test_assigning_the_weight_runs_right_inverse_and_remove_restores():
    lin = nn.utils.parametrizations.weight_norm(linear_with(W))
    g_param = lin.parametrizations.weight.original0
    lin.weight = om.tensor(2 * W)
    # The same Parameter objects now hold the new magnitude and direction.
    assert lin.parametrizations.weight.original0 is g_param
    np.testing.assert_allclose(g_param.detach().numpy(), norm_except(2 * W.astype(np.float64), 0), rtol=1e-6)
    np.testing.assert_allclose(lin.weight.detach().numpy(), 2 * W, rtol=1e-6)
    parametrize.remove_parametrizations(lin, "weight")
    assert type(lin) is nn.Linear
    assert [n for n, _ in lin.named_parameters()] == ["bias", "weight"]
    assert isinstance(lin.weight, nn.Parameter)
    np.testing.assert_allclose(lin.weight.detach().numpy(), 2 * W, rtol=1e-6)


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(0, 1)

    def right_inverse(self, a):
        return a.triu()


class Double(nn.Module):
    def forward(self, x):
        return x * 2

    def right_inverse(self, a):
        return a / 2


def test_chained_custom_parametrizations():
    a = RNG.standard_normal((3, 3)).astype(np.float32)
    lin = linear_with(a)
    parametrize.register_parametrization(lin, "weight", Symmetric())
    parametrize.register_parametrization(lin, "weight", Double())
    assert parametrize.is_parametrized(lin) and parametrize.is_parametrized(lin, "weight")
    assert not parametrize.is_parametrized(lin, "bias")
    assert parametrize.type_before_parametrizations(lin) is nn.Linear
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original"]
    up = np.triu(a)
    np.testing.assert_array_equal(lin.parametrizations.weight.original.detach().numpy(), up)
    np.testing.assert_allclose(lin.weight.detach().numpy(), 2 * (up + np.triu(a, 1).T), rtol=1e-6)
    sym = a + a.T
    lin.weight = om.tensor(sym)
    np.testing.assert_allclose(lin.weight.detach().numpy(), sym, rtol=1e-6)
    with parametrize.cached():
        assert lin.weight is lin.weight
    assert lin.weight is not lin.weight
    parametrize.remove_parametrizations(lin, "weight", leave_parametrized=False)
    np.testing.assert_allclose(lin.weight.detach().numpy(), np.triu(sym) / 2, rtol=1e-6)


def test_buffers_deepcopy_and_pickling():
    bn = nn.BatchNorm1d(3)
    with om.no_grad():
        bn.running_mean.copy_(om.tensor([1.0, 2.0, 3.0]))
    parametrize.register_parametrization(bn, "running_mean", Double())
    # right_inverse keeps the value: the original is halved, the buffer reads the same.
    assert bn.running_mean.tolist() == [1.0, 2.0, 3.0]
    assert bn.parametrizations.running_mean.original.tolist() == [0.5, 1.0, 1.5]
    assert "parametrizations.running_mean.original" in bn.state_dict()
    lin = nn.utils.parametrizations.weight_norm(linear_with(W))
    twin = copy.deepcopy(lin)
    np.testing.assert_array_equal(twin.weight.detach().numpy(), lin.weight.detach().numpy())
    assert twin.parametrizations.weight.original1 is not lin.parametrizations.weight.original1
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(lin)


def test_bad_registrations_raise_as_torch():
    class Shrink(nn.Module):
        def forward(self, x):
            return x[:2]

    class NoInverse(nn.Module):
        def forward(self, x):
            return x + 1

    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element"):
        parametrize.register_parametrization(linear_with(W), "nope", Double())
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(linear_with(W), "weight", Shrink())
    lin = parametrize.register_parametrization(linear_with(W), "weight", NoInverse())
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        lin.weight = om.tensor(W)
    with pytest.raises(ValueError, match="does not have a parametrization on bias"):
        parametrize.remove_parametrizations(lin, "bias")
