"""Transformer, TransformerEncoder(Layer), TransformerDecoder(Layer) with
torch's constructor arguments, parameter names, forward signatures and
layer order (post-norm by default, pre-norm with norm_first=True).

Masks follow MultiheadAttention: a boolean mask (True = not allowed) or a
float mask added to the scores (``generate_square_subsequent_mask`` makes
torch's float causal mask). The stacks hold deep copies of the given layer
(the same initial values in every layer, as torch's)."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

import numpy as np

from .. import functional as F
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .layers import Linear
from .module import Module
from .normalization import LayerNorm

if TYPE_CHECKING:
    from ..tensor import Tensor


def activation_fn(op: str, activation):
    """torch's rule: "relu" or "gelu" by name, or any callable."""
    if isinstance(activation, str):
        if activation == "relu":
            return F.relu
        if activation == "gelu":
            return F.gelu
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    if not callable(activation):
        raise TypeError(f"{op}: activation must be 'relu', 'gelu' or a callable, got {activation!r}")
    return activation


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None):
    """A float (sz, sz) mask: 0 on and below the diagonal, -inf above."""
    from .._device import as_device
    from ..creation import tensor as make_tensor
    from ..tensor import as_dtype

    as_device(device, "generate_square_subsequent_mask")
    dt = as_dtype(dtype, "generate_square_subsequent_mask")
    if dt is not None and not dt.is_floating_point:
        raise TypeError("generate_square_subsequent_mask: dtype must be floating point")
    m = np.triu(np.full((sz, sz), -np.inf, dtype=np.float32), k=1)
    return make_tensor(m)


class _TransformerLayer(Module):
    """What the encoder and decoder layers share: torch's submodules, made
    in torch's order (that of the generator's draws and of state_dict), and
    the self-attention and feed-forward blocks. `_blocks`: the residual
    blocks, each with its norm and dropout (2 in the encoder, 3 in the
    decoder, whose middle one attends to the memory)."""
    _blocks = 2

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None, generator=None) -> None:
        super().__init__()
        from .layers import _check_factory

        op = type(self).__name__
        _check_factory(op, device, dtype)
        for name in ("self_attn", "multihead_attn")[:self._blocks - 1]:
            setattr(self, name, MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, generator=generator))
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, generator=generator)
        self.dropout = Dropout(dropout, generator=generator)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, generator=generator)
        self.norm_first = norm_first
        for i in range(1, self._blocks + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        for i in range(1, self._blocks + 1):
            setattr(self, f"dropout{i}", Dropout(dropout, generator=generator))
        self.activation = activation_fn(op, activation)

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=bool(is_causal), need_weights=False)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return getattr(self, f"dropout{self._blocks}")(x)


class TransformerEncoderLayer(_TransformerLayer):
    _blocks = 2

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False) -> Tensor:
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x


class TransformerDecoderLayer(_TransformerLayer):
    _blocks = 3

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
                tgt_is_causal=False, memory_is_causal=False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask, is_causal=bool(is_causal), need_weights=False)[0]
        return self.dropout2(x)


class TransformerEncoder(Module):
    """num_layers deep copies of encoder_layer, then the optional norm."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None) -> Tensor:
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        if self.norm is not None:
            out = self.norm(out)
        return out


class TransformerDecoder(Module):
    """num_layers deep copies of decoder_layer, then the optional norm."""

    def __init__(self, decoder_layer, num_layers, norm=None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
                tgt_is_causal=None, memory_is_causal=False) -> Tensor:
        out = tgt
        for mod in self.layers:
            out = mod(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        if self.norm is not None:
            out = self.norm(out)
        return out


class Transformer(Module):
    """The encoder-decoder model of "Attention Is All You Need" (torch's
    nn.Transformer): every parameter with more than one dimension is
    re-initialised with xavier_uniform_, as torch does."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048, dropout=0.1,
                 activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5, batch_first=False,
                 norm_first=False, bias=True, device=None, dtype=None, generator=None) -> None:
        super().__init__()
        from .layers import _check_factory

        _check_factory("Transformer", device, dtype)
        def stack(custom, layer_type, stack_type, num_layers):
            """The custom stack, or num_layers of torch's layer and a final norm."""
            if custom is not None:
                return custom
            layer = layer_type(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                               bias, generator=generator)
            return stack_type(layer, num_layers, LayerNorm(d_model, eps=layer_norm_eps, bias=bias))

        self.encoder = stack(custom_encoder, TransformerEncoderLayer, TransformerEncoder, num_encoder_layers)
        self.decoder = stack(custom_decoder, TransformerDecoderLayer, TransformerDecoder, num_decoder_layers)
        self._reset_parameters(generator)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def _reset_parameters(self, generator=None) -> None:
        from . import init

        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p, generator=generator)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None, memory_is_causal=False) -> Tensor:
        is_batched = src.dim() == 3
        if not self.batch_first and src.size(1) != tgt.size(1) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if self.batch_first and src.size(0) != tgt.size(0) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None):
        return _generate_square_subsequent_mask(sz, device, dtype)


__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer"]
