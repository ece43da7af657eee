"""Every case of the case tables (tests/tensor_cases.py and the others named
in its SUITES) against PyTorch 2.15.0's outputs and input gradients
(testdata/tensor/*.npz, written by tools/tensor_oracle.py): comparisons, masks, indexing, reductions,
creation. Outputs of selections and copies must be torch's bits; rounded
results are within each case's tolerance. A case torch refuses must raise
here too."""

import importlib
from pathlib import Path

import numpy as np
import pytest

import onemodel as om
import tensor_cases

DATA = Path(__file__).resolve().parent.parent / "testdata" / "tensor"
TABLES = {module: importlib.import_module(module).CASES for module in tensor_cases.SUITES}
_REFS: dict = {}


def _ref(module: str) -> dict:
    if module not in _REFS:
        with np.load(DATA / tensor_cases.SUITES[module]) as z:
            _REFS[module] = {k: z[k] for k in z.files}
    return _REFS[module]


def _flatten(out):
    if isinstance(out, (tuple, list)):
        return [y for x in out for y in _flatten(x)]
    return [out]


def _array(x):
    if isinstance(x, om.Tensor):
        return np.array(x.detach().numpy(), copy=True)
    return np.asarray(x)


def _kind(a: np.ndarray) -> str:
    return "b" if a.dtype == np.bool_ else ("i" if a.dtype.kind in "iu" else "f")


def same(ours: np.ndarray, ref: np.ndarray, what: str, tol) -> None:
    if ref.dtype.kind == "U":  # a string (Tensor.type())
        assert str(ours) == str(ref), (what, ours, ref)
        return
    assert ours.shape == ref.shape, (what, ours.shape, ref.shape)
    assert _kind(ours) == _kind(ref), (what, ours.dtype, ref.dtype)
    if _kind(ref) != "f":
        assert np.array_equal(ours, ref), f"{what}: {ours} != {ref}"
        return
    ours, ref = ours.astype(np.float64), ref.astype(np.float64)
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(ours), nan), f"{what}: NaN positions differ"
    if tol is None:
        # Bit for bit, the sign of zero included.
        assert np.array_equal(ours[~nan], ref[~nan]) and np.array_equal(np.signbit(ours[~nan]), np.signbit(ref[~nan])), f"{what}: {ours} != {ref}"
        return
    finite = np.isfinite(ref)
    assert np.array_equal(ours[~finite & ~nan], ref[~finite & ~nan]), f"{what}: infinities differ"
    if finite.any():
        scale = max(1.0, float(np.abs(ref[finite]).max()))
        err = float(np.abs(ours[finite] - ref[finite]).max())
        assert err <= tol * scale, f"{what}: max error {err:.3e} (scale {scale:.3g})"


@pytest.mark.parametrize("module,name", [(m, n) for m, cases in TABLES.items() for n in sorted(cases)])
def test_case_matches_pytorch(module, name):
    c = TABLES[module][name]
    REF = _ref(module)
    n_in = sum(1 for k in REF if k.startswith(f"{name}/in"))
    xs = [REF[f"{name}/in{i}"] for i in range(n_in)]
    ts = []
    for i, x in enumerate(xs):
        t = om.tensor(x)
        if c.grad and x.dtype == np.float32 and i not in c.no_grad:
            t.requires_grad_()
        ts.append(t)
    if f"{name}/error" in REF:
        with pytest.raises((ValueError, TypeError, IndexError, RuntimeError)):
            c.fn(om, *ts)
        return
    outs = _flatten(c.fn(om, *ts))
    n_out = sum(1 for k in REF if k.startswith(f"{name}/out"))
    assert len(outs) == n_out, (len(outs), n_out)
    loss = None
    for j, o in enumerate(outs):
        same(_array(o), REF[f"{name}/out{j}"], f"{name} output {j}", c.tol)
        if f"{name}/w{j}" in REF:
            assert isinstance(o, om.Tensor) and o.requires_grad, f"{name} output {j} should require grad"
            term = (o * om.tensor(REF[f"{name}/w{j}"])).sum()
            loss = term if loss is None else loss + term
    if loss is not None:
        loss.backward()
    for i, t in enumerate(ts):
        key = f"{name}/grad{i}"
        if key in REF:
            g = t.grad.numpy() if t.grad is not None else np.zeros(t.shape, np.float32)
            same(g, REF[key], f"{name} grad of input {i}", c.grad_tol)
