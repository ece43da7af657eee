"""GradientCheck: analytic gradients against central float32 differences.

For a function f and inputs x, the scalar checked is L = Σ W·f(x) with W a
fixed pseudo-random tensor (per output, uniform in [-1, 1], from ``seed``)
and the sum taken in double precision. The analytic gradient is one backward
pass with gradient W; the numeric one perturbs each input element by ±eps in
float32 and divides the change of L by the actual float32 distance between
the two perturbed values. Inputs keep their layout (strided and transposed
leaves stay strided), so the kernels' strided paths are exercised too.

Set ``ONEMODEL_GRADCHECK_LOG=<file>`` to append the worst errors per check.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from . import _core
from .grad_mode import no_grad
from .tensor import Tensor


@dataclasses.dataclass
class InputReport:
    index: int
    shape: tuple
    max_abs_error: float
    max_scaled_error: float  # max |a - n| / (atol + rtol·|n|); ≤ 1 passes
    worst_element: int
    analytic: float
    numeric: float


@dataclasses.dataclass
class GradcheckReport:
    name: str
    inputs: list
    passed: bool

    @property
    def max_abs_error(self) -> float:
        return max((r.max_abs_error for r in self.inputs), default=0.0)

    @property
    def max_scaled_error(self) -> float:
        return max((r.max_scaled_error for r in self.inputs), default=0.0)

    def __str__(self) -> str:
        lines = [f"gradient_check {self.name}: {'passed' if self.passed else 'FAILED'}"]
        for r in self.inputs:
            lines.append(
                f"  input {r.index} {r.shape}: max |err| {r.max_abs_error:.3e}, scaled {r.max_scaled_error:.3f} "
                f"(element {r.worst_element}: analytic {r.analytic:.6g}, numeric {r.numeric:.6g})"
            )
        return "\n".join(lines)


class GradcheckError(AssertionError):
    pass


def _clone_layout(x: Tensor) -> Tensor:
    """A detached copy of `x` with the same shape, strides and offset."""
    storage = _core.Storage.empty(x.dtype.name, x._storage.numel)
    n = x._storage.numel
    if n:
        storage.numpy([n], [1], 0)[...] = x._storage.numpy([n], [1], 0)
    return Tensor._make(storage, x.shape, x._strides, x._offset, x.dtype)


def _outputs(out) -> list:
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)) and all(isinstance(o, Tensor) for o in out):
        return list(out)
    raise TypeError(f"gradient_check: the function must return a Tensor or a tuple of Tensors, got {type(out).__name__}")


def gradient_check(
    fn,
    inputs,
    *,
    eps: float = 1e-3,
    atol: float = 1e-3,
    rtol: float = 1e-2,
    seed: int = 0,
    name: str | None = None,
    raise_on_failure: bool = True,
) -> GradcheckReport:
    """Check ``fn(*inputs)``'s gradients for every input with requires_grad."""
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    inputs = list(inputs)
    checked = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not checked:
        raise ValueError("gradient_check: no input requires grad")
    name = name or getattr(fn, "__name__", "fn")

    base = [(_clone_layout(x).requires_grad_(True) if i in checked else x) for i, x in enumerate(inputs)]
    outs = _outputs(fn(*base))
    rng = np.random.default_rng(seed)
    weights = [rng.uniform(-1.0, 1.0, size=o.shape).astype(np.float32) for o in outs]

    # Analytic: one backward pass per output with gradient W (accumulating).
    from .creation import tensor as make_tensor

    for o, w in zip(outs, weights):
        if o.requires_grad:
            o.backward(make_tensor(w), retain_graph=True)
    analytic = {i: (base[i].grad.numpy().astype(np.float64) if base[i].grad is not None else np.zeros(base[i].shape)) for i in checked}

    def loss(args) -> float:
        with no_grad():
            res = _outputs(fn(*args))
        return float(sum(np.sum(np.asarray(r.numpy(force=True), dtype=np.float64) * w.astype(np.float64)) for r, w in zip(res, weights)))

    reports = []
    passed = True
    for i in checked:
        x = inputs[i]
        work = [(_clone_layout(a) if j == i else (base[j].detach() if j in checked else a)) for j, a in enumerate(inputs)]
        xv = work[i].numpy(force=True)  # a strided view of the working copy
        flat_index = list(np.ndindex(*x.shape)) if x.shape else [()]
        numeric = np.zeros(x.shape, dtype=np.float64)
        for idx in flat_index:
            orig = np.float32(xv[idx])
            plus = np.float32(orig + np.float32(eps))
            minus = np.float32(orig - np.float32(eps))
            xv[idx] = plus
            lp = loss(work)
            xv[idx] = minus
            lm = loss(work)
            xv[idx] = orig
            numeric[idx] = (lp - lm) / (float(plus) - float(minus))
        a = analytic[i]
        err = np.abs(a - numeric)
        scaled = err / (atol + rtol * np.abs(numeric))
        worst = int(np.argmax(scaled)) if scaled.size else 0
        ok = bool(np.all(scaled <= 1.0)) and bool(np.all(np.isfinite(a)))
        passed = passed and ok
        reports.append(
            InputReport(
                index=i,
                shape=tuple(x.shape),
                max_abs_error=float(err.max()) if err.size else 0.0,
                max_scaled_error=float(scaled.max()) if scaled.size else 0.0,
                worst_element=worst,
                analytic=float(a.reshape(-1)[worst]) if a.size else 0.0,
                numeric=float(numeric.reshape(-1)[worst]) if numeric.size else 0.0,
            )
        )
    report = GradcheckReport(name=name, inputs=reports, passed=passed)
    log = os.environ.get("ONEMODEL_GRADCHECK_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            for r in reports:
                f.write(f"{name}\tinput {r.index}\t{r.shape}\tmax_abs {r.max_abs_error:.3e}\tscaled {r.max_scaled_error:.3f}\n")
    if raise_on_failure and not passed:
        raise GradcheckError(str(report))
    return report


__all__ = ["gradient_check", "GradcheckReport", "GradcheckError", "InputReport"]
