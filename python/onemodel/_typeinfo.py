"""Type and layout names programs use beside tensors: ``finfo``/``iinfo``
(the limits of a dtype, from NumPy's exact tables) and the memory formats (accepted, no effect: onemodel's
tensors are strided views whose kernels take any layout)."""

from __future__ import annotations

import numpy as np


class finfo:
    """Limits of a floating dtype (default float32): bits, eps, max, min,
    tiny (= smallest_normal), resolution, dtype."""

    def __init__(self, type=None) -> None:
        from .tensor import _DTYPES, _UNSUPPORTED, float32

        dt = float32 if type is None else type
        name = getattr(dt, "name", str(dt))
        if name not in _DTYPES and name not in _UNSUPPORTED:
            raise TypeError(f"finfo: unknown dtype {dt!r}")
        if name == "bfloat16":
            self.bits, self.eps, self.max, self.tiny, self.resolution = 16, 0.0078125, 3.3895313892515355e38, 1.1754943508222875e-38, 0.01
        else:
            if np.dtype(name).kind != "f":
                raise TypeError(f"finfo: {name} is not a floating point dtype")
            info = np.finfo(np.dtype(name))
            self.bits, self.eps, self.max = int(info.bits), float(info.eps), float(info.max)
            self.tiny, self.resolution = float(info.tiny), 10.0 ** -int(info.precision)
        self.min = -self.max
        self.smallest_normal = self.tiny
        self.dtype = name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype: bits, max, min, dtype."""

    def __init__(self, type) -> None:
        name = getattr(type, "name", str(type))
        try:
            info = np.iinfo(np.dtype(name))
        except (TypeError, ValueError):
            raise TypeError(f"iinfo: {name} is not an integer dtype") from None
        self.bits, self.max, self.min, self.dtype = int(info.bits), int(info.max), int(info.min), name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


class memory_format:
    """A memory-layout request (accepted, no effect)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"onemodel.{self.name}"


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

__all__ = ["finfo", "iinfo", "memory_format", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]
