"""``onemodel.save`` / ``onemodel.load``: state dicts (of models, optimizers,
schedulers, or dicts and lists of them) in one safetensors file.

Every tensor is stored as a safetensors tensor (float32 → F32, int64 → I64,
NumPy arrays in their own dtype), named by its path in the object
(``fc.weight`` for a model's state dict, ``optimizer/state/0/exp_avg`` when
nested). Everything else — the nesting, dict keys of any JSON scalar type
(the optimizer's integer parameter ids), tuples, floats (bit-exact,
non-finite ones included), ints, strings, booleans, None — is kept as JSON
in the safetensors metadata entry ``onemodel.structure``, with
``format = onemodel.state``. Loading a file without that entry (a plain
safetensors file) returns a dict of its tensors.

Writes are atomic: the bytes go to a temporary file in the target's
directory, which is flushed and fsync'ed and then renamed over the target
(``os.replace``), and the directory is fsync'ed; a crash leaves either the
old file or the new one, never a torn one.
"""

from __future__ import annotations

from ._io import atomic_write, canonical_header, parse_safetensors, read_bytes

import json
import math
import os
from collections import OrderedDict

import numpy as np

from . import scope
from .errors import ContainerError
from .tensor import Tensor

__all__ = ["save", "load"]

FORMAT = "onemodel.state"
_VERSION = "1"
_STRUCTURE = "onemodel.structure"


def _c_order(a) -> np.ndarray:
    """A C-contiguous array of the same shape (np.ascontiguousarray would
    turn a 0-d array into a 1-d one)."""
    return np.array(a, order="C", copy=True)


def _tensor_key(path: tuple, used: dict) -> str:
    base = "/".join(str(p) for p in path) or "tensor"
    key, n = base, 1
    while key in used:
        key = f"{base}#{n}"
        n += 1
    return key


def _encode(obj, path: tuple, arrays: dict, seen: dict):
    if isinstance(obj, Tensor):
        key = seen.get(id(obj))
        if key is None:
            key = _tensor_key(path, arrays)
            seen[id(obj)] = key
            arrays[key] = _c_order(obj.detach().numpy(force=True))
        return {"__tensor__": key}
    if isinstance(obj, np.ndarray):
        key = seen.get(id(obj))
        if key is None:
            key = _tensor_key(path, arrays)
            seen[id(obj)] = key
            arrays[key] = _c_order(obj)
        return {"__ndarray__": key}
    if isinstance(obj, np.generic):
        obj = obj.item()
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        return {"__float__": repr(obj)}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if isinstance(k, np.generic):
                k = k.item()
            if not (k is None or isinstance(k, (str, int, float, bool))):
                raise TypeError(f"save: dict key {k!r} at {'/'.join(map(str, path)) or '<root>'} is not a str, int, float, bool or None")
            if isinstance(k, float) and not math.isfinite(k):
                raise TypeError(f"save: non-finite dict key {k!r} at {'/'.join(map(str, path)) or '<root>'}")
            items.append([k, _encode(v, path + (k,), arrays, seen)])
        return {"__odict__" if isinstance(obj, OrderedDict) else "__dict__": items}
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v, path + (i,), arrays, seen) for i, v in enumerate(obj)]}
    if isinstance(obj, list):
        return [_encode(v, path + (i,), arrays, seen) for i, v in enumerate(obj)]
    where = "/".join(map(str, path)) or "<root>"
    raise TypeError(
        f"save: cannot store a {type(obj).__name__} at {where}; onemodel.save stores tensors, NumPy arrays, "
        "dicts, lists, tuples, numbers, strings, booleans and None (state dicts)"
    )


def _decode(node, tensors: dict):
    if isinstance(node, list):
        return [_decode(v, tensors) for v in node]
    if not isinstance(node, dict):
        return node
    if "__tensor__" in node:
        return tensors[node["__tensor__"]]
    if "__ndarray__" in node:
        return tensors[node["__ndarray__"]]
    if "__float__" in node:
        return float(node["__float__"])
    if "__tuple__" in node:
        return tuple(_decode(v, tensors) for v in node["__tuple__"])
    if "__odict__" in node:
        return OrderedDict((k, _decode(v, tensors)) for k, v in node["__odict__"])
    if "__dict__" in node:
        return {k: _decode(v, tensors) for k, v in node["__dict__"]}
    raise ValueError(f"load: unknown entry {sorted(node)} in the file's structure")


