"""Malformed files: om.load, CrnnV0.load, Trainer.load_checkpoint and the
command line's --resume turn every one into a ContainerError (a ValueError)
naming the file and what is wrong. Each test builds its malformed file."""

import json
import struct

import numpy as np
import pytest

import onemodel as om
from onemodel.errors import ContainerError
from onemodel.recognizer import CrnnV0, CrnnV0Config, Trainer

SMALL = CrnnV0Config(channels=(4, 4, 4), hidden=8, charset="ab")


def safetensors_bytes(entries: dict, data: bytes, metadata=None, raw_header: bytes | None = None) -> bytes:
    """A safetensors file from a header written by hand (so that it can be wrong)."""
    header = dict(entries)
    if metadata is not None:
        header["__metadata__"] = metadata
    text = raw_header if raw_header is not None else json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def one_tensor(shape=(2, 3), dtype="F32", offsets=None, data=None):
    n = int(np.prod(shape)) * 4
    data = bytes(range(n % 256)) * 0 + b"\0" * n if data is None else data
    return {"x": {"dtype": dtype, "shape": list(shape), "data_offsets": offsets or [0, n]}}, data


@pytest.fixture
def saved(tmp_path):
    p = tmp_path / "state.safetensors"
    om.save({"w": om.arange(6.0).reshape(2, 3), "opt": {"lr": 0.1, "steps": (1, 2)}, "b": om.ones(4)}, p)
    return p


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    m = CrnnV0(SMALL, seed=1)
    m.save(d / "model.safetensors")
    t = Trainer(m)
    t.save_checkpoint(d / "ckpt.safetensors")
    return d / "model.safetensors", d / "ckpt.safetensors"


LOADERS = {
    "om.load": om.load,
    "CrnnV0.load": CrnnV0.load,
    "Trainer.load_checkpoint": Trainer.load_checkpoint,
}


def expect_container_error(load, path, fragment=""):
    with pytest.raises(ContainerError) as e:
        load(path)
    assert str(path) in str(e.value), f"the message names the file: {e.value}"
    assert fragment in str(e.value), str(e.value)
    return str(e.value)


def test_container_error_is_one_value_error_subclass():
    import onemodel.recognizer as rec

    assert issubclass(ContainerError, ValueError)
    assert rec.ContainerError is ContainerError


HAND_MADE = {
    "empty file": (b"", "shorter than the 8-byte header length"),
    "seven bytes": (b"\x01" * 7, "shorter than the 8-byte header length"),
    "header length past the end": (struct.pack("<Q", 1000) + b"{}", "truncated: the header needs 1000 bytes"),
    "absurd header length": (struct.pack("<Q", 2**63) + b"{}", "header length field says"),
    "non-UTF-8 header": (safetensors_bytes({}, b"", raw_header=b'{"__metadata__":{"a":"\xff\xfe"}}'), "not UTF-8"),
    "wrong JSON": (safetensors_bytes({}, b"", raw_header=b'{"x": {"dtype": "F32",'), "not valid JSON"),
    "JSON list": (safetensors_bytes({}, b"", raw_header=b"[1, 2]"), "not an object"),
    "deep JSON": (safetensors_bytes({}, b"", raw_header=b"[" * 100000 + b"]" * 100000), "not valid JSON"),
    "metadata not strings": (safetensors_bytes({}, b"", metadata={"format": 3}), "must map strings to strings"),
    "unknown dtype": (safetensors_bytes(*one_tensor(dtype="F8_E4M3")), "dtype 'F8_E4M3' is not one onemodel reads"),
    "negative dim": (safetensors_bytes({"x": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 0]}}, b""), "non-negative ints"),
    "float dim": (safetensors_bytes({"x": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}}, b"\0" * 4), "non-negative ints"),
    "offsets past the end": (safetensors_bytes(*one_tensor(offsets=[0, 48], data=b"\0" * 24)), "reach past the 24 data bytes"),
    "offsets reversed": (safetensors_bytes(*one_tensor(offsets=[24, 0])), "not 0 <= begin <= end"),
    "absurd shape": (safetensors_bytes({"x": {"dtype": "F32", "shape": [2**40, 2**40], "data_offsets": [0, 24]}}, b"\0" * 24),
                     "needs 4835703278458516698824704 bytes"),
    "absurd shape, empty": (safetensors_bytes({"x": {"dtype": "F32", "shape": [2**62, 2**62, 0], "data_offsets": [0, 0]}}, b""),
                            "cannot be read"),
    "overlapping tensors": (safetensors_bytes({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                               "y": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, b"\0" * 12),
                            "overlap the previous tensor"),
    "a hole": (safetensors_bytes({"x": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8), "a hole of 4 bytes"),
    "trailing bytes": (safetensors_bytes(*one_tensor(shape=(1,), data=b"\0" * 8)), "belong to none"),
    "extra entry field": (safetensors_bytes({"x": {"dtype": "F32", "shape": [], "data_offsets": [0, 4], "z": 1}}, b"\0" * 4), "exactly dtype"),
    "bool bytes": (safetensors_bytes({"x": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}}, b"\x00\x07"), "other than 0 and 1"),
}


