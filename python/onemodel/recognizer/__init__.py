"""The crnn-v0 text-line recognizer and its bit-identical trainer.

A fused trainer for one architecture (three convolution blocks with ReLU and
max pooling, two bidirectional LSTM layers, a linear classifier, CTC), whose
forward pass, gradients, loss, clipping and AdamW step follow one arithmetic
contract: the same bits on every kernel path, thread count and OS. See
docs/recognizer.md.

    from onemodel.recognizer import CrnnV0Config, CrnnV0, Trainer
    model = CrnnV0(CrnnV0Config(charset="0123456789"), seed=0)
    trainer = Trainer(model, lr=1e-3)
    loss, norm = trainer.step(images, ["123", "42"])   # images: [32, W] float32
    model.save("model.safetensors")
    print(model.recognize(images[0]))
"""

from __future__ import annotations

import json
import math
import os
import string
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence, Union

import numpy as np

from .. import _core
from . import _container
from ._container import FORMAT, ContainerError

__all__ = ["CrnnV0Config", "CrnnV0", "Trainer", "ContainerError", "DEFAULT_CHARSET", "FORMAT"]

#: Printable ASCII: digits, letters, punctuation and the space.
DEFAULT_CHARSET = tuple(string.digits + string.ascii_letters + string.punctuation + " ")

Target = Union[str, Sequence[int]]


@dataclass(frozen=True)
class CrnnV0Config:
    """The architecture. Class 0 is the CTC blank; class i ≥ 1 is
    ``charset[i - 1]``. ``pools`` are (height, width) factors per block."""

    height: int = 32
    channels: Sequence[int] = (32, 64, 96)
    pools: Sequence[Sequence[int]] = ((2, 2), (2, 2), (2, 1))
    hidden: int = 128
    layers: int = 2
    charset: Sequence[str] = field(default=DEFAULT_CHARSET)

    def __post_init__(self) -> None:
        object.__setattr__(self, "channels", tuple(int(c) for c in self.channels))
        object.__setattr__(self, "pools", tuple((int(p[0]), int(p[1])) for p in self.pools))
        cs = self.charset
        cs = tuple(cs) if not isinstance(cs, str) else tuple(cs)
        if not cs:
            raise ValueError("CrnnV0Config: the charset must hold at least one character")
        for c in cs:
            if not isinstance(c, str) or len(c) != 1:
                raise ValueError(f"CrnnV0Config: charset entries must be single characters, got {c!r}")
        if len(set(cs)) != len(cs):
            dup = sorted({c for c in cs if cs.count(c) > 1})
            raise ValueError(f"CrnnV0Config: the charset repeats {dup}")
        object.__setattr__(self, "charset", cs)
        object.__setattr__(self, "height", int(self.height))
        object.__setattr__(self, "hidden", int(self.hidden))
        object.__setattr__(self, "layers", int(self.layers))
        # The architecture's rules live in the Rust core (recognizer/config.rs):
        # it checks the numbers and gives the narrowest line.
        min_width, _ = _core.crnn_config_check(self.height, list(self.channels), list(self.pools),
                                               self.hidden, self.layers, len(cs) + 1)
        object.__setattr__(self, "_min_width", min_width)

    @property
    def classes(self) -> int:
        return len(self.charset) + 1

    @property
    def min_width(self) -> int:
        """The narrowest image that gives one time step."""
        return self._min_width

    def time_steps(self, width: int) -> int:
        """Time steps of a line ``width`` pixels wide (the core's rule)."""
        return width // self._min_width

    def to_json(self) -> str:
        return json.dumps({"height": self.height, "channels": list(self.channels),
                           "pools": [list(p) for p in self.pools], "hidden": self.hidden, "layers": self.layers})


def _core_model(cfg: CrnnV0Config, seed: int):
    return _core.CrnnCore(cfg.height, list(cfg.channels), list(cfg.pools), cfg.hidden, cfg.layers, cfg.classes, int(seed))


