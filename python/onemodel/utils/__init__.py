"""torch.utils's names that training programs use: ``data``."""

from __future__ import annotations

from . import data

__all__ = ["data"]
