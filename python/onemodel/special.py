"""torch.special's names that onemodel computes: the fixed functions
(erf, erfc, erfinv, expm1, exp2, log1p, sinc, round), the activations and
reductions under their special names (expit, logit, softmax, log_softmax,
logsumexp), xlogy, entr, xlog1py and ndtr (``ops/special_fns.py``), and the
gamma family's gammaln, digamma/psi, polygamma and multigammaln
(``ops/gamma_fns.py``). Not provided (they need transcendentals onemodel
does not have): gammainc/gammaincc, zeta, the Bessel functions (i0, i0e,
i1, i1e, bessel_j0/j1, ...), erfcx, ndtri, log_ndtr and the orthogonal
polynomials."""

from __future__ import annotations

from .ops.binary_math import logit, xlogy
from .ops.gamma_fns import digamma, lgamma as gammaln, mvlgamma as multigammaln, polygamma
from .ops.pointwise import erf, sigmoid as expit
from .ops.reduce import logsumexp
from .ops.rounding import round
from .ops.softmax import log_softmax as _log_softmax, softmax as _softmax
from .ops.special_fns import entr, ndtr, xlog1py
from .ops.transcendental import erfc, erfinv, exp2, expm1, log1p, sinc


def softmax(input, dim, *, dtype=None):
    """torch.special.softmax(input, dim, *, dtype=None)."""
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """torch.special.log_softmax(input, dim, *, dtype=None)."""
    return _log_softmax(input, dim, dtype=dtype)


psi = digamma

__all__ = [
    "digamma", "gammaln", "multigammaln", "polygamma", "psi",
    "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "log1p", "log_softmax", "logit", "logsumexp", "ndtr",
    "round", "sinc", "softmax", "xlog1py", "xlogy",
]
