"""The rest of torch.nn against torch 2.15 (testdata/surface/
breadth_layers.npz and breadth_losses.npz, written by
``tools/surface_oracle.py breadth`` from tests/breadth_layer_cases.py):
the reflection / replication / circular pads, Fold/Unfold, RMSNorm,
LocalResponseNorm, LPPool, MaxUnpool, Bilinear, Softmax2d, alpha dropout
in eval and at p=0, affine_grid + grid_sample, four small programs (a
LLaMA-style block with RMSNorm, rotary embeddings and einsum attention; a
CNN with reflection padding, PixelShuffle and LocalResponseNorm; a siamese
encoder with cdist/pdist; an LSTMCell time series), and the margin and
Gaussian losses. Outputs, parameter and input gradients, parameters and
buffers after the call.

Tolerance: the layer and loss tests' |ours − torch| ≤ 2e-5·|torch| +
2e-6·max(1, max|torch|) (different but equally exact float32 orders)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import onemodel as om
from breadth_layer_cases import LAYER_CASES, LOSS_CASES
from test_surface_layers import _close, check_layer_case

DATA = Path(__file__).resolve().parent.parent / "testdata" / "surface"


@pytest.fixture(scope="module")
def layers_fix():
    with np.load(DATA / "breadth_layers.npz") as z:
        return {k: z[k] for k in z.files}


@pytest.fixture(scope="module")
def losses_fix():
    with np.load(DATA / "breadth_losses.npz") as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("name", sorted(LAYER_CASES))
def test_layer_matches_torch(name, layers_fix):
    check_layer_case(name, LAYER_CASES[name], layers_fix)


@pytest.mark.parametrize("name", sorted(LOSS_CASES))
def test_loss_matches_torch(name, losses_fix):
    fix = losses_fix
    specs, fn = LOSS_CASES[name]
    tensors = []
    for i, (kind, _) in enumerate(specs):
        tensors.append(om.tensor(fix[f"{name}/input/{i}"], requires_grad=kind.endswith("+")))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(om, *tensors)
    _close(out.detach().numpy(), fix[f"{name}/out"], f"{name} loss")
    (out * om.tensor(fix[f"{name}/G"])).sum().backward()
    for i, t in enumerate(tensors):
        key = f"{name}/input_grad/{i}"
        if key in fix:
            assert t.grad is not None, f"{name}: no gradient for input {i}"
            _close(t.grad.numpy(), fix[key], f"{name} input grad {i}")
