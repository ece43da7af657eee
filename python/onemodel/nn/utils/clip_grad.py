"""Gradient clipping (torch.nn.utils's names): ``clip_grad_norm_``,
``clip_grad_value_``, ``get_total_norm`` and ``clip_grads_with_norm_``.

The total norm is computed in double precision: each gradient's sum of
squares (or of |x|, or |x|^p; max |x| for inf) widened to f64 and added in
element order, the per-tensor sums added in parameter order, then the root.
The clip coefficient is ``float32(max_norm / (norm + 1e-6))``, computed in
double and rounded once, and is applied (one rounded multiply per element)
only when the norm exceeds ``max_norm``. torch instead computes in float32,
clamps the coefficient to 1 and always multiplies; the values agree to
float32 rounding (see docs/optim.md)."""

from __future__ import annotations

import math
import types
import warnings

from ... import _core
from ...tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _as_list(parameters) -> list:
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


def _norm_tensor(value: float) -> Tensor:
    from ...creation import tensor as make_tensor

    return make_tensor(value)


def _total_norm(grads: list, norm_type: float) -> float:
    if not grads:
        return 0.0
    return _core.global_norm(grads, norm_type)


def _check_finite(norm: float, norm_type: float) -> None:
    if math.isnan(norm) or math.isinf(norm):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """The ``norm_type``-norm of all the tensors together, as a 0-d float32
    tensor (double-precision sums, rounded once)."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    norm = _total_norm(tensors, norm_type)
    if error_if_nonfinite:
        _check_finite(norm, norm_type)
    return _norm_tensor(norm)


def _scale(grads: list, max_norm: float, norm: float) -> None:
    if not grads or not norm > max_norm:
        return
    # In place, one rounded multiply per element; the kernel bumps versions.
    _core.scale_(grads, max_norm / (norm + 1e-6))


def clip_grads_with_norm_(parameters, max_norm: float, total_norm, foreach=None) -> None:
    """Scale the gradients by ``float32(max_norm / (total_norm + 1e-6))`` when
    ``total_norm`` exceeds ``max_norm``."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    norm = float(total_norm.item() if isinstance(total_norm, Tensor) else total_norm)
    _scale(grads, float(max_norm), norm)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Clip the gradients' global norm to ``max_norm`` in place and return the
    total norm (before clipping) as a 0-d float32 tensor. With
    ``error_if_nonfinite`` a NaN or infinite norm raises RuntimeError before
    any gradient is touched. ``foreach`` is accepted and ignored."""
    is_generator = isinstance(parameters, types.GeneratorType)
    parameters = _as_list(parameters)
    if is_generator and not parameters:
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    norm_type = float(norm_type)
    max_norm = float(max_norm)
    # Double-precision norm of the gradients as they are (the clip coefficient
    # uses this double, not the float32 that is returned).
    norm = _total_norm(grads, norm_type)
    if error_if_nonfinite:
        _check_finite(norm, norm_type)
    _scale(grads, max_norm, norm)
    return _norm_tensor(norm)


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Deprecated alias of :func:`clip_grad_norm_` (as in torch)."""
    warnings.warn(
        "`onemodel.nn.utils.clip_grad_norm` is deprecated in favor of `clip_grad_norm_`.", FutureWarning, stacklevel=2
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient element to ``[-clip_value, clip_value]`` in place
    (NaN stays NaN, as torch.clamp)."""
    clip_value = float(clip_value)
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    _core.clamp_(grads, -clip_value, clip_value)
