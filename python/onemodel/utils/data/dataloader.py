"""DataLoader (torch.utils.data's arguments, defaults and checks).

Single-process loading fetches each batch in the main process. With
``num_workers > 0`` batches are fetched by worker processes: batch k goes
to worker k mod num_workers (skipping workers whose iterable dataset has
ended) and batches are yielded in k order, so the sequence of batches is
the same as with ``num_workers=0`` for a map-style dataset (and torch's
interleaving of the workers' streams for an iterable one).

Seeding, as torch: each pass draws a base seed from ``generator`` (or the
default generator); worker i seeds onemodel's default generator and
Python's ``random`` with base_seed + i, and NumPy's global generator with a
32-bit value derived from both. Workers run onemodel's kernels with one
thread (threads never change results). ``pin_memory`` and
``pin_memory_device`` are accepted and ignored (no device memory)."""

from __future__ import annotations

import itertools
import multiprocessing
import queue
import random
import sys
import traceback

from ._collate import default_collate, default_convert  # noqa: F401 - torch.utils.data.dataloader's names
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "WorkerInfo"]


# -- worker side ------------------------------------------------------------------------------

class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: id, num_workers,
    seed, dataset (the worker's copy)."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = [f"{k}={getattr(self, k)}" for k in self.__keys]
        return f"{self.__class__.__name__}({', '.join(items)})"


_worker_info = None


def get_worker_info():
    """The WorkerInfo of the current worker process, None in the main one."""
    return _worker_info


class _ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with its
    traceback text."""

    def __init__(self, exc_info, where: str):
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyError(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class _IterableEnded:
    """The marker a worker sends when its iterable dataset is exhausted."""

    def __init__(self, worker_id: int):
        self.worker_id = worker_id


def _numpy_seed(base_seed: int, worker_id: int) -> int:
    # A 32-bit mix of (base_seed, worker_id) for NumPy's legacy seeding.
    x = (base_seed * 0x9E3779B97F4A7C15 + worker_id * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    x ^= x >> 31
    return x & 0xFFFFFFFF


class _Fetcher:
    """Turns a task (a batch's indices, or one index, or an iterable step)
    into collated data."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool, iterable: bool):
        self.dataset, self.auto_collation, self.collate_fn, self.drop_last = dataset, auto_collation, collate_fn, drop_last
        self.iterable = iterable
        self.iterator = iter(dataset) if iterable else None
        self.ended = False

    def reset(self):
        if self.iterable:
            self.iterator = iter(self.dataset)
            self.ended = False

    def fetch(self, possibly_batched_index):
        if self.iterable:
            if self.ended:
                raise StopIteration
            if self.auto_collation:
                data = []
                for _ in possibly_batched_index:
                    try:
                        data.append(next(self.iterator))
                    except StopIteration:
                        self.ended = True
                        break
                if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
                    raise StopIteration
            else:
                data = next(self.iterator)
            return self.collate_fn(data)
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            if callable(getitems):
                data = getitems(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


def _worker_loop(dataset, iterable, index_queue, data_queue, auto_collation, collate_fn, drop_last, base_seed, init_fn, worker_id,
                 num_workers):
    global _worker_info
    try:
        from ... import compute
        from ...creation import manual_seed

        compute.set_threads(1)
        seed = base_seed + worker_id
        random.seed(seed)
        manual_seed(seed)
        try:
            import numpy as np

            np.random.seed(_numpy_seed(base_seed, worker_id))
        except ImportError:  # pragma: no cover
            pass
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_error = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _Fetcher(dataset, auto_collation, collate_fn, drop_last, iterable)
        except Exception:
            init_error = _ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
            fetcher = None
        while True:
            task = index_queue.get()
            if task is None:
                break
            if task == "reset":
                if fetcher is not None:
                    fetcher.reset()
                continue
            idx, index = task
            if init_error is not None:
                data_queue.put((idx, init_error))
                init_error = None
                continue
            try:
                data = fetcher.fetch(index)
            except StopIteration:
                data = _IterableEnded(worker_id)
            except Exception:
                data = _ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
    except KeyboardInterrupt:  # pragma: no cover
        pass


# -- main side ----------------------------------------------------------------------------------

class _InfiniteConstantSampler(Sampler):
    """The sampler of an iterable dataset: None forever."""

    def __iter__(self):
        while True:
            yield None


def _draw_base_seed(generator) -> int:
    from .sampler import _seed_from

    return _seed_from(generator)


class _SingleProcessIter:
    def __init__(self, loader):
        self._loader = loader
        self._sampler_iter = iter(loader._index_sampler)
        self._base_seed = _draw_base_seed(loader.generator)
        self._fetcher = _Fetcher(loader.dataset, loader._auto_collation, loader.collate_fn, loader.drop_last,
                                 isinstance(loader.dataset, IterableDataset))
        self._yielded = 0

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def __next__(self):
        index = next(self._sampler_iter)
        data = self._fetcher.fetch(index)
        self._yielded += 1
        return data


class _Workers:
    """The worker processes and their queues (kept across passes with
    persistent_workers)."""

    def __init__(self, loader, base_seed: int):
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        self.n = loader.num_workers
        self.data_queue = ctx.Queue()
        self.index_queues = []
        self.procs = []
        iterable = isinstance(loader.dataset, IterableDataset)
        for i in range(self.n):
            q = ctx.Queue()
            p = ctx.Process(
                target=_worker_loop,
                args=(loader.dataset, iterable, q, self.data_queue, loader._auto_collation, loader.collate_fn, loader.drop_last,
                      base_seed, loader.worker_init_fn, i, self.n),
                daemon=True,
            )
            p.start()
            self.index_queues.append(q)
            self.procs.append(p)
        self.alive = True

    def shutdown(self):
        if not self.alive:
            return
        self.alive = False
        for q in self.index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):  # pragma: no cover
                pass
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():  # pragma: no cover
                p.terminate()
        for q in self.index_queues + [self.data_queue]:
            q.cancel_join_thread()
            q.close()


class _MultiProcessIter:
    def __init__(self, loader):
        self._loader = loader
        self._sampler_iter = iter(loader._index_sampler)
        self._base_seed = _draw_base_seed(loader.generator)
        workers = loader._workers if loader.persistent_workers else None
        if workers is None or not workers.alive:
            workers = _Workers(loader, self._base_seed)
            if loader.persistent_workers:
                loader._workers = workers
        elif isinstance(loader.dataset, IterableDataset):
            for q in workers.index_queues:
                q.put("reset")
        self._workers = workers
        self._active = [True] * workers.n
        self._cycle = itertools.cycle(range(workers.n))
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_worker = {}
        self._results = {}
        self._exhausted = False
        self._timeout = loader.timeout
        for _ in range(loader.prefetch_factor * workers.n):
            self._put_task()

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def _put_task(self):
        if self._exhausted or not any(self._active):
            return
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            self._exhausted = True
            return
        for _ in range(self._workers.n):
            w = next(self._cycle)
            if self._active[w]:
                break
        else:  # pragma: no cover
            return
        self._workers.index_queues[w].put((self._send_idx, index))
        self._task_worker[self._send_idx] = w
        self._send_idx += 1

    def _get(self):
        while True:
            try:
                return self._workers.data_queue.get(timeout=self._timeout if self._timeout > 0 else 5.0)
            except queue.Empty:
                dead = [p.pid for p in self._workers.procs if p.exitcode not in (None, 0)]
                if dead:
                    self._shutdown()
                    raise RuntimeError(f"DataLoader worker (pid(s) {', '.join(map(str, dead))}) exited unexpectedly") from None
                if self._timeout > 0:
                    self._shutdown()
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None

    def __next__(self):
        while True:
            if self._rcvd_idx >= self._send_idx:
                self._shutdown(end_of_pass=True)
                raise StopIteration
            if self._rcvd_idx in self._results:
                data = self._results.pop(self._rcvd_idx)
            else:
                idx, data = self._get()
                if idx != self._rcvd_idx:
                    self._results[idx] = data
                    continue
            self._rcvd_idx += 1
            if isinstance(data, _IterableEnded):
                self._active[data.worker_id] = False
                # Tasks already queued for that worker will come back as ended too.
                continue
            self._put_task()
            if isinstance(data, _ExceptionWrapper):
                self._shutdown()
                data.reraise()
            return data

    def _shutdown(self, end_of_pass: bool = False):
        """Stop the workers, except at the end of a pass with
        persistent_workers (then the next pass reuses them)."""
        if end_of_pass and self._loader.persistent_workers:
            return
        self._workers.shutdown()
        if self._loader._workers is self._workers:
            self._loader._workers = None

    def __del__(self):
        try:
            if not self._loader.persistent_workers:
                self._workers.shutdown()
        except Exception:  # pragma: no cover
            pass


class DataLoader:
    """Batches from a dataset: torch.utils.data.DataLoader's arguments,
    defaults and checks (see the module docstring for workers and seeds)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable multiprocessing, "
                "otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        if isinstance(dataset, IterableDataset):
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            if isinstance(dataset, IterableDataset):
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._workers = None

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        return _MultiProcessIter(self)

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            length = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return -(-length // self.batch_size)
            return length
        return len(self._index_sampler)

    def __del__(self):
        workers = getattr(self, "_workers", None)
        if workers is not None:
            try:
                workers.shutdown()
            except Exception:  # pragma: no cover
                pass

