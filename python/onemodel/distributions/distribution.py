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


# The constraints torch checks by default (validate_args): name -> a test
# on the detached values (NumPy), True where valid.
CONSTRAINTS = {
    "real": lambda v: v == v,
    "real_vector": lambda v: np.all(v == v, axis=-1),
    "positive": lambda v: v > 0,
    "nonnegative": lambda v: v >= 0,
    "unit_interval": lambda v: (v >= 0) & (v <= 1),
    "simplex": lambda v: np.all(v >= 0, axis=-1) & (np.abs(v.sum(-1) - 1) < 1e-6),
    "boolean": lambda v: (v == 0) | (v == 1),
}


def _values(t) -> np.ndarray:
    return t.detach().numpy(force=True) if isinstance(t, Tensor) else np.asarray(t)


class Distribution:
    has_rsample = False
    #: param -> constraint name (CONSTRAINTS), checked at construction.
    arg_constraints: dict = {}
    _default_validate_args = True

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        if value not in (True, False):
            raise ValueError
        Distribution._default_validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None) -> None:
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)
        self._validate_args = Distribution._default_validate_args if validate_args is None else bool(validate_args)
        if self._validate_args:
            for param, name in self.arg_constraints.items():
                value = getattr(self, param, None)
                if value is None:
                    continue
                if not np.all(CONSTRAINTS[name](_values(value))):
                    raise ValueError(
                        f"Expected parameter {param.lstrip('_')} (Tensor of shape {tuple(value.shape)}) of distribution {self!r} "
                        f"to satisfy the constraint {name}, but found invalid values:\n{value}"
                    )

    def _support_ok(self, v: np.ndarray) -> np.ndarray:  # subclasses
        return np.ones(v.shape, bool)

    def _validate_sample(self, value) -> None:
        if not self._validate_args:
            return
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        if not np.all(self._support_ok(_values(value))):
            raise ValueError(
                f"Expected value argument (Tensor of shape {tuple(value.shape)}) to be within the support of the "
                f"distribution {self!r}, but found invalid values:\n{value}"
            )

    @property
    def batch_shape(self) -> Size:
        return Size(self._batch_shape)

    @property
    def event_shape(self) -> Size:
        return Size(self._event_shape)

    def _extended_shape(self, sample_shape=()) -> tuple:
        return tuple(sample_shape) + self._batch_shape + self._event_shape

    def sample(self, sample_shape=()) -> Tensor:
        from ..grad_mode import no_grad

        with no_grad():
            return self.rsample(sample_shape) if self.has_rsample else self._sample(tuple(sample_shape))

    def rsample(self, sample_shape=()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no reparameterized sampler (rsample)")

    def sample_n(self, n: int) -> Tensor:
        return self.sample((n,))

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class LocationMoments:
    """For families whose mean and mode are their location ``loc`` (Normal,
    Laplace, MultivariateNormal)."""

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc
