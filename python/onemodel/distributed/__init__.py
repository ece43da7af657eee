"""Data-parallel training on a Ray cluster with the same bits as one process.

A step's gradient is the chain of its parts' contributions in a fixed order
— the recognizer's lines, or the user's micro-batches for engine models —
and the workers add them in that order, slice by slice, so the number of
workers never enters a sum. See docs/distributed.md.

    from onemodel.distributed import DataParallel
    dp = DataParallel(build_model, loss_fn, lambda ps: onemodel.optim.AdamW(ps, lr=1e-3),
                      micro_batches=4, workers=3)
    losses = dp.step((x, y))          # dp.model, dp.optimizer: the driver's

Ray is optional: ``pip install 'onemodel[distributed]'``. Importing this
package does not import Ray; starting a cluster without it raises an
ImportError naming the extra.
"""

from .cluster import Cluster
from .engine import DataParallel
from .plan import schedule, split_batch
from .reduction import OrderedStep, WorkerLost
from .recognizer import DistributedTrainer
from ._ray import EXTRA, connect, disconnect

__all__ = ["DataParallel", "DistributedTrainer", "Cluster", "OrderedStep", "WorkerLost", "split_batch", "schedule",
           "connect", "disconnect", "EXTRA"]
