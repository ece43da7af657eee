"""torch.nn.utils's names: gradient clipping (clip_grad), variable-length
sequences (rnn), parameters_to_vector / vector_to_parameters, the hook
API's weight_norm / spectral_norm, and the parametrize API (parametrize,
parametrizations.weight_norm)."""

from __future__ import annotations

from . import clip_grad, convert_parameters, parametrizations, parametrize, rnn
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad", "rnn", "convert_parameters", "parametrize", "parametrizations", "clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
    "clip_grads_with_norm_", "parameters_to_vector", "vector_to_parameters",
    "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm",
]
