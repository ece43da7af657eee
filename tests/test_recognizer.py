"""crnn-v0: the API, the container, checkpoints, bad input."""

import json
import os

import numpy as np
import pytest

from onemodel.recognizer import DEFAULT_CHARSET, ContainerError, CrnnV0, CrnnV0Config, Trainer

SMALL = dict(height=16, channels=(4, 6, 8), pools=((2, 2), (2, 2), (2, 1)), hidden=8, layers=2, charset=tuple("abc "))


def small_model(seed=0, **kw):
    return CrnnV0(CrnnV0Config(**{**SMALL, **kw}), seed=seed)


def lines(cfg, widths=(40, 23, 64, 17), seed=0):
    rng = np.random.default_rng(seed)
    return [rng.random((cfg.height, w)).astype(np.float32) for w in widths]


TEXTS = ["ab", "c", "a bc", "b"]


def test_default_config_and_parameter_order():
    cfg = CrnnV0Config()
    assert (cfg.height, cfg.channels, cfg.pools, cfg.hidden, cfg.layers) == (32, (32, 64, 96), ((2, 2), (2, 2), (2, 1)), 128, 2)
    assert cfg.charset == DEFAULT_CHARSET and cfg.classes == len(DEFAULT_CHARSET) + 1
    m = CrnnV0(cfg)
    shapes = m.parameter_shapes()
    assert m.parameter_names[:6] == ["conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "conv3.weight", "conv3.bias"]
    assert m.parameter_names[6:9] == ["lstm1.fwd.w_ih", "lstm1.fwd.w_hh", "lstm1.fwd.b"]
    assert m.parameter_names[-2:] == ["classifier.weight", "classifier.bias"]
    assert shapes["conv2.weight"] == (64, 3, 3, 32)
    assert shapes["lstm1.fwd.w_ih"] == (512, 384)
    assert shapes["lstm2.rev.w_ih"] == (512, 256)
    assert shapes["lstm2.rev.w_hh"] == (512, 128)
    assert shapes["classifier.weight"] == (cfg.classes, 256)
    sd = m.state_dict()
    assert all(v.dtype == np.float32 for v in sd.values())
    # Same seed, same weights; another seed, other weights.
    assert all(np.array_equal(sd[k], CrnnV0(cfg, seed=0).state_dict()[k]) for k in sd)
    assert not np.array_equal(sd["conv1.weight"], CrnnV0(cfg, seed=1).state_dict()["conv1.weight"])


def test_config_errors():
    with pytest.raises(ValueError, match="repeats"):
        CrnnV0Config(charset="aab")
    with pytest.raises(ValueError, match="at least one"):
        CrnnV0Config(charset="")
    with pytest.raises(ValueError, match="pool"):
        CrnnV0(CrnnV0Config(channels=(4, 4), pools=((2, 2),)))
    with pytest.raises(ValueError, match="pools down to 0"):
        CrnnV0(CrnnV0Config(height=4, channels=(4, 4, 4)))
    # The core checks the architecture when the config is made, not later.
    with pytest.raises(ValueError, match="pools down to 0"):
        CrnnV0Config(height=4, channels=(4, 4, 4))
    with pytest.raises(ValueError, match="pool widths multiply"):
        CrnnV0Config(channels=(4, 4), pools=((1, 2**40), (1, 2**40)))
    cfg = CrnnV0Config(pools=((2, 3), (2, 2), (2, 5)))
    assert cfg.min_width == 3 * 2 * 5 and cfg.time_steps(61) == 2 and cfg.time_steps(59) == 1


def test_logits_and_recognize():
    m = small_model()
    img = lines(m.config, (40,))[0]
    lg = m.logits(img)
    assert lg.shape == (10, m.config.classes) and lg.dtype == np.float32
    text = m.recognize(img)
    assert set(text) <= set(m.config.charset)
    # Greedy decoding by hand.
    best = lg.argmax(1)
    want = [c for i, c in enumerate(best) if c != 0 and (i == 0 or c != best[i - 1])]
    assert text == m.decode(want)


def _fresh_logits(m, img):
    """Logits of a new model object holding m's weights (no cached state)."""
    twin = small_model(seed=1)
    twin.load_state_dict(m.state_dict())
    return twin.logits(img)


def test_logits_follow_every_change_of_the_weights():
    """Inference reads the current weights after a step or a state_dict
    load, the same logits as a new model object holding them."""
    m = small_model()
    img = lines(m.config, (40,))[0]
    first = m.logits(img)
    assert np.array_equal(m.logits(img), first)
    Trainer(m, lr=0.05).step(lines(m.config), TEXTS)
    after_step = m.logits(img)
    assert not np.array_equal(after_step, first)
    assert np.array_equal(after_step, _fresh_logits(m, img))
    m.load_state_dict(small_model(seed=2).state_dict())
    assert np.array_equal(m.logits(img), small_model(seed=2).logits(img))


def test_gradients_do_not_update_and_step_does():
    m = small_model()
    before = m.state_dict()
    tr = Trainer(m)
    loss, grads = tr.gradients(lines(m.config), TEXTS)
    assert np.isfinite(loss) and set(grads) == set(before)
    assert all(grads[k].shape == before[k].shape for k in before)
    assert all(np.array_equal(before[k], m.state_dict()[k]) for k in before)
    loss2, norm = tr.step(lines(m.config), TEXTS)
    assert loss2 == loss
    total = np.sqrt(sum(float(np.sum(g.astype(np.float64) ** 2)) for g in grads.values()))
    assert abs(norm - total) <= 1e-5 * total
    assert not np.array_equal(before["conv1.weight"], m.state_dict()["conv1.weight"])
    assert tr.step_count == 1


def test_label_targets_equal_text_targets():
    m = small_model()
    tr = Trainer(m)
    a = tr.gradients(lines(m.config), TEXTS)
    b = tr.gradients(lines(m.config), [m.encode(t) for t in TEXTS])
    assert a[0] == b[0] and all(np.array_equal(a[1][k], b[1][k]) for k in a[1])


def test_training_lowers_the_loss():
    m = small_model(seed=3)
    tr = Trainer(m, lr=0.01)
    imgs = lines(m.config, (48, 48, 48, 48), seed=5)
    first = tr.step(imgs, TEXTS)[0]
    for _ in range(30):
        last = tr.step(imgs, TEXTS)[0]
    assert last < 0.5 * first


# -- the container ---------------------------------------------------------------


def test_save_load_f16(tmp_path):
    from safetensors import safe_open

    m = small_model()
    p = tmp_path / "m.safetensors"
    m.save(p)
    with safe_open(str(p), framework="numpy") as f:
        meta = f.metadata()
        keys = set(f.keys())
        t = f.get_tensor("conv2.weight")
    assert meta["format"] == "onemodel.crnn-v0"
    assert json.loads(meta["config"]) == {"height": 16, "channels": [4, 6, 8], "pools": [[2, 2], [2, 2], [2, 1]],
                                          "hidden": 8, "layers": 2}
    assert json.loads(meta["charset"]) == list("abc ")
    assert keys == set(m.parameter_names)
    assert t.dtype == np.float16 and t.shape == (6, 3, 3, 4)
    m2 = CrnnV0.load(p)
    assert m2.config == m.config
    for k, v in m.state_dict().items():
        assert np.array_equal(m2.state_dict()[k], v.astype(np.float16).astype(np.float32))
    assert not list(tmp_path.glob(".tmp-*"))


def test_save_float32_round_trips_exactly(tmp_path):
    m = small_model()
    m.save(tmp_path / "m.safetensors", dtype="float32")
    m2 = CrnnV0.load(tmp_path / "m.safetensors")
    assert all(np.array_equal(m2.state_dict()[k], v) for k, v in m.state_dict().items())


def _write(path, tensors, meta):
    import safetensors.numpy

    safetensors.numpy.save_file(tensors, str(path), metadata=meta)


def _good(m):
    tensors = {k: v.astype(np.float16) for k, v in m.state_dict().items()}
    return tensors, m._metadata()


def test_container_errors(tmp_path):
    m = small_model()
    p = tmp_path / "bad.safetensors"
    t, meta = _good(m)
    del t["lstm1.rev.b"]
    _write(p, t, meta)
    with pytest.raises(ContainerError, match="lstm1.rev.b.*missing"):
        CrnnV0.load(p)
    t, meta = _good(m)
    t["conv1.bias"] = t["conv1.bias"].astype(np.float64)
    _write(p, t, meta)
    with pytest.raises(ContainerError, match="conv1.bias.*F64|conv1.bias.*float64"):
        CrnnV0.load(p)
    t, meta = _good(m)
    t["conv1.weight"] = t["conv1.weight"].reshape(4, 9, 1)
    _write(p, t, meta)
    with pytest.raises(ContainerError, match="conv1.weight.*shape"):
        CrnnV0.load(p)
    t, meta = _good(m)
    _write(p, t, {**meta, "format": "onemodel.crnn-v1"})
    with pytest.raises(ContainerError, match="format"):
        CrnnV0.load(p)
    t, meta = _good(m)
    _write(p, t, {k: v for k, v in meta.items() if k != "charset"})
    with pytest.raises(ContainerError, match="charset"):
        CrnnV0.load(p)
    m.save(p)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) - 100])
    with pytest.raises(ContainerError, match="truncated"):
        CrnnV0.load(p)
    with pytest.raises(FileNotFoundError):
        CrnnV0.load(tmp_path / "nope.safetensors")


