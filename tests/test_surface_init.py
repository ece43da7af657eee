"""nn.init against torch 2.15 (testdata/surface/init.json): gains, fans and
error messages equal torch's; the default initialisation of the layers
follows torch's bounds (every value within torch's bound, the largest of
many draws close to it, as torch's own draws recorded by the oracle); the
distributions have the documented moments; draws follow the generator."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import onemodel as om
import onemodel.nn as nn
from onemodel.nn import init

FIX = json.loads((Path(__file__).resolve().parent.parent / "testdata" / "surface" / "init.json").read_text())


def test_gains_fans_and_errors_are_torchs():
    for key, want in FIX["gains"].items():
        name, param = key.split("/")
        param = None if param == "None" else float(param) if "." in param else int(param)
        assert init.calculate_gain(name, param) == want, key
    for shape, want in FIX["fans"].items():
        assert list(init._calculate_fan_in_and_fan_out(om.empty(*eval(shape)))) == want
    calls = {
        "gain": lambda: init.calculate_gain("swish"),
        "slope": lambda: init.calculate_gain("leaky_relu", "x"),
        "fan": lambda: init.xavier_uniform_(om.empty(3)),
        "mode": lambda: init.kaiming_normal_(om.empty(3, 3), mode="fan_avg"),
        "eye": lambda: init.eye_(om.empty(2, 2, 2)),
        "dirac": lambda: init.dirac_(om.empty(2, 2)),
    }
    for label, (kind, message) in FIX["errors"].items():
        with pytest.raises(getattr(__builtins__, kind, None) or ValueError) as info:
            calls[label]()
        assert str(info.value) == message


# The bound of each default-initialised parameter, derived by hand from
# torch's reset_parameters: kaiming_uniform_(a=√5) gives 1/√fan_in for
# weights (fan_in = in_channels/groups · kernel), biases U(±1/√fan_in);
# recurrent layers U(±1/√hidden); MultiheadAttention's in_proj xavier_uniform_
# (√(6/(fan_in + fan_out))), its biases 0, out_proj a Linear.
BUILDS = {
    "linear": (lambda: nn.Linear(30, 20), {"weight": 1 / math.sqrt(30), "bias": 1 / math.sqrt(30)}),
    "conv2d": (lambda: nn.Conv2d(4, 6, 3), {"weight": 1 / 6, "bias": 1 / 6}),
    "conv1d": (lambda: nn.Conv1d(5, 4, 2), {"weight": 1 / math.sqrt(10), "bias": 1 / math.sqrt(10)}),
    "conv_transpose2d": (lambda: nn.ConvTranspose2d(4, 6, 3), {"weight": 1 / math.sqrt(54), "bias": 1 / math.sqrt(54)}),
    "lstm": (lambda: nn.LSTM(7, 9), {n: 1 / 3 for n in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")}),
    "gru_cell": (lambda: nn.GRUCell(5, 8), {n: 1 / math.sqrt(8) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}),
    "mha": (lambda: nn.MultiheadAttention(8, 2), {"in_proj_weight": math.sqrt(6 / 32), "in_proj_bias": 0.0,
                                                  "out_proj.weight": 1 / math.sqrt(8), "out_proj.bias": 0.0}),
}


@pytest.mark.parametrize("label", sorted(BUILDS))
def test_default_initialisation_follows_torchs_bounds(label):
    build, bounds = BUILDS[label]
    om.manual_seed(0)
    seen = {}
    for _ in range(200):
        for n, p in build().named_parameters():
            seen[n] = max(seen.get(n, 0.0), float(np.abs(p.detach().numpy()).max()))
    torch_max = FIX["max_abs"][label]
    assert set(seen) == set(torch_max) == set(bounds)
    for n, bound in bounds.items():
        assert seen[n] <= bound * (1 + 1e-6), (label, n, seen[n], bound)
        assert torch_max[n] <= bound * (1 + 1e-6), (label, n, "torch exceeds the derived bound")
        # Both libraries' largest draw approaches the bound the same way.
        assert abs(seen[n] - torch_max[n]) <= 0.02 * bound + 1e-12, (label, n, seen[n], torch_max[n])


def _sample(fn, *shape, **kw):
    t = om.empty(*shape)
    fn(t, **kw)
    return t.numpy().astype(np.float64)


def test_distributions_have_the_documented_moments():
    om.manual_seed(3)
    n = (200, 250)
    a = _sample(init.uniform_, *n, a=-2.0, b=3.0)
    assert a.min() >= -2.0 and a.max() < 3.0 and abs(a.mean() - 0.5) < 0.02
    a = _sample(init.normal_, *n, mean=1.0, std=2.0)
    assert abs(a.mean() - 1.0) < 0.03 and abs(a.std() - 2.0) < 0.03
    a = _sample(init.xavier_normal_, *n, gain=2.0)
    assert abs(a.std() - 2.0 * math.sqrt(2 / 450)) < 0.003
    a = _sample(init.kaiming_normal_, *n, mode="fan_out", nonlinearity="relu")
    assert abs(a.std() - math.sqrt(2 / 200)) < 0.002
    a = _sample(init.kaiming_uniform_, *n, a=0.1)
    bound = math.sqrt(2 / (1 + 0.01)) * math.sqrt(3 / 250)
    assert a.max() <= bound and a.max() > 0.99 * bound
    a = _sample(init.trunc_normal_, *n, mean=0.5, std=1.0, a=-0.5, b=1.0)
    assert a.min() >= -0.5 and a.max() <= 1.0
    # Truncated normal's mean on [-1σ, +0.5σ] around 0.5: 0.5 + (φ(-1) − φ(0.5))/(Φ(0.5) − Φ(-1)).
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
    assert abs(a.mean() - (0.5 + (phi(-1.0) - phi(0.5)) / (cdf(0.5) - cdf(-1.0)))) < 0.01


def test_structured_initialisations():
    w = om.empty(4, 6)
    init.orthogonal_(w, gain=2.0)
    m = w.numpy().astype(np.float64)
    np.testing.assert_allclose(m @ m.T, 4.0 * np.eye(4), atol=1e-5)
    w = om.empty(6, 2, 2)
    init.orthogonal_(w)
    flat = w.numpy().reshape(6, 4).astype(np.float64)
    np.testing.assert_allclose(flat.T @ flat, np.eye(4), atol=1e-6)
    assert init.eye_(om.empty(2, 3)).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    d = init.dirac_(om.empty(4, 2, 3), groups=2).numpy()
    assert d[0, 0, 1] == 1 and d[1, 1, 1] == 1 and d[2, 0, 1] == 1 and d[3, 1, 1] == 1 and d.sum() == 4
    s = init.sparse_(om.empty(10, 5), sparsity=0.3).numpy()
    assert all((s[:, c] == 0).sum() >= 3 for c in range(5))
    assert init.constant_(om.empty(2), 0.25).tolist() == [0.25, 0.25]
    assert init.ones_(om.empty(1)).tolist() == [1.0] and init.zeros_(om.ones(1)).tolist() == [0.0]


def test_draws_follow_the_generator_and_views_are_filled():
    g1, g2 = om.Generator().manual_seed(9), om.Generator().manual_seed(9)
    a = init.kaiming_uniform_(om.empty(3, 4), generator=g1)
    b = init.kaiming_uniform_(om.empty(3, 4), generator=g2)
    assert a.tolist() == b.tolist()
    c = init.orthogonal_(om.empty(3, 3), generator=om.Generator().manual_seed(1))
    d = init.orthogonal_(om.empty(3, 3), generator=om.Generator().manual_seed(1))
    assert c.tolist() == d.tolist()
    base = om.zeros(4, 4)
    init.normal_(base[:, 1])  # a strided view
    col = base.numpy()
    assert np.all(col[:, 0] == 0) and np.all(col[:, 1] != 0)
    p = nn.Parameter(om.zeros(2, 2))
    init.uniform_(p)  # no recording: a parameter can be initialised in place
    assert p.requires_grad and p.grad_fn is None


def test_deprecated_names_warn():
    with pytest.warns(FutureWarning, match="deprecated"):
        init.normal(om.empty(2))
