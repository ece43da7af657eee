"""torch.utils's names that training programs use: ``data``, ``checkpoint``."""

from __future__ import annotations

from . import checkpoint, data

__all__ = ["data", "checkpoint"]
