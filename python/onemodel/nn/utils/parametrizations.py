"""torch.nn.utils.parametrizations: weight_norm over the parametrize API
(``parametrize.py``). The weight becomes ``g · v / ‖v‖`` (‖v‖ over every
dim but ``dim``; all dims for ``dim=None``), computed from the originals
``parametrizations.<name>.original0`` (g) and ``original1`` (v), the keys
of torch's state dict.

Not provided: ``spectral_norm`` and ``orthogonal`` in this form (the hook
API's ``nn.utils.spectral_norm`` exists), and the conversion of a
checkpoint's old ``<name>_g`` / ``<name>_v`` keys on ``load_state_dict``
(rename them to ``parametrizations.<name>.original0`` / ``original1``).
"""

from __future__ import annotations

from ...tensor import Tensor
from ..module import Module
from . import parametrize
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["weight_norm"]


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Weight normalization (Salimans and Kingma) of ``module.<name>`` as a
    parametrization: magnitude ``original0`` and direction ``original1``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module
