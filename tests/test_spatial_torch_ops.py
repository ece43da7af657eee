"""Every operator case of tests/op_cases.py against PyTorch 2.15.0's output
and input gradients (testdata/autograd/ops.npz, written by
tools/autograd_oracle.py): torch's sizes, coordinates, divisors, masks and
reductions, to float32 rounding."""

import numpy as np
import pytest

import onemodel as om
import onemodel.functional as F
import onemodel.nn as nn
import op_cases
from oracle_models import DATA

REF = dict(np.load(DATA / "ops.npz"))


def close(ours, ref, what, tol=2e-6):
    assert ours.shape == ref.shape, (what, ours.shape, ref.shape)
    finite = np.isfinite(ref)
    assert np.array_equal(np.isfinite(ours), finite), what
    scale = max(1.0, float(np.abs(ref[finite]).max()) if finite.any() else 1.0)
    err = float(np.abs(ours[finite] - ref[finite]).max()) if finite.any() else 0.0
    assert err <= tol * scale, f"{what}: max error {err:.3e} (scale {scale:.3g})"


@pytest.mark.parametrize("name", sorted(op_cases.CASES))
def test_operator_matches_pytorch(name):
    shapes, fn = op_cases.CASES[name]
    xs, rng = op_cases.seeded_inputs(name, shapes)
    ts = [om.tensor(x).requires_grad_() for x in xs]
    out = fn(F, om, *ts)
    w = rng.uniform(-1, 1, size=tuple(out.shape)).astype(np.float32)
    (out * om.tensor(w)).sum().backward()
    close(out.detach().numpy(), REF[f"{name}/out"], f"{name} output")
    for i, t in enumerate(ts):
        g = t.grad.numpy() if t.grad is not None else np.zeros_like(xs[i])
        close(g, REF[f"{name}/grad{i}"], f"{name} grad of input {i}")


@pytest.mark.parametrize("name", sorted(op_cases.MHA_CASES))
def test_multihead_attention_matches_pytorch(name):
    batch_first, need_weights, kind = op_cases.MHA_CASES[name]
    c = op_cases.MHA
    mha = nn.MultiheadAttention(c["embed_dim"], c["num_heads"], batch_first=batch_first)
    prefix = f"{name}/param/"
    mha.load_state_dict({k[len(prefix):]: v for k, v in REF.items() if k.startswith(prefix)})
    ts = [om.tensor(REF[f"{name}/input{i}"]).requires_grad_() for i in range(3)]
    attn, kpm = op_cases.mha_masks(om, kind)
    out, weights = mha(*ts, key_padding_mask=kpm, attn_mask=attn, need_weights=need_weights)
    loss = (out * om.tensor(REF[f"{name}/lossweight"])).sum()
    if need_weights:
        close(weights.detach().numpy(), REF[f"{name}/weights"], f"{name} weights")
        loss = loss + weights.sum() * 0.5 + (weights * weights).sum()
    else:
        assert weights is None
    loss.backward()
    close(out.detach().numpy(), REF[f"{name}/out"], f"{name} output")
    for i, t in enumerate(ts):
        close(t.grad.numpy(), REF[f"{name}/grad{i}"], f"{name} grad of input {i}", tol=1e-5)
    for pname, p in mha.named_parameters():
        close(p.grad.numpy(), REF[f"{name}/pgrad/{pname}"], f"{name} grad of {pname}", tol=1e-5)
