"""torch.cuda as a CPU-only library answers it: no device is available.

The queries programs make before choosing a device answer honestly
(``is_available()`` is False, ``device_count()`` is 0,
``is_bf16_supported()`` is False); the calls that only tune or seed a GPU
(``manual_seed``, ``manual_seed_all``, ``seed``, ``seed_all``,
``synchronize``, ``empty_cache``, ``reset_peak_memory_stats``) do nothing,
and the memory counters read 0. ``manual_seed``/``manual_seed_all`` seed
nothing: onemodel's random draws come from ``onemodel.manual_seed``'s
generator, so a program that seeds both gets onemodel's stream. Anything
that would select or use a GPU (``set_device``, ``current_device``,
``get_device_name``, ``device(...)``) raises naming the CPU-only design."""

from __future__ import annotations

from .._device import _CPU_ONLY
from . import amp


def _no_gpu(name: str):
    raise RuntimeError(f"onemodel.cuda.{name}: no CUDA device; {_CPU_ONLY}")


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def init() -> None:
    _no_gpu("init")


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def manual_seed(seed: int) -> None:
    """Seeds nothing (there is no CUDA generator); see the module's docs."""


def manual_seed_all(seed: int) -> None:
    """Seeds nothing (there is no CUDA generator); see the module's docs."""


def seed() -> None:
    """Does nothing (there is no CUDA generator)."""


def seed_all() -> None:
    """Does nothing (there is no CUDA generator)."""


def synchronize(device=None) -> None:
    """Nothing to wait for: onemodel's operators return when done."""


def empty_cache() -> None:
    """Nothing to free (see onemodel.empty_pool for the CPU buffer pool)."""


def memory_allocated(device=None) -> int:
    return 0


def max_memory_allocated(device=None) -> int:
    return 0


def memory_reserved(device=None) -> int:
    return 0


def max_memory_reserved(device=None) -> int:
    return 0


def reset_peak_memory_stats(device=None) -> None:
    """Nothing to reset."""


def current_device() -> int:
    _no_gpu("current_device")


def set_device(device) -> None:
    _no_gpu("set_device")


def get_device_name(device=None) -> str:
    _no_gpu("get_device_name")


def get_device_capability(device=None):
    _no_gpu("get_device_capability")


def get_device_properties(device=None):
    _no_gpu("get_device_properties")


class device:
    """torch.cuda.device(...) context: raises (no CUDA device)."""

    def __init__(self, device):
        _no_gpu("device")


__all__ = [
    "amp", "is_available", "device_count", "is_initialized", "is_bf16_supported", "manual_seed", "manual_seed_all", "seed",
    "seed_all", "synchronize", "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "reset_peak_memory_stats", "current_device", "set_device", "get_device_name",
    "get_device_capability", "get_device_properties", "device",
]
