"""Data-parallel training of engine models (onemodel.nn) on a Ray cluster.

``DataParallel`` keeps the model and the optimizer in this process (the
driver); the workers hold replicas that compute micro-batches. A step's
gradient is the chain of the micro-batches' emissions in micro-batch order
(docs/distributed.md), so the parameters, their gradients and the optimizer
state after ``step`` are the bits one process gets from

    optimizer.zero_grad()
    for mb in split_batch(batch, S):
        loss_fn(model, mb).backward()
    optimizer.step()
"""

from __future__ import annotations

import numpy as np

from .. import compute
from ..creation import from_numpy
from ..grad_mode import no_grad
from ..tensor import Tensor
from . import _ray, emissions, plan
from .cluster import Cluster, ClusterFront
from .reduction import STEP_TIMEOUT_S, OrderedStep


def _to_wire(x):
    """A micro-batch item as it travels: Tensors as ('tensor', array)."""
    if isinstance(x, Tensor):
        return ("tensor", np.array(x.detach().numpy(force=True), order="C"))  # (ascontiguousarray makes a 0-d array 1-d)
    if isinstance(x, (tuple, list)):
        return type(x)(_to_wire(v) for v in x)
    return x


def _from_wire(x):
    if isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) and x[0] == "tensor":
        return from_numpy(np.array(x[1]))
    if isinstance(x, (tuple, list)):
        return type(x)(_from_wire(v) for v in x)
    return x


def _signature(model) -> list:
    return [(name, tuple(p.shape)) for name, p in model.named_parameters()]


class EngineJob:
    """The worker side: a replica built by ``build_model`` and ``loss_fn``."""

    def __init__(self, build_model, loss_fn, signature):
        self.model = build_model()
        self.loss_fn = loss_fn
        got = _signature(self.model)
        if got != [tuple(s) for s in signature]:
            raise ValueError(f"DataParallel: build_model() gave parameters {got} on a worker, but {signature} on the driver")
        self.params = [p for _, p in self.model.named_parameters()]
        self.layout = plan.flat_layout(p.numel() for p in self.params)
        self.buffers = [b for _, b in self.model.named_buffers()]
        self.held = []

    def load(self, flat: np.ndarray, shared) -> None:
        buffers, modes = shared
        with no_grad():
            for p, (off, n) in zip(self.params, self.layout):
                p.copy_(from_numpy(flat[off:off + n]).reshape(p.shape))
            for b, v in zip(self.buffers, buffers):
                b.copy_(from_numpy(np.array(v)).reshape(b.shape))
        for m, training in zip(self.model.modules(), modes):
            object.__setattr__(m, "training", training)

    def compute(self, parts) -> list:
        from ..creation import default_generator

        self.held = []
        losses = []
        for index, wire in parts:
            for p in self.params:
                p.grad = None
            rng = default_generator.get_state()
            before = [np.array(b.detach().numpy(force=True)) for b in self.buffers]
            with emissions.capture(self.params) as record:
                loss = self.loss_fn(self.model, _from_wire(wire))
                loss.backward()
            if default_generator.get_state() != rng:
                raise ValueError(f"DataParallel: micro-batch {index} drew from onemodel's default generator (dropout or "
                                 "a random op): in one process its draws would continue the previous micro-batches' "
                                 "stream, which a worker cannot know; DataParallel refuses such models")
            changed = [n for (n, _), b0, b in zip(self.model.named_buffers(), before, self.buffers)
                       if b0.tobytes() != b.detach().numpy(force=True).tobytes()]
            if changed:
                raise ValueError(f"DataParallel: micro-batch {index} changed buffers {changed} (e.g. BatchNorm's running "
                                 "statistics in training mode): one process would chain those updates over the "
                                 "micro-batches; DataParallel refuses models whose forward writes buffers")
            self.held.append(record)
            losses.append(float(loss.detach().item()))
        for p in self.params:
            p.grad = None
        return losses

    def chain(self, lo: int, hi: int, incoming):
        if incoming is None:
            acc, started = np.zeros(hi - lo, np.float32), np.zeros(len(self.params), bool)
        else:
            acc, started = np.array(incoming[0]), np.array(incoming[1])
        emissions.chain(acc, started, lo, self.layout, self.held)
        return acc, started


class _EngineFactory:
    """Builds an EngineJob on a worker (pickled by Ray with its arguments)."""

    def __init__(self, build_model, loss_fn, signature):
        self.args = (build_model, loss_fn, signature)

    def __call__(self):
        return EngineJob(*self.args)


