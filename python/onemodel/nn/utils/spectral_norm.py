"""torch.nn.utils.spectral_norm / remove_spectral_norm (the hook API):
the weight is divided by its largest singular value σ, estimated by power
iteration on the weight reshaped to a matrix (``dim`` first); the vectors
``<name>_u`` and ``<name>_v`` are buffers updated in training. σ = uᵀ(W v)
as torch: mv and dot are canonical GEMMs, normalize divides by
max(‖x‖, eps) (a double sum of squares)."""

from __future__ import annotations

from typing import Any

from ...grad_mode import no_grad
from ...tensor import Tensor
from ..parameter import Parameter
from ._param_hooks import refuse_second, remove_hook


def _normalize(x: Tensor, eps: float) -> Tensor:
    from ...ops.distance import normalize

    return normalize(x, dim=0, eps=eps)


class SpectralNorm:
    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}")
        self.name, self.dim, self.n_power_iterations, self.eps = name, dim, n_power_iterations, eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        w = weight
        if self.dim != 0:
            w = w.permute(self.dim, *[d for d in range(w.ndim) if d != self.dim])
        return w.reshape(w.shape[0], -1)

    def compute_weight(self, module, do_power_iteration: bool) -> Tensor:
        from ...ops.products import dot, mv

        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                wm = weight_mat.detach()
                for _ in range(self.n_power_iterations):
                    v.copy_(_normalize(mv(wm.t(), u), self.eps))
                    u.copy_(_normalize(mv(wm, v), self.eps))
                u, v = u.clone(), v.clone()
        sigma = dot(u, mv(weight_mat, v))
        return weight / sigma

    def remove(self, module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name: str, n_power_iterations: int, dim: int, eps: float) -> Any:
        refuse_second(module, SpectralNorm, name, "spectral_norm")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight.detach())
            h, w = weight_mat.shape
            u = _normalize(weight.detach().new_empty(h).normal_(0, 1), fn.eps)
            v = _normalize(weight.detach().new_empty(w).normal_(0, 1), fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u.contiguous())
        module.register_buffer(fn.name + "_v", v.contiguous())
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12, dim=None) -> Any:
    if dim is None:
        from ..conv import ConvTranspose1d, ConvTranspose2d

        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name: str = "weight") -> Any:
    return remove_hook(module, SpectralNorm, name, "spectral_norm")
