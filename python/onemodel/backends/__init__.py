"""torch.backends' switches, accepted and without effect.

Programs set ``backends.cudnn.benchmark = True``,
``backends.cudnn.deterministic = True``, ``backends.cuda.matmul.allow_tf32 =
False`` and the like to trade speed for reproducibility on a GPU. onemodel
has no GPU backend and its results are the same bits on every CPU path and
thread count by construction, so these assignments are accepted, read back
as assigned, and change nothing. The availability queries answer False."""

from __future__ import annotations

from . import cpu, cuda, cudnn, mkldnn, mps, openmp

__all__ = ["cpu", "cuda", "cudnn", "mkldnn", "mps", "openmp"]
