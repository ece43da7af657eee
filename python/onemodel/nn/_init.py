"""Parameter initialisation with torch's bounds, from onemodel's generator
(so the values differ from torch's for the same seed)."""

from __future__ import annotations

import math

from ..grad_mode import no_grad


def _gen(generator):
    from ..creation import default_generator

    return (generator or default_generator)._g


def uniform_(t, low: float, high: float, generator=None):
    with no_grad():
        _gen(generator).uniform_(t, low, high)
        t._bump()
    return t


def normal_(t, mean: float = 0.0, std: float = 1.0, generator=None):
    with no_grad():
        _gen(generator).normal_(t, mean, std)
        t._bump()
    return t


def constant_(t, value: float):
    with no_grad():
        t.fill_(value)
    return t


def fan_in_out(shape) -> tuple:
    receptive = 1
    for s in shape[2:]:
        receptive *= s
    return shape[1] * receptive, shape[0] * receptive


def kaiming_uniform_a_sqrt5_(t, generator=None):
    """torch's default for Linear/Conv weights: kaiming_uniform_(a=√5), i.e. U(±1/√fan_in)."""
    fan_in, _ = fan_in_out(t.shape)
    bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
    return uniform_(t, -bound, bound, generator)


def xavier_uniform_(t, gain: float = 1.0, generator=None):
    fan_in, fan_out = fan_in_out(t.shape)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(t, -bound, bound, generator)