class CrnnV0:
    """A crnn-v0 model: configuration, charset and fp32 master weights."""

    def __init__(self, config: CrnnV0Config | None = None, seed: int = 0):
        self.config = config if config is not None else CrnnV0Config()
        if not 0 <= int(seed) < 2**64:
            raise ValueError(f"seed must be in [0, 2**64), got {seed}")
        self._core = _core_model(self.config, seed)
        self._info = self._core.param_info()

    # -- parameters ---------------------------------------------------------
    @property
    def parameter_names(self) -> list:
        """Container names in the trainer's parameter order (docs/recognizer.md, "Container")."""
        return [i[0] for i in self._info]

    def parameter_shapes(self) -> dict:
        return {i[0]: tuple(i[1]) for i in self._info}

    def state_dict(self) -> dict:
        """float32 numpy masters under the container names, natural layout."""
        return {name: arr.reshape(shape) for (name, shape, _, _), arr in zip(self._info, self._core.params())}

    def load_state_dict(self, state: dict) -> None:
        arrays = []
        for name, shape, _, _ in self._info:
            if name not in state:
                raise ValueError(f"load_state_dict: {name!r} is missing")
            a = np.asarray(state[name], dtype=np.float32)
            if a.shape != tuple(shape):
                raise ValueError(f"load_state_dict: {name!r} has shape {list(a.shape)}, expected {list(shape)}")
            arrays.append(np.ascontiguousarray(a).reshape(-1))
        self._core.set_params(arrays)

    # -- text -----------------------------------------------------------------
    def encode(self, text: str, line: int | None = None) -> list:
        idx = {c: i + 1 for i, c in enumerate(self.config.charset)}
        out = []
        for pos, ch in enumerate(text):
            if ch not in idx:
                where = f"line {line}: " if line is not None else ""
                raise ValueError(f"{where}character {ch!r} at position {pos} of {text!r} is not in the charset")
            out.append(idx[ch])
        return out

    def decode(self, labels: Sequence[int]) -> str:
        return "".join(self.config.charset[int(i) - 1] for i in labels)

    # -- inference ------------------------------------------------------------
    def logits(self, image: Any) -> np.ndarray:
        """Logits ``[T, classes]`` (float32) of one ``[height, width]`` image."""
        img = _image(image, 0)
        flat, t = self._core.logits(img)
        return flat.reshape(t, self.config.classes)

    def recognize(self, image: Any) -> str:
        """Greedy CTC decoding: the best class per step (first of equals),
        repeats merged, blanks dropped."""
        best = np.argmax(self.logits(image), axis=1)
        out, prev = [], -1
        for c in best.tolist():
            if c != prev and c != 0:
                out.append(c)
            prev = c
        return self.decode(out)

    # -- files ------------------------------------------------------------------
    def _metadata(self) -> dict:
        return {"format": FORMAT, "config": self.config.to_json(), "charset": json.dumps(list(self.config.charset))}

    def save(self, path: Any, dtype: str = "float16") -> None:
        """Write the container (F16 weights by default; ``dtype='float32'``
        keeps the masters exactly), atomically."""
        if dtype not in ("float16", "float32"):
            raise ValueError(f"save: dtype must be 'float16' or 'float32', got {dtype!r}")
        tensors = {}
        for name, a in self.state_dict().items():
            if dtype == "float16":
                big = np.abs(a) > 65504.0
                if big.any():
                    raise ValueError(f"save: {name} holds values beyond float16's range (max {np.abs(a).max()}); "
                                     "save with dtype='float32'")
                a = a.astype(np.float16)
            tensors[name] = a
        _container.save(path, tensors, self._metadata())

    @classmethod
    def load(cls, path: Any) -> "CrnnV0":
        """Read a model file (F16 weights) or a checkpoint (F32 masters)."""
        meta, tensors, dtypes = _container.read(path)
        model = cls._from_container(path, meta, tensors, dtypes)
        return model

    @classmethod
    def _from_container(cls, path, meta, tensors, dtypes) -> "CrnnV0":
        cfg_json, charset = _container.parse_config(path, meta)
        try:
            cfg = CrnnV0Config(height=cfg_json["height"], channels=tuple(cfg_json["channels"]),
                               pools=tuple(tuple(p) for p in cfg_json["pools"]), hidden=cfg_json["hidden"],
                               layers=cfg_json["layers"], charset=tuple(charset))
            # The shapes the config gives, computed without allocating: the
            # file's tensors are checked against them before the model is
            # built, so a config cannot ask for more than the file holds.
            # At most the F16 elements (2 bytes each) the file's bytes could hold.
            stored = os.path.getsize(path) // 2
            shapes = _core.CrnnCore.shapes(cfg.height, list(cfg.channels), list(cfg.pools), cfg.hidden,
                                           cfg.layers, cfg.classes, stored)
        except (ValueError, TypeError, IndexError, KeyError, OverflowError) as e:
            raise ContainerError(f"{path}: bad config in metadata: {e}") from e
        known = {name for name, _ in shapes}
        extra = [k for k in tensors if k not in known and not k.startswith("adam.")]
        if extra:
            raise ContainerError(f"{path}: unexpected tensors {extra[:10]}")
        state = {}
        for name, shape in shapes:
            state[name] = _container.check_tensor(path, name, tensors, dtypes, shape, ("F16", "F32"))
        kinds = {dtypes[n] for n in known}
        if len(kinds) != 1:
            raise ContainerError(f"{path}: weights mix dtypes {sorted(kinds)}")
        model = cls(cfg, seed=0)
        model.load_state_dict(state)
        return model


