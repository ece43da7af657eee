"""The crnn-v0 safetensors container: reading, checking and atomic writing.

Weights are stored under their container names in natural (unpadded)
layout, F16 in a model file and F32 in a fine-tuning checkpoint (which also
holds ``adam.m.<name>`` / ``adam.v.<name>`` and the trainer's settings in the
metadata). Metadata: ``format`` = ``onemodel.crnn-v0``, ``config`` (JSON:
height, channels, pools, hidden, layers), ``charset`` (JSON list).
"""

from __future__ import annotations

import json
import os
import tempfile

import numpy as np

FORMAT = "onemodel.crnn-v0"


class ContainerError(ValueError):
    """A crnn-v0 file that is missing, truncated, mistyped or mis-shaped."""


def _safetensors():
    try:
        import safetensors.numpy  # noqa: F401
        from safetensors import safe_open
    except ImportError as e:  # pragma: no cover - a declared dependency
        raise ImportError("onemodel.recognizer needs the 'safetensors' package (pip install safetensors)") from e
    return safe_open


def atomic_write(path: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `path` so that a crash leaves either the old file or
    the new one: a temporary file in the same folder, fsync, rename."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".safetensors", dir=folder)
    try:
        # mkstemp makes the file 0600; give it the mode a plain open() would.
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if hasattr(os, "O_DIRECTORY"):
        try:
            dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return
        try:
            os.fsync(dfd)
        except OSError:
            pass
        finally:
            os.close(dfd)


def canonical_header(data: bytes) -> bytes:
    """The same safetensors file with its JSON header in a fixed order.

    The safetensors writer emits the metadata map in hash-map order, which
    changes from process to process, so two saves of identical contents could
    differ in their bytes. Tensor entries carry explicit offsets into the data
    section, so sorting the metadata and the entries (and re-padding the header
    to 8 bytes, as the format requires) leaves the data untouched and makes the
    file a pure function of its contents."""
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + n])
    out = {}
    meta = header.pop("__metadata__", None)
    if meta is not None:
        out["__metadata__"] = dict(sorted(meta.items()))
    for key in sorted(header):
        out[key] = header[key]
    text = json.dumps(out, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + data[8 + n :]


def save(path, tensors: dict, metadata: dict) -> None:
    import safetensors.numpy

    _safetensors()
    data = safetensors.numpy.save({k: np.ascontiguousarray(v) for k, v in tensors.items()}, metadata=metadata)
    atomic_write(path, canonical_header(data))


def read(path) -> tuple[dict, dict, dict]:
    """(metadata, tensors as numpy arrays, dtype name per tensor)."""
    safe_open = _safetensors()
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such crnn-v0 file")
    try:
        with safe_open(path, framework="numpy") as f:
            meta = dict(f.metadata() or {})
            tensors = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as e:  # safetensors raises its own error types
        raise ContainerError(f"{path}: not a readable safetensors file (truncated or corrupt?): {e}") from e
    dtypes = {k: {np.dtype(np.float16): "F16", np.dtype(np.float32): "F32"}.get(v.dtype, str(v.dtype)) for k, v in tensors.items()}
    if meta.get("format") != FORMAT:
        raise ContainerError(f"{path}: metadata format is {meta.get('format')!r}, expected {FORMAT!r}")
    for key in ("config", "charset"):
        if key not in meta:
            raise ContainerError(f"{path}: metadata has no {key!r} entry")
    return meta, tensors, dtypes


def parse_config(path, meta: dict) -> tuple[dict, list]:
    try:
        cfg = json.loads(meta["config"])
        charset = json.loads(meta["charset"])
    except json.JSONDecodeError as e:
        raise ContainerError(f"{path}: metadata config/charset is not valid JSON: {e}") from e
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
