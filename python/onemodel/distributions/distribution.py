"""The Distribution base (batch_shape, event_shape, sample/rsample,
sample_shape handling) and torch.distributions.utils' conversions."""

from __future__ import annotations

import numbers

import numpy as np

from .._shape import Size
from ..tensor import Tensor, float32

_EPS = float(np.finfo(np.float32).eps)


def as_float_tensor(x) -> Tensor:
    from ..creation import tensor

    if isinstance(x, Tensor):
        return x if x.dtype is float32 else x.float()
    if isinstance(x, numbers.Number):
        return tensor(float(x))
    raise TypeError(f"expected a Tensor or a number, got {type(x).__name__}")


def broadcast_all(*values) -> tuple:
    from ..ops.stacking import broadcast_tensors

    ts = [as_float_tensor(v) for v in values]
    return broadcast_tensors(*ts) if len(ts) > 1 else (ts[0],)


def clamp_probs(probs: Tensor) -> Tensor:
    return probs.clamp(min=_EPS, max=1 - _EPS)


def _log1p(x: Tensor) -> Tensor:
    import onemodel

    fn = getattr(onemodel, "log1p", None)
    return fn(x) if fn is not None else (x + 1.0).log()


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    p = clamp_probs(probs)
    return p.log() - _log1p(-p) if is_binary else p.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    return logits.sigmoid() if is_binary else logits.softmax(-1)


class Distribution:
    has_rsample = False

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)
        self._validate_args = bool(validate_args)

    @property
    def batch_shape(self) -> Size:
        return Size(self._batch_shape)

    @property
    def event_shape(self) -> Size:
        return Size(self._event_shape)

    def _extended_shape(self, sample_shape=()) -> tuple:
        return tuple(sample_shape) + self._batch_shape + self._event_shape

    def sample(self, sample_shape=()):
        from ..grad_mode import no_grad

        with no_grad():
            return self.rsample(sample_shape) if self.has_rsample else self._sample(tuple(sample_shape))

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} has no reparameterized sampler (rsample)")

    def sample_n(self, n: int):
        return self.sample((n,))

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