@pytest.mark.parametrize("loader", LOADERS)
@pytest.mark.parametrize("case", HAND_MADE)
def test_hand_made_malformed_files(tmp_path, loader, case):
    data, fragment = HAND_MADE[case]
    p = tmp_path / "bad.safetensors"
    p.write_bytes(data)
    expect_container_error(LOADERS[loader], p, fragment)


def test_every_truncation_of_a_state_file(saved, tmp_path):
    data = saved.read_bytes()
    p = tmp_path / "cut.safetensors"
    for n in range(len(data)):
        p.write_bytes(data[:n])
        expect_container_error(om.load, p)


@pytest.mark.parametrize("which", [0, 1], ids=["model", "checkpoint"])
def test_truncations_of_recognizer_files(model_file, tmp_path, which):
    data = model_file[which].read_bytes()
    load = CrnnV0.load if which == 0 else Trainer.load_checkpoint
    p = tmp_path / "cut.safetensors"
    # Every cut inside the header and the first data bytes, then every 97th.
    n_header = 8 + int.from_bytes(data[:8], "little")
    for n in list(range(0, n_header + 64)) + list(range(n_header + 64, len(data), 97)):
        p.write_bytes(data[:n])
        expect_container_error(load, p)


def test_bit_flips_in_the_header(saved, model_file, tmp_path):
    """Every bit of every header byte flipped in turn: either the file still
    reads (a flip inside a name or a number can leave a valid file) or it is
    a ContainerError naming it; never another exception."""
    p = tmp_path / "flip.safetensors"
    for src, load in ((saved, om.load), (model_file[0], CrnnV0.load)):
        data = bytearray(src.read_bytes())
        n_header = 8 + int.from_bytes(data[:8], "little")
        refused = 0
        positions = range(n_header) if load is om.load else range(0, n_header, 3)
        for i in positions:
            for bit in (0, 3, 7):
                flipped = bytearray(data)
                flipped[i] ^= 1 << bit
                p.write_bytes(bytes(flipped))
                try:
                    load(p)
                except ContainerError as e:
                    assert str(p) in str(e)
                    refused += 1
        assert refused > len(positions)  # most flips break the file, and each was caught