class DataParallel(ClusterFront):
    """Train ``build_model()`` on ``workers`` Ray actors, the same bits as
    one process accumulating ``micro_batches`` micro-batches per step.

    ``build_model``: a callable returning the model (called once here and
    once on each worker; the driver's weights are sent to the workers every
    step, so it need not be deterministic). ``loss_fn(model, micro_batch)``:
    the loss to call ``backward()`` on. ``optimizer``: a callable taking the
    model's parameters and returning an optimizer (e.g.
    ``lambda ps: onemodel.optim.AdamW(ps, lr=1e-3)``). ``threads``: kernel
    threads per worker. ``address``: None starts a local Ray cluster
    (127.0.0.1 only), ``'auto'`` or ``'host:port'`` joins one.
    ``kernel_path``: in fast mode the workers' kernel paths must agree
    (they do not in general across CPUs); ``'common'`` forces the best path
    every worker and the driver have, a name forces that path.
    ``micro_batches_per_worker``: most micro-batches a worker holds at once
    (None: all of its share).

    ``model``, ``optimizer``: the driver's, updated by every ``step``.
    """

    def __init__(self, build_model, loss_fn, optimizer, micro_batches: int, workers: int, threads: int | None = None,
                 address: str | None = None, kernel_path: str | None = None,
                 micro_batches_per_worker: int | None = None, slice_elems: int | None = None,
                 timeout: float = STEP_TIMEOUT_S, log=None, _worker_kernel_paths=None):
        _ray.require()
        self.micro_batches = int(micro_batches)
        if self.micro_batches < 1:
            raise ValueError(f"DataParallel: micro_batches must be at least 1, got {micro_batches}")
        self.model = build_model()
        self.optimizer = optimizer(list(self.model.parameters()))
        self.params = [p for _, p in self.model.named_parameters()]
        self.layout = plan.flat_layout(p.numel() for p in self.params)
        factory = _EngineFactory(build_model, loss_fn, _signature(self.model))
        self.cluster = Cluster(factory, workers, threads=threads, address=address,
                               kernel_paths=_worker_kernel_paths, mode=compute.get_mode())
        try:
            if kernel_path is not None:
                self._force_path(kernel_path)
            self.runner = OrderedStep(self.cluster, per_round=micro_batches_per_worker, slice_elems=slice_elems,
                                      timeout=timeout, log=log)
        except BaseException:
            self.cluster.close()
            raise

    # -- kernel paths --------------------------------------------------------------
    def _force_path(self, name: str) -> None:
        if name == "common":
            common = set(compute.available_kernel_paths())
            for info in self.cluster.infos:
                common &= set(info["kernel_paths"])
            order = ["scalar", "v128", "avx2", "avx512"]
            name = max(common, key=order.index)
        compute.set_kernel_path(name)
        self.cluster.set_kernel_paths(name)

    def check_paths(self) -> None:
        """In fast mode, refuse workers whose kernel paths differ from one
        another or from the driver's: fast mode's bits depend on the path."""
        if compute.get_mode() != "fast":
            return
        paths = {"driver": compute.kernel_path()}
        paths.update({f"worker {i} ({d['host']})": d["kernel_path"] for i, d in enumerate(self.cluster.infos)})
        if len(set(paths.values())) > 1:
            raise ValueError("DataParallel: in fast mode the kernel paths must agree, since fast mode's bits depend "
                             f"on the path, but they are {paths}; use exact mode (the same bits on every path), or "
                             "kernel_path='common' to force the best path they all have")

    # -- the step ---------------------------------------------------------------------
    def step(self, batch) -> list:
        """One optimizer step on ``batch`` (cut by ``split_batch`` into the
        micro-batches). Returns each micro-batch's loss."""
        self.check_paths()
        mbs = plan.split_batch(batch, self.micro_batches)
        weights = plan.concat(p.detach().numpy(force=True) for p in self.params)
        shared = ([np.ascontiguousarray(b.detach().numpy(force=True)) for _, b in self.model.named_buffers()],
                  [m.training for m in self.model.modules()])
        sums, losses = self.runner.run(weights, shared, [_to_wire(m) for m in mbs], len(weights), compute.get_mode())
        self._set_grads(sums)
        self.optimizer.step()
        return losses

    def _set_grads(self, sums) -> None:
        flat = np.empty(self.layout[-1][0] + self.layout[-1][1] if self.layout else 0, np.float32)
        started = np.zeros(len(self.params), bool)
        for (lo, hi), (acc, st) in sums:
            flat[lo:hi] = acc
            started |= st
        for i, (p, (off, n)) in enumerate(zip(self.params, self.layout)):
            p.grad = from_numpy(flat[off:off + n].copy()).reshape(p.shape) if started[i] else None

