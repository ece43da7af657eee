"""onemodel.save / onemodel.load: state dicts in safetensors + JSON
metadata, atomic writes, and resuming from a checkpoint giving the same
bits as never stopping."""

import io
import json
import math
import os
import struct
from collections import OrderedDict

import numpy as np
import pytest

import onemodel as om
from conftest import bits, sha256_of


def _header(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(n))


def test_round_trip_of_a_nested_state(tmp_path):
    gen = om.Generator().manual_seed(1)
    w = om.randn(3, 4, generator=gen)
    obj = {
        "model": OrderedDict([("fc.weight", w), ("fc.bias", om.zeros(3)), ("steps", om.tensor([1, 2, 3]))]),
        "optimizer": {
            "state": {0: {"step": om.tensor(5.0), "exp_avg": w * 2.0}, 1: {}},
            "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "params": [0, 1], "foreach": None, "amsgrad": False}],
        },
        "floats": [float("inf"), -float("inf"), -0.0, 0.1, 1e-310, 2.0**-1074],
        "nan": float("nan"),
        "array": np.arange(6, dtype=np.float64).reshape(2, 3),
        "empty": om.zeros(0, 5),
        "text": "héllo",
    }
    path = tmp_path / "ck.safetensors"
    om.save(obj, path)
    back = om.load(path)
    assert list(back) == list(obj)
    assert isinstance(back["model"], OrderedDict) and list(back["model"]) == ["fc.weight", "fc.bias", "steps"]
    assert np.array_equal(bits(back["model"]["fc.weight"].numpy()), bits(w.numpy()))
    assert back["model"]["steps"].dtype is om.int64 and back["model"]["steps"].tolist() == [1, 2, 3]
    st = back["optimizer"]["state"]
    assert list(st) == [0, 1] and st[1] == {}
    assert st[0]["step"].shape == () and st[0]["step"].item() == 5.0
    assert back["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.999)
    assert back["optimizer"]["param_groups"][0]["foreach"] is None
    for a, b in zip(back["floats"], obj["floats"]):
        assert struct.pack("<d", a) == struct.pack("<d", b)
    assert math.isnan(back["nan"])
    assert isinstance(back["array"], np.ndarray) and back["array"].dtype == np.float64
    assert np.array_equal(back["array"], obj["array"])
    assert back["empty"].shape == (0, 5)
    assert back["text"] == "héllo"
    # Tensors are ordinary safetensors entries, named by their path.
    header = _header(path)
    assert header["model/fc.weight"]["dtype"] == "F32" and header["model/fc.weight"]["shape"] == [3, 4]
    assert header["__metadata__"]["format"] == "onemodel.state"


def test_a_model_state_dict_is_a_plain_safetensors_file(tmp_path):
    model = om.nn.Sequential(om.nn.Linear(4, 3), om.nn.ReLU(), om.nn.Linear(3, 2))
    path = tmp_path / "model.safetensors"
    om.save(model.state_dict(), path)
    header = _header(path)
    assert sorted(k for k in header if k != "__metadata__") == sorted(model.state_dict())
    from safetensors.numpy import load_file

    plain = load_file(str(path))
    for k, v in model.state_dict().items():
        assert np.array_equal(plain[k], v.numpy())
    other = om.nn.Sequential(om.nn.Linear(4, 3), om.nn.ReLU(), om.nn.Linear(3, 2))
    other.load_state_dict(om.load(path))
    assert sha256_of(v.numpy() for v in other.state_dict().values()) == sha256_of(v.numpy() for v in model.state_dict().values())


def test_loading_a_foreign_safetensors_file_gives_its_tensors(tmp_path):
    from safetensors.numpy import save_file

    path = tmp_path / "foreign.safetensors"
    save_file({"a": np.ones((2, 2), np.float32), "b": np.arange(3, dtype=np.int64), "c": np.ones(2, np.float16)}, str(path))
    back = om.load(path)
    assert isinstance(back["a"], om.Tensor) and back["b"].dtype is om.int64
    assert isinstance(back["c"], np.ndarray) and back["c"].dtype == np.float16


def test_shared_tensors_are_stored_once(tmp_path):
    t = om.ones(4)
    path = tmp_path / "s.safetensors"
    om.save({"a": t, "b": [t, t]}, path)
    assert len([k for k in _header(path) if k != "__metadata__"]) == 1
    back = om.load(path)
    assert back["b"][0] is back["a"]


def test_file_objects():
    buf = io.BytesIO()
    om.save({"x": om.arange(3.0)}, buf)
    buf.seek(0)
    assert om.load(buf)["x"].tolist() == [0.0, 1.0, 2.0]


def test_unsupported_values_raise_before_writing(tmp_path):
    path = tmp_path / "bad.safetensors"
    with pytest.raises(TypeError, match="cannot store a object at a/1"):
        om.save({"a": [1, object()]}, path)
    with pytest.raises(TypeError, match="dict key"):
        om.save({("tuple", "key"): 1}, path)
    assert not path.exists()
    assert os.listdir(tmp_path) == []


def test_atomic_write_keeps_the_old_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "ck.safetensors"
    om.save({"v": om.ones(3)}, path)
    old = path.read_bytes()

    def broken_replace(src, dst):
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk on fire"):
        om.save({"v": om.zeros(3)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == ["ck.safetensors"]  # no temporary file left behind
    om.save({"v": om.zeros(3)}, path)
    assert om.load(path)["v"].tolist() == [0.0, 0.0, 0.0]
    assert os.listdir(tmp_path) == ["ck.safetensors"]


def test_atomic_write_fsyncs_before_renaming(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    om.save({"v": om.ones(2)}, tmp_path / "x.safetensors")
    assert events[:2] == ["fsync", "replace"]


def test_loaded_tensors_outlive_an_activation_scope(tmp_path):
    path = tmp_path / "x.safetensors"
    om.save({"v": om.ones(2)}, path)
    with om.ActivationScope():
        back = om.load(path)
    assert back["v"].tolist() == [1.0, 1.0]


# ---------------------------------------------------------------------------
# Resuming training from a checkpoint
# ---------------------------------------------------------------------------


def _make(seed=0):
    gen = om.Generator().manual_seed(seed)
    model = om.nn.Sequential(om.nn.Linear(6, 16), om.nn.ReLU(), om.nn.Linear(16, 3))
    with om.no_grad():
        for p in model.parameters():
            p.copy_(om.randn(*p.shape, generator=gen) * 0.3)
    opt = om.optim.AdamW(
        [
            {"params": [model[0].weight, model[2].weight], "weight_decay": 0.05},
            {"params": [model[0].bias, model[2].bias], "weight_decay": 0.0},
        ],
        lr=0.02,
        amsgrad=True,
    )
    sched = om.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=12)
    return model, opt, sched


def _data():
    gen = om.Generator().manual_seed(42)
    return [(om.randn(8, 6, generator=gen), om.randn(8, 3, generator=gen)) for _ in range(10)]


def _train(model, opt, sched, batches):
    for x, y in batches:
        opt.zero_grad()
        with om.ActivationScope():
            d = model(x) - y
            loss = (d * d).mean()
            loss.backward()
        om.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        sched.step()


def _fingerprint(model, opt):
    arrays = [p.detach().numpy() for p in model.parameters()]
    for p in model.parameters():
        arrays += [opt.state[p][k].numpy() for k in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")]
    return sha256_of(arrays)


def test_resuming_from_a_checkpoint_gives_the_same_bits_as_never_stopping(tmp_path):
    om.compute.set_mode("exact")
    data = _data()
    model, opt, sched = _make()
    _train(model, opt, sched, data)
    straight = _fingerprint(model, opt)

    model, opt, sched = _make()
    _train(model, opt, sched, data[:4])
    path = tmp_path / "ck.safetensors"
    om.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(), "epoch": 4}, path)
    del model, opt, sched

    model, opt, sched = _make(seed=99)  # different weights: the checkpoint must restore everything
    ck = om.load(path)
    model.load_state_dict(ck["model"])
    opt.load_state_dict(ck["optimizer"])
    sched.load_state_dict(ck["scheduler"])
    assert ck["epoch"] == 4
    _train(model, opt, sched, data[4:])
    assert _fingerprint(model, opt) == straight
    # And the run moved: the checkpoint is not the end state.
    model2, opt2, sched2 = _make()
    _train(model2, opt2, sched2, data[:4])
    assert _fingerprint(model2, opt2) != straight


def test_saved_bytes_do_not_depend_on_the_process(tmp_path):
    """The safetensors writer orders its metadata by hash; onemodel.save
    canonicalises the header, so two processes write identical files."""
    import subprocess
    import sys

    code = (
        "import sys, onemodel as om\n"
        "m = om.nn.Linear(3, 2, generator=om.Generator().manual_seed(1))\n"
        "opt = om.optim.AdamW(m.parameters())\n"
        "om.save({'model': m.state_dict(), 'optim': opt.state_dict()}, sys.argv[1])\n"
    )
    files = []
    for i in range(2):
        p = tmp_path / f"s{i}.safetensors"
        subprocess.run([sys.executable, "-c", code, str(p)], check=True)
        files.append(p.read_bytes())
    assert files[0] == files[1]
