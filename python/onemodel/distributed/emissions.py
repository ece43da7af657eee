"""An engine micro-batch's contributions, and their chain.

``loss.backward()`` delivers gradients to a parameter as *emissions*: one per
use of the parameter in the graph, in the engine's fixed order
(docs/engine.md). One process accumulating micro-batches computes, per
element, ``grad = e₀`` (a copy) then ``grad += e`` for every later emission,
micro-batch after micro-batch. ``capture`` records a micro-batch's
emissions; ``chain`` replays that accumulation on a slice of the flat
gradient with the same kernels the engine uses (``_core.copy_`` and the
element-wise add), so the result is the same bits in both modes (exact mode
writes a NaN sum as the canonical NaN here as there).
"""

from __future__ import annotations

import contextlib

import numpy as np

from .. import _core
from ..creation import from_numpy


@contextlib.contextmanager
def capture(params):
    """Inside the block, every emission to one of ``params`` is recorded
    (as a flat float32 copy, per parameter index, in emission order) while
    the engine goes on accumulating ``.grad`` as usual. Yields the record,
    ``{index: [array, …]}``."""
    from ..autograd import engine

    index = {id(p): i for i, p in enumerate(params)}
    record: dict = {}
    accumulate = engine._accumulate_leaf

    def recording(leaf, grad):
        i = index.get(id(leaf))
        if i is not None:
            record.setdefault(i, []).append(np.array(grad.detach().numpy(force=True), dtype=np.float32).reshape(-1))
        accumulate(leaf, grad)

    engine._accumulate_leaf = recording
    try:
        yield record
    finally:
        engine._accumulate_leaf = accumulate
    for i, p in enumerate(params):
        if (p.grad is not None) != (i in record):
            raise RuntimeError("onemodel.distributed: the autograd engine no longer reports leaf gradients through "
                               "engine._accumulate_leaf, so micro-batch emissions cannot be recorded")


def chain(acc: np.ndarray, started: np.ndarray, lo: int, layout, parts) -> None:
    """Continue the accumulation over flat elements ``[lo, lo + len(acc))``.

    ``layout``: (offset, numel) of each parameter in the flat vector.
    ``parts``: this worker's parts in order, each ``{index: [emissions]}``.
    ``started[i]``: parameter i already has a running sum (otherwise its
    first emission is copied, as the engine creates ``.grad``). Both are
    updated in place."""
    hi = lo + len(acc)
    acc_t = from_numpy(acc)
    overlap = [(i, max(lo, off), min(hi, off + n), off) for i, (off, n) in enumerate(layout)
               if max(lo, off) < min(hi, off + n)]
    for emitted in parts:
        for i, a, b, off in overlap:
            for e in emitted.get(i, ()):
                dst = acc_t[a - lo:b - lo]
                src = from_numpy(e[a - off:b - off])
                if started[i]:
                    _core.binary("add", dst, dst, src)
                else:
                    _core.copy_(dst, src)
                    started[i] = True