def _image(image, i: int) -> np.ndarray:
    a = np.asarray(image)
    if a.ndim != 2:
        raise ValueError(f"line {i}: expected a 2-D [height, width] image, got shape {list(a.shape)}")
    if a.dtype != np.float32:
        if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer) or a.dtype == bool):
            raise ValueError(f"line {i}: image dtype {a.dtype} is not numeric")
        a = a.astype(np.float32)
    return np.ascontiguousarray(a)


class Trainer:
    """AdamW fine-tuning of a CrnnV0 with the recognizer's arithmetic
    (docs/recognizer.md, "The arithmetic contract").

    ``clip=None`` turns gradient clipping off; ``decay_biases=True`` applies
    weight decay to biases too. Lines of a batch run on the library's
    threads (``onemodel.compute.set_threads``); nothing depends on how many.
    """

    def __init__(self, model: CrnnV0, lr: float = 1e-3, betas: Sequence[float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.01, clip: float | None = 5.0, decay_biases: bool = False) -> None:
        self.model = model
        self.lr = float(lr)
        self.betas = (float(betas[0]), float(betas[1]))
        self.eps = float(eps)
        self.weight_decay = float(weight_decay)
        self.clip = None if clip is None else float(clip)
        self.decay_biases = bool(decay_biases)
        self._core = _core.TrainerCore(model._core, self.lr, self.betas[0], self.betas[1], self.eps,
                                       self.weight_decay, self.clip, self.decay_biases)
        #: Each line's loss in the last call (inf where no alignment exists).
        self.last_line_losses = np.zeros(0)

    @property
    def step_count(self) -> int:
        return self._core.step_count

    def _batch(self, images, targets):
        images = list(images) if not isinstance(images, np.ndarray) or images.ndim != 2 else [images]
        targets = list(targets) if not isinstance(targets, str) else [targets]
        if len(images) != len(targets):
            raise ValueError(f"{len(images)} images but {len(targets)} targets")
        if not images:
            raise ValueError("empty batch: give at least one line")
        imgs = [_image(im, i) for i, im in enumerate(images)]
        k = self.model.config.classes
        labels = []
        for i, t in enumerate(targets):
            if isinstance(t, str):
                labels.append(self.model.encode(t, line=i))
            else:
                seq = [int(c) for c in t]
                for c in seq:
                    if c == 0:
                        raise ValueError(f"line {i}: label 0 is the CTC blank, not a character")
                    if not 1 <= c < k:
                        raise ValueError(f"line {i}: label {c} is outside 1..{k - 1}")
                labels.append(seq)
        return imgs, labels

    def _report(self, line_losses):
        self.last_line_losses = np.asarray(line_losses, dtype=np.float64)
        bad = [i for i, v in enumerate(line_losses) if not math.isfinite(v)]
        if bad:
            warnings.warn(f"lines {bad} have no CTC alignment (image too narrow for the target): "
                          "their loss is infinite and counted as 0, their gradient is zero", RuntimeWarning,
                          stacklevel=3)

    @property
    def infinite_lines(self) -> list:
        """Indices of the lines of the last call whose loss was infinite."""
        return [i for i, v in enumerate(self.last_line_losses.tolist()) if not math.isfinite(v)]

    def gradients(self, images: Any, targets: Union[Target, Sequence[Target]]) -> tuple[float, dict[str, np.ndarray]]:
        """(mean loss, {name: batch gradient}) without updating anything."""
        imgs, labels = self._batch(images, targets)
        (loss, lines, _norm), grads = self._core.gradients(self.model._core, imgs, labels)
        self._report(lines)
        shapes = self.model.parameter_shapes()
        return loss, {n: g.reshape(shapes[n]) for n, g in zip(self.model.parameter_names, grads)}

    def step(self, images: Any, targets: Union[Target, Sequence[Target]]) -> tuple[float, float]:
        """One AdamW step: (mean loss, global gradient norm before clipping)."""
        imgs, labels = self._batch(images, targets)
        loss, lines, norm = self._core.step(self.model._core, imgs, labels)
        self._report(lines)
        return loss, norm

    # -- checkpoints ------------------------------------------------------------
    def _settings(self) -> dict:
        return {"step": self.step_count, "lr": self.lr, "betas": list(self.betas), "eps": self.eps,
                "weight_decay": self.weight_decay, "clip": self.clip, "decay_biases": self.decay_biases}

    def save_checkpoint(self, path: Any) -> None:
        """F32 masters + AdamW state + settings, written atomically. Resuming
        from it gives the same bits as never stopping."""
        names = self.model.parameter_names
        shapes = self.model.parameter_shapes()
        tensors = dict(self.model.state_dict())
        m, v = self._core.adam_state(self.model._core)
        for n, a, b in zip(names, m, v):
            tensors[f"adam.m.{n}"] = a.reshape(shapes[n])
            tensors[f"adam.v.{n}"] = b.reshape(shapes[n])
        meta = self.model._metadata()
        meta["trainer"] = json.dumps(self._settings())
        _container.save(path, tensors, meta)

    @classmethod
    def load_checkpoint(cls, path: Any) -> "Trainer":
        """A Trainer (with its ``model``) continuing exactly where the
        checkpoint stopped."""
        meta, tensors, dtypes = _container.read(path)
        if "trainer" not in meta:
            raise ContainerError(f"{path}: not a checkpoint (no 'trainer' metadata); use CrnnV0.load")
        model = CrnnV0._from_container(path, meta, tensors, dtypes)
        names = model.parameter_names
        if any(dtypes[n] != "F32" for n in names):
            raise ContainerError(f"{path}: checkpoint weights must be F32 masters")
        try:
            s = json.loads(meta["trainer"])
            tr = cls(model, lr=s["lr"], betas=tuple(s["betas"]), eps=s["eps"], weight_decay=s["weight_decay"],
                     clip=s["clip"], decay_biases=s["decay_biases"])
            step = int(s["step"])
            if not 0 <= step < 2**63:
                raise ValueError(f"step {step} is outside [0, 2**63)")
        except (KeyError, TypeError, ValueError, IndexError, OverflowError, RecursionError) as e:
            raise ContainerError(f"{path}: bad trainer metadata: {e}") from e
        shapes = model.parameter_shapes()
        m = [_container.check_tensor(path, f"adam.m.{n}", tensors, dtypes, shapes[n], ("F32",)).reshape(-1) for n in names]
        v = [_container.check_tensor(path, f"adam.v.{n}", tensors, dtypes, shapes[n], ("F32",)).reshape(-1) for n in names]
        tr._core.set_adam_state(model._core, step, m, v)
        return tr