def test_f16_overflow_refused(tmp_path):
    m = small_model()
    sd = m.state_dict()
    sd["conv1.bias"][0] = 1e6
    m.load_state_dict(sd)
    with pytest.raises(ValueError, match="float16"):
        m.save(tmp_path / "m.safetensors")
    assert not list(tmp_path.iterdir())


# -- checkpoints and resuming --------------------------------------------------------


def _weights(m):
    return np.concatenate([v.reshape(-1) for v in m.state_dict().values()])


def test_resume_gives_the_same_bits(tmp_path):
    imgs = lines(CrnnV0Config(**SMALL))
    m = small_model(seed=2)
    tr = Trainer(m, lr=0.01, weight_decay=0.1, clip=0.5)
    for _ in range(5):
        tr.step(imgs, TEXTS)
    straight = _weights(m)

    m = small_model(seed=2)
    tr = Trainer(m, lr=0.01, weight_decay=0.1, clip=0.5)
    for _ in range(2):
        tr.step(imgs, TEXTS)
    tr.save_checkpoint(tmp_path / "ck.safetensors")
    del tr, m
    tr = Trainer.load_checkpoint(tmp_path / "ck.safetensors")
    assert tr.step_count == 2 and tr.clip == 0.5 and tr.weight_decay == 0.1
    for _ in range(3):
        tr.step(imgs, TEXTS)
    assert _weights(tr.model).view(np.uint32).tolist() == straight.view(np.uint32).tolist()
    # A checkpoint is also a model file (F32 masters, adam.* ignored).
    m2 = CrnnV0.load(tmp_path / "ck.safetensors")
    assert m2.config == tr.model.config
    with pytest.raises(ContainerError, match="not a checkpoint"):
        tr.model.save(tmp_path / "plain.safetensors")
        Trainer.load_checkpoint(tmp_path / "plain.safetensors")


