"""torch.backends.mps: no Metal device."""

from __future__ import annotations


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
