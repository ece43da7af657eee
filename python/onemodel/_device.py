"""Devices, honestly: onemodel computes on the CPU only.

``onemodel.device("cpu")`` exists so that torch programs that name a device
(``x.to(device)``, ``torch.zeros(3, device=device)``) run unchanged. Asking for
any other device type ("cuda", "mps", ...) is a clear error instead of a
silent fallback: a program that believes it trains on a GPU should learn
that it does not.
"""

from __future__ import annotations

_CPU_ONLY = (
    "onemodel runs on the CPU only (its results are bit-identical on every CPU instruction path and thread "
    "count; there is no GPU backend)"
)


class device:
    """A device name: only ``"cpu"`` (optionally ``"cpu:0"`` or ``device("cpu", 0)``)."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None) -> None:
        if isinstance(type, device):
            if index is not None:
                raise ValueError("device: an index cannot be given with a device object")
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            # torch.device(0) means cuda:0.
            raise RuntimeError(f"device: device ordinal {type} names a CUDA device; {_CPU_ONLY}")
        if not isinstance(type, str):
            raise TypeError(f"device: expected a string or a device, got {type.__class__.__name__}")
        name, sep, ordinal = type.partition(":")
        if sep:
            if index is not None:
                raise ValueError(f"device: {type!r} already has an index; don't pass index={index}")
            try:
                index = int(ordinal)
            except ValueError:
                raise RuntimeError(f"device: invalid device string {type!r}") from None
        if name != "cpu":
            if name in ("cuda", "mps", "xpu", "xla", "meta", "hip", "ipu", "vulkan", "mtia", "hpu", "privateuseone"):
                raise RuntimeError(f"device: {type!r} is not available; {_CPU_ONLY}")
            raise RuntimeError(f"device: unknown device type {type!r}; {_CPU_ONLY}")
        if index is not None and (not isinstance(index, int) or isinstance(index, bool) or index < 0):
            raise RuntimeError(f"device: the device index must be a non-negative int, got {index!r}")
        self.type = "cpu"
        self.index = index

    def __repr__(self) -> str:
        return "device(type='cpu')" if self.index is None else f"device(type='cpu', index={self.index})"

    def __str__(self) -> str:
        return "cpu" if self.index is None else f"cpu:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, ValueError):
                return False
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))


CPU = device("cpu")


def as_device(value, op: str = "device") -> device:
    """Check a ``device=`` argument: None, "cpu", "cpu:N" or a device; anything
    else raises naming the op."""
    if value is None:
        return CPU
    if isinstance(value, device):
        return value
    try:
        return device(value)
    except RuntimeError as e:
        raise RuntimeError(f"{op}: {e}") from None
    except TypeError as e:
        raise TypeError(f"{op}: {e}") from None


def is_device_like(value) -> bool:
    """True for what ``Tensor.to``/``Module.to`` read as a device (a device, a
    string or an int ordinal), as opposed to a dtype or a tensor."""
    return isinstance(value, (device, str)) or (isinstance(value, int) and not isinstance(value, bool))
