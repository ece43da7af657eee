"""A float attn_mask that requires grad (a learned bias, e.g. a relative
position table) gets its gradient through scaled_dot_product_attention and
nn.MultiheadAttention, as in torch. Expected values: a float64 NumPy
reference of the same attention and its backward written out here."""

import numpy as np
import pytest

import onemodel as om
import onemodel.nn.functional as F

RNG = np.random.default_rng(11)


def rn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def softmax64(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def attention64(q, k, v, mask, scale):
    """Output and, for the loss sum(out · go), the gradient of the scores."""
    s = q @ np.swapaxes(k, -1, -2) * scale + mask
    p = softmax64(s)
    return p @ v, p


def score_grad64(p, v, go):
    dp = go @ np.swapaxes(v, -1, -2)
    return p * (dp - (dp * p).sum(-1, keepdims=True))


def reduce_to(g, shape):
    """Sum g over the dimensions a tensor of `shape` was broadcast along."""
    while g.ndim > len(shape):
        g = g.sum(0)
    for d, n in enumerate(shape):
        if n == 1 and g.shape[d] != 1:
            g = g.sum(d, keepdims=True)
    return g


@pytest.mark.parametrize("mask_shape", [(5, 6), (3, 5, 6), (2, 1, 5, 6), (2, 3, 5, 6)])
def test_sdpa_float_mask_gets_its_gradient(mask_shape):
    q, k, v, m, go = rn(2, 3, 5, 4), rn(2, 3, 6, 4), rn(2, 3, 6, 4), rn(*mask_shape), rn(2, 3, 5, 4)
    mask = om.tensor(m)
    mask.requires_grad_(True)
    out = F.scaled_dot_product_attention(om.tensor(q), om.tensor(k), om.tensor(v), attn_mask=mask)
    (out * om.tensor(go)).sum().backward()
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    want_out, p = attention64(q64, k64, v64, m.astype(np.float64), 0.5)
    want = reduce_to(score_grad64(p, v64, go.astype(np.float64)), mask_shape)
    np.testing.assert_allclose(out.detach().numpy(), want_out, rtol=1e-5, atol=1e-5)
    assert mask.grad is not None and mask.grad.shape == mask_shape
    np.testing.assert_allclose(mask.grad.numpy(), want, rtol=1e-4, atol=1e-5)


def test_sdpa_mask_with_grad_gives_the_same_forward_bits():
    q, k, v, m = rn(2, 3, 5, 4), rn(2, 3, 6, 4), rn(2, 3, 6, 4), rn(5, 6)
    plain = F.scaled_dot_product_attention(om.tensor(q), om.tensor(k), om.tensor(v), attn_mask=om.tensor(m))
    mask = om.tensor(m)
    mask.requires_grad_(True)
    learned = F.scaled_dot_product_attention(om.tensor(q), om.tensor(k), om.tensor(v), attn_mask=mask)
    assert np.array_equal(plain.numpy().view(np.uint32), learned.detach().numpy().view(np.uint32))


@pytest.mark.parametrize("need_weights", [False, True])
def test_multihead_attention_float_mask_gets_its_gradient(need_weights):
    B, L, E, H = 2, 5, 8, 2
    D = E // H
    x, m, go = rn(B, L, E), rn(L, L), rn(B, L, E)
    mha = om.nn.MultiheadAttention(E, H, batch_first=True)
    mask = om.tensor(m)
    mask.requires_grad_(True)
    out, _ = mha(om.tensor(x), om.tensor(x), om.tensor(x), attn_mask=mask, need_weights=need_weights)
    (out * om.tensor(go)).sum().backward()

    w = mha.in_proj_weight.detach().numpy().astype(np.float64)
    b = mha.in_proj_bias.detach().numpy().astype(np.float64)
    wo = mha.out_proj.weight.detach().numpy().astype(np.float64)
    bo = mha.out_proj.bias.detach().numpy().astype(np.float64)
    qkv = x.astype(np.float64) @ w.T + b
    heads = [qkv[..., i * E:(i + 1) * E].reshape(B, L, H, D).transpose(0, 2, 1, 3) for i in range(3)]
    o, p = attention64(*heads, m.astype(np.float64), 1 / np.sqrt(D))
    want_out = o.transpose(0, 2, 1, 3).reshape(B, L, E) @ wo.T + bo
    # d(out·go)/d(head outputs): go through the out-projection, split by head.
    go_heads = (go.astype(np.float64) @ wo).reshape(B, L, H, D).transpose(0, 2, 1, 3)
    want = score_grad64(p, heads[2], go_heads).sum((0, 1))
    np.testing.assert_allclose(out.detach().numpy(), want_out, rtol=1e-5, atol=1e-5)
    assert mask.grad is not None
    np.testing.assert_allclose(mask.grad.numpy(), want, rtol=1e-4, atol=1e-5)
