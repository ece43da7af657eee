"""Writing files that survive a crash, with bytes that depend only on their
contents. Shared by onemodel.save and the crnn-v0 container."""

from __future__ import annotations

import json
import os


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # e.g. Windows: directories cannot be opened
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path, data: bytes) -> None:
    """Write `data` to `path` so that a crash leaves either the old file or
    the new one: a fresh temporary file beside it (O_EXCL), fsync, os.replace,
    then fsync of the folder."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    tmp = None
    for attempt in range(100):
        candidate = os.path.join(directory, f".{base}.{os.getpid()}.{attempt}.tmp")
        try:
            # 0o666 less the umask, like an ordinary open(); O_EXCL: never
            # write into someone else's temporary file.
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        except FileExistsError:
            continue
        tmp = candidate
        break
    if tmp is None:
        raise OSError(f"save: could not create a temporary file next to {path}")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(directory)


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


# -- reading ------------------------------------------------------------------------

#: safetensors dtype names and the NumPy dtypes they read as (little-endian).
_DTYPES = {
    "F16": "<f2", "F32": "<f4", "F64": "<f8",
    "I8": "i1", "I16": "<i2", "I32": "<i4", "I64": "<i8",
    "U8": "u1", "U16": "<u2", "U32": "<u4", "U64": "<u8",
    "BOOL": "?",
}
#: The safetensors format's own bound on the JSON header.
MAX_HEADER_BYTES = 100_000_000


def read_bytes(f) -> tuple:
    """(bytes, name for messages) of a path or a binary file object."""
    if hasattr(f, "read"):
        data = f.read()
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"load: the file object returned {type(data).__name__}, not bytes (open it in 'rb' mode)")
        return bytes(data), str(getattr(f, "name", "<file object>"))
    path = os.fspath(f)
    with open(path, "rb") as fh:
        return fh.read(), path


def parse_safetensors(data: bytes, name: str) -> tuple:
    """(metadata dict of str, {tensor name: (safetensors dtype, NumPy
    array)}) of a safetensors file's bytes, every entry checked first: the
    header length, UTF-8 and JSON of the header, each entry's dtype, shape
    and offsets (inside the data, matching the shape's byte size, in order
    without overlap or holes, as the format requires). Anything else is a
    :class:`~onemodel.errors.ContainerError` naming ``name`` and the fault;
    no array is made before every entry has passed."""
    import numpy as np

    from .errors import ContainerError

    def bad(what: str):
        return ContainerError(f"{name}: {what}")

    if len(data) < 8:
        raise bad(f"not a safetensors file: {len(data)} bytes, shorter than the 8-byte header length")
    n = int.from_bytes(data[:8], "little")
    if n > MAX_HEADER_BYTES:
        raise bad(f"not a safetensors file: its header length field says {n} bytes (the format allows {MAX_HEADER_BYTES})")
    if n > len(data) - 8:
        raise bad(f"truncated: the header needs {n} bytes but only {len(data) - 8} follow the length field")
    try:
        text = data[8 : 8 + n].decode("utf-8")
    except UnicodeDecodeError as e:
        raise bad(f"the header is not UTF-8 ({e})") from None
    try:
        header = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        raise bad(f"the header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise bad(f"the header is a JSON {type(header).__name__}, not an object")
    meta = header.pop("__metadata__", None)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        raise bad("the __metadata__ entry must map strings to strings")
    body = len(data) - 8 - n
    entries = []
    for key, e in header.items():
        if not isinstance(e, dict) or set(e) != {"dtype", "shape", "data_offsets"}:
            raise bad(f"tensor {key!r}: the entry must hold exactly dtype, shape and data_offsets, got {e!r:.200}")
        dt, shape, offs = e["dtype"], e["shape"], e["data_offsets"]
        if dt not in _DTYPES:
            raise bad(f"tensor {key!r}: dtype {dt!r:.40} is not one onemodel reads ({', '.join(_DTYPES)})")
        if not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape):
            raise bad(f"tensor {key!r}: the shape must be a list of non-negative ints, got {shape!r:.200}")
        if not (isinstance(offs, list) and len(offs) == 2 and all(type(o) is int for o in offs)):
            raise bad(f"tensor {key!r}: data_offsets must be two ints, got {offs!r:.200}")
        begin, end = offs
        if not 0 <= begin <= end:
            raise bad(f"tensor {key!r}: data_offsets {offs} are not 0 <= begin <= end")
        if end > body:
            raise bad(f"tensor {key!r}: data_offsets {offs} reach past the {body} data bytes (truncated file?)")
        size = np.dtype(_DTYPES[dt]).itemsize
        for s in shape:
            size *= s  # Python ints: no wrap; compared with the real span below
        if size != end - begin:
            raise bad(f"tensor {key!r}: shape {shape} of {dt} needs {size} bytes but data_offsets {offs} span {end - begin}")
        entries.append((begin, end, key, dt, tuple(shape)))
    entries.sort()
    at = 0
    for begin, end, key, _, _ in entries:
        if begin < at:
            raise bad(f"tensor {key!r}: data_offsets [{begin}, {end}] overlap the previous tensor's bytes (which end at {at})")
        if begin > at:
            raise bad(f"tensor {key!r}: a hole of {begin - at} bytes precedes its data at {begin}")
        at = end
    if at != body:
        raise bad(f"{body - at} data bytes after the last tensor belong to none (the format allows no holes)")
    base = 8 + n
    arrays = {}
    for begin, end, key, dt, shape in entries:
        stored = np.dtype("u1" if dt == "BOOL" else _DTYPES[dt])
        try:
            a = np.frombuffer(data, dtype=stored, count=(end - begin) // stored.itemsize, offset=base + begin)
            a = a.astype(stored.newbyteorder("="), copy=True).reshape(shape)
        except ValueError as e:  # a shape NumPy cannot represent (e.g. more than 64 dims)
            raise bad(f"tensor {key!r}: shape {list(shape)} cannot be read ({e})") from None
        if dt == "BOOL":
            if a.size and a.max() > 1:
                raise bad(f"tensor {key!r}: a BOOL tensor holds bytes other than 0 and 1")
            a = a.view(np.bool_)
        arrays[key] = (dt, a)
    return meta, arrays
