"""batch_norm and layer_norm (torch.nn.functional's signatures); kernels in
rust/src/kernels/norm.rs (f64 statistics and parameter-gradient sums)."""

from __future__ import annotations

import numbers

from .. import _core
from ..autograd.function import Function
from ..grad_mode import no_grad
from ..tensor import Tensor
from .operands import check_float, contig


def _grads(has_w, has_b, dx, dw, db):
    out = [dx]
    if has_w:
        out.append(dw)
    if has_b:
        out.append(db)
    return tuple(out) if len(out) > 1 else out[0]


def _want(needs, has_w, has_b):
    """needs_input_grad for (x, weight, bias), given which are present."""
    it = iter(needs)
    nx = next(it)
    nw = next(it) if has_w else False
    nb = next(it) if has_b else False
    return nx, nw, nb


class BatchNormFn(Function):
    name = "BatchNorm"

    def forward(self, x, weight, bias, training, eps, running, momentum):
        self.has_w, self.has_b = weight is not None, bias is not None
        self.training = training
        x = contig(x)
        c = x.shape[1]
        y = Tensor._empty(x.shape)
        mean, invstd, var_u = Tensor._empty((c,)), Tensor._empty((c,)), Tensor._empty((c,))
        rm, rv = running if running is not None else (None, None)
        use_running = not training
        _core.batch_norm_forward(
            y, mean, invstd, var_u, x,
            contig(weight) if weight is not None else None,
            contig(bias) if bias is not None else None,
            rm if use_running else None, rv if use_running else None, eps,
        )
        if training and running is not None and rm is not None:
            # torch: running = (1 - momentum)·running + momentum·batch (unbiased var).
            with no_grad():
                for buf, stat in ((rm, mean), (rv, var_u)):
                    buf.copy_(buf * (1.0 - momentum) + stat * momentum)
        self.save_for_backward(x, weight, mean, invstd)
        return y

    def backward(self, g):
        x, weight, mean, invstd = self.saved_tensors
        nx, nw, nb = _want(self.needs_input_grad, self.has_w, self.has_b)
        c = x.shape[1]
        dx = Tensor._empty(x.shape) if nx else None
        dw = Tensor._empty((c,)) if nw else None
        db = Tensor._empty((c,)) if nb else None
        _core.batch_norm_backward(dx, dw, db, x, contig(g), contig(weight) if weight is not None else None, mean, invstd, self.training)
        return _grads(self.has_w, self.has_b, dx, dw, db)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5) -> Tensor:
    """torch.nn.functional.batch_norm. Training normalizes with the batch's
    biased variance and, when running buffers are given, updates them in
    place with the unbiased variance; eval uses the running buffers."""
    op = "batch_norm"
    check_float(op, input=input, running_mean=running_mean, running_var=running_var, weight=weight, bias=bias)
    if input.ndim < 2:
        raise ValueError(f"{op}: expected an input of at least 2 dimensions (N, C, ...), got shape {tuple(input.shape)}")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise ValueError(f"{op}: {name} of shape {tuple(t.shape)} does not match the {c} channels of input shape {tuple(input.shape)}")
    if (running_mean is None) != (running_var is None):
        raise ValueError(f"{op}: running_mean and running_var must be given together")
    if not training and running_mean is None:
        raise ValueError(f"{op}: eval mode needs running_mean and running_var")
    if training:
        count = input.numel() // max(c, 1)
        if count <= 1:
            raise ValueError(f"{op}: expected more than 1 value per channel when training, got input size {tuple(input.shape)}")
    running = (running_mean, running_var) if running_mean is not None else None
    return BatchNormFn.apply(input, weight, bias, bool(training), float(eps), running, float(momentum))


class LayerNormFn(Function):
    name = "LayerNorm"

    def forward(self, x, weight, bias, d, eps):
        self.has_w, self.has_b = weight is not None, bias is not None
        self.d = d
        x = contig(x)
        rows = x.numel() // d if d else 0
        y = Tensor._empty(x.shape)
        mean, invstd = Tensor._empty((rows,)), Tensor._empty((rows,))
        w = contig(weight) if weight is not None else None
        _core.layer_norm_forward(y, mean, invstd, x, d, w, contig(bias) if bias is not None else None, eps)
        self.save_for_backward(x, w, mean, invstd)
        return y

    def backward(self, g):
        x, weight, mean, invstd = self.saved_tensors
        nx, nw, nb = _want(self.needs_input_grad, self.has_w, self.has_b)
        wshape = self.input_meta[1][0] if self.has_w else None
        bshape = self.input_meta[-1][0] if self.has_b else None
        dx = Tensor._empty(x.shape) if nx else None
        dw = Tensor._empty(wshape) if nw else None
        db = Tensor._empty(bshape) if nb else None
        _core.layer_norm_backward(dx, dw, db, x, contig(g), self.d, weight, mean, invstd)
        return _grads(self.has_w, self.has_b, dx, dw, db)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5) -> Tensor:
    """torch.nn.functional.layer_norm over the trailing normalized_shape."""
    op = "layer_norm"
    check_float(op, input=input, weight=weight, bias=bias)
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (int(normalized_shape),)
    normalized_shape = tuple(int(s) for s in normalized_shape)
    k = len(normalized_shape)
    if k == 0 or input.ndim < k or tuple(input.shape[-k:]) != normalized_shape:
        raise ValueError(f"{op}: input of shape {tuple(input.shape)} does not end in normalized_shape {normalized_shape}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != normalized_shape:
            raise ValueError(f"{op}: {name} of shape {tuple(t.shape)} does not match normalized_shape {normalized_shape}")
    d = 1
    for s in normalized_shape:
        d *= s
    if d == 0:
        raise ValueError(f"{op}: normalized_shape {normalized_shape} is empty")
    return LayerNormFn.apply(input, weight, bias, d, float(eps))