def test_structure_faults(tmp_path):
    base = {"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}
    p = tmp_path / "s.safetensors"
    for structure, fragment in [
        ("{", "not valid JSON"),
        ('{"__tensor__": "missing"}', "does not hold"),
        ('{"__tensor__": 5}', "does not hold"),
        ('{"__dict__": [[1]]}', "not a [key, value] pair"),
        ('{"__dict__": [[[1], 2]]}', "not a [key, value] pair"),
        ('{"__float__": "abc"}', "not a number"),
        ('{"__what__": 1}', "unknown entry"),
        ('{"a": 1, "b": 2}', "which save never writes"),
        ('{"__tuple__": 3}', "unknown entry"),
    ]:
        meta = {"format": "onemodel.state", "version": "1", "onemodel.structure": structure}
        p.write_bytes(safetensors_bytes(base, b"\0" * 4, metadata=meta))
        expect_container_error(om.load, p, fragment)


def test_a_file_object_is_named(saved):
    import io

    data = saved.read_bytes()[:50]
    with pytest.raises(ContainerError, match="<file object>"):
        om.load(io.BytesIO(data))


def _rewrite_metadata(src, dst, **changes):
    data = src.read_bytes()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + n])
    header["__metadata__"].update(changes)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    dst.write_bytes(struct.pack("<Q", len(text)) + text + data[8 + n :])


@pytest.mark.parametrize("config,fragment", [
    ({"height": 32, "channels": [4, 4, 4], "pools": [[2, 2], [2, 2], [2, 1]], "hidden": 2**40, "layers": 1}, "bad config"),
    ({"height": 32, "channels": [4, 4, 4], "pools": [[2, 2], [2, 2], [2, 1]], "hidden": 8, "layers": 10**15}, "bad config"),
    ({"height": 32, "channels": [2**62, 4, 4], "pools": [[2, 2], [2, 2], [2, 1]], "hidden": 8, "layers": 1}, "bad config"),
    ({"height": 32, "channels": [4, 4, 4], "pools": [[2], [2, 2], [2, 1]], "hidden": 8, "layers": 1}, "bad config"),
    ({"height": 32, "channels": [4, 4, 4], "pools": [[2, 2], [2, 2], [2, 1]], "hidden": 10**30, "layers": 1}, "bad config"),
    ({"height": 32, "channels": 4, "pools": [[2, 2], [2, 2], [2, 1]], "hidden": 8, "layers": 1}, "bad config"),
    ({"height": 32, "channels": [4, 4, 4], "pools": [[2, 2], [2, 2], [2, 1]], "hidden": 16, "layers": 2}, "more than the file's bytes"),
    ({"height": 32, "channels": [4, 4, 4], "pools": [[2, 2], [2, 2], [2, 1]], "hidden": 9, "layers": 2}, "shape"),
])
def test_absurd_configs_are_refused_before_any_allocation(model_file, tmp_path, config, fragment):
    p = tmp_path / "cfg.safetensors"
    _rewrite_metadata(model_file[0], p, config=json.dumps(config))
    expect_container_error(CrnnV0.load, p, fragment)


@pytest.mark.parametrize("trainer,fragment", [
    ("{", "bad trainer metadata"),
    ('{"step": 1}', "bad trainer metadata"),
    ('{"step": -1, "lr": 0.001, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.0, "clip": null, "decay_biases": false}',
     "bad trainer metadata"),
    ('{"step": 1, "lr": 0.001, "betas": [0.9], "eps": 1e-8, "weight_decay": 0.0, "clip": null, "decay_biases": false}',
     "bad trainer metadata"),
])
def test_bad_trainer_metadata(model_file, tmp_path, trainer, fragment):
    p = tmp_path / "ckpt.safetensors"
    _rewrite_metadata(model_file[1], p, trainer=trainer)
    expect_container_error(Trainer.load_checkpoint, p, fragment)


def test_resume_of_a_malformed_checkpoint_is_one_message(model_file, tmp_path, capsys):
    from onemodel.cli import main

    bad = tmp_path / "ckpt.safetensors"
    bad.write_bytes(model_file[1].read_bytes()[:200])
    data = tmp_path / "data"
    data.mkdir()
    rc = main(["train", str(data), "--out", str(tmp_path / "out"), "--resume", str(bad), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "Traceback" not in err
    assert str(bad) in err and "truncated" in err, err
