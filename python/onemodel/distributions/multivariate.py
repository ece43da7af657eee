"""MultivariateNormal, as torch.distributions: parameterised by exactly one
of covariance_matrix, precision_matrix or scale_tril, kept as the lower
Cholesky factor L (linalg.cholesky, fixed order); log_prob by a triangular
solve (the Mahalanobis term) and Σ log diag(L)."""

from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from .distribution import Distribution, LocationMoments, as_float_tensor


def _batch_mahalanobis(scale_tril: Tensor, x: Tensor) -> Tensor:
    """xᵀ(LLᵀ)⁻¹x over the last dim: |L⁻¹x|², batch dims broadcast."""
    from ..ops.triangular import solve_triangular

    n = x.shape[-1]
    lead = tuple(np.broadcast_shapes(tuple(scale_tril.shape[:-2]), tuple(x.shape[:-1])))
    low = scale_tril.expand(lead + (n, n))
    sol = solve_triangular(low, x.expand(lead + (n,)).unsqueeze(-1), upper=False).squeeze(-1)
    return sol.pow(2).sum(-1)


def _precision_to_scale_tril(p: Tensor) -> Tensor:
    """torch's: Lf = cholesky(flip(P)); L = (flip(Lf)ᵀ)⁻¹ (lower)."""
    from ..creation import eye
    from ..ops.triangular import cholesky, solve_triangular

    lf = cholesky(p.flip((-2, -1)))
    l_inv = lf.flip((-2, -1)).transpose(-2, -1)
    ident = eye(p.shape[-1])
    return solve_triangular(l_inv, ident.expand(tuple(l_inv.shape)) if l_inv.ndim > 2 else ident, upper=False)


class MultivariateNormal(LocationMoments, Distribution):
    """MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None,
    scale_tril=None)."""

    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None) -> None:
        from ..ops.triangular import cholesky

        loc = as_float_tensor(loc)
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        given = next(m for m in (scale_tril, covariance_matrix, precision_matrix) if m is not None)
        name = "scale_tril" if scale_tril is not None else "covariance_matrix" if covariance_matrix is not None else "precision_matrix"
        if not isinstance(given, Tensor):
            raise TypeError(f"MultivariateNormal: {name} must be a Tensor, got {type(given).__name__}")
        if given.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional leading batch dimensions")
        n = loc.shape[-1]
        if given.shape[-1] != n or given.shape[-2] != n:
            raise ValueError(f"MultivariateNormal: {name} of shape {tuple(given.shape)} does not match loc of shape {tuple(loc.shape)}")
        try:
            batch_shape = tuple(np.broadcast_shapes(tuple(given.shape[:-2]), tuple(loc.shape[:-1])))
        except ValueError:
            raise ValueError(f"MultivariateNormal: the batch shapes of loc {tuple(loc.shape)} and {name} {tuple(given.shape)} do not broadcast") from None
        self.loc = loc.expand(batch_shape + (-1,))
        self._given = name
        validate = Distribution._default_validate_args if validate_args is None else bool(validate_args)
        # The given matrix is returned by its property as given (expanded),
        # as torch's; the others are computed from L.
        self._given_matrix = given.expand(batch_shape + (-1, -1))
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        else:
            if validate:
                self._check_symmetric(given, name)
            try:
                if covariance_matrix is not None:
                    self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
                else:
                    self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
            except RuntimeError as e:  # LinAlgError: not positive-definite
                if not validate:
                    raise
                raise ValueError(
                    f"Expected parameter {name} (Tensor of shape {tuple(given.shape)}) of distribution MultivariateNormal "
                    f"to satisfy the constraint PositiveDefinite(), but found invalid values ({e})"
                ) from None
        super().__init__(batch_shape, (n,), validate_args)

    @staticmethod
    def _check_symmetric(m: Tensor, name: str) -> None:
        v = m.detach().numpy(force=True)
        if not np.all(np.abs(v - np.swapaxes(v, -1, -2)) <= 1e-6 * np.maximum(np.abs(v), 1)):
            raise ValueError(
                f"Expected parameter {name} (Tensor of shape {tuple(m.shape)}) of distribution MultivariateNormal "
                "to satisfy the constraint PositiveDefinite(), but found invalid values (not symmetric)"
            )

    def _support_ok(self, v):
        return np.all(v == v, axis=-1)

    def _matrix_shape(self) -> tuple:
        return self._batch_shape + self._event_shape + self._event_shape

    @property
    def scale_tril(self) -> Tensor:
        if self._given == "scale_tril":
            return self._given_matrix
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @property
    def covariance_matrix(self) -> Tensor:
        if self._given == "covariance_matrix":
            return self._given_matrix
        low = self._unbroadcasted_scale_tril
        return (low @ low.transpose(-2, -1)).expand(self._matrix_shape())

    @property
    def precision_matrix(self) -> Tensor:
        from ..ops.triangular import cholesky_inverse

        if self._given == "precision_matrix":
            return self._given_matrix
        return cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def variance(self) -> Tensor:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        from ..creation import randn

        shape = self._extended_shape(tuple(sample_shape))
        eps = randn(*shape)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value) -> Tensor:
        value = as_float_tensor(value)
        self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self) -> Tensor:
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if not self._batch_shape else h.expand(self._batch_shape)

    def __repr__(self) -> str:
        return f"MultivariateNormal(loc: {tuple(self.loc.shape)}, {self._given}: {tuple(self._unbroadcasted_scale_tril.shape)})"
