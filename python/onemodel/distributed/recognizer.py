"""The crnn-v0 recognizer trained on a Ray cluster (docs/distributed.md).

``DistributedTrainer`` wraps a ``onemodel.recognizer.Trainer`` on the driver
and offers the same ``step``: the workers compute the forward, CTC and
backward of their lines (each logit gradient scaled by 1/B for the whole
batch), the ordered reduction adds the lines' gradients in line order (seed
002's g = g₀; g += g₁; …), and the driver runs the norm, the clipping and
AdamW of the wrapped Trainer. The weights, the AdamW state and the step
count after every step are the bits ``Trainer.step`` gives, at any number of
workers, threads per worker and kernel paths.
"""

from __future__ import annotations

import numpy as np

from .. import _core
from . import _ray, plan
from .cluster import Cluster, ClusterFront
from .reduction import STEP_TIMEOUT_S, OrderedStep

#: Default bound on the line gradients one worker holds at once.
GRAD_MEMORY_BYTES = 256 << 20


class RecognizerJob:
    """The worker side: a model of the driver's configuration and a trainer
    core whose per-line buffers hold the lines' gradients."""

    def __init__(self, config):
        from ..recognizer import CrnnV0, Trainer

        self.model = CrnnV0(config, seed=0)
        self.trainer = Trainer(self.model)
        self.shapes = [self.model.parameter_shapes()[n] for n in self.model.parameter_names]
        self.layout = plan.flat_layout(int(np.prod(s)) for s in self.shapes)
        self.acc = None

    def load(self, flat: np.ndarray, shared) -> None:
        self.model._core.set_params([np.ascontiguousarray(flat[o:o + n]) for o, n in self.layout])

    def compute(self, parts) -> list:
        batch = parts[0][1][2]
        images = [p[0] for _, p in parts]
        labels = [p[1] for _, p in parts]
        return self.trainer._core.compute_lines(self.model._core, images, labels, batch)

    def chain(self, lo: int, hi: int, incoming):
        # The running sum in a buffer kept between steps (no allocation per
        # slice), returned as a view: Ray copies it into the object store.
        if self.acc is None:
            self.acc = np.empty(self.trainer._core.flat_len(), np.float32)
        acc = self.acc[lo:hi]
        if incoming is not None:
            np.copyto(acc, incoming)
        self.trainer._core.chain_lines(lo, acc, incoming is None)
        return acc


class _RecognizerFactory:
    def __init__(self, config):
        self.config = config

    def __call__(self):
        return RecognizerJob(self.config)


class DistributedTrainer(ClusterFront):
    """``trainer``'s steps computed on ``workers`` Ray actors.

    ``threads``: kernel threads per worker. ``address``: None starts a local
    Ray cluster (127.0.0.1 only), ``'auto'`` or ``'host:port'`` joins one.
    ``lines_per_worker``: most lines a worker holds at once (None: as many
    as fit in ``grad_memory`` bytes of line gradients). ``log``: where
    worker replacements are reported. ``kernel_path``: a path to force on
    every worker, or one per worker (None: each worker's best; the bits are
    the same on every path).

    ``step``, ``gradients``, ``save_checkpoint``, ``model``, ``step_count``
    and the hyper-parameters behave as the wrapped Trainer's."""

    def __init__(self, trainer, workers: int, threads: int | None = None, address: str | None = None,
                 lines_per_worker: int | None = None, grad_memory: int = GRAD_MEMORY_BYTES,
                 slice_elems: int | None = None, timeout: float = STEP_TIMEOUT_S, log=None, kernel_path=None):
        _ray.require()
        self.trainer = trainer
        paths = [kernel_path] * int(workers) if kernel_path is None or isinstance(kernel_path, str) else kernel_path
        self.cluster = Cluster(_RecognizerFactory(trainer.model.config), workers, threads=threads, address=address,
                               kernel_paths=paths)
        self.grad_len = trainer._core.flat_len()
        if lines_per_worker is None:
            lines_per_worker = max(1, int(grad_memory) // (4 * self.grad_len))
        self.lines_per_worker = int(lines_per_worker)
        self.runner = OrderedStep(self.cluster, per_round=self.lines_per_worker, slice_elems=slice_elems,
                                  timeout=timeout, log=log)
        self.last_line_losses = np.zeros(0)

    # -- the Trainer's face -----------------------------------------------------------
    def __getattr__(self, name):
        if name in ("model", "step_count", "lr", "betas", "eps", "weight_decay", "clip", "decay_biases",
                    "infinite_lines", "save_checkpoint", "_settings"):
            return getattr(self.trainer, name)
        raise AttributeError(name)

    def _compute(self, images, targets):
        """The batch gradient on the cluster, set into the trainer core;
        returns (loss, norm, line losses)."""
        tr = self.trainer
        imgs, labels = tr._batch(images, targets)
        tr._core.validate(tr.model._core, imgs, labels)
        weights = plan.concat(tr.model._core.params())
        b = len(imgs)
        parts = [(im, lab, b) for im, lab in zip(imgs, labels)]
        sums, line_losses = self.runner.run(weights, None, parts, self.grad_len, "exact")
        flat = np.empty(self.grad_len, np.float32)
        for (lo, hi), acc in sums:
            flat[lo:hi] = acc
        loss = _core.rec_batch_loss(list(line_losses))
        norm = tr._core.set_flat_grads(flat)
        return loss, norm, line_losses

    def _report(self, line_losses):
        self.trainer._report(line_losses)
        self.last_line_losses = self.trainer.last_line_losses

    def gradients(self, images, targets):
        """(mean loss, {name: batch gradient}) without updating anything."""
        loss, _, lines = self._compute(images, targets)
        self._report(lines)
        shapes = self.trainer.model.parameter_shapes()
        grads = self.trainer._core.grads(self.trainer.model._core)
        return loss, {n: g.reshape(shapes[n]) for n, g in zip(self.trainer.model.parameter_names, grads)}

    def step(self, images, targets):
        """One AdamW step: (mean loss, global gradient norm before clipping)."""
        loss, norm, lines = self._compute(images, targets)
        self.trainer._core.finish_step(self.trainer.model._core, norm)
        self._report(lines)
        return loss, norm

