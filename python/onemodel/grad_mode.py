"""Whether operations are recorded for the backward pass (per thread)."""

from __future__ import annotations

import functools
import threading
from typing import Any

_state = threading.local()


def is_grad_enabled() -> bool:
    return getattr(_state, "enabled", True)


def _set_enabled(value: bool) -> None:
    _state.enabled = bool(value)


class _GradModeContext:
    """Base of the context managers; usable as a decorator too."""

    _target: bool

    def __enter__(self):
        self._prev = is_grad_enabled()
        _set_enabled(self._target)
        return self

    def __exit__(self, *exc):
        _set_enabled(self._prev)
        return False

    def __call__(self, func: Any) -> Any:
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return func(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):
    """Disable recording: ``with onemodel.no_grad(): ...`` or ``@onemodel.no_grad()``."""

    _target = False


class enable_grad(_GradModeContext):
    """Re-enable recording inside a ``no_grad`` region."""

    _target = True


class set_grad_enabled(_GradModeContext):
    """Set recording on or off; works as a function call, a context manager and a decorator."""

    def __init__(self, mode: bool):
        self._target = bool(mode)
        self._prev = is_grad_enabled()
        _set_enabled(self._target)

    def __enter__(self):
        return self

    def __call__(self, func: Any) -> Any:
        mode = self._target
        _set_enabled(self._prev)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            prev = is_grad_enabled()
            _set_enabled(mode)
            try:
                return func(*args, **kwargs)
            finally:
                _set_enabled(prev)

        return wrapper
