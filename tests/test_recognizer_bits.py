"""Bit-identity of the crnn-v0 trainer: the weights after five AdamW steps
on a batch of four lines have one sha256 on every kernel path × threads
{1, 3, 8}, pinned as a literal (any change of any bit fails until someone
re-pins on purpose)."""

import hashlib

import numpy as np

import onemodel as om
from conftest import THREAD_COUNTS, PATHS
from onemodel.recognizer import CrnnV0, CrnnV0Config, Trainer

# Height 32 as the default model; fewer channels and hidden units so that
# the scalar path (the definition, unvectorized) runs the sweep in seconds.
CFG = CrnnV0Config(height=32, channels=(8, 16, 24), pools=((2, 2), (2, 2), (2, 1)), hidden=24, layers=2,
                   charset=tuple("0123456789abcdefghij "))
WIDTHS = (100, 64, 37, 90)  # 25, 16, 9, 22 time steps: with and without a tail of 16
TEXTS = ["1a2b 3", "hide", "42", "ji 0 9"]

WEIGHTS_AFTER_5_STEPS_SHA256 = "aed1f0693489faaf33955f84d67cab1ab0b34b79281d7165202eabc59d56a331"


def weights_sha256(model):
    h = hashlib.sha256()
    for name in model.parameter_names:
        h.update(np.ascontiguousarray(model.state_dict()[name], dtype="<f4").tobytes())
    return h.hexdigest()


def five_steps():
    rng = np.random.default_rng(7)
    imgs = [rng.random((CFG.height, w)).astype(np.float32) for w in WIDTHS]
    model = CrnnV0(CFG, seed=11)
    tr = Trainer(model, lr=3e-3, weight_decay=0.05, clip=1.0)
    for _ in range(5):
        tr.step(imgs, TEXTS)
    return weights_sha256(model)


def test_weights_after_five_steps_are_pinned_on_every_path_and_thread_count():
    seen = {}
    for path in PATHS:
        for threads in THREAD_COUNTS:
            with om.compute.settings(kernel_path=path, threads=threads):
                seen[(path, threads)] = five_steps()
    assert len(set(seen.values())) == 1, seen
    assert next(iter(seen.values())) == WEIGHTS_AFTER_5_STEPS_SHA256


def test_checkpoint_bytes_do_not_depend_on_the_process(tmp_path):
    """Two processes saving the same model and trainer state write identical
    bytes (the container's header is canonical, not hash-map ordered)."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from onemodel.recognizer import CrnnV0, CrnnV0Config, Trainer\n"
        "m = CrnnV0(CrnnV0Config(channels=(8, 8, 8), hidden=8, layers=1, charset='0123'), seed=3)\n"
        "Trainer(m).save_checkpoint(sys.argv[1])\n"
        "m.save(sys.argv[2])\n"
    )
    outs = []
    for i in range(2):
        ck, md = tmp_path / f"ck{i}.safetensors", tmp_path / f"m{i}.safetensors"
        subprocess.run([sys.executable, "-c", code, str(ck), str(md)], check=True)
        outs.append((ck.read_bytes(), md.read_bytes()))
    assert outs[0][0] == outs[1][0]
    assert outs[0][1] == outs[1][1]


# The pinned-hash form (docs/engine.md, "Pinned gradient hashes") for the
# recognizer: sha256 over every batch gradient of the default architecture (channels 32, 64, 96, hidden
# 128, two layers, the default charset), in parameter order, on every path
# × threads {1, 3, 8}. Eight lines, so that the lines really spread over 8
# threads (asserted); widths with and without a tail of 16 time steps.
DEFAULT_GRADIENTS_SHA256 = "67d4922b246c4428b06471fb84b6f535522cfdf0a5263c3ab3711ee6a28ed625"
DEFAULT_WIDTHS = (48, 32, 20, 44, 36, 24, 40, 28)
DEFAULT_TEXTS = ["a1", "Zq", "7", "ok!", "x y", "", "B4", "hi"]


def default_gradients_sha256():
    rng = np.random.default_rng(2026)
    imgs = [rng.random((32, w)).astype(np.float32) for w in DEFAULT_WIDTHS]
    model = CrnnV0(CrnnV0Config(), seed=5)
    loss, grads = Trainer(model).gradients(imgs, DEFAULT_TEXTS)
    h = hashlib.sha256()
    for name in model.parameter_names:
        h.update(np.ascontiguousarray(grads[name], dtype="<f4").tobytes())
    h.update(np.float32(loss).astype("<f4").tobytes())
    return h.hexdigest()


def test_default_architecture_gradient_hash_is_pinned_on_every_path_and_thread_count():
    from conftest import assert_splits

    assert_splits(default_gradients_sha256)
    seen = {}
    for path in PATHS:
        for threads in THREAD_COUNTS:
            with om.compute.settings(kernel_path=path, threads=threads):
                seen[(path, threads)] = default_gradients_sha256()
    assert len(set(seen.values())) == 1, seen
    assert next(iter(seen.values())) == DEFAULT_GRADIENTS_SHA256