def test_checkpoint_write_is_atomic(tmp_path, monkeypatch):
    m = small_model()
    tr = Trainer(m)
    p = tmp_path / "ck.safetensors"
    tr.save_checkpoint(p)
    good = p.read_bytes()

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    tr.step(lines(m.config), TEXTS)
    with pytest.raises(OSError, match="disk full"):
        tr.save_checkpoint(p)
    assert p.read_bytes() == good
    assert [x.name for x in tmp_path.iterdir()] == ["ck.safetensors"]


# -- bad input -------------------------------------------------------------------------


def test_bad_targets():
    m = small_model()
    tr = Trainer(m)
    imgs = lines(m.config)
    with pytest.raises(ValueError, match="line 2: character 'z'"):
        tr.step(imgs, ["a", "b", "az", "c"])
    with pytest.raises(ValueError, match="blank"):
        tr.step(imgs, [[1], [2], [0], [1]])
    with pytest.raises(ValueError, match="outside"):
        tr.step(imgs, [[1], [2], [9], [1]])
    with pytest.raises(ValueError, match="4 images but 3 targets"):
        tr.step(imgs, ["a", "b", "c"])
    assert tr.step_count == 0


def test_bad_images_leave_weights_untouched():
    m = small_model()
    tr = Trainer(m)
    before = _weights(m)
    imgs = lines(m.config)
    bad = [im.copy() for im in imgs]
    bad[1][3, 5] = np.nan
    with pytest.raises(ValueError, match=r"line 1: pixel \(row 3, column 5\) is NaN"):
        tr.step(bad, TEXTS)
    bad[1][3, 5] = np.inf
    with pytest.raises(ValueError, match="line 1: pixel"):
        tr.step(bad, TEXTS)
    with pytest.raises(ValueError, match="zero width"):
        tr.step([np.zeros((16, 0), np.float32)], ["a"])
    with pytest.raises(ValueError, match="at least 4 px"):
        tr.step([np.zeros((16, 3), np.float32)], ["a"])
    with pytest.raises(ValueError, match="px high"):
        tr.step([np.zeros((15, 30), np.float32)], ["a"])
    with pytest.raises(ValueError, match="2-D"):
        tr.step([np.zeros((16, 30, 1), np.float32)], ["a"])
    with pytest.raises(ValueError, match="empty batch"):
        tr.step([], [])
    with pytest.raises(ValueError, match="zero width"):
        m.logits(np.zeros((16, 0), np.float32))
    assert np.array_equal(_weights(m), before) and tr.step_count == 0


