"""Tensor creation: from Python data or NumPy, constant fills, ranges and
seeded random draws.

Random numbers come from ``onemodel.Generator``, a counter-based stream
whose values depend only on the seed and the position (never on threads or
platform): SplitMix64 draws, uniform floats from the top bits, normals by
Marsaglia's polar method in double precision with the fixed DetMath log.
The values differ from torch's generator (same seed, different numbers).
"""

from __future__ import annotations

import numpy as np

from . import _core, _shape
from ._device import as_device
from .tensor import Tensor, as_dtype, float32, int64


class Generator:
    """A seeded random stream (``torch.Generator`` look-alike)."""

    def __init__(self, device="cpu", seed: int = 0):
        as_device(device, "Generator")
        self._g = _core.Generator(int(seed))

    def manual_seed(self, seed: int) -> "Generator":
        self._g.manual_seed(int(seed) & 0xFFFF_FFFF_FFFF_FFFF)
        return self

    def initial_seed(self) -> int:
        return self._g.initial_seed()

    def get_state(self) -> tuple:
        return self._g.get_state()

    def set_state(self, state) -> "Generator":
        self._g.set_state(tuple(int(s) for s in state))
        return self


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Reseed the default generator."""
    return default_generator.manual_seed(seed)


def _size(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    try:
        shape = tuple(int(s) for s in size)
    except (TypeError, ValueError):
        raise TypeError(f"expected a shape of ints, got {size!r}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    return shape


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "empty")
    return _finish(Tensor._empty(_size(size), as_dtype(dtype) or float32), requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "zeros")
    return _finish(Tensor._empty(_size(size), as_dtype(dtype) or float32, zeroed=True), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "full")
    dt = as_dtype(dtype)
    if dt is None:
        dt = int64 if isinstance(fill_value, (int, np.integer)) and not isinstance(fill_value, bool) else float32
    t = Tensor._empty(_size((size,)) if not isinstance(size, int) else (size,), dt)
    _core.fill_(t, fill_value)
    return _finish(t, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "ones")
    dt = as_dtype(dtype) or float32
    t = Tensor._empty(_size(size), dt)
    _core.fill_(t, 1 if dt is int64 else 1.0)
    return _finish(t, requires_grad)


def _like(t: Tensor, fn, dtype, requires_grad, *args):
    return fn(t.shape, *args, dtype=dtype or t.dtype, requires_grad=requires_grad)


def zeros_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "zeros_like")
    return _like(input, zeros, dtype, requires_grad)


def ones_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "ones_like")
    return _like(input, ones, dtype, requires_grad)


def empty_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "empty_like")
    return _like(input, empty, dtype, requires_grad)


def full_like(input: Tensor, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "full_like")
    return full(input.shape, fill_value, dtype=dtype or input.dtype, requires_grad=requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing the memory of a float32 or int64 NumPy array (no copy).
    Writes through either are visible to both; a read-only array gives a
    tensor that refuses in-place writes."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    storage, shape, strides = _core.Storage.from_numpy(array)
    dt = float32 if array.dtype == np.float32 else int64
    return Tensor._make(storage, shape, strides, 0, dt)


def _to_numpy(data, dt) -> np.ndarray:
    if isinstance(data, Tensor):
        return np.array(data.numpy(force=True), copy=True).astype((dt or data.dtype).numpy, copy=False), (dt or data.dtype)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        data = [np.asarray(x.numpy(force=True)) if isinstance(x, Tensor) else x for x in data]
    arr = np.asarray(data)
    if dt is None:
        if arr.dtype == np.bool_:
            raise TypeError("tensor: boolean data is not supported (onemodel tensors are float32 or int64); pass dtype=onemodel.float32")
        if np.issubdtype(arr.dtype, np.integer):
            dt = int64
        elif np.issubdtype(arr.dtype, np.floating):
            dt = float32
        else:
            raise TypeError(f"tensor: cannot make a tensor from data of dtype {arr.dtype}")
    return arr.astype(dt.numpy, copy=False), dt


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of `data` (nested lists, numbers, NumPy arrays)."""
    as_device(device, "tensor")
    arr, dt = _to_numpy(data, as_dtype(dtype))
    t = Tensor._empty(arr.shape, dt)
    if arr.size:
        t.numpy(force=True)[...] = arr
    return _finish(t, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    as_device(device, "as_tensor")
    if isinstance(data, Tensor) and (dtype is None or as_dtype(dtype) is data.dtype):
        return data
    return tensor(data, dtype=dtype)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "arange")
    if end is None:
        start, end = 0, start
    ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    dt = as_dtype(dtype) or (int64 if ints else float32)
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    if ints:
        arr = np.arange(start, end, step, dtype=np.int64)
    else:
        # As torch: count = ceil((end - start) / step), values start + i*step in double.
        count = max(0, int(np.ceil((end - start) / step)))
        arr = start + np.arange(count, dtype=np.float64) * step
    return tensor(arr, dtype=dt, requires_grad=requires_grad)


def randn(*size, generator: Generator | None = None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "randn")
    t = Tensor._empty(_size(size), as_dtype(dtype) or float32)
    (generator or default_generator)._g.normal_(t, 0.0, 1.0)
    return _finish(t, requires_grad)


def rand(*size, generator: Generator | None = None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "rand")
    t = Tensor._empty(_size(size), as_dtype(dtype) or float32)
    (generator or default_generator)._g.uniform_(t, 0.0, 1.0)
    return _finish(t, requires_grad)


def randn_like(input: Tensor, *, generator: Generator | None = None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "randn_like")
    return randn(input.shape, generator=generator, requires_grad=requires_grad)


def rand_like(input: Tensor, *, generator: Generator | None = None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "rand_like")
    return rand(input.shape, generator=generator, requires_grad=requires_grad)


def randint(low, high=None, size=(), *, generator: Generator | None = None, dtype=None, device=None) -> Tensor:
    as_device(device, "randint")
    if isinstance(high, (tuple, list)) and size == ():
        # torch.randint(high, size): the two-argument form.
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if high <= low:
        raise ValueError(f"randint: empty range [{low}, {high})")
    g = (generator or default_generator)._g
    shape = _size((size,)) if not isinstance(size, int) else (size,)
    vals = np.array([g.randint(int(low), int(high)) for _ in range(_shape.numel(shape))], dtype=np.int64).reshape(shape)
    return tensor(vals, dtype=as_dtype(dtype) or int64)


def randperm(n: int, *, generator: Generator | None = None, device=None) -> Tensor:
    """A seeded permutation of 0..n-1 (Fisher–Yates on the counter stream)."""
    as_device(device, "randperm")
    g = (generator or default_generator)._g
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = g.randint(0, i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return tensor(np.array(perm, dtype=np.int64))


def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "eye")
    return tensor(np.eye(n, m if m is not None else n), dtype=as_dtype(dtype) or float32, requires_grad=requires_grad)
