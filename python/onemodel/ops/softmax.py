"""softmax, log_softmax (any dim), nll_loss and cross_entropy.

Softmax-type work runs on the row kernel of rust/src/kernels/softmax.rs
over the last dimension; another dim is moved last by a contiguous copy
(bit-neutral). nll_loss picks −w[t]·lp[t] per element; its reductions are
the double-precision sums of onemodel.sum (increasing element order),
and 'mean' divides the rounded loss sum by the rounded weight sum, as torch."""

from __future__ import annotations

from .. import _core, _shape
from ..autograd.function import Function
from ..tensor import Tensor, float32, int64
from . import views
from .operands import check_float, contig
from .._kernels import binary_kernel, expand_to, sum_kernel


def _to_last(t: Tensor, dim: int) -> Tensor:
    if dim == t.ndim - 1:
        return contig(t)
    perm = list(range(t.ndim))
    perm[dim], perm[-1] = perm[-1], perm[dim]
    return contig(t._view(tuple(t._shape[d] for d in perm), tuple(t._strides[d] for d in perm)))


def _from_last(t: Tensor, dim: int) -> Tensor:
    """Inverse of _to_last as a contiguous tensor."""
    if dim == t.ndim - 1:
        return t
    return _to_last(t, dim)  # the swap is its own inverse


class SoftmaxFn(Function):
    name = "Softmax"

    def forward(self, x, dim, log):
        self.dim, self.log = dim, log
        xl = _to_last(x, dim)
        yl = Tensor._empty(xl.shape)
        _core.softmax_rows(yl, xl, None, log, False)
        self.save_for_backward(yl)
        return _from_last(yl, dim)

    def backward(self, g):
        (yl,) = self.saved_tensors
        gl = _to_last(g, self.dim)
        dl = Tensor._empty(yl.shape)
        _core.softmax_rows(dl, yl, gl, self.log, True)
        return _from_last(dl, self.dim)


def _softmax_dim(ndim: int) -> int:
    # torch's implicit dim (deprecated there): 0 for 0-, 1- and 3-D inputs, else 1.
    return 0 if ndim in (0, 1, 3) else 1


def _softmax(op, input, dim, dtype, log):
    check_float(op, input=input)
    if dtype is not None and dtype not in (float32, "float32"):
        raise ValueError(f"{op}: dtype must be float32 or None, got {dtype!r}")
    if dim is None:
        dim = _softmax_dim(input.ndim)
    if input.ndim == 0:
        return SoftmaxFn.apply(views.reshape(input, (1,)), 0, log).reshape(())
    d = _shape.norm_dim(op, dim, input.ndim)
    return SoftmaxFn.apply(input, d, log)


def softmax(input, dim=None, _stacklevel=3, dtype=None) -> Tensor:
    return _softmax("softmax", input, dim, dtype, False)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None) -> Tensor:
    return _softmax("log_softmax", input, dim, dtype, True)


class NllLossFn(Function):
    name = "NllLoss"

    def forward(self, lp, target, weight, ignore_index, reduction):
        """lp [N, C, S] contiguous, target [N, S] int64 contiguous."""
        self.target, self.weight, self.ignore_index, self.reduction = target, weight, ignore_index, reduction
        n, _, s = lp.shape
        loss = Tensor._empty((n * s,))
        wt = Tensor._empty((n * s,))
        _core.nll_pick(loss, wt, lp, target, weight, ignore_index)
        if reduction == "none":
            return loss
        total = sum_kernel(loss, (0,), keepdim=False)
        if reduction == "sum":
            return total
        self.wsum = sum_kernel(wt, (0,), keepdim=False)
        return binary_kernel("div", total, self.wsum)

    def backward(self, g):
        in_shape = self.input_meta[0][0]
        m = self.target.numel()
        if self.reduction == "none":
            gl = contig(g)
        else:
            gs = binary_kernel("div", g, self.wsum) if self.reduction == "mean" else g
            gl = Tensor._empty((m,))
            _core.copy_(gl, expand_to(gs, (m,), "nll_loss"))
        dlp = Tensor._empty(in_shape)
        _core.nll_scatter(dlp, gl, self.target, self.weight, self.ignore_index)
        return dlp, None


def _check_reduction(op, reduction, size_average, reduce):
    """The reduction, from torch's legacy size_average/reduce when given."""
    from .loss import reduction_of

    return reduction_of(op, size_average, reduce, reduction)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean") -> Tensor:
    """torch.nn.functional.nll_loss over input [N, C], [N, C, d1, ...] or [C]."""
    op = "nll_loss"
    check_float(op, input=input, weight=weight)
    reduction = _check_reduction(op, reduction, size_average, reduce)
    if not isinstance(target, Tensor) or target.dtype is not int64:
        raise TypeError(f"{op}: target must be an int64 Tensor of class indices, got {getattr(target, 'dtype', type(target).__name__)}")
    unbatched = input.ndim == 1
    x = views.unsqueeze(input, 0) if unbatched else input
    t = views.reshape(target, (1,)) if unbatched else target
    if x.ndim < 2 or t.shape != (x.shape[0],) + tuple(x.shape[2:]):
        raise ValueError(f"{op}: target of shape {tuple(target.shape)} does not match input of shape {tuple(input.shape)} (expected {(x.shape[0],) + tuple(x.shape[2:])})")
    c = x.shape[1]
    if weight is not None and tuple(weight.shape) != (c,):
        raise ValueError(f"{op}: weight of shape {tuple(weight.shape)} does not match {c} classes")
    n = x.shape[0]
    s = x.numel() // max(n * c, 1) if n * c else 0
    lp3 = views.reshape(x, (n, c, s))
    out = NllLossFn.apply(lp3.contiguous(), contig(views.reshape(t, (n, s))), weight=contig(weight) if weight is not None else None,
                          ignore_index=int(ignore_index), reduction=reduction)
    if reduction == "none":
        out = views.reshape(out, tuple(target.shape))
    return out


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean", label_smoothing=0.0) -> Tensor:
    """torch.nn.functional.cross_entropy: class-index targets (int64) or
    class probabilities (float32, input's shape), with torch's
    label_smoothing (see onemodel.ops.loss.smoothed_cross_entropy)."""
    from .loss import reduction_of, smoothed_cross_entropy

    op = "cross_entropy"
    check_float(op, input=input, weight=weight)
    reduction = reduction_of(op, size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{op}: label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    dim = 0 if input.ndim == 1 else 1
    lp = log_softmax(input, dim)
    if isinstance(target, Tensor) and target.dtype is float32:
        if target.shape != input.shape:
            raise ValueError(f"{op}: probability target of shape {tuple(target.shape)} does not match input of shape {tuple(input.shape)}")
        if label_smoothing > 0.0:
            target = target * (1.0 - label_smoothing) + label_smoothing / input.shape[dim]
        prod = lp * target
        if weight is not None:
            wshape = (weight.shape[0],) + (1,) * (input.ndim - dim - 1)
            prod = prod * views.reshape(weight, wshape)
        per = -(prod.sum(dim))
        if reduction == "none":
            return per
        if reduction == "sum":
            return per.sum()
        return per.mean()
    if label_smoothing > 0.0:
        if not isinstance(target, Tensor) or target.dtype is not int64:
            raise TypeError(f"{op}: target must be an int64 Tensor of class indices or a float32 Tensor of probabilities")
        return smoothed_cross_entropy(lp, target, weight, int(ignore_index), reduction, float(label_smoothing), nll_loss)
    return nll_loss(lp, target, weight, None, ignore_index, None, reduction)
