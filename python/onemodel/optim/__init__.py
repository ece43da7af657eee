"""Optimizers (torch.optim's names). The namespace exists from the start so
that imports are stable; the optimizers themselves (AdamW, Adam, SGD,
schedulers) are not implemented yet and are listed in docs/api.md as
planned."""

from __future__ import annotations

__all__: list = []
