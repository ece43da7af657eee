"""The regression and binary-classification losses of
torch.nn.functional: mse_loss, l1_loss, smooth_l1_loss, huber_loss,
kl_div, binary_cross_entropy, binary_cross_entropy_with_logits, and the
label-smoothing part of cross_entropy.

Each loss is an element-wise loss followed by the reduction: 'none', or
onemodel.sum / onemodel.mean (double accumulation in increasing element
order, rounded once). The element-wise parts compose the element-wise
operators (one IEEE operation or fixed transcendental per step), except
the two binary cross-entropies, which are operators of their own with
torch's backward formulas, because composing them would divide 0 by 0
where the input saturates (σ(x) = 1 in float32): BCE's gradient is
g·(x − y)/max((1 − x)·x, 1e-12), BCE-with-logits' g·(lw·σ(x) − pw·y).
The backward rounding order of the composed losses differs from torch's
fused kernels (a few ulps); their values are torch's formulas.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor
from . import reduce as _reduce, views
from .operands import check_float, float_target, scalar_tensor
from .._kernels import binary_kernel, expand_to, unary_kernel
from .pointwise import _unary_p, abs as _abs, log
from .selection import where


def reduction_of(op: str, size_average, reduce_, reduction: str) -> str:
    """torch's legacy (size_average, reduce) pair mapped to a reduction,
    with its deprecation warning; then the reduction checked."""
    if size_average is not None or reduce_ is not None:
        size_average = True if size_average is None else size_average
        reduce_ = True if reduce_ is None else reduce_
        reduction = "mean" if (size_average and reduce_) else ("sum" if reduce_ else "none")
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.", stacklevel=3)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{op}: {reduction!r} is not a valid value for reduction (use 'none', 'mean' or 'sum')")
    return reduction


def reduce_loss(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    return _reduce.sum(loss) if reduction == "sum" else _reduce.mean(loss)


def _pair(op: str, input, target, warn: bool = True):
    """input and target broadcast to one shape (torch warns when the sizes
    differ, because broadcasting a loss is usually a bug). An int64 or bool
    target is promoted to float32, as torch promotes it."""
    target = float_target(target)
    check_float(op, input=input, target=target)
    if warn and tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({tuple(target.shape)}) that is different to the input size ({tuple(input.shape)}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )
    shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(target.shape)))
    if tuple(input.shape) != shape:
        input = views.expand(input, shape)
    if tuple(target.shape) != shape:
        target = views.expand(target, shape)
    return input, target


def _weighted(op: str, loss: Tensor, weight, input_shape, reduction: str, mean_by_weight: bool) -> Tensor:
    """The optional element weights of mse/l1/huber (torch 2.x)."""
    if weight is None:
        return reduce_loss(loss, reduction)
    check_float(op, weight=weight)
    if tuple(weight.shape) != tuple(input_shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "mean" and mean_by_weight:
        return _reduce.sum(loss) / _reduce.sum(weight)
    return reduce_loss(loss, reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None) -> Tensor:
    """mean((input − target)²)."""
    op = "mse_loss"
    reduction = reduction_of(op, size_average, reduce, reduction)
    x, y = _pair(op, input, target)
    d = x - y
    return _weighted(op, d.square(), weight, input.shape, reduction, True)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None) -> Tensor:
    """mean(|input − target|); the gradient at a tie is 0 (sign(0))."""
    op = "l1_loss"
    reduction = reduction_of(op, size_average, reduce, reduction)
    x, y = _pair(op, input, target)
    return _weighted(op, _abs(x - y), weight, input.shape, reduction, True)


def _piecewise(z: Tensor, threshold: float, quadratic: Tensor, linear: Tensor) -> Tensor:
    return where(z.detach() < threshold, quadratic, linear)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0) -> Tensor:
    """0.5·z²/β where z = |input − target| < β, else z − 0.5·β (β = 0: l1)."""
    op = "smooth_l1_loss"
    reduction = reduction_of(op, size_average, reduce, reduction)
    if beta < 0:
        raise ValueError(f"{op}: smooth_l1_loss does not support negative values for beta (got {beta})")
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    x, y = _pair(op, input, target)
    z = _abs(x - y)
    loss = _piecewise(z, beta, (z * 0.5) * z / beta, z - 0.5 * beta)
    return reduce_loss(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None) -> Tensor:
    """0.5·z² where z = |input − target| < δ, else δ·(z − 0.5·δ)."""
    op = "huber_loss"
    reduction = reduction_of(op, None, None, reduction)
    if delta <= 0:
        raise ValueError(f"{op}: huber_loss does not support non-positive values for delta (got {delta})")
    x, y = _pair(op, input, target)
    z = _abs(x - y)
    loss = _piecewise(z, delta, (z * 0.5) * z, (z - 0.5 * delta) * delta)
    return _weighted(op, loss, weight, input.shape, reduction, False)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False) -> Tensor:
    """Pointwise target·(log target − input) (0 where target = 0), or
    exp(target)·(target − input) with log_target; 'batchmean' divides the
    sum by the batch size."""
    op = "kl_div"
    if size_average is not None or reduce is not None:
        reduction = reduction_of(op, size_average, reduce, "mean")
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
            stacklevel=2,
        )
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{op}: {reduction!r} is not a valid value for reduction")
    check_float(op, input=input, target=target)  # torch refuses integral kl_div targets
    x, y = _pair(op, input, target, warn=False)
    if log_target:
        from .pointwise import exp

        loss = exp(y) * (y - x)
    else:
        safe = where(y.detach() == 0, 1.0, y)  # log(1) = 0, so 0·log 0 counts as 0 (torch's xlogy)
        loss = y * log(safe) - y * x
    if reduction == "batchmean":
        if input.ndim == 0:
            return _reduce.sum(loss)
        return _reduce.sum(loss) / input.shape[0]
    return reduce_loss(loss, reduction)


# -- binary cross-entropy ----------------------------------------------------------------

def _scalar(v: float, shape) -> Tensor:
    return expand_to(scalar_tensor(v), tuple(shape), "loss")


def _clamped_logs(x: Tensor) -> tuple:
    """(max(log x, −100), max(log(1 − x), −100))."""
    one = _scalar(1.0, x.shape)
    nan = float("nan")  # no upper bound
    log_x = _unary_p("clamp", unary_kernel("log", x), -100.0, nan)
    log_1mx = _unary_p("clamp", unary_kernel("log", binary_kernel("sub", one, x)), -100.0, nan)
    return log_x, log_1mx


class BinaryCrossEntropyFn(Function):
    """Element-wise (y − 1)·max(log(1 − x), −100) − y·max(log x, −100),
    times the weight when one is given. Inputs: x, y, [weight], one shape."""

    name = "BinaryCrossEntropy"

    @staticmethod
    def _unweighted(x, y):
        log_x, log_1mx = _clamped_logs(x)
        one = _scalar(1.0, x.shape)
        return binary_kernel("sub", binary_kernel("mul", binary_kernel("sub", y, one), log_1mx), binary_kernel("mul", y, log_x))

    def forward(self, x, y, w=None):
        loss = self._unweighted(x, y)
        if w is not None:
            loss = binary_kernel("mul", loss, w)
        self.save_for_backward(x, y, w)
        return loss

    def backward(self, g):
        x, y, w = self.saved_tensors
        needs = self.needs_input_grad
        one = _scalar(1.0, x.shape)
        gw_base = g if w is None else binary_kernel("mul", g, w)
        gx = gy = gw = None
        if needs[0]:
            denom = binary_kernel("maximum", binary_kernel("mul", binary_kernel("sub", one, x), x), _scalar(1e-12, x.shape))
            gx = binary_kernel("div", binary_kernel("mul", gw_base, binary_kernel("sub", x, y)), denom)
        if needs[1]:
            log_x, log_1mx = _clamped_logs(x)  # d/dy = max(log(1 − x), −100) − max(log x, −100)
            gy = binary_kernel("mul", gw_base, binary_kernel("sub", log_1mx, log_x))
        if w is not None and needs[2]:
            gw = binary_kernel("mul", g, self._unweighted(x, y))
        return (gx, gy) if w is None else (gx, gy, gw)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """−w·(y·log x + (1 − y)·log(1 − x)), each log clamped at −100 (torch's)."""
    op = "binary_cross_entropy"
    reduction = reduction_of(op, size_average, reduce, reduction)
    check_float(op, input=input, target=target, weight=weight)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({tuple(target.shape)}) that is different to the input size ({tuple(input.shape)}) is deprecated. "
            "Please ensure they have the same size."
        )
    xv = input.detach().numpy()
    if not np.all((xv >= 0) & (xv <= 1)):
        raise RuntimeError(f"{op}: all elements of input should be between 0 and 1")
    yv = target.detach().numpy()
    if not np.all((yv >= 0) & (yv <= 1)):
        raise RuntimeError(f"{op}: all elements of target should be between 0 and 1")
    if weight is None:
        loss = BinaryCrossEntropyFn.apply(input, target)
    else:
        shape = tuple(input.shape)
        try:
            ok = tuple(np.broadcast_shapes(tuple(weight.shape), shape)) == shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"{op}: weight of shape {tuple(weight.shape)} cannot be broadcast to the input's shape {shape}")
        w = views.expand(weight, shape) if tuple(weight.shape) != shape else weight
        loss = BinaryCrossEntropyFn.apply(input, target, w)
    return reduce_loss(loss, reduction)


