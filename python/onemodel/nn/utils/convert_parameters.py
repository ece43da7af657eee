"""parameters_to_vector / vector_to_parameters (torch.nn.utils's)."""

from __future__ import annotations

from ...grad_mode import no_grad
from ...ops.join import cat
from ...tensor import Tensor


def parameters_to_vector(parameters) -> Tensor:
    """The parameters flattened and concatenated in order (differentiable)."""
    return cat([p.reshape(-1) for p in parameters], 0)


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Copy consecutive slices of ``vec`` into the parameters, in order."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.numel() != total:
        raise ValueError(f"vector_to_parameters: vec of shape {tuple(vec.shape)} does not hold the {total} parameter values")
    offset = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.copy_(vec[offset:offset + n].reshape(p.shape))
            offset += n


__all__ = ["parameters_to_vector", "vector_to_parameters"]
