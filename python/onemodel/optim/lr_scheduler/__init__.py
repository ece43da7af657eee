"""Learning-rate schedules (torch.optim.lr_scheduler's names, arguments and
values): LambdaLR, MultiplicativeLR, StepLR, MultiStepLR, ConstantLR,
LinearLR, ExponentialLR, SequentialLR, PolynomialLR, CosineAnnealingLR,
ChainedScheduler, ReduceLROnPlateau, CosineAnnealingWarmRestarts,
OneCycleLR, CyclicLR.

Each ``step()`` computes the new rates with torch's own formulas in the
same order (the recursive "chainable" forms where torch uses them, the
closed forms when ``step(epoch)`` is given), so the values are torch's to
the last bit of a double. Differences: no warnings about calling
``scheduler.step()`` before ``optimizer.step()`` or ``get_lr()`` outside
``step()``; learning rates are Python floats (no tensor ``lr``).
"""

from __future__ import annotations

from .annealing import CosineAnnealingLR, CosineAnnealingWarmRestarts, OneCycleLR
from .base import LRScheduler, _LRScheduler
from .composite import ChainedScheduler, SequentialLR
from .cyclic import CyclicLR
from .factor import ConstantLR, ExponentialLR, LambdaLR, LinearLR, MultiplicativeLR, MultiStepLR, PolynomialLR, StepLR
from .plateau import ReduceLROnPlateau

__all__ = [
    "LRScheduler", "_LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
    "ExponentialLR", "SequentialLR", "PolynomialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau",
    "CosineAnnealingWarmRestarts", "OneCycleLR", "CyclicLR",
]

# The classes live in the submodules by family; they keep the public module
# name torch users see (and pickles record).
for _name in __all__:
    if _name != "_LRScheduler":
        globals()[_name].__module__ = __name__
del _name
