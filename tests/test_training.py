"""The training loop as a library (onemodel.recognizer.training), without
the command line: callbacks, a stop request and resuming, non-finite steps,
the run's settings."""

import json

import numpy as np
import pytest

from onemodel.recognizer import CrnnV0, Trainer
from onemodel.recognizer.demo import make_lines
from onemodel.recognizer.training import (Callback, NonFiniteError, Sample, SettingMismatch, architecture,
                                          read_history, resumed_settings, train, weights_sha256)


@pytest.fixture(scope="module")
def lines():
    tr = [Sample(im, t, f"line {i}") for i, (im, t) in enumerate(make_lines(12, 3, 0, min_len=2, max_len=4))]
    held = [Sample(im, t, f"held {i}") for i, (im, t) in enumerate(make_lines(3, 3, 1, min_len=2, max_len=4))]
    return tr, held


def fresh(lr=3e-3):
    return Trainer(CrnnV0(architecture("small", "0123456789"), seed=1), lr=lr)


class Recorder(Callback):
    def __init__(self):
        self.events = []
        self.steps = []

    def on_start(self, start, steps, batch_size):
        self.events.append(("start", start, steps, batch_size))

    def on_step(self, step, loss, grad_norm):
        assert np.isfinite(loss) and np.isfinite(grad_norm) and grad_norm > 0
        self.events.append(("step", step))
        self.steps.append((step, loss, grad_norm))

    def on_eval(self, step, rates):
        assert 0.0 <= rates.cer and rates.lines == 3
        self.events.append(("eval", step))

    def on_end(self):
        self.events.append(("end",))


def test_callbacks_stop_and_resume_give_the_straight_bits(lines, tmp_path):
    tr, held = lines
    straight = fresh()
    rec = Recorder()
    res = train(straight, tr, held, steps=4, batch_size=3, seed=7, eval_every=2, out_dir=tmp_path / "a",
                callbacks=[rec])
    assert not res.stopped and res.step == 4 and res.steps_run == 4
    assert rec.events == [("start", 0, 4, 3), ("eval", 0), ("step", 1), ("step", 2), ("eval", 2), ("step", 3),
                          ("step", 4), ("eval", 4), ("end",)]
    assert [h["step"] for h in res.history] == [0, 1, 2, 3, 4]
    assert [h["cer"] is None for h in res.history] == [False, True, False, True, False]
    assert (tmp_path / "a" / "checkpoint.safetensors").exists()
    # metrics.jsonl holds what the trainer returned, bit for bit (JSON floats round-trip).
    rows = [json.loads(r) for r in (tmp_path / "a" / "metrics.jsonl").read_text().splitlines()]
    assert [(r["step"], r["loss"], r["grad_norm"]) for r in rows[1:]] == rec.steps
    assert rows == read_history(tmp_path / "a", 4) == res.history

    # A stop request after step 2 saves a checkpoint; resuming it reaches the same bits.
    stopped = fresh()
    res = train(stopped, tr, held, steps=4, batch_size=3, seed=7, eval_every=2, out_dir=tmp_path / "b",
                should_stop=lambda: stopped.step_count >= 2)
    assert res.stopped and res.step == 2
    resumed = Trainer.load_checkpoint(res.checkpoint)
    assert resumed.step_count == 2
    history = read_history(tmp_path / "b", resumed.step_count)
    assert [h["step"] for h in history] == [0, 1, 2]
    # A record past the checkpoint (a run killed between checkpoints) and a torn line are dropped on resume.
    with open(tmp_path / "b" / "metrics.jsonl", "a") as f:
        f.write(json.dumps({"step": 3, "loss": 9.0}) + "\n" + '{"step": 4, "lo')
    assert read_history(tmp_path / "b", 2) == history
    res = train(resumed, tr, held, steps=4, batch_size=3, seed=7, eval_every=2, out_dir=tmp_path / "b",
                history=history)
    assert not res.stopped and res.steps_run == 2
    rows = [json.loads(r) for r in (tmp_path / "b" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [0, 1, 2, 3, 4] and rows[3]["loss"] != 9.0
    assert weights_sha256(resumed.model) == weights_sha256(straight.model)
    assert weights_sha256(straight.model) != weights_sha256(fresh().model)


def test_non_finite_step_names_the_step_and_lines(lines, tmp_path):
    tr, _ = lines
    rec = Recorder()
    with pytest.raises(NonFiniteError) as e:
        train(fresh(lr=1e30), tr, (), steps=3, batch_size=3, seed=0, out_dir=tmp_path, callbacks=[rec])
    msg = str(e.value)
    assert msg.startswith("step 2:") and "not saved" in msg and "line " in msg
    assert rec.events[-1] == ("end",)
    assert not (tmp_path / "checkpoint.safetensors").exists()


def test_resumed_settings_refuse_a_different_order():
    run = {"data": "/d", "seed": 1, "batch_size": 8, "eval_split": 0.1, "max_eval": 500, "polarity": "dark"}
    assert resumed_settings(run, {"seed": 1, "lr": 5.0}, "run.json")["batch_size"] == 8
    with pytest.raises(SettingMismatch) as e:
        resumed_settings(run, {"batch_size": 4}, "run.json")
    assert (e.value.key, e.value.given, e.value.saved) == ("batch_size", 4, 8)


def test_train_refuses_bad_arguments(lines, tmp_path):
    tr, _ = lines
    with pytest.raises(ValueError, match="batch_size"):
        train(fresh(), tr, steps=1, batch_size=0, seed=0, out_dir=tmp_path)
