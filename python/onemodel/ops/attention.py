"""scaled_dot_product_attention.

With dropout_p = 0 the operator is one record: forward
`S = (Q·Kᵀ)·scale + mask`, `P = softmax(S)` (the row kernel), `O = P·V`,
saving only Q, K, V and the mask; backward recomputes S and P with the same
kernels (so the same bits), then `dV = Pᵀ·dO`, `dP = dO·Vᵀ`,
`dS = softmax_backward(P, dP)·scale`, `dQ = dS·K`, `dK = dSᵀ·Q`. Every
product is the canonical batched GEMM over (batch·heads); transposed
operands are strided views. With dropout_p > 0 the same steps are composed
from differentiable operators with a dropout on P.

Masks: a float mask is added to S (one that requires grad, such as a
learned position bias, takes the composed path, whose backward gives the
mask its gradient, summed over the dimensions it was broadcast along, as
torch does); a boolean mask (a bool tensor, a NumPy
bool array, or an int64 tensor read as nonzero) keeps the positions that are True, as torch's
SDPA. ``key_padding_mask`` ([batch, S], True = ignore that key, as
nn.MultiheadAttention) and ``is_causal`` combine with it. A row whose keys
are all masked gives NaN, as torch's reference path does.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _core
from ..autograd.function import Function
from ..tensor import Tensor, bool_, float32, int64
from . import views
from .operands import check_float, contig, scale_inplace
from .linalg import matmul


def _t(x: Tensor) -> Tensor:
    """[B, M, N] → its [B, N, M] transposed view."""
    return x._view((x._shape[0], x._shape[2], x._shape[1]), (x._strides[0], x._strides[2], x._strides[1]))


def _bmm(a: Tensor, b: Tensor) -> Tensor:
    out = Tensor._empty((a._shape[0], a._shape[1], b._shape[2]))
    _core.matmul(out, a, b)
    return out


class SdpaFn(Function):
    name = "ScaledDotProductAttention"

    def forward(self, q, k, v, *, mask, scale):
        self.scale = scale
        q, k, v = contig(q), contig(k), contig(v)
        self.save_for_backward(q, k, v, mask)
        return _bmm(self._weights(q, k, mask), v)

    def _weights(self, q, k, mask):
        s = _bmm(q, _t(k))
        scale_inplace(s, self.scale)
        if mask is not None:
            _core.binary("add", s, s, mask)
        p = Tensor._empty(s.shape)
        _core.softmax_rows(p, s, None, False, False)
        return p

    def backward(self, g):
        q, k, v, mask = self.saved_tensors
        return self._grads(q, k, v, mask, contig(g), self.needs_input_grad)

    def _grads(self, q, k, v, mask, g, need):
        p = self._weights(q, k, mask)
        dv = _bmm(_t(p), g) if need[2] else None
        dq = dk = None
        if need[0] or need[1]:
            dp = _bmm(g, _t(v))
            ds = Tensor._empty(p.shape)
            _core.softmax_rows(ds, p, dp, False, True)
            scale_inplace(ds, self.scale)
            dq = _bmm(ds, k) if need[0] else None
            dk = _bmm(_t(ds), q) if need[1] else None
        return dq, dk, dv


def _head_view(t: Tensor, heads: int, d: int, offset: int) -> Tensor:
    """The [B, H, L, D] view of the `heads` heads of width `d` in the rows
    of contiguous [B, L, ·] `t`, the first head at column `offset`."""
    return t._view((t._shape[0], heads, t._shape[1], d), (t._strides[0], d, t._strides[1], 1), t._offset + offset)


def _as_heads(t: Tensor, heads: int) -> Tensor:
    """Contiguous [B·H, L, D] `t` viewed as [B, H, L, D]."""
    bh, n, d = t._shape
    return t._view((bh // heads, heads, n, d), (heads * n * d, n * d, d, 1))


def _gather_heads(t: Tensor, heads: int, d: int, offset: int) -> Tensor:
    """The heads of `t` (as _head_view) in a contiguous [B·H, L, D] copy."""
    out = Tensor._empty((t._shape[0] * heads, t._shape[1], d))
    _core.copy_(_as_heads(out, heads), _head_view(t, heads, d, offset))
    return out


class PackedSelfAttentionFn(SdpaFn):
    """Self-attention of `heads` heads over the in-projection `qkv`
    [B, L, 3E] (q, k, v side by side in the last dim), the output [B, L, E]
    with the heads side by side again: one record for what split, the head
    reshapes and transposes, scaled_dot_product_attention and the merge of
    the heads would record, with the same copies and kernels (so the same
    bits; docs/ops.md, "Attention")."""

    name = "ScaledDotProductAttention"

    def forward(self, qkv, *, heads, mask, scale):
        self.scale, self.heads = scale, heads
        qkv = contig(qkv)
        e = qkv._shape[2] // 3
        d = e // heads
        q, k, v = (_gather_heads(qkv, heads, d, i * e) for i in range(3))
        self.save_for_backward(q, k, v, mask)
        o = _bmm(self._weights(q, k, mask), v)
        out = Tensor._empty((qkv._shape[0], qkv._shape[1], e))
        _core.copy_(_head_view(out, heads, d, 0), _as_heads(o, heads))
        return out

    def backward(self, g):
        q, k, v, mask = self.saved_tensors
        h, d = self.heads, q._shape[2]
        b, n, e3 = self.input_meta[0][0]
        grads = self._grads(q, k, v, mask, _gather_heads(contig(g), h, d, 0), (True, True, True))
        # The three parts' gradients side by side in one [B, L, 3E] tensor.
        # Three split records would each emit a zero-padded [B, L, 3E]
        # gradient for the engine to sum, each element one part's value
        # plus +0s. That sum is the identity on these values: they are GEMM
        # outputs, whose accumulators start at +0 (never -0) and whose NaNs
        # are already quiet (canonical in exact mode), so x + 0 is x.
        full = Tensor._empty((b, n, e3))
        for i, gi in enumerate(grads):
            _core.copy_(_head_view(full, h, d, i * h * d), _as_heads(gi, h))
        return full


def packed_self_attention(qkv: Tensor, heads: int, mask) -> Tensor:
    """nn.MultiheadAttention's self-attention without dropout or weights
    over its packed in-projection `qkv` [B, L, 3E]: the [B, L, E] input of
    the out-projection. `mask` is build_mask's additive [B, H, L, L] array
    or None; the scale is 1/√(E/heads), as scaled_dot_product_attention's."""
    from ..creation import tensor as make_tensor

    b, n, e3 = qkv.shape
    mask_t = make_tensor(mask.reshape(b * heads, n, n)) if mask is not None else None
    return PackedSelfAttentionFn.apply(qkv, heads=heads, mask=mask_t, scale=1.0 / math.sqrt(e3 // 3 // heads))


def _bool_array(mask, op, name):
    """A mask given as booleans (a bool tensor, NumPy/list bool, or an int64
    tensor read as nonzero) → np.bool_ array, else None."""
    if isinstance(mask, Tensor):
        if mask.dtype is bool_:
            return mask.numpy(force=True)
        if mask.dtype is int64:
            return np.asarray(mask.numpy(force=True)) != 0
        return None
    arr = np.asarray(mask)
    if arr.dtype == np.bool_:
        return arr
    if np.issubdtype(arr.dtype, np.floating):
        return None
    raise TypeError(f"{op}: {name} must be a bool tensor or array, an int64 tensor or a float32 tensor, got dtype {arr.dtype}")


def additive_mask(mask, op: str, name: str, true_means_keep: bool) -> np.ndarray:
    """Any accepted mask as a float32 NumPy array to add to the scores."""
    b = _bool_array(mask, op, name)
    if b is not None:
        keep = b if true_means_keep else ~b
        return np.where(keep, np.float32(0.0), np.float32(-np.inf)).astype(np.float32)
    if isinstance(mask, Tensor):
        if mask.dtype is not float32:
            raise TypeError(f"{op}: {name} must be float32 or boolean, got {mask.dtype.name}")
        return np.asarray(mask.numpy(force=True), dtype=np.float32)
    return np.asarray(mask, dtype=np.float32)


def build_mask(op, batch, L, S, attn_mask=None, key_padding_mask=None, is_causal=False, attn_true_means_keep=True):
    """The combined additive mask broadcast to batch + (L, S) as a float32 array, or None."""
    total = None
    if attn_mask is not None:
        m = additive_mask(attn_mask, op, "attn_mask", attn_true_means_keep)
        try:
            np.broadcast_shapes(m.shape, tuple(batch) + (L, S))
        except ValueError:
            raise ValueError(f"{op}: attn_mask of shape {m.shape} cannot be broadcast to the attention shape {tuple(batch) + (L, S)}") from None
        total = m
    if key_padding_mask is not None:
        kp = additive_mask(key_padding_mask, op, "key_padding_mask", False)
        if not batch or kp.shape != (batch[0], S):
            raise ValueError(f"{op}: key_padding_mask of shape {kp.shape} must be (batch, S) = {((batch[0] if batch else None), S)}")
        kp = kp.reshape((batch[0],) + (1,) * (len(batch) - 1) + (1, S))
        total = kp if total is None else total + kp
    if is_causal:
        if attn_mask is not None:
            raise ValueError(f"{op}: is_causal=True and an explicit attn_mask cannot be given together")
        c = np.where(np.tril(np.ones((L, S), dtype=bool)), np.float32(0.0), np.float32(-np.inf)).astype(np.float32)
        total = c if total is None else total + c
    if total is None:
        return None
    return np.ascontiguousarray(np.broadcast_to(total, tuple(batch) + (L, S)), dtype=np.float32)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False,
                                 *, key_padding_mask=None, generator=None) -> Tensor:
    """torch.nn.functional.scaled_dot_product_attention over [..., L, E]
    queries, [..., S, E] keys and [..., S, Ev] values (equal batch dims)."""
    op = "scaled_dot_product_attention"
    check_float(op, query=query, key=key, value=value)
    if enable_gqa:
        raise ValueError(f"{op}: enable_gqa is not supported")
    if query.ndim < 2 or key.ndim != query.ndim or value.ndim != query.ndim:
        raise ValueError(f"{op}: query, key and value must have the same rank ≥ 2, got shapes {tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")
    batch = tuple(query.shape[:-2])
    if tuple(key.shape[:-2]) != batch or tuple(value.shape[:-2]) != batch:
        raise ValueError(f"{op}: batch dimensions differ: query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}")
    L, E = query.shape[-2:]
    S = key.shape[-2]
    if key.shape[-1] != E or value.shape[-2] != S:
        raise ValueError(f"{op}: shapes query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)} do not agree (E or S)")
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"{op}: dropout_p must be in [0, 1), got {dropout_p}")
    scale = 1.0 / math.sqrt(E) if scale is None else float(scale)
    m = build_mask(op, batch, L, S, attn_mask, key_padding_mask, is_causal)
    from ..creation import tensor as make_tensor

    B = 1
    for b in batch:
        B *= b
    q3 = views.reshape(query, (B, L, E))
    k3 = views.reshape(key, (B, S, E))
    v3 = views.reshape(value, (B, S, value.shape[-1]))
    if _mask_needs_grad(attn_mask):
        # A float mask that wants a gradient (a learned bias such as a
        # relative-position table): the same sum, attn_mask + the constant
        # key-padding part, in differentiable ops, and the composed path,
        # whose backward reaches the mask.
        mask_t = views.reshape(views.broadcast_to(attn_mask, batch + (L, S)), (B, L, S))
        rest = build_mask(op, batch, L, S, None, key_padding_mask, False)
        if rest is not None:
            mask_t = mask_t + make_tensor(rest.reshape(B, L, S))
        out, _ = attention_composed(q3, k3, v3, mask_t, scale, dropout_p, generator)
        return views.reshape(out, batch + (L, value.shape[-1]))
    mask_t = make_tensor(m.reshape(B, L, S)) if m is not None else None
    if dropout_p > 0.0:
        out, _ = attention_composed(q3, k3, v3, mask_t, scale, dropout_p, generator)
    else:
        out = SdpaFn.apply(q3, k3, v3, mask=mask_t, scale=scale)
    return views.reshape(out, batch + (L, value.shape[-1]))


def _mask_needs_grad(attn_mask) -> bool:
    """A float32 attn_mask tensor that the graph must differentiate."""
    from ..grad_mode import is_grad_enabled

    return (isinstance(attn_mask, Tensor) and attn_mask.dtype is float32 and attn_mask.requires_grad
            and is_grad_enabled())


def attention_composed(q3, k3, v3, mask_t, scale, dropout_p=0.0, generator=None):
    """The same computation from differentiable operators; returns (out, weights)."""
    from .dropout import dropout
    from .softmax import softmax

    s = matmul(q3, views.transpose(k3, -2, -1)) * scale
    if mask_t is not None:
        s = s + mask_t
    w = softmax(s, -1)
    wd = dropout(w, dropout_p, True, generator=generator) if dropout_p > 0 else w
    return matmul(wd, v3), w
