"""The six ported PyTorch programs (tests/ports/: pytorch/examples mnist,
word_language_model with an LSTM and with a Transformer, vae, dcgan;
karpathy's minGPT) run on onemodel with only their import lines changed:
the model, two training steps and the evaluation. Their results must
equal torch's (testdata/surface/ports.json, recorded by
tools/surface_oracle.py running the same source on torch 2.15) within
1e-5 relative — losses, accuracy counts and generated tokens exactly where
they are integers; arrays of outputs (a VAE sample, a DCGAN image) within
1e-5 relative plus 1e-6 of their largest value. tests/ports/harness.py
says how initial weights and random draws are made the same on both sides
(onemodel's random streams differ from torch's by design)."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import onemodel as om

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "ports"))
import harness  # noqa: E402

DATA = ROOT.parent / "testdata" / "surface"
FIX = json.loads((DATA / "ports.json").read_text())["results"]
RTOL = 1e-5


@pytest.fixture(scope="module")
def draws():
    with np.load(DATA / "ports.npz") as z:
        return {k: z[k] for k in z.files}


def _compare(name, key, ours, theirs):
    ours = np.asarray(ours, dtype=np.float64)
    theirs = np.asarray(theirs, dtype=np.float64)
    assert ours.shape == theirs.shape, f"{name} {key}: shape {ours.shape} vs torch {theirs.shape}"
    atol = 1e-6 * float(np.abs(theirs).max(initial=0.0)) if ours.ndim > 1 else 0.0
    err = np.abs(ours - theirs)
    worst = float((err - RTOL * np.abs(theirs) - atol).max(initial=-1.0))
    assert worst <= 0.0, f"{name} {key}: ours {ours.tolist()} vs torch {theirs.tolist()}"


@pytest.mark.parametrize("name", harness.NAMES)
def test_port_matches_torch(name, draws):
    run = harness.Run(om, record=False, fixture=draws, prefix=f"{name}/")
    with contextlib.redirect_stdout(io.StringIO()):  # the programs print their progress
        harness.DRIVERS[name](om, run)
    assert set(run.results) == set(FIX[name])
    for key, theirs in FIX[name].items():
        _compare(name, key, run.results[key], theirs)
    assert not [k for k in draws if k.startswith(f"{name}/draw/{run._draw:05d}")], f"{name}: torch's run made more random draws"


MAINS = {"mnist": ("mnist", []), "word_language_model_lstm": ("word_language_model", ["--tied"]),
         "word_language_model_transformer": ("word_language_model", ["--model", "Transformer"]), "vae": ("vae", []),
         "dcgan": ("dcgan", []), "mingpt": ("mingpt", None)}


@pytest.mark.parametrize("name", harness.NAMES)
def test_port_main_runs_unchanged(name):
    """Each program's own main() (its defaults, dropout included) runs."""
    file, argv = MAINS[name]
    port = harness.load_port(file, "onemodel")
    with contextlib.redirect_stdout(io.StringIO()):
        port.main() if argv is None else port.main(argv)
