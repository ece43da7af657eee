"""The crnn-v0 safetensors container: reading, checking and atomic writing.

Weights are stored under their container names in natural (unpadded)
layout, F16 in a model file and F32 in a fine-tuning checkpoint (which also
holds ``adam.m.<name>`` / ``adam.v.<name>`` and the trainer's settings in the
metadata). Metadata: ``format`` = ``onemodel.crnn-v0``, ``config`` (JSON:
height, channels, pools, hidden, layers), ``charset`` (JSON list).
"""

from __future__ import annotations

from .._io import atomic_write, canonical_header, parse_safetensors, read_bytes  # noqa: F401 (re-exported)
from ..errors import ContainerError

import json
import os

import numpy as np

FORMAT = "onemodel.crnn-v0"


def _safetensors():
    try:
        import safetensors.numpy  # noqa: F401
    except ImportError as e:  # pragma: no cover - a declared dependency
        raise ImportError("onemodel.recognizer needs the 'safetensors' package (pip install safetensors)") from e


def save(path, tensors: dict, metadata: dict) -> None:
    _safetensors()
    import safetensors.numpy

    data = safetensors.numpy.save({k: np.ascontiguousarray(v) for k, v in tensors.items()}, metadata=metadata)
    atomic_write(path, canonical_header(data))


def read(path) -> tuple[dict, dict, dict]:
    """(metadata, tensors as numpy arrays, safetensors dtype name per
    tensor), every malformed file refused with a :class:`ContainerError`
    naming it (onemodel's own reader, ``_io.parse_safetensors``)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such crnn-v0 file")
    data, _ = read_bytes(path)
    meta, entries = parse_safetensors(data, path)
    tensors = {k: a for k, (_, a) in entries.items()}
    dtypes = {k: dt for k, (dt, _) in entries.items()}
    if meta.get("format") != FORMAT:
        raise ContainerError(f"{path}: metadata format is {meta.get('format')!r:.80}, expected {FORMAT!r}")
    for key in ("config", "charset"):
        if key not in meta:
            raise ContainerError(f"{path}: metadata has no {key!r} entry")
    return meta, tensors, dtypes


def parse_config(path, meta: dict) -> tuple[dict, list]:
    try:
        cfg = json.loads(meta["config"])
        charset = json.loads(meta["charset"])
    except (json.JSONDecodeError, RecursionError) as e:
        raise ContainerError(f"{path}: metadata config/charset is not valid JSON: {e}") from None
    if not isinstance(cfg, dict) or not isinstance(charset, list):
        raise ContainerError(f"{path}: metadata config must be a JSON object and charset a JSON list")
    missing = [k for k in ("height", "channels", "pools", "hidden", "layers") if k not in cfg]
    if missing:
        raise ContainerError(f"{path}: metadata config lacks {', '.join(missing)}")
    return cfg, charset


def check_tensor(path, name: str, tensors: dict, dtypes: dict, shape, allowed: tuple) -> np.ndarray:
    if name not in tensors:
        raise ContainerError(f"{path}: tensor {name!r} is missing")
    t = tensors[name]
    if dtypes[name] not in allowed:
        raise ContainerError(f"{path}: tensor {name!r} is {dtypes[name]}, expected {' or '.join(allowed)}")
    if tuple(t.shape) != tuple(shape):
        raise ContainerError(f"{path}: tensor {name!r} has shape {list(t.shape)}, expected {list(shape)}")
    return t.astype(np.float32)
