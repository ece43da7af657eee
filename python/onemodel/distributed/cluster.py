"""A set of worker actors on a Ray cluster: started, described, replaced
when one dies, and stopped."""

from __future__ import annotations

import os

from . import _ray
from .worker import Worker

#: Seconds to wait for the workers to start (a local cluster on a loaded
#: two-core machine needs a few seconds per worker).
START_TIMEOUT_S = 300.0


class Cluster:
    """``workers`` actors, each running ``job_factory()`` with ``threads``
    kernel threads. ``address``: None starts a local cluster (loopback only),
    ``'auto'`` or ``'host:port'`` joins one; a Ray already initialized in
    this process is used as it is. ``kernel_paths``: an optional forced path
    per worker (None: each worker's best). ``mode``: the arithmetic mode the
    workers start in."""

    def __init__(self, job_factory, workers: int, threads: int | None = None, address: str | None = None,
                 kernel_paths=None, mode: str = "fast", start_timeout: float = START_TIMEOUT_S):
        workers = int(workers)
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if threads is None:
            threads = max(1, (os.cpu_count() or 1) // workers)
        threads = int(threads)
        if threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        if kernel_paths is not None and len(kernel_paths) != workers:
            raise ValueError(f"kernel_paths names {len(kernel_paths)} paths for {workers} workers")
        self.ray = _ray.require()
        self.threads = threads
        self.mode = mode
        self.start_timeout = float(start_timeout)
        self._job_factory = job_factory
        self._paths = list(kernel_paths) if kernel_paths is not None else [None] * workers
        # A local cluster gets enough CPUs for every worker's threads even on
        # a smaller machine (they then share its cores: slower, same bits).
        self._owned = _ray.connect(address, num_cpus=max(os.cpu_count() or 1, workers * threads))
        self._actor = self.ray.remote(Worker)
        #: Ray's id of the driver's machine (where the weights are put).
        self.driver_node = _ray.node_id()
        self.actors = [None] * workers
        self.infos = [None] * workers
        self.replacements = 0
        try:
            for i in range(workers):
                self.actors[i] = self._start(i)
            self._describe(range(workers))
        except BaseException:
            self.close()
            raise

    def __len__(self) -> int:
        return len(self.actors)

    def _start(self, i: int):
        return self._actor.options(num_cpus=self.threads, max_restarts=0, max_task_retries=0).remote(
            self._job_factory, self.threads, self._paths[i], self.mode)

    def _describe(self, which) -> None:
        which = list(which)
        refs = [self.actors[i].info.remote() for i in which]
        try:
            infos = self.ray.get(refs, timeout=self.start_timeout)
        except self.ray.exceptions.GetTimeoutError:
            raise TimeoutError(f"onemodel.distributed: {len(which)} workers with {self.threads} CPUs each did not start "
                               f"within {self.start_timeout:.0f} s; the cluster has {self.ray.cluster_resources().get('CPU', 0):g} CPUs") from None
        for i, info in zip(which, infos):
            self.infos[i] = info

    def describe(self) -> list:
        """One line per worker: rank, host, address, pid, threads, kernel path."""
        return [f"worker {i}: host {d['host']} ({d['address']}), pid {d['pid']}, {d['threads']} threads, "
                f"kernel path {d['kernel_path']}" for i, d in enumerate(self.infos)]

    def dead(self) -> list:
        """Ranks of the workers that no longer answer."""
        refs = [a.info.remote() for a in self.actors]
        out = []
        for i, r in enumerate(refs):
            try:
                self.ray.get(r, timeout=self.start_timeout)
            except (self.ray.exceptions.RayActorError, self.ray.exceptions.GetTimeoutError):
                out.append(i)
        return out

    def replace(self, i: int) -> None:
        """Start a fresh worker in place of worker ``i``."""
        try:
            self.ray.kill(self.actors[i])
        except Exception:  # already gone
            pass
        self.actors[i] = self._start(i)
        self._describe([i])
        self.replacements += 1

    def set_kernel_paths(self, name: str | None) -> None:
        """Force one kernel path on every worker (and on those started later)."""
        self._paths = [name] * len(self.actors)
        paths = self.ray.get([a.set_kernel_path.remote(name) for a in self.actors], timeout=self.start_timeout)
        for info, p in zip(self.infos, paths):
            info["kernel_path"] = p

    def computed(self) -> list:
        """Per worker, every (step token, round, part indices) it computed."""
        return self.ray.get([a.computed.remote() for a in self.actors], timeout=self.start_timeout)

    def close(self) -> None:
        """Stop the workers; leave Ray if this cluster connected to it."""
        for a in self.actors:
            if a is not None:
                try:
                    self.ray.kill(a)
                except Exception:
                    pass
        self.actors = []
        if self._owned:
            _ray.disconnect()
            self._owned = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class ClusterFront:
    """What the data-parallel front ends (engine.DataParallel,
    recognizer.DistributedTrainer) expose of their ``self.cluster``: the
    workers, what each computed, and closing (also as a context manager)."""

    cluster: Cluster

    @property
    def workers(self) -> list:
        """Per worker: host, address, pid, threads, kernel path, mode."""
        return [dict(d) for d in self.cluster.infos]

    def describe(self) -> list:
        return self.cluster.describe()

    def computed(self) -> list:
        """Per worker, (step token, round, micro-batch indices) of each
        compute it ran."""
        return self.cluster.computed()

    def close(self) -> None:
        self.cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
