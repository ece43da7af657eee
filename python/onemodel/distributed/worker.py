"""The worker: one Ray actor holding a replica of the job (an engine model
or the recognizer), pinned to its thread count, kernel path and mode.

A step reaches a worker as a sequence of calls, which Ray runs in the order
the driver submitted them: ``recv`` for each slice of the weights (returning
the slice, so that the next worker reads it from this one), ``compute`` for
a round of parts (the contributions are kept here), then ``chain`` for each
slice of the gradient (the incoming running sum plus this worker's parts, in
part order). The worker keeps nothing that the next step needs: a replaced
worker recomputes a step from the same inputs.
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
        self._weights = None  # (step token, flat vector being received)
        self._loaded = None  # the token whose weights the job holds
        self._held = None  # (token, round) of the kept contributions
        self._log = []  # (token, round, part indices) of every compute
        self._seconds = {"recv": 0.0, "compute": 0.0, "chain": 0.0}  # time spent in each call, summed

    def info(self) -> dict:
        from .. import compute
        from . import _ray

        return {"host": socket.gethostname(), "address": _ray.node_address(), "pid": os.getpid(),
                "threads": compute.get_threads(), "kernel_path": compute.kernel_path(),
                "kernel_paths": list(compute.available_kernel_paths()), "mode": compute.get_mode()}

    def set_kernel_path(self, name: str | None) -> str:
        from .. import compute

        compute.set_kernel_path(name)
        return compute.kernel_path()

    def recv(self, token, lo: int, total: int, piece: np.ndarray) -> np.ndarray:
        """Store slice ``[lo, lo + len(piece))`` of the step's weights and
        pass it on."""
        t0 = time.perf_counter()
        if self._weights is None or self._weights[0] != token:
            self._weights = (token, np.empty(total, np.float32))
        self._weights[1][lo:lo + len(piece)] = piece
        self._seconds["recv"] += time.perf_counter() - t0
        return piece

    def compute(self, token, round_: int, mode: str, shared, parts: list) -> list:
        """Compute ``parts`` (a list of (index, payload)), keeping their
        contributions for ``chain``; returns each part's result (its loss)."""
        from .. import compute

        t0 = time.perf_counter()
        compute.set_mode(mode)
        if self._loaded != token:
            if self._weights is None or self._weights[0] != token:
                raise RuntimeError(f"worker {os.getpid()}: no weights received for step {token}")
            self.job.load(self._weights[1], shared)
            self._loaded = token
        self._held = None
        results = self.job.compute(parts)
        self._held = (token, round_)
        self._log.append((token, round_, [i for i, _ in parts]))
        self._seconds["compute"] += time.perf_counter() - t0
        return results

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
        """Seconds spent in recv, compute and chain since the last call."""
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
