"""One data-parallel step on a Cluster, driven from this process.

1. The weights: the driver puts each slice in Ray's object store once. A
   worker reads them from its machine's store as arguments of its first
   compute call; the first worker on each further machine relays them
   (a call returning the slice), so every machine receives the weights once
   and the driver sends them once (plan.weight_sources). On one machine no
   worker relays: all read the driver's copy in shared memory.
2. Each round, every worker computes its block of consecutive parts.
3. The ordered reduction: each slice of the gradient visits the round's
   workers in part order; a worker adds its own parts' contributions in
   order to the running sum it receives (the worker with part 0 starts the
   chain). The next round continues from the last worker's sums. The last
   sums go to the driver.

The submission order fixes every operand: which worker ran a part, or when a
slice arrived, enters no sum (docs/distributed.md). A worker that dies makes
the step fail as a whole; the dead workers are replaced and the step is run
again from the same inputs, which gives the same bits.
"""

from __future__ import annotations

import itertools

import numpy as np

from . import plan

#: Seconds one step may take before the driver gives up on it.
STEP_TIMEOUT_S = 3600.0


class WorkerLost(RuntimeError):
    """A step could not be finished: workers kept dying."""


class OrderedStep:
    """Runs steps on ``cluster``. ``per_round``: most parts a worker holds
    at once (None: all of its parts). ``slice_elems``: elements per slice
    (None: as many slices as pipeline best over the workers,
    plan.slice_count).
    ``attempts``: tries of one step when workers die. ``log``: where worker
    replacements are reported (a callable taking a line)."""

    def __init__(self, cluster, per_round: int | None = None, slice_elems: int | None = None,
                 timeout: float = STEP_TIMEOUT_S, attempts: int = 3, log=None):
        self.cluster = cluster
        self.per_round = per_round
        self.slice_elems = None if slice_elems is None else int(slice_elems)
        self.timeout = float(timeout)
        self.attempts = int(attempts)
        self.log = log
        self._steps = itertools.count()
        #: Called after a step's calls are submitted, before its results are
        #: awaited (tests use it to kill a worker in the middle of a step).
        self.after_submit = None
        #: Per attempt of the last step: (rank, part indices) of each block.
        self.last_blocks = []
        #: The gradient slices of the last step, (lo, hi) each.
        self.last_slices = []

    def run(self, weights: np.ndarray, shared, parts: list, grad_len: int, mode: str):
        """One step: returns (the chain's last value for each gradient slice
        with its (lo, hi), each part's result in part order)."""
        ray = self.cluster.ray
        step = next(self._steps)
        for attempt in range(self.attempts):
            try:
                return self._attempt((step, attempt), weights, shared, parts, grad_len, mode)
            except ray.exceptions.GetTimeoutError:
                raise TimeoutError(f"onemodel.distributed: step {step} did not finish within {self.timeout:.0f} s") from None
            except ray.exceptions.RayError:
                dead = self.cluster.dead()
                if not dead:
                    raise
                for i in dead:
                    old = self.cluster.infos[i]
                    self.cluster.replace(i)
                    if self.log is not None:
                        new = self.cluster.infos[i]
                        self.log(f"worker {i} (pid {old['pid']} on {old['host']}) died during a step; replaced by "
                                 f"pid {new['pid']} on {new['host']}; the step is computed again")
        raise WorkerLost(f"onemodel.distributed: step {step} failed {self.attempts} times: workers kept dying")

    def _attempt(self, token, weights, shared, parts, grad_len, mode):
        ray = self.cluster.ray
        actors = self.cluster.actors
        rounds = plan.schedule(len(parts), len(actors), self.per_round)
        self.last_blocks = [(b.worker, list(range(b.start, b.stop))) for blocks in rounds for b in blocks]
        active = sorted({b.worker for blocks in rounds for b in blocks})

        weights = np.ascontiguousarray(weights, dtype=np.float32)
        pieces = [ray.put(weights[a:b]) for a, b in plan.slices(len(weights), self.slice_elems, len(active))]
        copies = {None: pieces}  # rank (None: the driver) -> the weight slices on its machine
        held = {}
        infos = self.cluster.infos
        for r, (kind, src) in zip(active, plan.weight_sources(self.cluster.driver_node,
                                                                [infos[r]["node"] for r in active])):
            src = None if src is None else active[src]
            if kind == "relay":
                copies[r] = [actors[r].relay.remote(p) for p in copies[src]]
                held[r] = copies[r]
            else:
                held[r] = copies[src]
        # What every worker reads goes in the object store once; a block's
        # own parts travel with its call (Ray stores large ones itself).
        shared_ref = None if shared is None else ray.put(shared)

        gsl = self.last_slices = plan.slices(grad_len, self.slice_elems, len(active))
        carry = [None] * len(gsl)
        results = []
        for k, blocks in enumerate(rounds):
            for b in blocks:
                payload = [(i, parts[i]) for i in range(b.start, b.stop)]
                results.append(actors[b.worker].compute.remote(token, k, mode, shared_ref, payload, *held[b.worker]))
            for s, (lo, hi) in enumerate(gsl):
                x = carry[s]
                for b in blocks:
                    x = actors[b.worker].chain.remote(token, k, lo, hi, x)
                carry[s] = x
        if self.after_submit is not None:
            self.after_submit()
        done = ray.get(carry + results, timeout=self.timeout)
        sums = list(zip(gsl, done[:len(carry)]))
        per_part = [r for block in done[len(carry):len(carry) + len(results)] for r in block]
        return sums, per_part
