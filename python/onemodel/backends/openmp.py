"""torch.backends.openmp: onemodel's threads are its own pool, not OpenMP."""

from __future__ import annotations


def is_available() -> bool:
    return False
