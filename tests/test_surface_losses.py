"""The losses against torch 2.15 (testdata/surface/losses.npz, written by
tools/surface_oracle.py from tests/surface_loss_cases.py): the loss and
the gradients of sum(loss · G) with respect to every input that requires
grad, for the functional and module forms, every reduction, class and
element weights, pos_weight, ignore_index, label smoothing, saturated
binary cross-entropy inputs (exact 0 and 1) and saturating logits.

Tolerance: |ours − torch| ≤ 2e-5·|torch| + 2e-6·max(1, max|torch|), as the
layer tests; the measured worst use of it is in the test module's
report (``pytest -k report -s``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import onemodel as om
from surface_loss_cases import LOSS_CASES

DATA = Path(__file__).resolve().parent.parent / "testdata" / "surface" / "losses.npz"
RTOL = 2e-5


@pytest.fixture(scope="module")
def fix():
    with np.load(DATA) as z:
        return {k: z[k] for k in z.files}


def _use(ours, theirs) -> float:
    """The largest fraction of the tolerance any value uses."""
    ours = np.asarray(ours, dtype=np.float64)
    theirs = np.asarray(theirs, dtype=np.float64)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    atol = 2e-6 * max(1.0, float(np.abs(theirs).max(initial=0.0)))
    return float((np.abs(ours - theirs) / (RTOL * np.abs(theirs) + atol)).max(initial=0.0))


def _run(name, fix):
    specs, fn = LOSS_CASES[name]
    tensors = []
    for i, (kind, _) in enumerate(specs):
        a = fix[f"{name}/input/{i}"]
        tensors.append(om.tensor(a, requires_grad=kind.endswith("+")))
    out = fn(om, *tensors)
    (out * om.tensor(fix[f"{name}/G"])).sum().backward()
    uses = {"loss": _use(out.detach().numpy(), fix[f"{name}/out"])}
    for i, t in enumerate(tensors):
        key = f"{name}/input_grad/{i}"
        if key in fix:
            assert t.grad is not None, f"{name}: no gradient for input {i}"
            uses[f"grad {i}"] = _use(t.grad.numpy(), fix[key])
    return uses


@pytest.mark.parametrize("name", sorted(LOSS_CASES))
def test_loss_matches_torch(name, fix):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        uses = _run(name, fix)
    worst = max(uses, key=uses.get)
    assert uses[worst] <= 1.0, f"{name}: {worst} uses {uses[worst]:.2f} of the tolerance"


def test_report(fix):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = sorted(((max(u.values()), n) for n in LOSS_CASES for u in [_run(n, fix)]), reverse=True)
    print("\nworst use of the tolerance per loss case:")
    for use, name in rows[:10]:
        print(f"  {name}: {use:.3f}")


def test_bad_inputs_are_refused_as_torch():
    F = om.nn.functional
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(om.tensor([1.5]), om.tensor([1.0]))
    with pytest.raises(ValueError, match="same size"):
        F.binary_cross_entropy(om.tensor([0.5, 0.5]), om.tensor([1.0]))
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(om.zeros(2, 3), om.zeros(3))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.mse_loss(om.zeros(2), om.zeros(2), reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing"):
        F.cross_entropy(om.zeros(2, 3), om.tensor([0, 1]), label_smoothing=1.5)
    with pytest.warns(UserWarning, match="target size"):
        F.mse_loss(om.zeros(3, 1), om.zeros(3))
    with pytest.warns(UserWarning, match="reduction='sum'"):
        F.l1_loss(om.zeros(2), om.ones(2), size_average=False)


def test_loss_weights_are_buffers():
    loss = om.nn.CrossEntropyLoss(weight=om.ones(3))
    assert list(loss.state_dict()) == ["weight"]
    assert list(om.nn.BCEWithLogitsLoss(pos_weight=om.ones(2)).state_dict()) == ["pos_weight"]
