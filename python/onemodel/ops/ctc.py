"""CTC loss (torch.nn.functional.ctc_loss's signature) over log-probabilities.

The recursions run in double precision with the DetMath exp/log
(rust/src/kernels/ctc.rs), identical in both modes and at every thread
count. The gradient is the true partial derivative of the loss with respect
to the log-probabilities. PyTorch's differs: it adds exp(lp)·w on every
frame a line uses (w the line's loss weight), a term a following
log_softmax removes, so gradients with respect to logits, and everything
upstream, agree with torch's.

Reductions: 'none' ([B]), 'sum', and 'mean' (each loss divided by
max(1, target length), then averaged over the batch — torch's definition).
A line whose input is too short for its target has loss +inf (0 with
zero_infinity) and a zero gradient either way.
"""

from __future__ import annotations

import numpy as np

from .. import _core
from ..autograd.function import Function
from ..tensor import Tensor, float32


class CTCLoss(Function):
    def forward(self, log_probs, targets, input_lengths, blank, reduction, zero_infinity):
        self.targets, self.input_lengths, self.blank = targets, input_lengths, blank
        self.reduction = reduction
        if self.needs_input_grad[0]:
            # The forward recursions are kept for backward (as torch keeps
            # its log_alpha): T·(2L + 1) doubles a line.
            losses, self.alphas = _core.ctc_forward(log_probs, targets, input_lengths, blank)
        else:
            losses, self.alphas = _core.ctc_losses(log_probs, targets, input_lengths, blank), None
        self.infinite = [v == float("inf") for v in losses]
        if zero_infinity:
            losses = [0.0 if inf else v for v, inf in zip(losses, self.infinite)]
        self.save_for_backward(log_probs)
        self.divisors = [float(max(1, len(t))) for t in targets]
        if reduction == "none":
            out = Tensor._empty((len(losses),))
            if losses:
                out.numpy(force=True)[...] = np.array(losses, dtype=np.float64).astype(np.float32)
            return out
        total = 0.0
        for v, d in zip(losses, self.divisors):
            total += v / d if reduction == "mean" else v
        if reduction == "mean":
            total = total / len(losses) if losses else float("nan")
        out = Tensor._empty(())
        out.numpy(force=True)[...] = np.float32(total)
        return out

    def backward(self, g):
        (log_probs,) = self.saved_tensors
        gv = g.numpy(force=True).astype(np.float64).reshape(-1)
        n = len(self.targets)
        scales = []
        for b in range(n):
            if self.infinite[b]:
                scales.append(0.0)
            elif self.reduction == "none":
                scales.append(float(gv[b]))
            elif self.reduction == "sum":
                scales.append(float(gv[0]))
            else:
                scales.append(float(gv[0]) / self.divisors[b] / n)
        grad = Tensor._empty(log_probs.shape, zeroed=True)
        _core.ctc_grad(log_probs, self.targets, self.input_lengths, self.blank, scales, grad, self.alphas)
        return grad


def _int_list(name: str, value) -> list:
    if isinstance(value, Tensor):
        if value.dtype.is_floating_point:
            raise TypeError(f"ctc_loss: {name} must hold integers, got {value.dtype.name}")
        value = value.tolist()
    elif isinstance(value, np.ndarray):
        if not np.issubdtype(value.dtype, np.integer):
            raise TypeError(f"ctc_loss: {name} must hold integers, got {value.dtype}")
        value = value.tolist()
    try:
        return [int(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
    except (TypeError, ValueError):
        raise TypeError(f"ctc_loss: {name} must be a sequence of ints") from None


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
    """torch.nn.functional.ctc_loss: log_probs [T, B, C] (or [T, C]),
    targets padded [B, S] or concatenated 1-D. The sizes, lengths, labels
    and reduction are checked by the core's geometry (rust/src/geometry/ctc.rs),
    which also cuts the targets into lines; only the kinds are checked here."""
    if not isinstance(log_probs, Tensor) or log_probs.dtype is not float32:
        raise TypeError("ctc_loss: log_probs must be a float32 Tensor")
    in_len = _int_list("input_lengths", input_lengths)
    tg_len = _int_list("target_lengths", target_lengths)
    if isinstance(targets, Tensor):
        if targets.dtype.is_floating_point:
            raise TypeError(f"ctc_loss: targets must be int64, got {targets.dtype.name}")
        tarr = np.asarray(targets.numpy(force=True))
    else:
        tarr = np.asarray(targets)
        if tarr.size and not np.issubdtype(tarr.dtype, np.integer):
            raise TypeError(f"ctc_loss: targets must hold integers, got {tarr.dtype}")
    _, unbatched, blank, in_len, lines = _core.ctc_geometry(
        tuple(log_probs.shape), tarr.shape, tarr.reshape(-1).astype(np.int64).tolist(), in_len, tg_len, int(blank), str(reduction))
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
    out = CTCLoss.apply(log_probs, lines, in_len, blank, reduction, bool(zero_infinity))
    if unbatched and reduction == "none":
        out = out.reshape(())
    return out
