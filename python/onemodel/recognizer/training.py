"""Training a crnn-v0 on text lines: the loop, held-out evaluation,
checkpoints and the run's files — the library under ``onemodel train``,
``finetune`` and ``demo``, usable without the command line.

    from onemodel.recognizer import CrnnV0, Trainer
    from onemodel.recognizer.training import train

    trainer = Trainer(CrnnV0(config, seed=0), lr=1e-3)
    result = train(trainer, lines, held_out, steps=800, batch_size=8, seed=0,
                   eval_every=100, out_dir="run")
    print(result.history[-1])

``lines`` and ``held_out`` are sequences of :class:`Sample` (or plain
``(image, text, name)`` tuples). The batch of 0-based step ``s`` is a
function of ``(seed, s)`` alone (``data.batch_indices``), so stopping and
resuming from the checkpoint gives the same bits as never stopping. The
output folder holds ``checkpoint.safetensors`` (F32 masters and AdamW state),
``metrics.jsonl`` (one JSON object per step: loss, gradient norm, held-out
CER and WER; ``pandas.read_json(path, lines=True)`` reads it) and, written by
the caller, ``run.json`` (the options that fix the data order).

Progress, logging and stopping are the caller's: ``train`` reports through
:class:`Callback` objects and polls ``should_stop`` at each step boundary;
:class:`StopOnInterrupt` turns Ctrl-C into such a request.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, NamedTuple, Optional, Sequence, Union

import numpy as np

from .data import ErrorRates, Line, batch_indices, ctc_min_steps, error_rates

PathLike = Union[str, "os.PathLike[str]"]

#: Named model sizes for training from scratch. ``crnn-v0`` is the full
#: default of CrnnV0Config; ``small`` is the demo's (docs/cli.md measures it).
ARCHITECTURES: dict = {
    "crnn-v0": dict(channels=(32, 64, 96), hidden=128, layers=2),
    "small": dict(channels=(16, 32, 48), hidden=48, layers=1),
}

#: The options that fix which lines make each batch (``run.json``); resuming
#: with other values would not continue the same run.
ORDER_KEYS = ("data", "seed", "batch_size", "eval_split", "max_eval", "polarity")

CHECKPOINT = "checkpoint.safetensors"
METRICS = "metrics.jsonl"
RUN_SETTINGS = "run.json"


class Sample(NamedTuple):
    """One training or held-out line: ``[height, width]`` float32 image
    (ink = 1), its transcription and a name for messages (its file)."""

    image: np.ndarray
    text: str
    name: str


class NonFiniteError(RuntimeError):
    """Training met a non-finite loss, gradient or weight; the message names
    the step, the lines concerned and the last good checkpoint."""


def architecture(name: str, charset: Iterable[str]):
    """The CrnnV0Config of a named size (:data:`ARCHITECTURES`)."""
    from . import CrnnV0Config

    if name not in ARCHITECTURES:
        raise ValueError(f"architecture must be one of {sorted(ARCHITECTURES)}, got {name!r}")
    return CrnnV0Config(charset=tuple(charset), **ARCHITECTURES[name])


def weights_sha256(model) -> str:
    """sha256 of the float32 masters, in parameter order, little-endian: the
    identity of a trained model (the same on every path and thread count)."""
    h = hashlib.sha256()
    for a in model.state_dict().values():
        h.update(np.ascontiguousarray(a, dtype="<f4").tobytes())
    return h.hexdigest()


def evaluate(model, lines: Sequence) -> tuple:
    """(ErrorRates, hypotheses) of greedy decoding over ``lines``, each an
    ``(image, text)`` pair or a :class:`Sample`."""
    hyps = [model.recognize(ln[0]) for ln in lines]
    return error_rates([ln[1] for ln in lines], hyps), hyps


# -- callbacks and stopping ------------------------------------------------------


class Callback:
    """Hooks of :func:`train`; override the ones you need. ``on_step`` gets
    the mean loss and the gradient norm before clipping; ``on_eval`` the
    held-out error rates; ``on_end`` runs however the loop ends (also on an
    exception), so a display can close itself."""

    def on_start(self, start: int, steps: int, batch_size: int) -> None:
        pass

    def on_step(self, step: int, loss: float, grad_norm: float) -> None:
        pass

    def on_eval(self, step: int, rates: ErrorRates) -> None:
        pass

    def on_end(self) -> None:
        pass


class StopOnInterrupt:
    """A context manager making the first Ctrl-C a stop request (``requested``
    becomes true; :func:`train` then saves a checkpoint at the next step
    boundary and returns); a second Ctrl-C stops at once (KeyboardInterrupt).
    Outside the main thread no handler can be installed and Ctrl-C behaves as
    usual."""

    def __init__(self, message: str = "\nInterrupted: saving a checkpoint after this step "
                                      "(Ctrl-C again to abort)...\n", stream=None):
        self.requested = False
        self.message = message
        self.stream = stream
        self._prev: Any = None

    def __call__(self) -> bool:
        return self.requested

    def _handler(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        stream = self.stream or sys.stderr
        stream.write(self.message)
        stream.flush()

    def __enter__(self) -> "StopOnInterrupt":
        try:
            self._prev = signal.signal(signal.SIGINT, self._handler)
        except ValueError:  # not the main thread
            self._prev = None
        return self

    def __exit__(self, *exc) -> bool:
        if self._prev is not None:
            signal.signal(signal.SIGINT, self._prev)
        return False


# -- the loop -----------------------------------------------------------------------


@dataclass
class TrainResult:
    """What :func:`train` did. ``stopped`` is true when ``should_stop`` ended
    it before ``steps`` (a checkpoint was saved first)."""

    stopped: bool
    step: int
    steps: int
    steps_run: int
    history: list
    checkpoint: Path
    elapsed: float


def train(trainer, lines: Sequence, held_out: Sequence = (), *, steps: int, batch_size: int, seed: int,
          eval_every: int = 0, checkpoint_every: int = 0, out_dir: PathLike, history: Optional[list] = None,
          callbacks: Sequence[Callback] = (), should_stop: Optional[Callable[[], bool]] = None) -> TrainResult:
    """Train until ``trainer.step_count == steps``, then save the checkpoint.

    ``trainer`` is a :class:`~onemodel.recognizer.Trainer` (or an object with
    its ``step``, ``gradients``, ``step_count``, ``model``,
    ``last_line_losses`` and ``save_checkpoint``). The held-out CER is
    evaluated at step 0 of a fresh run, every ``eval_every`` steps and at the
    last step (``eval_every=0``: never). The checkpoint is
    saved every ``checkpoint_every`` steps (0: only at the end) and when
    ``should_stop()`` becomes true, into ``out_dir`` (created if needed);
    each step's record is appended to ``metrics.jsonl`` as it happens. ``history`` continues a resumed run's
    records (:func:`read_history`); the metrics file is rewritten with them.

    Raises :class:`NonFiniteError` (nothing of that step saved) when a loss,
    gradient norm or weight is not finite."""
    if steps < trainer.step_count:
        raise ValueError(f"train: steps {steps} is below the trainer's step count {trainer.step_count}")
    if batch_size < 1:
        raise ValueError(f"train: batch_size must be at least 1, got {batch_size}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ckpt = out / CHECKPOINT
    history = list(history or [])
    start = trainer.step_count
    n = len(lines)
    eval_set = [(ln[0], ln[1]) for ln in held_out]
    t0 = time.perf_counter()

    metrics = MetricsLog(out / METRICS, history)

    def record(step: int, loss: Optional[float], norm: Optional[float], evaluated: bool) -> None:
        rates = None
        if evaluated and eval_set:
            rates, _ = evaluate(trainer.model, eval_set)
            for cb in callbacks:
                cb.on_eval(step, rates)
        rec = {"step": step, "loss": loss, "grad_norm": norm, "cer": None if rates is None else rates.cer,
               "wer": None if rates is None else rates.wer, "wall_time": time.time()}
        history.append(rec)
        metrics.append(rec)

    def save() -> None:
        check_finite_weights(trainer.model, trainer.step_count)
        trainer.save_checkpoint(ckpt)

    def result(stopped: bool) -> TrainResult:
        return TrainResult(stopped=stopped, step=trainer.step_count, steps=steps, history=history, checkpoint=ckpt,
                           elapsed=time.perf_counter() - t0, steps_run=trainer.step_count - start)

    for cb in callbacks:
        cb.on_start(start, steps, batch_size)
    try:
        if start == 0 and not history and eval_set:
            record(0, None, None, evaluated=True)
        for s in range(start, steps):
            idx = batch_indices(n, batch_size, seed, s)
            step = s + 1
            try:
                with warnings.catch_warnings(record=True):
                    warnings.simplefilter("always")
                    loss, norm = trainer.step([lines[i][0] for i in idx], [lines[i][1] for i in idx])
                problem = None if math.isfinite(loss) and math.isfinite(norm) else \
                    f"the loss is {loss} and the gradient norm {norm}"
            except FloatingPointError as e:
                problem = str(e)
            if problem is not None:
                raise NonFiniteError(non_finite_message(trainer, step, problem, [lines[i] for i in idx], ckpt))
            for cb in callbacks:
                cb.on_step(step, loss, norm)
            record(step, loss, norm, evaluated=bool(eval_every) and (step % eval_every == 0 or step == steps))
            if should_stop is not None and should_stop() and step < steps:
                save()
                return result(stopped=True)
            if checkpoint_every and step % checkpoint_every == 0 and step < steps:
                save()
    finally:
        metrics.close()
        for cb in callbacks:
            cb.on_end()
    save()
    return result(stopped=False)


# -- non-finite numbers -----------------------------------------------------------


def non_finite_message(trainer, step: int, problem: str, batch: Sequence, ckpt: Path) -> str:
    """Name the step and the lines of ``batch`` whose own gradient (at the
    weights before the step) is not finite; all of them when none is alone."""
    culprits = []
    for img, text, name in batch:
        try:
            with warnings.catch_warnings(record=True):
                warnings.simplefilter("always")
                loss, grads = trainer.gradients([img], [text])
            line_loss = float(trainer.last_line_losses[0]) if len(trainer.last_line_losses) else loss
            ok = math.isfinite(line_loss) and all(bool(np.isfinite(g).all()) for g in grads.values())
            why = "" if ok else f"loss {line_loss}, non-finite gradient" if math.isfinite(line_loss) \
                else f"loss {line_loss}"
        except (FloatingPointError, ValueError) as e:
            ok, why = False, str(e)
        if not ok:
            culprits.append(f"  {name} ({text!r}): {why}")
    if not culprits:
        culprits = [f"  {name} ({text!r})" for _, text, name in batch]
        head = "No line is non-finite alone; the batch's lines were:"
    else:
        head = "Lines with a non-finite loss or gradient:"
    weights_ok = all(bool(np.isfinite(a).all()) for a in trainer.model.state_dict().values())
    saved = (f"The last good checkpoint is {ckpt} (step {checkpoint_step(ckpt)})." if ckpt.exists()
             else "No checkpoint was written.")
    return (f"step {step}: {problem}. Training stopped; this step's update was not saved"
            f"{'' if weights_ok else ' (the weights already hold non-finite values: the learning rate is too large)'}."
            f"\n{head}\n" + "\n".join(culprits) + f"\n{saved} Try a smaller learning rate or gradient clipping.")


def check_finite_weights(model, step: int) -> None:
    """Raise :class:`NonFiniteError` if a weight is not finite (before a save,
    so that a NaN never reaches a file)."""
    bad = [n for n, a in model.state_dict().items() if not np.isfinite(a).all()]
    if bad:
        raise NonFiniteError(f"step {step}: the weights {', '.join(bad)} hold non-finite values (the update "
                             "overflowed: try a smaller learning rate or gradient clipping); nothing was saved")


def checkpoint_step(path: PathLike) -> str:
    """The step a checkpoint was saved at, as text ("?" if unreadable)."""
    try:
        from . import _container

        meta, _, _ = _container.read(path)
        return str(json.loads(meta["trainer"])["step"])
    except Exception:  # only for a message
        return "?"


# -- lines --------------------------------------------------------------------------


def drop_narrow_lines(model, lines: Iterable[Line]) -> tuple:
    """(kept samples, messages about dropped lines): a line whose image gives
    fewer time steps than CTC needs for its transcription cannot be trained
    on. Each message names the file."""
    cfg = model.config
    kept, narrow = [], []
    for ln in lines:
        need = ctc_min_steps(model.encode(ln.text))
        have = cfg.time_steps(ln.image.shape[1])
        if have < max(1, need):
            narrow.append(f"{ln.path}: {ln.image.shape[1]} px wide gives {have} time steps, "
                          f"{ln.text!r} needs {need}")
        else:
            kept.append(Sample(ln.image, ln.text, ln.path))
    return kept, narrow


def extend_charset(model, new_chars: Sequence[str], seed: int):
    """The same model with ``new_chars`` appended to its charset: every weight
    kept, the classifier's new rows taken from a fresh initialization."""
    from . import CrnnV0, CrnnV0Config

    c = model.config
    cfg = CrnnV0Config(height=c.height, channels=c.channels, pools=c.pools, hidden=c.hidden, layers=c.layers,
                       charset=tuple(c.charset) + tuple(new_chars))
    new = CrnnV0(cfg, seed=seed)
    state = new.state_dict()
    k = c.classes
    for name, a in model.state_dict().items():
        if name.startswith("classifier."):
            b = np.array(state[name])
            b[:k] = a
            state[name] = b
        else:
            state[name] = a
    new.load_state_dict(state)
    return new


