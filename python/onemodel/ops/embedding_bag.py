"""embedding_bag (torch.nn.functional's): the embedding rows of each bag
reduced by sum, mean or max, composed from embedding and index_add /
scatter_reduce (their fixed orders: a bag's rows added in input order).
Rows equal to padding_idx are left out of their bag (and of its count);
an empty bag gives zeros, as torch's."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor, int64
from .operands import check_float
from .embedding import embedding


def _bags(op: str, input: Tensor, offsets, include_last_offset: bool):
    """(flat indices, bag id of each, number of bags)."""
    if not isinstance(input, Tensor) or input.dtype is not int64:
        raise TypeError(f"{op}: input must be an int64 Tensor of indices")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences.")
        b, n = input.shape
        return input.reshape(-1), np.repeat(np.arange(b), n), b
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    off = np.asarray(offsets.tolist() if isinstance(offsets, Tensor) else offsets, dtype=np.int64).reshape(-1)
    if off.ndim != 1 or off.size == 0:
        raise ValueError("offsets has to be a 1D Tensor")
    n = input.shape[0]
    if include_last_offset:
        ends = off[1:]
        starts = off[:-1]
    else:
        starts = off
        ends = np.append(off[1:], n)
    if off[0] != 0 or np.any(np.diff(off) < 0) or (ends.size and ends[-1] > n):
        raise ValueError(f"{op}: offsets {off.tolist()} must start at 0, increase and stay within the {n} indices")
    seg = np.repeat(np.arange(starts.size), ends - starts)
    return input[: int(ends[-1]) if ends.size else 0], seg, starts.size


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean", sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None) -> Tensor:
    from ..creation import tensor as make_tensor, zeros
    from .index import index_add, scatter_reduce

    op = "embedding_bag"
    check_float(op, weight=weight, per_sample_weights=per_sample_weights)
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode!r}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' (got mode='{mode}'). Please open a feature request on GitHub.")
    flat, seg, bags = _bags(op, input, offsets, include_last_offset)
    d = weight.shape[1]
    rows = embedding(flat, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)  # [L, D]
    keep = np.ones(seg.size, dtype=bool)
    if padding_idx is not None:
        p = padding_idx % weight.shape[0]
        keep = flat.numpy().reshape(-1) != p
    if per_sample_weights is not None:
        if tuple(per_sample_weights.shape) != tuple(flat.shape) and tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"{op}: per_sample_weights of shape {tuple(per_sample_weights.shape)} does not match input {tuple(input.shape)}")
        rows = rows * per_sample_weights.reshape(-1)[: seg.size].unsqueeze(1)
    if not keep.all():
        rows = rows[make_tensor(keep)]
        seg = seg[keep]
    index = make_tensor(seg.astype(np.int64))
    if mode == "max":
        expanded = index.unsqueeze(1).expand(seg.size, d)
        return scatter_reduce(zeros(bags, d), 0, expanded, rows, "amax", include_self=False)
    total = index_add(zeros(bags, d), 0, index, rows)
    if mode == "sum":
        return total
    counts = np.bincount(seg, minlength=bags).astype(np.float32)
    return total / make_tensor(np.maximum(counts, 1.0)).unsqueeze(1)


__all__ = ["embedding_bag"]
