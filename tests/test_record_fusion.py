"""The fused records of the encoder path compute the bits of the chains of
records they replace (docs/ops.md, "Attention"; docs/performance.md, "The
encoder step after the record fusions"): MultiheadAttention's packed
self-attention against split + head reshapes + transposes +
scaled_dot_product_attention + merge written out with the public ops, and
linear over [*lead, in] against the reshapes around a 2-D linear. Output
gradients hold -0, NaNs and a signalling NaN (the packed record leaves out
the chain's sum of zero-padded part gradients, an identity on GEMM
outputs: this checks it on NaN-carrying ones). Bit equality, both modes."""

import numpy as np
import pytest

import onemodel as om
import onemodel.functional as F
import onemodel.nn as nn
from onemodel.ops import views
from onemodel.ops.attention import build_mask
from onemodel.ops.shape_ops import split


def _data(shape, seed, special=False):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    if special:
        f = a.reshape(-1)
        f[::7] = -0.0
        f[3::11] = np.float32("nan")
        f[5::13] = np.array([0x7FA00001], np.uint32).view(np.float32)[0]  # signalling NaN
    return a


def _bits(t):
    return np.ascontiguousarray(t.detach().numpy()).view(np.uint32)


def _chain(m, x, kpm):
    """MultiheadAttention's self-attention as the unfused chain of records."""
    E, H = m.embed_dim, m.num_heads
    D = E // H
    xb = x if m.batch_first else views.transpose(x, 0, 1)
    B, L, _ = xb.shape
    q, k, v = split(F.linear(xb, m.in_proj_weight, m.in_proj_bias), E, -1)
    q, k, v = (views.transpose(views.reshape(t, (B, L, H, D)), 1, 2) for t in (q, k, v))
    mask = build_mask("test", (B, H), L, L, None, kpm, False, attn_true_means_keep=False)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    out = m.out_proj(views.reshape(views.transpose(out, 1, 2), (B, L, E)))
    return out if m.batch_first else views.transpose(out, 0, 1)


@pytest.mark.parametrize("mode", ["fast", "exact"])
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("E,H,B,L,padding", [(16, 4, 3, 7, True), (8, 2, 2, 5, False), (12, 3, 1, 1, False)])
def test_packed_self_attention_has_the_bits_of_the_unfused_chain(mode, batch_first, E, H, B, L, padding):
    om.manual_seed(0)
    m = nn.MultiheadAttention(E, H, batch_first=batch_first)
    with om.no_grad():
        m.in_proj_bias.copy_(om.tensor(_data((3 * E,), 3)))
    kpm = None
    if padding:
        kpm = np.zeros((B, L), bool)
        kpm[0, -1] = True
    shape = (B, L, E) if batch_first else (L, B, E)
    results = []
    with om.compute.settings(mode=mode):
        for fused in (True, False):
            x = om.tensor(_data(shape, 1)).requires_grad_()
            for p in m.parameters():
                p.grad = None
            y = m(x, x, x, key_padding_mask=kpm, need_weights=False)[0] if fused else _chain(m, x, kpm)
            y.backward(om.tensor(_data(tuple(y.shape), 2, special=True)))
            results.append([_bits(y), _bits(x.grad)] + [_bits(p.grad) for p in m.parameters()])
    assert np.isnan(results[0][1].view(np.float32)).any()  # the NaNs reached the input gradient
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("mode", ["fast", "exact"])
@pytest.mark.parametrize("shape,perm", [((2, 3, 5), None), ((2, 2, 3, 5), None), ((5, 3, 2), (2, 1, 0)), ((3, 2, 5), (1, 0, 2))])
def test_linear_over_leading_dims_has_the_bits_of_the_reshapes(mode, shape, perm):
    results = []
    with om.compute.settings(mode=mode):
        for fused in (True, False):
            x0 = om.tensor(_data(shape, 4)).requires_grad_()
            x = x0.permute(*perm) if perm else x0
            w = om.tensor(_data((6, x.shape[-1]), 5)).requires_grad_()
            b = om.tensor(_data((6,), 6)).requires_grad_()
            if fused:
                y = F.linear(x, w, b)
            else:
                lead = tuple(x.shape[:-1])
                y = views.reshape(F.linear(views.reshape(x, (-1, x.shape[-1])), w, b), lead + (6,))
            y.backward(om.tensor(_data(tuple(y.shape), 7, special=True)))
            results.append([_bits(y), _bits(x0.grad), _bits(w.grad), _bits(b.grad)])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
