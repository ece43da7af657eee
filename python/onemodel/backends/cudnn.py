"""torch.backends.cudnn: flags accepted without effect (no cuDNN)."""

from __future__ import annotations

import contextlib

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = 10


def is_available() -> bool:
    return False


def version():
    return None


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Set the flags for a block (they change nothing in onemodel)."""
    module = globals()
    saved = {k: module[k] for k in ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")}
    module.update(enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit, deterministic=deterministic, allow_tf32=allow_tf32)
    try:
        yield
    finally:
        module.update(saved)