class BCEWithLogitsFn(Function):
    """Element-wise (1 − y)·x − lw·logσ(x), lw = (pw − 1)·y + 1 (1 without
    pos_weight), logσ(x) = min(x, 0) − log(1 + exp(−|x|)); times the weight.
    Inputs: x, y, then weight and pos_weight when given (all x's shape)."""

    name = "BinaryCrossEntropyWithLogits"

    def forward(self, x, y, *rest, has_weight: bool, has_pos: bool):
        w = rest[0] if has_weight else None
        pw = rest[-1] if has_pos else None
        self.has_weight, self.has_pos = has_weight, has_pos
        one = _scalar(1.0, x.shape)
        zero = _scalar(0.0, x.shape)
        softplus_neg_abs = unary_kernel("log", binary_kernel("add", one, unary_kernel("exp", unary_kernel("neg", unary_kernel("abs", x)))))
        log_sig = binary_kernel("sub", binary_kernel("minimum", x, zero), softplus_neg_abs)
        if pw is not None:
            lw = binary_kernel("add", binary_kernel("mul", binary_kernel("sub", pw, one), y), one)
            log_sig = binary_kernel("mul", log_sig, lw)
        loss = binary_kernel("sub", binary_kernel("mul", binary_kernel("sub", one, y), x), log_sig)
        if w is not None:
            loss = binary_kernel("mul", loss, w)
        self.save_for_backward(x, y, w, pw)
        return loss

    def backward(self, g):
        x, y, w, pw = self.saved_tensors
        sig = unary_kernel("sigmoid", x)
        if pw is not None:
            one = _scalar(1.0, x.shape)
            lw = binary_kernel("add", binary_kernel("mul", binary_kernel("sub", pw, one), y), one)
            d = binary_kernel("sub", binary_kernel("mul", lw, sig), binary_kernel("mul", pw, y))
        else:
            d = binary_kernel("sub", sig, y)
        gx = binary_kernel("mul", d, g)
        if w is not None:
            gx = binary_kernel("mul", gx, w)
        needs = self.needs_input_grad
        if any(needs[1:]):
            raise RuntimeError(
                "binary_cross_entropy_with_logits: gradients with respect to target, weight or pos_weight are not "
                "supported; detach them"
            )
        return (gx,) + (None,) * (len(needs) - 1)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None) -> Tensor:
    """BCE on sigmoid(input), computed stably from the logits; pos_weight
    (broadcast along the last dimension, one weight per class) weighs the
    positive term."""
    op = "binary_cross_entropy_with_logits"
    reduction = reduction_of(op, size_average, reduce, reduction)
    check_float(op, input=input, target=target, weight=weight, pos_weight=pos_weight)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({tuple(target.shape)}) must be the same as input size ({tuple(input.shape)})")
    shape = tuple(input.shape)
    rest = []
    for name, t in (("weight", weight), ("pos_weight", pos_weight)):
        if t is None:
            continue
        try:
            b = np.broadcast_shapes(tuple(t.shape), shape)
        except ValueError:
            raise ValueError(f"{op}: {name} of shape {tuple(t.shape)} cannot be broadcast to the input's shape {shape}") from None
        if tuple(b) != shape:
            raise ValueError(f"{op}: {name} of shape {tuple(t.shape)} cannot be broadcast to the input's shape {shape}")
        rest.append(views.expand(t, shape) if tuple(t.shape) != shape else t)
    loss = BCEWithLogitsFn.apply(input, target, *rest, has_weight=weight is not None, has_pos=pos_weight is not None)
    return reduce_loss(loss, reduction)


