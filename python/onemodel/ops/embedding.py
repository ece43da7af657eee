"""embedding: row lookup; its backward adds the output rows into the table
rows in index-position order (f64 accumulation, one rounding per element)."""

from __future__ import annotations

from .. import _core
from ..autograd.function import Function
from ..tensor import Tensor, int64
from .operands import check_float, contig


class EmbeddingFn(Function):
    name = "Embedding"

    def forward(self, weight, idx, padding_idx):
        self.padding_idx = padding_idx
        idx = contig(idx)
        self.idx = idx
        out = Tensor._empty(tuple(idx.shape) + (weight.shape[1],))
        _core.embedding_forward(out, contig(weight), idx)
        return out

    def backward(self, g):
        dw = Tensor._empty(self.input_meta[0][0])
        _core.embedding_backward(dw, contig(g), self.idx, self.padding_idx)
        return dw, None


def renorm_rows_(weight: Tensor, idx: Tensor, max_norm: float, norm_type: float) -> None:
    """torch's embedding_renorm_: each row the indices name (once each, in
    increasing row order) whose norm exceeds max_norm is scaled in place by
    max_norm / (norm + 1e-7). The norm is summed in double in column order;
    the scale is computed in double and rounded once."""
    import math

    import numpy as np

    from ..creation import tensor as make_tensor
    from ..grad_mode import no_grad

    rows = np.unique(idx.numpy().reshape(-1))
    if rows.size == 0:
        return
    w = weight.detach().numpy()
    scales = {}
    for r in rows.tolist():
        acc = 0.0
        for v in w[r].tolist():
            acc += abs(v) ** norm_type if norm_type != 2.0 else v * v
        norm = math.sqrt(acc) if norm_type == 2.0 else acc ** (1.0 / norm_type)
        if norm > max_norm:
            scales[r] = max_norm / (norm + 1e-7)
    if not scales:
        return
    with no_grad():
        for r, s in scales.items():
            row = weight[r]
            row.copy_(make_tensor(w[r] * np.float32(s)))


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False) -> Tensor:
    """torch.nn.functional.embedding. With max_norm, the rows the indices
    name are renormalised in place first (torch's semantics; the weight's
    version changes). scale_grad_by_freq and sparse are not supported."""
    op = "embedding"
    check_float(op, weight=weight)
    if not isinstance(input, Tensor) or input.dtype is not int64:
        raise TypeError(f"{op}: indices must be an int64 Tensor, got {getattr(input, 'dtype', type(input).__name__)}")
    if weight.ndim != 2:
        raise ValueError(f"{op}: weight must be 2-D [num_embeddings, embedding_dim], got shape {tuple(weight.shape)}")
    if scale_grad_by_freq or sparse:
        raise ValueError(f"{op}: scale_grad_by_freq and sparse are not supported")
    if padding_idx is not None:
        n = weight.shape[0]
        if not -n <= padding_idx < n:
            raise ValueError(f"{op}: padding_idx {padding_idx} is out of range for {n} embeddings")
        padding_idx = padding_idx % n
    if max_norm is not None:
        nmax = input.numpy().max(initial=-1)
        nmin = input.numpy().min(initial=0)
        if nmax >= weight.shape[0] or nmin < 0:
            raise IndexError(f"{op}: index out of range in self (indices in [{nmin}, {nmax}] for {weight.shape[0]} embeddings)")
        renorm_rows_(weight, input, float(max_norm), float(norm_type))
    return EmbeddingFn.apply(weight, input, padding_idx)
