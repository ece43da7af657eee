"""Optimizers (torch.optim's names, arguments and defaults): AdamW, Adam,
SGD (Rust kernels, one call per parameter group), Adadelta, Adagrad,
RMSprop, Adamax, NAdam, RAdam (exact element-wise NumPy arithmetic) and the
learning-rate schedules in ``onemodel.optim.lr_scheduler``.

Every update is element-wise, each operation rounded separately, so the
updated parameters are the same bits on every kernel path, thread count
and OS. See docs/optim.md."""

from __future__ import annotations

from . import lr_scheduler
from .adam import Adam, AdamW
from .elementwise_optimizers import Adadelta, Adagrad, Adamax, NAdam, RAdam, RMSprop
from .extra_optimizers import ASGD, LBFGS, Rprop
from .optimizer import Optimizer, required
from .sgd import SGD

__all__ = ["Optimizer", "AdamW", "Adam", "SGD", "Adadelta", "Adagrad", "RMSprop", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS", "lr_scheduler", "required"]
