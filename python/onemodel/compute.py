"""Compute settings: arithmetic mode, kernel path and threads (process-wide).

* ``set_mode('exact')``: every product term is a rounded multiply then a
  rounded add and the transcendentals are the fixed ones, so results are the
  same bits on every kernel path, thread count and OS. ``'fast'`` (default)
  uses one fma per product term; the bits are still the same at every
  thread count on one machine and path.
* ``set_kernel_path(name)``: force an instruction-set path (``scalar``,
  ``v128``, ``avx2``, ``avx512``); ``None`` returns to the detected best.
  ``ONEMODEL_KERNEL_PATH`` does the same from the environment.
* ``set_threads(n)``: kernel threads (``ONEMODEL_THREADS``, default: the
  available cores). Threads only change speed.
"""

from __future__ import annotations

import contextlib

from . import _core

available_kernel_paths = _core.available_kernel_paths
kernel_path = _core.kernel_path
best_kernel_path = _core.best_kernel_path
cpu_features = _core.cpu_features
get_mode = _core.get_mode
get_threads = _core.get_threads


def set_mode(mode: str) -> None:
    """'fast' or 'exact'."""
    _core.set_mode(mode)


def set_kernel_path(name: str | None) -> None:
    """Force a kernel path; RuntimeError naming the missing CPU features if this CPU lacks it."""
    _core.set_kernel_path(name)


def set_threads(n: int) -> None:
    _core.set_threads(int(n))


def _forced_path():
    # The path is forced iff it differs from the best or was set explicitly;
    # restoring the previous name is equivalent either way.
    return _core.kernel_path()


@contextlib.contextmanager
def mode(name: str):
    """``with onemodel.compute.mode('exact'): ...``"""
    prev = get_mode()
    set_mode(name)
    try:
        yield
    finally:
        set_mode(prev)


@contextlib.contextmanager
def kernel_path_scope(name: str | None):
    """``with onemodel.compute.kernel_path_scope('scalar'): ...``"""
    prev = _forced_path()
    set_kernel_path(name)
    try:
        yield
    finally:
        set_kernel_path(prev)


@contextlib.contextmanager
def threads(n: int):
    """``with onemodel.compute.threads(3): ...``"""
    prev = get_threads()
    set_threads(n)
    try:
        yield
    finally:
        set_threads(prev)


@contextlib.contextmanager
def settings(mode: str | None = None, kernel_path: str | None = None, threads: int | None = None):
    """Set any of mode, kernel path and threads for a block."""
    prev = (get_mode(), _forced_path(), get_threads())
    try:
        if mode is not None:
            set_mode(mode)
        if kernel_path is not None:
            set_kernel_path(kernel_path)
        if threads is not None:
            set_threads(threads)
        yield
    finally:
        set_mode(prev[0])
        set_kernel_path(prev[1])
        set_threads(prev[2])


def info() -> dict:
    """Everything ``onemodel info`` prints."""
    return {
        "version": _core.__version__,
        "cpu_features": list(cpu_features()),
        "kernel_paths_available": list(available_kernel_paths()),
        "kernel_path_best": best_kernel_path(),
        "kernel_path": kernel_path(),
        "threads": get_threads(),
        "mode": get_mode(),
    }


__all__ = [
    "set_mode",
    "get_mode",
    "mode",
    "set_kernel_path",
    "kernel_path",
    "best_kernel_path",
    "available_kernel_paths",
    "kernel_path_scope",
    "cpu_features",
    "set_threads",
    "get_threads",
    "threads",
    "settings",
    "info",
]
