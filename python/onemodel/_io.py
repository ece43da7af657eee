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
