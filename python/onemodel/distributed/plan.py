"""Which worker computes which part, and how the flat vector is sliced.

Pure functions of the sizes (no Ray): the bits never depend on them — every
plan gives each element the same chain (docs/distributed.md) — but the
memory and the time do.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def even_bounds(n: int, k: int) -> list:
    """``k`` contiguous ranges covering ``range(n)``, sizes differing by at
    most one, the larger first (``torch.tensor_split``'s boundaries)."""
    if k < 1:
        raise ValueError(f"cannot cut into {k} pieces")
    q, r = divmod(n, k)
    out, start = [], 0
    for i in range(k):
        stop = start + q + (1 if i < r else 0)
        out.append((start, stop))
        start = stop
    return out


def split_batch(batch, micro_batches: int) -> list:
    """Cut a batch into ``micro_batches`` micro-batches along the first axis.

    ``batch`` is an array/Tensor or a tuple/list of them with the same first
    dimension; each micro-batch has the same structure. Sizes differ by at
    most one, the larger first. This is the cut ``DataParallel`` makes, so
    a one-process reference loops over ``split_batch(batch, S)``."""
    s = int(micro_batches)
    items, single = (list(batch), False) if isinstance(batch, (tuple, list)) else ([batch], True)
    if not items:
        raise ValueError("split_batch: the batch holds no arrays")
    sizes = {int(_rows(x)) for x in items}
    if len(sizes) != 1:
        raise ValueError(f"split_batch: the batch's arrays have different first dimensions {sorted(sizes)}")
    n = sizes.pop()
    if not 1 <= s <= n:
        raise ValueError(f"split_batch: micro_batches={s} must be between 1 and the batch's {n} rows")
    out = []
    for a, b in even_bounds(n, s):
        parts = [x[a:b] for x in items]
        out.append(parts[0] if single else tuple(parts) if isinstance(batch, tuple) else parts)
    return out


def _rows(x) -> int:
    shape = getattr(x, "shape", None)
    if shape is None or len(shape) == 0:
        raise ValueError(f"split_batch: expected arrays with a first axis, got {type(x).__name__}")
    return shape[0]


@dataclass(frozen=True)
class Block:
    """Parts ``[start, stop)`` computed by ``worker`` in one round."""

    worker: int
    start: int
    stop: int


def schedule(parts: int, workers: int, per_round: int | None = None) -> list:
    """Rounds of blocks, in part order. A round hands each worker at most
    ``per_round`` consecutive parts (None: all in one round), so a worker
    holds at most that many parts' gradients at once; within a round the
    parts are cut evenly over the workers, the lower ranks taking the
    earlier parts. Empty blocks are left out."""
    if parts < 1 or workers < 1:
        raise ValueError(f"schedule: need at least one part and one worker, got {parts} and {workers}")
    per = -(-parts // workers) if per_round is None else int(per_round)
    if per < 1:
        raise ValueError(f"schedule: per_round must be at least 1, got {per_round}")
    rounds, start = [], 0
    while start < parts:
        stop = min(parts, start + per * workers)
        blocks = [Block(w, start + a, start + b) for w, (a, b) in enumerate(even_bounds(stop - start, workers)) if b > a]
        rounds.append(blocks)
        start = stop
    return rounds


#: The link the default slice count is chosen for: a 10 Gb/s network (bytes/s)
#: and a cost per call of 1 ms (a Ray actor call carrying an object).
LINK_BYTES_PER_S = 1.25e9
HOP_S = 1e-3


def pipeline_seconds(length: int, workers: int, count: int, hop_s: float = HOP_S,
                     bandwidth: float = LINK_BYTES_PER_S) -> float:
    """One direction of a step's exchange on ``workers`` machines (the
    weights driver → 1 → … → W, or the gradient 1 → … → W → driver): a
    pipeline of ``count`` slices over W hops, (W + n − 1)·(o + 4·length/(n·BW))."""
    return (workers + count - 1) * (hop_s + 4 * length / (count * bandwidth))


def slice_count(length: int, workers: int, hop_s: float = HOP_S, bandwidth: float = LINK_BYTES_PER_S) -> int:
    """How many slices pipeline a vector of ``length`` float32 best over
    ``workers`` machines: the integer next to n = √((W − 1)·4·length/(o·BW)),
    where ``pipeline_seconds`` is least (docs/distributed.md, "Cost")."""
    n = ((workers - 1) * 4 * length / (hop_s * bandwidth)) ** 0.5
    cands = {max(1, min(int(n), length)), max(1, min(int(n) + 1, length))}
    return min(sorted(cands), key=lambda c: pipeline_seconds(length, workers, c, hop_s, bandwidth))


def slices(length: int, slice_elems: int | None = None, workers: int = 1) -> list:
    """``[lo, hi)`` ranges covering a vector of ``length`` (at least one
    range, even when empty): of at most ``slice_elems`` elements, or (None)
    ``slice_count(length, workers)`` ranges."""
    if slice_elems is None:
        return even_bounds(length, slice_count(length, workers))
    if slice_elems < 1:
        raise ValueError(f"slice_elems must be at least 1, got {slice_elems}")
    count = max(1, -(-length // slice_elems))
    return even_bounds(length, count)


def weight_sources(driver_node, nodes) -> list:
    """How the weights reach the workers, whose machines are ``nodes`` in
    rank order: for each worker, the rank whose relayed copy it reads, or
    None for the driver's own copy. The first worker on a machine that holds
    no copy yet relays the copy of the machine before it (the driver's
    first), so each machine receives the weights once and the driver sends
    them once; the other workers on a machine read its copy in place."""
    holder = {driver_node: None}
    last = None
    out = []
    for rank, node in enumerate(nodes):
        if node not in holder:
            holder[node] = rank
            out.append(("relay", last))
            last = rank
        else:
            out.append(("read", holder[node]))
    return out


def flat_layout(numels) -> list:
    """(offset, numel) of each tensor in a flat concatenation."""
    out, off = [], 0
    for n in numels:
        out.append((off, int(n)))
        off += int(n)
    return out


def concat(arrays) -> np.ndarray:
    """One contiguous float32 vector of the arrays' elements, in order."""
    arrays = [np.ascontiguousarray(a, dtype=np.float32).reshape(-1) for a in arrays]
    return np.concatenate(arrays) if arrays else np.zeros(0, np.float32)
