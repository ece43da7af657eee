"""The activation modules against torch 2.15 (testdata/surface/activations.json,
recorded by ``tools/surface_oracle.py activations`` from the same
constructions, tests/activation_modules.py): printouts (repr/extra_repr),
parameter names, shapes and initial values (PReLU's), outputs in eval mode
and the gradients of the parameters."""

import json
from pathlib import Path

import numpy as np
import pytest

import onemodel as om
import activation_modules as am

FIX = json.loads((Path(__file__).resolve().parent.parent / "testdata" / "surface" / "activations.json").read_text())["modules"]


def _close(ours, theirs, what, tol):
    ours, theirs = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
    assert ours.shape == theirs.shape, what
    assert np.array_equal(np.isnan(ours), np.isnan(theirs)), what
    ok = ~np.isnan(theirs)
    scale = max(1.0, float(np.abs(theirs[ok & np.isfinite(theirs)]).max(initial=0.0)))
    assert np.all(np.abs(ours[ok] - theirs[ok]) <= tol * scale) or np.array_equal(ours[ok], theirs[ok]), f"{what}: {ours} vs {theirs}"


@pytest.mark.parametrize("name", sorted(am.MODULES))
def test_activation_module_matches_torch(name):
    ref = FIX[name]
    om.manual_seed(0)
    m = am.MODULES[name](om.nn).eval()
    assert repr(m) == ref["repr"]
    params = dict(m.named_parameters())
    assert sorted(params) == sorted(ref["params"])
    if name == "Sequential":
        with om.no_grad():
            for i, p in enumerate(m.parameters()):
                p.copy_(om.tensor(am.weights(tuple(p.shape)) * (0.5 if i else 1.0)))
    else:
        for n, (shape, vals) in ref["params"].items():
            assert list(params[n].shape) == shape
            np.testing.assert_array_equal(params[n].detach().numpy(), np.asarray(vals, np.float32))
    y = m(om.tensor(am.module_input()))
    shape, vals = ref["output"]
    assert list(y.shape) == shape
    _close(y.detach().numpy(), vals, f"{name} output", 1e-6)
    if "grads" in ref:
        (y * om.tensor(am.weights(tuple(y.shape)))).sum().backward()
        for n, g in ref["grads"].items():
            _close(params[n].grad.numpy(), g, f"{name} grad {n}", 1e-5)