# -- the run's files ------------------------------------------------------------------


class MetricsLog:
    """``metrics.jsonl``: one JSON object per record (``step``, ``loss``,
    ``grad_norm``, ``cer``, ``wer``, ``wall_time``; null where absent),
    appended and flushed as training goes, so it can be followed live and
    loaded into pandas (``read_json(path, lines=True)``). Opening it writes
    ``records`` first (a resumed run's history, atomically), dropping
    whatever a previous run left after them."""

    def __init__(self, path: PathLike, records: Sequence[dict] = ()):
        self.path = Path(path)
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")
        os.replace(tmp, self.path)
        self._file = open(self.path, "a")

    def append(self, record: dict) -> None:
        self._file.write(json.dumps(record) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def read_history(out_dir: PathLike, upto: int) -> list:
    """The records of ``metrics.jsonl`` up to step ``upto`` ([] if none). A
    torn last line (a process killed while writing) is skipped."""
    path = Path(out_dir) / METRICS
    if not path.exists():
        return []
    out = []
    for row in path.read_text().splitlines():
        try:
            rec = json.loads(row)
            step = int(rec["step"])
        except (ValueError, KeyError, TypeError):
            continue
        if step > upto:
            break
        out.append(rec)
    return out


def write_run_settings(out_dir: PathLike, settings: dict) -> None:
    """``run.json`` (the :data:`ORDER_KEYS`), atomically."""
    out = Path(out_dir)
    tmp = out / (RUN_SETTINGS + ".tmp")
    tmp.write_text(json.dumps({k: settings[k] for k in ORDER_KEYS}, indent=2) + "\n")
    os.replace(tmp, out / RUN_SETTINGS)


def read_run_settings(checkpoint: PathLike) -> Optional[dict]:
    """The ``run.json`` beside a checkpoint, or None when there is none."""
    path = Path(checkpoint).parent / RUN_SETTINGS
    if not path.exists():
        return None
    return json.loads(path.read_text())


class SettingMismatch(ValueError):
    """Resuming with an option that differs from the run's."""

    def __init__(self, key: str, given: Any, saved: Any, where: str):
        super().__init__(f"{key} {given} differs from the run's {saved} (in {where})")
        self.key, self.given, self.saved, self.where = key, given, saved, where


def resumed_settings(run: dict, given: dict, where: str) -> dict:
    """The order settings of a resumed run: those of ``run`` (its run.json),
    refusing any of ``given`` (the explicitly chosen ones) that differ."""
    out = {}
    for k in ORDER_KEYS:
        if k == "data":
            continue
        if k in given and given[k] != run.get(k):
            raise SettingMismatch(k, given[k], run.get(k), where)
        if k in run:
            out[k] = run[k]
    return out
