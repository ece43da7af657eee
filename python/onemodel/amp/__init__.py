"""Automatic mixed precision, as programs name it (torch.amp): autocast,
GradScaler, custom_fwd/custom_bwd.

onemodel computes in float32 only (docs/porting.md). An autocast region
therefore computes in float32, exactly as outside it: an enabled autocast
is a documented no-op (a one-time warning names it), so a program written
for mixed precision runs and gets float32 results. GradScaler always acts
as torch's disabled scaler: ``scale`` returns the loss unchanged,
``unscale_`` does nothing, ``step`` calls ``optimizer.step()``,
``update`` does nothing, ``get_scale`` is 1.0 (float32 gradients need no
loss scaling)."""

from __future__ import annotations

import functools
import warnings
from typing import Any


from ..tensor import _DTYPES, _UNSUPPORTED

_warned = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


def _resolve_dtype(dtype):
    if dtype is None:
        return None
    if isinstance(dtype, str):
        return _DTYPES.get(dtype) or _UNSUPPORTED.get(dtype)
    return dtype


class autocast:
    """``with onemodel.autocast(device_type, dtype=None, enabled=True,
    cache_enabled=None):`` (also a decorator). The region computes in
    float32, as everywhere in onemodel: a device_type other than 'cpu'
    disables it with a warning (as torch does when the device is absent),
    and an enabled CPU autocast warns once that it has no effect."""

    def __init__(self, device_type: str = "cpu", dtype=None, enabled: bool = True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = _resolve_dtype(dtype)
        self._enabled = bool(enabled)
        if self._enabled and device_type != "cpu":
            _warn_once(
                f"device:{device_type}",
                f"User provided device_type of '{device_type}', but onemodel runs on the CPU only. Disabling autocast.",
            )
            self._enabled = False
        elif self._enabled:
            name = getattr(self.fast_dtype, "name", "bfloat16")
            _warn_once(
                "cpu",
                f"autocast to {name} has no effect: onemodel computes in float32 only, so the region's results are float32",
            )

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, func: Any) -> Any:
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return wrapper


def is_autocast_available(device_type: str) -> bool:
    return device_type == "cpu"


def custom_fwd(fwd=None, *, device_type: str = "cpu", cast_inputs=None):
    """Decorator for a custom Function's forward; returns it unchanged."""
    if fwd is None:
        return lambda f: f
    return fwd


def custom_bwd(bwd=None, *, device_type: str = "cpu"):
    """Decorator for a custom Function's backward; returns it unchanged."""
    if bwd is None:
        return lambda f: f
    return bwd


class GradScaler:
    """torch.amp.GradScaler's interface, always disabled (float32 gradients
    need no loss scaling): ``scale(x)`` is x, ``unscale_`` does nothing,
    ``step(optimizer)`` is ``optimizer.step()``, ``update`` does nothing."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        self._device = device
        if enabled:
            _warn_once(
                "scaler",
                "GradScaler is enabled, but onemodel trains in float32 only (no loss scaling is needed). Disabling.",
            )
        self._enabled = False
        self._init_scale, self._growth_factor, self._backoff_factor = init_scale, growth_factor, backoff_factor
        self._growth_interval = growth_interval

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer) -> None:
        return None

    def step(self, optimizer, *args, **kwargs):
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None) -> None:
        return None

    def get_scale(self) -> float:
        return 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def is_enabled(self) -> bool:
        return False

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        return None


__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available"]
