"""The worker: one Ray actor holding a replica of the job (an engine model
or the recognizer), pinned to its thread count, kernel path and mode.

A step reaches a worker as a sequence of calls, which Ray runs in the order
the driver submitted them: ``relay`` for each slice of the weights when this
worker is the first of its machine on the weights' way (returning the slice,
so that it is stored on this machine for the workers after it), ``compute``
for a round of parts (its arguments include the step's weights, read from
this machine's object store; the contributions are kept here), then
``chain`` for each slice of the gradient (the incoming running sum plus this
worker's parts, in part order). The worker keeps nothing that the next step
needs: a replaced worker recomputes a step from the same inputs.
"""

from __future__ import annotations

import os
import socket
import time

import numpy as np


class Worker:
    def __init__(self, job_factory, threads: int, kernel_path: str | None, mode: str):
        from .. import compute

        compute.set_threads(int(threads))
        if kernel_path is not None:
            compute.set_kernel_path(kernel_path)
        compute.set_mode(mode)
        self.job = job_factory()
        self._loaded = None  # the token whose weights the job holds
        self._flat = None  # the buffer the weights' slices are assembled in
        self._held = None  # (token, round) of the kept contributions
        self._log = []  # (token, round, part indices) of every compute
        self._seconds = {"load": 0.0, "compute": 0.0, "chain": 0.0}  # time spent in each call, summed
        self._relayed = 0  # weight slices this worker passed on

    def info(self) -> dict:
        from .. import compute
        from . import _ray

        return {"host": socket.gethostname(), "address": _ray.node_address(), "node": _ray.node_id(),
                "pid": os.getpid(), "threads": compute.get_threads(), "kernel_path": compute.kernel_path(),
                "kernel_paths": list(compute.available_kernel_paths()), "mode": compute.get_mode()}

    def set_kernel_path(self, name: str | None) -> str:
        from .. import compute

        compute.set_kernel_path(name)
        return compute.kernel_path()

    def relay(self, piece: np.ndarray) -> np.ndarray:
        """Pass a slice of the weights on: returning it stores a copy in
        this machine's object store, where the workers after this one on the
        machine read it, and the next machine's relay fetches it."""
        self._relayed += 1
        return piece

    def relayed(self) -> int:
        """How many weight slices this worker has relayed."""
        return self._relayed

    def compute(self, token, round_: int, mode: str, shared, parts: list, *weights) -> list:
        """Compute ``parts`` (a list of (index, payload)) at the step's
        weights (their slices in order), keeping the contributions for
        ``chain``; returns each part's result (its loss)."""
        from .. import compute

        t0 = time.perf_counter()
        compute.set_mode(mode)
        if self._loaded != token:
            self.job.load(self._assemble(weights), shared)
            self._loaded = token
        t1 = time.perf_counter()
        self._held = None
        results = self.job.compute(parts)
        self._held = (token, round_)
        self._log.append((token, round_, [i for i, _ in parts]))
        self._seconds["load"] += t1 - t0
        self._seconds["compute"] += time.perf_counter() - t1
        return results

    def _assemble(self, pieces) -> np.ndarray:
        """The weights' slices as one vector: the slice itself when there is
        one (read in place from the object store), else copied into a buffer
        kept between steps (no fresh allocation per step)."""
        if len(pieces) == 1:
            return pieces[0]
        total = sum(len(p) for p in pieces)
        if self._flat is None or len(self._flat) != total:
            self._flat = np.empty(total, np.float32)
        return np.concatenate(pieces, out=self._flat)

    def chain(self, token, round_: int, lo: int, hi: int, incoming):
        """Add this worker's parts of the round, in order, to the running sum
        of elements ``[lo, hi)`` (None: the chain starts here)."""
        if self._held != (token, round_):
            raise RuntimeError(f"worker {os.getpid()}: asked to chain step {token} round {round_}, "
                               f"but holds {self._held}")
        t0 = time.perf_counter()
        out = self.job.chain(lo, hi, incoming)
        self._seconds["chain"] += time.perf_counter() - t0
        return out

    def job_call(self, name: str, *args):
        """Call a method of the job (benchmarks drive other exchanges
        through the same actors this way)."""
        return getattr(self.job, name)(*args)

    def take_seconds(self) -> dict:
        """Seconds spent loading weights, computing and chaining since the last call."""
        out, self._seconds = self._seconds, {k: 0.0 for k in self._seconds}
        return out

    def computed(self) -> list:
        """Every (step token, round, part indices) this worker computed."""
        return list(self._log)

    def memory(self) -> int:
        """Peak resident memory of this process in bytes (Linux's VmHWM)."""
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        return 0
