"""TransformerEncoderLayer and TransformerEncoder (torch's constructor
arguments, parameter names and forward signature)."""

from __future__ import annotations

from .. import functional as F
from .attention import MultiheadAttention
from .dropout import Dropout
from .layers import Linear
from .module import Module
from .normalization import LayerNorm
from .layers import ModuleList


class TransformerEncoderLayer(Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, device=None, dtype=None, generator=None):
        super().__init__()
        self._config = dict(d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                            layer_norm_eps=layer_norm_eps, batch_first=batch_first, norm_first=norm_first, bias=bias, generator=generator)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, generator=generator)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, generator=generator)
        self.dropout = Dropout(dropout, generator=generator)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, generator=generator)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout, generator=generator)
        self.dropout2 = Dropout(dropout, generator=generator)
        if activation in ("relu", F.relu):
            self.activation = F.relu
        elif activation in ("gelu", F.gelu):
            self.activation = F.gelu
        elif callable(activation):
            self.activation = activation
        else:
            raise ValueError(f"TransformerEncoderLayer: activation should be 'relu' or 'gelu' (or a callable), not {activation!r}")

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerEncoder(Module):
    """num_layers copies of encoder_layer (same initial values, as torch's deep copies)."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        layers = []
        for _ in range(num_layers):
            layer = TransformerEncoderLayer(**encoder_layer._config)
            layer.load_state_dict(encoder_layer.state_dict())
            layers.append(layer)
        self.layers = ModuleList(layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        if self.norm is not None:
            out = self.norm(out)
        return out
