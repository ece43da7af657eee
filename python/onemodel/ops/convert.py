"""Copies and dtype conversions: ``clone`` and ``Tensor.to``'s forms."""

from __future__ import annotations

from .._kernels import clone_contiguous
from ..tensor import Tensor
from . import views


def clone(input: Tensor) -> Tensor:
    """A differentiable copy (gradient passes through unchanged)."""
    return views.Contiguous.apply(input) if input.dtype.is_floating_point else clone_contiguous(input)


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
    elif args and is_device_like(args[0]) and not (isinstance(args[0], str) and args[0] in ("float32", "int64")):
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
    """A copy of `t` with dtype `dt` (no autograd)."""
    from ..creation import tensor as make_tensor

    return make_tensor(t.numpy(force=True), dtype=dt)


def to(self: Tensor, *args, **kwargs) -> Tensor:
    dt, copy = parse_to_args("to", self, args, kwargs)
    if (dt is None or dt is self.dtype) and not copy:
        return self
    return convert(self, dt or self.dtype)