def test_too_narrow_for_target_counts_as_zero_and_is_reported():
    m = small_model()
    tr = Trainer(m)
    imgs = lines(m.config, (40, 8))  # 8 px → 2 steps; "aa" needs 3
    with pytest.warns(RuntimeWarning, match=r"lines \[1\]"):
        loss, grads = tr.gradients(imgs, ["ab", "aa"])
    assert tr.infinite_lines == [1]
    assert np.isinf(tr.last_line_losses[1])
    alone_loss, alone = Trainer(m).gradients(imgs[:1], ["ab"])
    assert loss == pytest.approx(alone_loss / 2, rel=1e-12)
    # The impossible line adds exactly zero: the batch gradient is the
    # possible line's scaled by 1/2 instead of 1 (a power of two, so exactly
    # half of the line alone's gradient, and of the gradient of the line
    # twice, whose mean is the line's own).
    _, twice = Trainer(m).gradients(imgs[:1] * 2, ["ab", "ab"])
    with pytest.warns(RuntimeWarning):
        _, g2 = Trainer(m).gradients(imgs, ["ab", "aa"])
    for k in g2:
        assert np.all(np.isfinite(g2[k]))
        assert np.array_equal(g2[k], alone[k] * np.float32(0.5)), k
        assert np.array_equal(twice[k], alone[k]), k
    with pytest.warns(RuntimeWarning):
        tr.step(imgs, ["ab", "aa"])
    assert np.all(np.isfinite(_weights(m)))


def test_empty_target_is_allowed():
    m = small_model()
    loss, _ = Trainer(m).gradients(lines(m.config, (20,)), [""])
    assert np.isfinite(loss)