def save(obj, f) -> None:
    """Save a state dict (or a dict/list of them) to ``f``, a path (written
    atomically) or a binary file object."""
    from safetensors.numpy import save as st_save

    arrays: dict = {}
    structure = _encode(obj, (), arrays, {})
    metadata = {"format": FORMAT, "version": _VERSION, _STRUCTURE: json.dumps(structure, allow_nan=False)}
    data = st_save(arrays, metadata=metadata)
    if hasattr(f, "write"):
        f.write(canonical_header(data))
        return
    atomic_write(f, canonical_header(data))


def load(f, map_location=None, weights_only: bool = True):
    """Load what :func:`save` wrote (tensors come back as onemodel tensors,
    NumPy arrays as arrays). ``map_location`` and ``weights_only`` are
    accepted for torch compatibility and ignored (everything is CPU, and
    nothing but data is ever loaded). A file that is not what ``save``
    writes (truncated, corrupted, a structure naming missing tensors) raises
    :class:`~onemodel.errors.ContainerError` (a ``ValueError``) naming the
    file and the fault."""
    from .creation import tensor as make_tensor

    data, name = read_bytes(f)
    metadata, entries = parse_safetensors(data, name)
    arrays = {k: a for k, (_, a) in entries.items()}
    structure = metadata.get(_STRUCTURE)
    if metadata.get("format") != FORMAT or structure is None:
        # A plain safetensors file: its tensors by name.
        with scope.suspend():
            return OrderedDict((k, make_tensor(v) if v.dtype in (np.float32, np.int64) else v) for k, v in arrays.items())
    try:
        node = json.loads(structure)
    except (json.JSONDecodeError, RecursionError) as e:
        raise ContainerError(f"{name}: the {_STRUCTURE} metadata is not valid JSON ({e})") from None
    tensor_keys = _check_structure(node, arrays, name)
    values = {}
    with scope.suspend():
        for k, v in arrays.items():
            values[k] = make_tensor(v) if k in tensor_keys else v
    return _decode(node, values)


def _check_structure(node, arrays: dict, name: str) -> set:
    """The keys of the stored entries that are onemodel tensors, after
    checking that ``node`` is a structure ``_encode`` could have written
    (every marker well-formed, every tensor it names present): ``_decode``
    then cannot fail halfway."""
    tensor_keys: set = set()
    stack = [(node, "<root>")]
    while stack:
        n, where = stack.pop()
        if isinstance(n, list):
            stack.extend((v, f"{where}/{i}") for i, v in enumerate(n))
            continue
        if n is None or isinstance(n, (bool, int, float, str)):
            continue
        if not isinstance(n, dict) or len(n) != 1:
            raise ContainerError(f"{name}: the structure holds {n!r:.100} at {where}, which save never writes")
        (marker, v), = n.items()
        if marker in ("__tensor__", "__ndarray__"):
            if not isinstance(v, str) or v not in arrays:
                raise ContainerError(f"{name}: the structure names tensor {v!r:.100} at {where}, which the file does not hold")
            if marker == "__tensor__":
                if arrays[v].dtype not in (np.float32, np.int64, np.bool_):
                    raise ContainerError(f"{name}: tensor {v!r} at {where} is {arrays[v].dtype}, not a onemodel dtype")
                tensor_keys.add(v)
        elif marker == "__float__":
            try:
                float(v)
            except (TypeError, ValueError):
                raise ContainerError(f"{name}: the float {v!r:.100} at {where} is not a number") from None
        elif marker == "__tuple__" and isinstance(v, list):
            stack.extend((x, f"{where}/{i}") for i, x in enumerate(v))
        elif marker in ("__dict__", "__odict__") and isinstance(v, list):
            for item in v:
                if not (isinstance(item, list) and len(item) == 2) or isinstance(item[0], (list, dict)):
                    raise ContainerError(f"{name}: a dict item {item!r:.100} at {where} is not a [key, value] pair")
                stack.append((item[1], f"{where}/{item[0]}"))
        else:
            raise ContainerError(f"{name}: unknown entry {marker!r:.60} at {where} in the file's structure")
    return tensor_keys
