"""Optimizers (torch.optim's names, arguments and defaults): AdamW, Adam,
SGD and the learning-rate schedules in ``onemodel.optim.lr_scheduler``.

Every step is one Rust kernel call per parameter group, element-wise, each
operation rounded separately, so the updated parameters are the same bits on
every kernel path, thread count and OS. See docs/optim.md."""

from __future__ import annotations

from . import lr_scheduler
from .adam import Adam, AdamW
from .optimizer import Optimizer, required
from .sgd import SGD

__all__ = ["Optimizer", "AdamW", "Adam", "SGD", "lr_scheduler", "required"]
