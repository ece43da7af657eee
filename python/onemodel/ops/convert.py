"""Copies and dtype conversions: ``clone`` and ``Tensor.to``'s forms."""

from __future__ import annotations

import numpy as np

from .. import _shape
from .._kernels import clone_contiguous
from ..tensor import Tensor
from . import views


def clone(input: Tensor) -> Tensor:
    """A differentiable copy (gradient passes through unchanged)."""
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("clone", input)
    return views.Contiguous.apply(input) if input.dtype.is_floating_point else clone_contiguous(input)


def _is_dtype_name(name: str) -> bool:
    from ..tensor import _DTYPES, _UNSUPPORTED

    return name in _DTYPES or name in _UNSUPPORTED


def parse_to_args(op: str, t, args, kwargs):
    """The dtype and copy flag of a ``Tensor.to``/``Module.to`` call, after
    checking its device; ``t`` is None for a module (no ``to(other)`` there)."""
    from .._device import as_device, is_device_like
    from ..tensor import as_dtype

    kwargs = dict(kwargs)
    unknown = set(kwargs) - {"device", "dtype", "non_blocking", "copy", "memory_format"}
    if unknown:
        raise TypeError(f"{op}() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    args = list(args)
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = bool(kwargs.pop("copy", False))
    if args and isinstance(args[0], Tensor):
        if t is None:
            raise TypeError(f"{op}: a module cannot be converted to a tensor's type; pass a device or a dtype")
        other = args.pop(0)
        device, dtype = other.device, other.dtype
    elif args and is_device_like(args[0]) and not (isinstance(args[0], str) and _is_dtype_name(args[0])):
        device = args.pop(0)
    if args and dtype is None and not isinstance(args[0], bool):
        dtype = args.pop(0)
    # What is left is torch's positional (non_blocking, copy).
    if len(args) > 2:
        raise TypeError(f"{op}() takes at most 4 positional arguments")
    if len(args) == 2:
        copy = bool(args[1])
    as_device(device, op)
    return as_dtype(dtype, op), copy


def convert(t: Tensor, dt) -> Tensor:
    """A copy of `t` with dtype `dt` (no autograd): float → int64 truncates
    toward zero, anything → bool is "nonzero" (NaN is True), bool → numbers
    is 0/1; values a float cannot hold as int64 (NaN, ±inf, |x| ≥ 2^63)
    give int64's minimum, as torch on x86."""
    out = Tensor._empty(t.shape, dt)
    src, dst = t.numpy(force=True), out.numpy(force=True)
    with np.errstate(invalid="ignore", over="ignore"):
        np.copyto(dst, src, casting="unsafe")
        if dt.name == "int64" and src.dtype == np.float32:
            # The C cast leaves these to the machine (x86 gives the minimum,
            # Arm saturates); onemodel fixes the x86 value everywhere.
            bad = ~(np.abs(src) < np.float32(2.0**63))
            if bad.any():
                dst[bad] = np.iinfo(np.int64).min
    return out


def to(self: Tensor, *args, **kwargs) -> Tensor:
    dt, copy = parse_to_args("to", self, args, kwargs)
    if (dt is None or dt is self.dtype) and not copy:
        return self
    return convert(self, dt or self.dtype)


# torch's legacy type strings.
_TYPE_STRINGS = {"float32": "torch.FloatTensor", "int64": "torch.LongTensor", "bool": "torch.BoolTensor"}
_STRING_TYPES = {v: k for k, v in _TYPE_STRINGS.items()}
_STRING_TYPES.update({"torch.DoubleTensor": "float64", "torch.HalfTensor": "float16", "torch.IntTensor": "int32"})


def type_(self: Tensor, dtype=None):
    """``Tensor.type``: the type string, or a conversion."""
    if dtype is None:
        return _TYPE_STRINGS[self.dtype.name]
    if isinstance(dtype, str) and dtype in _STRING_TYPES:
        dtype = _STRING_TYPES[dtype]
    return to(self, dtype)