# -- cross-entropy's label smoothing -------------------------------------------------------

def smoothed_cross_entropy(lp: Tensor, target: Tensor, weight, ignore_index: int, reduction: str, label_smoothing: float, nll) -> Tensor:
    """torch's class-index cross-entropy with label smoothing ε over C
    classes: (1 − ε)·nll + (ε/C)·smooth, where smooth is −Σ_c w_c·lp_c per
    element (0 where the target is ignore_index), reduced as nll is ('mean'
    divides by the summed target weights of the kept elements)."""
    dim = 0 if lp.ndim == 1 else 1
    c = lp.shape[dim]
    nll_loss = nll(lp, target, weight, None, ignore_index, None, reduction)
    if weight is not None:
        wshape = [1] * lp.ndim
        wshape[dim] = c
        smooth = -((lp * views.reshape(weight, tuple(wshape))).sum(dim))
    else:
        smooth = -(lp.sum(dim))
    t = target.numpy()
    ignored = t == ignore_index
    if ignored.any():
        smooth = where(ignored, 0.0, smooth)
    if reduction == "mean":
        kept = t[~ignored]
        if weight is not None:
            w = weight.detach().numpy().astype(np.float64)
            total = 0.0
            for k in kept.reshape(-1).tolist():  # in element order, in double
                total += w[k]
            denom = float(np.float32(total))
        else:
            denom = float(kept.size)
        ret = smooth.sum() / denom
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return nll_loss * (1.0 - label_smoothing) + ret * (label_smoothing / c)


