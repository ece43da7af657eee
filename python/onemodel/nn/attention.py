"""MultiheadAttention with torch's parameters (in_proj_weight, in_proj_bias,
out_proj), masks (key_padding_mask and a boolean attn_mask: True means
*not allowed*; float masks are added) and batch_first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import functional as F
from ..creation import empty, tensor, zeros
from ..ops import views
from ..ops.attention import _mask_needs_grad, attention_composed, build_mask, packed_self_attention
from ..ops.shape_ops import split
from . import init as _init
from .layers import Linear
from .module import Module
from .parameter import Parameter, optional_parameter

if TYPE_CHECKING:
    from ..tensor import Tensor


class NonDynamicallyQuantizableLinear(Linear):
    """torch's name for the attention output projection (a Linear)."""


class MultiheadAttention(Module):
    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None, dtype=None, generator=None) -> None:
        super().__init__()
        op = "MultiheadAttention"
        if num_heads <= 0 or embed_dim % num_heads:
            raise ValueError(f"{op}: embed_dim {embed_dim} must be divisible by num_heads {num_heads}")
        if add_bias_kv or add_zero_attn or (kdim not in (None, embed_dim)) or (vdim not in (None, embed_dim)):
            raise ValueError(f"{op}: add_bias_kv, add_zero_attn and kdim/vdim different from embed_dim are not supported")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim))
        _init.xavier_uniform_(self.in_proj_weight, generator=generator)
        optional_parameter(self, "in_proj_bias", zeros(3 * embed_dim) if bias else None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, generator=generator)
        if bias:
            _init.constant_(self.out_proj.bias, 0.0)
        self.generator = generator

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None, average_attn_weights=True, is_causal=False) -> tuple[Tensor, Any]:
        op = "MultiheadAttention"
        E, H, D = self.embed_dim, self.num_heads, self.head_dim
        unbatched = query.ndim == 2
        if unbatched:
            query, key, value = (views.unsqueeze(t, 1 if not self.batch_first else 0) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = _unsqueeze_mask(key_padding_mask)
        if query.ndim != 3 or key.ndim != 3 or value.ndim != 3:
            raise ValueError(f"{op}: expected 3-D (or unbatched 2-D) query, key and value, got shapes {tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")
        same_qkv = query is key and key is value
        if not self.batch_first:
            query, key, value = (views.transpose(t, 0, 1) for t in (query, key, value))
        B, L, Eq = query.shape
        S = key.shape[1]
        if Eq != E or key.shape[2] != E or value.shape[2] != E or key.shape[0] != B or value.shape[:2] != key.shape[:2]:
            raise ValueError(f"{op}: query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)} do not match embed_dim {E} (batch-first shapes)")
        w, b = self.in_proj_weight, self.in_proj_bias
        p = self.dropout if self.training else 0.0
        # A float attn_mask that requires grad (a learned bias) is added in
        # differentiable ops on the composed path, so that it gets its
        # gradient, as in torch.
        grad_mask = _mask_needs_grad(attn_mask)
        # Self-attention without dropout or weights: one record over the
        # packed projection (ops/attention.py, packed_self_attention).
        packed = same_qkv and not need_weights and p == 0.0 and not grad_mask
        if same_qkv:
            qkv = F.linear(query, w, b)
            if not packed:
                q, k, v = split(qkv, E, -1)
        else:
            ws = split(w, E, 0)
            bs = split(b, E, 0) if b is not None else (None, None, None)
            q, k, v = (F.linear(x, wi, bi) for x, wi, bi in zip((query, key, value), ws, bs))
        if not packed:
            q, k, v = (views.transpose(views.reshape(t, (B, n, H, D)), 1, 2) for t, n in ((q, L), (k, S), (v, S)))
        if attn_mask is not None:
            am = attn_mask
            shape = tuple(am.shape)
            if shape == (B * H, L, S):
                am = _reshape_mask(am, (B, H, L, S))
            elif shape != (L, S):
                raise ValueError(f"{op}: attn_mask of shape {shape} must be ({L}, {S}) or ({B * H}, {L}, {S})")
        else:
            am = None
        mask = build_mask(op, (B, H), L, S, am, key_padding_mask, is_causal and am is None, attn_true_means_keep=False)
        if packed:
            out, weights = packed_self_attention(qkv, H, mask), None
        elif need_weights or grad_mask:
            if grad_mask:
                mask3 = views.reshape(views.broadcast_to(am, (B, H, L, S)), (B * H, L, S))
                rest = build_mask(op, (B, H), L, S, None, key_padding_mask, False, attn_true_means_keep=False)
                if rest is not None:
                    mask3 = mask3 + tensor(rest.reshape(B * H, L, S))
            else:
                mask3 = tensor(mask.reshape(B * H, L, S)) if mask is not None else None
            q3, k3, v3 = (views.reshape(t, (B * H, t.shape[2], D)) for t in (q, k, v))
            out3, weights = attention_composed(q3, k3, v3, mask3, 1.0 / (D ** 0.5), p, self.generator)
            out = views.reshape(out3, (B, H, L, D))
            weights = views.reshape(weights, (B, H, L, S))
            if not need_weights:
                weights = None
            elif average_attn_weights:
                weights = weights.mean(1)
        else:
            # The combined mask is already additive (a float NumPy array).
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p, generator=self.generator)
            weights = None
        if not packed:
            out = views.reshape(views.transpose(out, 1, 2), (B, L, E))
        out = self.out_proj(out)
        if not self.batch_first:
            out = views.transpose(out, 0, 1)
        if unbatched:
            out = views.squeeze(out, 1 if not self.batch_first else 0)
            if weights is not None:
                weights = views.squeeze(weights, 0)
        return out, weights


def _unsqueeze_mask(m):
    import numpy as np

    from ..tensor import Tensor

    return views.unsqueeze(m, 0) if isinstance(m, Tensor) else np.asarray(m)[None]


def _reshape_mask(m, shape):
    import numpy as np

    from ..tensor import Tensor

    return views.reshape(m, shape) if isinstance(m, Tensor) else np.asarray(m).reshape(shape)
