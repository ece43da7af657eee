"""Tensor creation: from Python data or NumPy, constant fills, ranges and
seeded random draws.

Random numbers come from ``onemodel.Generator``, a counter-based stream
whose values depend only on the seed and the position (never on threads or
platform): SplitMix64 draws, uniform floats from the top bits, normals by
Marsaglia's polar method in double precision with the fixed DetMath log.
The values differ from torch's generator (same seed, different numbers).
"""

from __future__ import annotations

import numbers

import numpy as np

from . import _core, _shape
from ._device import as_device
from .tensor import Tensor, as_dtype, bool_, float32, int64


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


def _size(op: str, size, dt=None) -> tuple:
    """The shape of ``size`` (ints, or one tuple/list/Size of ints), checked:
    ints only, none negative, and no more bytes of ``dt`` than a tensor can
    hold (``ValueError`` naming ``op``; the memory itself is asked for next,
    and a refusal is ``MemoryError``)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    if any(isinstance(s, (float, np.floating)) for s in size):
        raise TypeError(f"{op}: expected a shape of ints, got {size!r}")
    try:
        shape = tuple(int(s) for s in size)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: expected a shape of ints, got {size!r}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"{op}: negative dimension in shape {shape}")
    _shape.checked_numel(op, shape, dt.itemsize if dt is not None else 1)
    return shape


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "empty")
    dt = as_dtype(dtype) or float32
    return _finish(Tensor._empty(_size("empty", size, dt), dt), requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "zeros")
    dt = as_dtype(dtype) or float32
    return _finish(Tensor._empty(_size("zeros", size, dt), dt, zeroed=True), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "full")
    dt = as_dtype(dtype)
    if dt is None:
        # torch's inference: a bool fill gives bool, an int int64, a float float32.
        if isinstance(fill_value, (bool, np.bool_)):
            dt = bool_
        elif isinstance(fill_value, (int, np.integer)):
            dt = int64
        else:
            dt = float32
    if dt is int64 and isinstance(fill_value, numbers.Integral) and not -(2**63) <= int(fill_value) < 2**63:
        raise ValueError(f"full: the value {fill_value} cannot be converted to int64 without overflow")
    t = Tensor._empty(_size("full", (size,), dt), dt)
    _core.fill_(t, fill_value)
    return _finish(t, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "ones")
    dt = as_dtype(dtype) or float32
    t = Tensor._empty(_size("ones", size, dt), dt)
    _core.fill_(t, 1.0 if dt is float32 else 1)
    return _finish(t, requires_grad)


def _like(t: Tensor, fn, dtype, requires_grad, *args):
    if not isinstance(t, Tensor):
        raise _shape.not_a_tensor(f"{fn.__name__}_like", t)
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
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("full_like", input)
    return full(input.shape, fill_value, dtype=dtype or input.dtype, requires_grad=requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing the memory of a float32, int64 or bool NumPy array (no copy).
    Writes through either are visible to both; a read-only array gives a
    tensor that refuses in-place writes."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    if array.dtype.name not in ("float32", "int64", "bool"):
        # torch would share a float64/uint8/int32/... array; onemodel does not hold those
        # dtypes, so (as torch.tensor does here) it copies into float32 or int64, the dtype
        # the usual `.float()` / `.long()` that follows asks for (docs/porting.md).
        kind = array.dtype.kind
        if kind == "f":
            array = array.astype(np.float32)
        elif kind in "iu":
            array = array.astype(np.int64)
        else:
            raise TypeError(f"from_numpy: cannot make a tensor from a {array.dtype} array (onemodel holds float32, int64 and bool)")
    storage, shape, strides = _core.Storage.from_numpy(array)
    dt = {"float32": float32, "int64": int64, "bool": bool_}[array.dtype.name]
    return Tensor._make(storage, shape, strides, 0, dt)


def _to_numpy(data, dt) -> np.ndarray:
    if isinstance(data, Tensor):
        return np.array(data.numpy(force=True), copy=True).astype((dt or data.dtype).numpy, copy=False), (dt or data.dtype)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        data = [np.asarray(x.numpy(force=True)) if isinstance(x, Tensor) else x for x in data]
    arr = np.asarray(data)
    if dt is None:
        if arr.dtype == np.bool_:
            dt = bool_
        elif np.issubdtype(arr.dtype, np.integer):
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
    dt = as_dtype(dtype) or float32
    t = Tensor._empty(_size("randn", size, dt), dt)
    (generator or default_generator)._g.normal_(t, 0.0, 1.0)
    return _finish(t, requires_grad)


def rand(*size, generator: Generator | None = None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "rand")
    dt = as_dtype(dtype) or float32
    t = Tensor._empty(_size("rand", size, dt), dt)
    (generator or default_generator)._g.uniform_(t, 0.0, 1.0)
    return _finish(t, requires_grad)


def randn_like(input: Tensor, *, generator: Generator | None = None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "randn_like")
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("randn_like", input)
    return randn(input.shape, generator=generator, requires_grad=requires_grad)


def rand_like(input: Tensor, *, generator: Generator | None = None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "rand_like")
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("rand_like", input)
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
    if low < -(2**63) or high > 2**63 - 1:
        raise ValueError(f"randint: the range [{low}, {high}) must lie within int64 [-2**63, 2**63 - 1)")
    g = (generator or default_generator)._g
    shape = _size("randint", (size,), int64)
    # The tensor first: a size the machine cannot hold is refused before any draw.
    out = Tensor._empty(shape, int64)
    n = _shape.numel(shape)
    out.numpy(force=True).reshape(-1)[:] = np.fromiter((g.randint(int(low), int(high)) for _ in range(n)), np.int64, n)
    dt = as_dtype(dtype) or int64
    return out if dt is int64 else tensor(out.numpy(force=True), dtype=dt)


def randperm(n: int, *, generator: Generator | None = None, device=None) -> Tensor:
    """A seeded permutation of 0..n-1 (Fisher–Yates on the counter stream)."""
    as_device(device, "randperm")
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"randperm: n must be an int, got {type(n).__name__}")
    # The tensor first: a size the machine cannot hold is refused by name
    # before the Python list of n entries is built.
    out = Tensor._empty(_size("randperm", (int(n),), int64), int64)
    g = (generator or default_generator)._g
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = g.randint(0, i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    if n:
        out.numpy(force=True)[...] = np.array(perm, dtype=np.int64)
    return out


def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    as_device(device, "eye")
    return tensor(np.eye(n, m if m is not None else n), dtype=as_dtype(dtype) or float32, requires_grad=requires_grad)


def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end``, as torch
    computes them in float32: ``step = (end − start)/(steps − 1)``, the
    first half ``start + step·i``, the second ``end − step·(steps − 1 − i)``
    (so both ends are exact)."""
    as_device(device, "linspace")
    steps = int(steps)
    if steps < 0:
        raise ValueError(f"linspace: steps must be non-negative, got {steps}")
    dt = as_dtype(dtype) or float32
    s, e = np.float32(float(start)), np.float32(float(end))
    i = np.arange(steps)
    from ._numpy_exact import ieee

    if steps == 1:
        vals = np.array([s], np.float32)
    else:
        with ieee():
            step = (e - s) / np.float32(steps - 1)
            lo = s + step * i.astype(np.float32)
            hi = e - step * (steps - 1 - i).astype(np.float32)
        vals = np.where(i < steps // 2, lo, hi).astype(np.float32)
    if dt is not float32:
        vals = np.trunc(vals.astype(np.float64)) if dt is int64 else vals
    return tensor(vals, dtype=dt, requires_grad=requires_grad)


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``base ** linspace(start, end, steps)``, computed as
    ``exp(y·log(base))`` with onemodel's float32 exp and log (the fixed
    polynomials in exact mode): within a few ulps of torch's ``powf``."""
    from .ops.pointwise import exp, log

    as_device(device, "logspace")
    y = linspace(start, end, steps)
    logb = log(tensor(float(base)))
    out = exp(y * logb).detach()
    dt = as_dtype(dtype) or float32
    if dt is not float32:
        out = out.to(dt)
    return _finish(out, requires_grad)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator: Generator | None = None) -> Tensor:
    from .ops.random import multinomial as _multinomial

    return _multinomial(input, num_samples, replacement, generator=generator)


def bernoulli(input: Tensor, p=None, *, generator: Generator | None = None) -> Tensor:
    from .ops.random import bernoulli as _bernoulli

    return _bernoulli(input, p, generator=generator)


def normal(mean, std, size=None, *, generator: Generator | None = None) -> Tensor:
    """torch.normal: N(mean, std²) draws; numbers need ``size``; tensors
    broadcast (one draw per output element, row-major)."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        from . import _shape as shp

        m = mean.detach() if isinstance(mean, Tensor) else tensor(float(mean))
        s = std.detach() if isinstance(std, Tensor) else tensor(float(std))
        shape = shp.broadcast_shapes("normal", m.shape, s.shape)
        z = randn(shape, generator=generator)
        return z * s + m
    if size is None:
        raise TypeError("normal: give a size when mean and std are numbers")
    t = Tensor._empty(_size("normal", (size,), float32), float32)
    (generator or default_generator)._g.normal_(t, float(mean), float(std))
    return t


def numel(input: Tensor) -> int:
    return input.numel()
