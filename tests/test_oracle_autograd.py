"""The engine reference models against PyTorch (testdata/autograd/, written
by tools/autograd_oracle.py with torch 2.15.0): every gradient within 1e-4
scaled error, the gradients that vanish in theory below 1e-5 of the largest,
pinned exact-mode hashes on every path × threads, fast mode equal across
threads, and an ActivationScope step that allocates no pool memory after
warm-up."""

import numpy as np
import pytest

import onemodel as om
from conftest import THREAD_COUNTS, PATHS, sha256_of, assert_splits
from oracle_models import build, load, step

MODELS = ["convnet", "encoder"]
ZERO_IN_THEORY = {
    "convnet": {"conv1.bias": slice(None)},  # a conv bias feeding a batch norm
    # the key third of each attention's in_proj_bias (a per-row constant in softmax)
    "encoder": {f"layers.{i}.self_attn.in_proj_bias": slice(16, 32) for i in range(2)},
}


MODES = ["fast", "exact"]


def run(name, mode, threads=None, path=None):
    data = load(name)
    with om.compute.settings(mode=mode, threads=threads, kernel_path=path):
        model = build(name, data)
        loss, gx = step(name, model, data)
    grads = {n: p.grad.numpy() for n, p in model.named_parameters()}
    if gx is not None:
        grads["input.x"] = gx.numpy()
    return data, model, float(loss.item()), grads


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", MODELS)
def test_gradients_match_pytorch(name, mode):
    data, model, loss, grads = run(name, mode)
    assert abs(loss - float(data["loss"])) <= 1e-5 * max(1.0, abs(float(data["loss"])))
    names = data["meta"]["params"]
    assert [n for n, _ in model.named_parameters()] == names  # torch's order
    largest = max(np.abs(data[f"grad/{n}"]).max() for n in names)
    assert {k[len("grad/"):] for k in data if k.startswith("grad/")} >= set(names)  # every parameter is compared
    for key in [k for k in data if k.startswith("grad/")]:
        n = key[len("grad/"):]
        ref, ours = data[key], grads[n]
        assert ours.shape == ref.shape, n
        zero = ZERO_IN_THEORY[name].get(n)
        if zero is not None:
            assert np.abs(ours[zero]).max() < 1e-5 * largest, n
            assert np.abs(ref[zero]).max() < 1e-5 * largest, n
            keep = np.ones(ref.shape, bool)
            keep[zero] = False
            ref, ours = ref[keep], ours[keep]
            if ref.size == 0:
                continue
        scaled = np.abs(ours - ref).max() / np.abs(ref).max()
        assert scaled <= 1e-4, f"{name} {n}: scaled error {scaled:.3e}"


def test_batch_norm_running_stats_match_pytorch():
    data, model, _, _ = run("convnet", "fast")
    for b in ("running_mean", "running_var"):
        np.testing.assert_allclose(getattr(model.bn1, b).numpy(), data[f"buffer/bn1.{b}"], rtol=1e-5, atol=1e-6)
    assert int(model.bn1.num_batches_tracked.item()) == int(data["buffer/bn1.num_batches_tracked"])


def _hash(name, mode, path, threads):
    _, model, loss, grads = run(name, mode, threads, path)
    return sha256_of([grads[n] for n, _ in model.named_parameters()] + [np.float32(loss).reshape(1)])


# sha256 over every parameter gradient (torch's order) and the loss, exact mode.
# Independent of the code only in that every path and thread count must reproduce it.
EXACT_SHA256 = {
    "convnet": "18b91857341bd04f7ac528b3c7ac2cdd3fc66b7ffe90b8ce5272825a128ec62d",
    "encoder": "a09271623540d59cabf4e9b5996d24ff5c2fe3510207597b40db3a6315cf9bb9",
}


@pytest.mark.parametrize("name", MODELS)
def test_exact_hashes_are_pinned_on_every_path_and_thread_count(name):
    assert_splits(lambda: _hash(name, "exact", None, max(THREAD_COUNTS)))
    seen = {(p, t): _hash(name, "exact", p, t) for p in PATHS for t in THREAD_COUNTS}
    assert len(set(seen.values())) == 1, seen
    assert next(iter(seen.values())) == EXACT_SHA256[name]


@pytest.mark.parametrize("name", MODELS)
def test_fast_mode_gradients_do_not_depend_on_threads(name):
    assert len({_hash(name, "fast", None, t) for t in THREAD_COUNTS}) == 1


@pytest.mark.parametrize("name", MODELS)
def test_scope_step_allocates_no_pool_memory_after_warmup(name):
    data = load(name)
    model = build(name, data)
    for p in model.parameters():
        p.grad = None

    def one_step():
        with om.ActivationScope():
            step(name, model, data)
        for p in model.parameters():
            p.grad = None

    one_step()
    one_step()
    before = om.pool_stats()
    one_step()
    after = om.pool_stats()
    assert after["native_allocations"] == before["native_allocations"]
    assert after["outstanding_bytes"] == before["outstanding_bytes"]