__all__ = [
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "binary_cross_entropy", "binary_cross_entropy_with_logits",
]



# -- margin and ranking losses (composed from the element-wise operators) -------------------

def _log_sigmoid(x: Tensor) -> Tensor:
    """log σ(x) = min(x, 0) − log(1 + exp(−|x|)) (stable for any x)."""
    from .pointwise import exp
    from .selection import minimum

    return minimum(x, 0.0) - log(exp(-_abs(x)) + 1.0)


def _target_is(target: Tensor, value: float):
    return target.detach() == value


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """max(0, −y·(x1 − x2) + margin)."""
    op = "margin_ranking_loss"
    reduction = reduction_of(op, size_average, reduce, reduction)
    target = float_target(target)
    check_float(op, input1=input1, input2=input2, target=target)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: {tuple(input1.shape)}, input2: {tuple(input2.shape)}, target: {tuple(target.shape)} ")
    from .arith import relu

    return reduce_loss(relu(-target * (input1 - input2) + margin), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """x where y = 1, max(0, margin − x) where y = −1 (torch's sum of both parts)."""
    op = "hinge_embedding_loss"
    reduction = reduction_of(op, size_average, reduce, reduction)
    target = float_target(target)
    check_float(op, input=input, target=target)
    from .arith import relu

    x, y = _pair(op, input, target, warn=False)
    margin_part = where(~_target_is(y, 1.0), relu(margin - x), 0.0)
    self_part = where(~_target_is(y, -1.0), x, 0.0)
    return reduce_loss(margin_part + self_part, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """log(1 + exp(−y·x)), as −log σ(y·x)."""
    op = "soft_margin_loss"
    reduction = reduction_of(op, size_average, reduce, reduction)
    x, y = _pair(op, input, target)
    return reduce_loss(-_log_sigmoid(y * x), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """1 − cos where y = 1, max(0, cos − margin) where y = −1;
    cos = Σ x1·x2 / sqrt((Σ x1² + 1e-12)(Σ x2² + 1e-12)) over the last dim (torch's)."""
    op = "cosine_embedding_loss"
    reduction = reduction_of(op, size_average, reduce, reduction)
    target = float_target(target)
    check_float(op, input1=input1, input2=input2, target=target)
    from .arith import relu
    from .pointwise import sqrt

    d = input1.ndim - 1
    prod = _reduce.sum(input1 * input2, d)
    m1 = _reduce.sum(input1 * input1, d) + 1e-12
    m2 = _reduce.sum(input2 * input2, d) + 1e-12
    cos = prod / sqrt(m1 * m2)
    pos = where(_target_is(target, 1.0), 1.0 - cos, 0.0)
    neg = where(_target_is(target, -1.0), relu(cos - margin), 0.0)
    return reduce_loss(pos + neg, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None, reduce=None,
                        reduction="mean") -> Tensor:
    """max(0, margin + d(a, p) − d(a, n)) with d = pairwise_distance (swap:
    d(a, n) replaced by min(d(a, n), d(p, n)))."""
    op = "triplet_margin_loss"
    reduction = reduction_of(op, size_average, reduce, reduction)
    check_float(op, anchor=anchor, positive=positive, negative=negative)
    from .arith import relu
    from .distance import pairwise_distance
    from .selection import minimum

    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return reduce_loss(relu(d_pos - d_neg + margin), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None, reduction="mean") -> Tensor:
    """exp(x) − y·x (log_input), else x − y·log(x + eps); full adds
    Stirling's y·log y − y + ½·log(2πy) where y > 1."""
    import math

    op = "poisson_nll_loss"
    reduction = reduction_of(op, size_average, reduce, reduction)
    target = float_target(target)
    check_float(op, input=input, target=target)
    from .pointwise import exp

    if log_input:
        loss = exp(input) - target * input
    else:
        loss = input - target * log(input + eps)
    if full:
        big = target.detach() > 1
        safe = where(big, target, 1.0)
        stirling = safe * log(safe) - safe + log(safe * (2 * math.pi)) * 0.5
        loss = loss + where(big, stirling, 0.0)
    return reduce_loss(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """−(y·log σ(x) + (1 − y)·log σ(−x)), weighted, averaged over the classes."""
    op = "multilabel_soft_margin_loss"
    reduction = reduction_of(op, size_average, reduce, reduction)
    target = float_target(target)
    check_float(op, input=input, target=target, weight=weight)
    loss = -(target * _log_sigmoid(input) + (1.0 - target) * _log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    c = input.ndim - 1
    loss = _reduce.sum(loss, c) / input.shape[c]
    return reduce_loss(loss, reduction)


__all__ += ["margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss", "cosine_embedding_loss", "triplet_margin_loss",
            "poisson_nll_loss", "multilabel_soft_margin_loss"]
