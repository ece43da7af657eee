"""crnn-v0 against a float64 reference written from the definitions with
exact functions (tests/recognizer_reference.py), on random-weight models of
the intended size and widths with and without a tail of 16 time steps.

|ours − reference| ≤ Atol + Rtol·|reference| per tensor kind; the constants
and the worst observed use of the allowance are in docs/recognizer.md.
"""

import numpy as np
import pytest

import recognizer_reference as ref
from onemodel.recognizer import CrnnV0, CrnnV0Config, Trainer

# (Atol, Rtol) per tensor kind, in units of the tensor's largest |reference|
# for Atol (gradients of different tensors differ by orders of magnitude).
TOL = {
    "logits": (1e-6, 1e-5),
    "loss": (0.0, 1e-6),
    "conv": (2e-6, 1e-5),
    "lstm": (4e-6, 2e-5),
    "classifier": (1e-6, 1e-5),
}


def kind(name):
    return "conv" if name.startswith("conv") else "lstm" if name.startswith("lstm") else "classifier"


def use_of_allowance(ours, want, atol, rtol):
    ours = np.asarray(ours, np.float64)
    want = np.asarray(want, np.float64)
    allowed = atol + rtol * np.abs(want)
    return float(np.max(np.abs(ours - want) / allowed)) if want.size else 0.0


def _lines(cfg, widths, seed):
    rng = np.random.default_rng(seed)
    imgs = [rng.random((cfg.height, w)).astype(np.float32) for w in widths]
    texts = ["".join(rng.choice(list(cfg.charset), size=int(rng.integers(3, 9)))) for _ in widths]
    return imgs, texts


WORST = {}


@pytest.mark.parametrize("widths", [(256, 200), (128, 64, 100, 76)], ids=["w256-w200", "four-widths"])
def test_gradients_match_float64_reference(widths):
    cfg = CrnnV0Config(charset=tuple("abcdefghijklmnopqrstuvwxyz0123456789 "))
    model = CrnnV0(cfg, seed=1)
    imgs, texts = _lines(cfg, widths, seed=len(widths))
    tr = Trainer(model)
    loss, grads = tr.gradients(imgs, texts)
    params = model.state_dict()
    want_loss, want = ref.batch(params, cfg, imgs, [model.encode(t) for t in texts])
    u = use_of_allowance(loss, want_loss, 0.0, TOL["loss"][1])
    WORST["loss"] = max(WORST.get("loss", 0), u)
    assert u <= 1.0, (loss, want_loss)
    for name, g in grads.items():
        w = want[name]
        k = kind(name)
        atol = TOL[k][0] * float(np.max(np.abs(w)))
        u = use_of_allowance(g, w, atol, TOL[k][1])
        WORST[k] = max(WORST.get(k, 0), u)
        assert u <= 1.0, f"{name}: use {u:.3f}, max diff {np.max(np.abs(g - w)):.3e}, max |ref| {np.max(np.abs(w)):.3e}"
    print("worst use of the allowance:", {k: round(v, 4) for k, v in WORST.items()})


def test_logits_match_float64_reference():
    cfg = CrnnV0Config(charset=tuple("abc"))
    model = CrnnV0(cfg, seed=4)
    imgs, _ = _lines(cfg, (96, 200), seed=9)
    for im in imgs:
        ours = model.logits(im)
        _, want, _ = ref.line(model.state_dict(), cfg, im, [1])
        atol = TOL["logits"][0] * float(np.max(np.abs(want)))
        u = use_of_allowance(ours, want, atol, TOL["logits"][1])
        WORST["logits"] = max(WORST.get("logits", 0), u)
        assert u <= 1.0, u


def test_zz_report():
    print("worst use of the allowance vs float64:", {k: round(v, 4) for k, v in WORST.items()})
