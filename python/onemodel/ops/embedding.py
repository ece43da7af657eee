"""embedding: row lookup; its backward adds the output rows into the table
rows in index-position order (f64 accumulation, one rounding per element)."""

from __future__ import annotations

from .. import _core
from ..autograd.function import Function
from ..tensor import Tensor, int64
from ._spatial_util import check_float, contig


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


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False) -> Tensor:
    """torch.nn.functional.embedding (max_norm, scale_grad_by_freq and sparse are not supported)."""
    op = "embedding"
    check_float(op, weight=weight)
    if not isinstance(input, Tensor) or input.dtype is not int64:
        raise TypeError(f"{op}: indices must be an int64 Tensor, got {getattr(input, 'dtype', type(input).__name__)}")
    if weight.ndim != 2:
        raise ValueError(f"{op}: weight must be 2-D [num_embeddings, embedding_dim], got shape {tuple(weight.shape)}")
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise ValueError(f"{op}: max_norm, scale_grad_by_freq and sparse are not supported")
    if padding_idx is not None:
        n = weight.shape[0]
        if not -n <= padding_idx < n:
            raise ValueError(f"{op}: padding_idx {padding_idx} is out of range for {n} embeddings")
        padding_idx = padding_idx % n
    return EmbeddingFn.apply(weight, input, padding_idx)
