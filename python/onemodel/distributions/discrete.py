"""Categorical and Bernoulli, as torch.distributions."""

from __future__ import annotations

from typing import Any

import numbers

import numpy as np

from ..tensor import Tensor, float32
from .distribution import Distribution, broadcast_all, logits_to_probs, probs_to_logits

_FLOAT_MIN = float(np.finfo(np.float32).min)


class Categorical(Distribution):
    """Categorical(probs=None, logits=None): probs are normalised along the
    last dim, logits normalised by logsumexp."""

    @property
    def arg_constraints(self) -> dict:
        return {"_probs": "simplex"} if self._probs is not None else {"_logits": "real_vector"}

    def _support_ok(self, v):
        return (v == np.floor(v)) & (v >= 0) & (v <= self._num_events - 1)

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self._probs = probs / probs.sum(-1, keepdim=True)
            self._logits = None
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self._logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            self._probs = None
        param = self._probs if probs is not None else self._logits
        self._num_events = param.shape[-1]
        super().__init__(tuple(param.shape[:-1]) if param.ndim > 1 else (), (), validate_args)

    @property
    def logits(self) -> Tensor:
        if self._logits is None:
            self._logits = probs_to_logits(self._probs)
        return self._logits

    @property
    def probs(self) -> Tensor:
        if self._probs is None:
            self._probs = logits_to_probs(self._logits)
        return self._probs

    @property
    def param_shape(self) -> Any:
        return (self._probs if self._probs is not None else self._logits).shape

    @property
    def mean(self) -> Tensor:
        from ..creation import full

        return full(self._extended_shape(), float("nan"))

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        from ..creation import full

        return full(self._extended_shape(), float("nan"))

    def _sample(self, sample_shape: tuple) -> Tensor:
        from ..ops.random import multinomial

        n = 1
        for s in sample_shape:
            n *= s
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        draws = multinomial(probs_2d, n, True)  # [rows, n]
        return draws.t().reshape(self._extended_shape(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        from ..ops.index import gather

        self._validate_sample(value)
        from ..ops.stacking import broadcast_tensors

        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return gather(log_pmf, -1, value.contiguous()).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=_FLOAT_MIN)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        from ..creation import arange

        values = arange(self._num_events).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values


def _bce_with_logits(logits: Tensor, target: Tensor) -> Tensor:
    """torch's binary_cross_entropy_with_logits formula, elementwise, with
    gradients to both arguments: (1 − t)·x + m + log(exp(−m) + exp(−x − m)),
    m = max(−x, 0)."""
    m = (-logits).clamp(min=0.0)
    return (1.0 - target) * logits + m + ((-m).exp() + (-logits - m).exp()).log()


class Bernoulli(Distribution):
    """Bernoulli(probs=None, logits=None)."""

    @property
    def arg_constraints(self) -> dict:
        return {"_probs": "unit_interval"} if self._probs is not None else {"_logits": "real"}

    def _support_ok(self, v):
        return (v == 0) | (v == 1)

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        self._probs, self._logits = (param, None) if probs is not None else (None, param)
        super().__init__(() if isinstance(given, numbers.Number) else tuple(param.shape), (), validate_args)

    @property
    def logits(self) -> Tensor:
        if self._logits is None:
            self._logits = probs_to_logits(self._probs, is_binary=True)
        return self._logits

    @property
    def probs(self) -> Tensor:
        if self._probs is None:
            self._probs = logits_to_probs(self._logits, is_binary=True)
        return self._probs

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        from ..ops.selection import masked_fill

        p = self.probs
        m = (p >= 0.5).float()
        return masked_fill(m, p == 0.5, float("nan"))

    @property
    def variance(self) -> Tensor:
        return self.probs * (1.0 - self.probs)

    def _sample(self, sample_shape: tuple) -> Tensor:
        from ..creation import bernoulli

        p = self.probs.detach().expand(self._extended_shape(sample_shape))
        return bernoulli(p.contiguous())

    def log_prob(self, value: Tensor) -> Tensor:
        from ..ops.stacking import broadcast_tensors

        self._validate_sample(value)
        logits, value = broadcast_tensors(self.logits, value if value.dtype is float32 else value.float())
        return -_bce_with_logits(logits, value)

    def entropy(self) -> Tensor:
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        from ..creation import arange

        values = arange(2.0).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values
