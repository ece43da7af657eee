"""The recurrent oracle: PyTorch 2.15.0 fixtures written by
tools/rnn_oracle.py (testdata/autograd/*.npz), compared with onemodel."""

import pathlib

import numpy as np
import pytest

import onemodel as om

DATA = pathlib.Path(__file__).resolve().parent.parent / "testdata" / "autograd"


def load(name):
    return dict(np.load(DATA / f"{name}.npz"))


def scaled_error(ours, theirs) -> float:
    theirs = np.asarray(theirs, dtype=np.float64)
    return float(np.max(np.abs(np.asarray(ours, dtype=np.float64) - theirs)) / max(np.max(np.abs(theirs)), 1e-30))


def log_softmax64(z):
    z = z.astype(np.float64)
    m = z.max(-1, keepdims=True)
    return (z - m) - np.log(np.exp(z - m).sum(-1, keepdims=True))


@pytest.mark.parametrize("mode", ["fast", "exact"])
def test_gru_gradients_match_torch(mode):
    om.compute.set_mode(mode)
    d = load("gru")
    m = om.nn.GRU(4, 5, num_layers=2, bidirectional=True, batch_first=True)
    m.load_state_dict({k[len("param."):]: v for k, v in d.items() if k.startswith("param.")})
    x = om.tensor(d["input"], requires_grad=True)
    h0 = om.tensor(d["h0"], requires_grad=True)
    out, h_n = m(x, h0)
    loss = (out * om.tensor(d["weight"])).sum() + (h_n * h_n).sum()
    loss.backward()
    assert scaled_error(out.detach().numpy(), d["output"]) < 1e-5
    assert loss.item() == pytest.approx(float(d["loss"]), rel=1e-5)
    for name, p in m.named_parameters():
        assert scaled_error(p.grad.numpy(), d[f"grad.{name}"]) < 1e-4, name
    assert scaled_error(x.grad.numpy(), d["grad_input"]) < 1e-4
    assert scaled_error(h0.grad.numpy(), d["grad_h0"]) < 1e-4


def test_ctc_losses_match_torch_for_every_reduction():
    d = load("crnn")
    lp = om.tensor(log_softmax64(d["logits"]).astype(np.float32))
    args = (om.tensor(d["targets"]), d["input_lengths"], d["target_lengths"])
    none = om.functional.ctc_loss(lp, *args, reduction="none").numpy()
    assert np.allclose(none, d["loss_none"], rtol=1e-5, atol=0)
    assert om.functional.ctc_loss(lp, *args, reduction="sum").item() == pytest.approx(float(d["loss_sum"]), rel=1e-5)
    assert om.functional.ctc_loss(lp, *args, reduction="mean").item() == pytest.approx(float(d["loss_mean"]), rel=1e-5)
    inf_args = (om.tensor(d["inf_targets"]), d["input_lengths"], d["inf_target_lengths"])
    inf = om.functional.ctc_loss(lp, *inf_args, reduction="none").numpy()
    assert np.isinf(inf[2]) and np.isinf(d["inf_loss_none"][2])
    assert np.allclose(inf[:2], d["inf_loss_none"][:2], rtol=1e-5)
    zero = om.functional.ctc_loss(lp, *inf_args, reduction="none", zero_infinity=True).numpy()
    assert np.allclose(zero, d["inf_loss_zero"], rtol=1e-5)


def test_logit_gradients_through_log_softmax_agree_with_torch():
    """Our CTC gradient is the true partial with respect to log-probs;
    torch's adds exp(lp)·w per used frame. Through log_softmax the extra term
    vanishes, so the logit gradients agree (Jacobian applied in float64)."""
    d = load("crnn")
    lp64 = log_softmax64(d["logits"])
    lp = om.tensor(lp64.astype(np.float32), requires_grad=True)
    om.functional.ctc_loss(lp, om.tensor(d["targets"]), d["input_lengths"], d["target_lengths"], reduction="mean").backward()
    g = lp.grad.numpy().astype(np.float64)
    # d logits = g − softmax · Σ_c g
    grad_logits = g - np.exp(lp64) * g.sum(-1, keepdims=True)
    assert scaled_error(grad_logits, d["grad_logits"]) < 1e-6
