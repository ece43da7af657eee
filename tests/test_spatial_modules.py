"""Modules: torch's parameter names, shapes, initial values and bounds,
state-dict round trips, train/eval behaviour, Dropout, and ValueErrors for
bad input that name the operator and the shapes."""

import math

import numpy as np
import pytest

import onemodel as om
from conftest import THREAD_COUNTS
import onemodel.functional as F
import onemodel.nn as nn


def names_shapes(m):
    return [(k, tuple(v.shape)) for k, v in m.state_dict().items()]


def test_parameter_names_and_shapes_follow_torch():
    assert names_shapes(nn.Conv2d(4, 6, 3, groups=2)) == [("weight", (6, 2, 3, 3)), ("bias", (6,))]
    assert names_shapes(nn.ConvTranspose2d(4, 6, (2, 3), groups=2, bias=False)) == [("weight", (4, 3, 2, 3))]
    assert names_shapes(nn.BatchNorm2d(5)) == [
        ("weight", (5,)), ("bias", (5,)), ("running_mean", (5,)), ("running_var", (5,)), ("num_batches_tracked", ()),
    ]
    assert names_shapes(nn.LayerNorm((2, 3))) == [("weight", (2, 3)), ("bias", (2, 3))]
    assert names_shapes(nn.Embedding(7, 3)) == [("weight", (7, 3))]
    assert names_shapes(nn.MultiheadAttention(8, 2)) == [
        ("in_proj_weight", (24, 8)), ("in_proj_bias", (24,)), ("out_proj.weight", (8, 8)), ("out_proj.bias", (8,)),
    ]
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    assert [k for k, _ in names_shapes(layer)] == [
        "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight", "self_attn.out_proj.bias",
        "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
        "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias",
    ]


def test_initial_values_respect_torchs_bounds():
    gen = om.Generator().manual_seed(1)
    conv = nn.Conv2d(6, 4, 3, groups=2, generator=gen)
    bound = 1 / math.sqrt(3 * 9)  # fan_in = in/groups · kh · kw
    for p in (conv.weight, conv.bias):
        v = p.detach().numpy()
        assert np.abs(v).max() <= bound and np.abs(v).max() > 0.5 * bound
    convt = nn.ConvTranspose2d(6, 4, 3, generator=gen)
    assert np.abs(convt.weight.detach().numpy()).max() <= 1 / math.sqrt(4 * 9)
    mha = nn.MultiheadAttention(8, 2, generator=gen)
    assert np.abs(mha.in_proj_weight.detach().numpy()).max() <= math.sqrt(6 / 32)
    assert not mha.in_proj_bias.detach().numpy().any() and not mha.out_proj.bias.detach().numpy().any()
    bn = nn.BatchNorm2d(3)
    assert bn.weight.detach().numpy().tolist() == [1, 1, 1] and bn.running_var.numpy().tolist() == [1, 1, 1]
    emb = nn.Embedding(50, 4, padding_idx=3, generator=gen)
    w = emb.weight.detach().numpy()
    assert not w[3].any() and 0.5 < w.std() < 1.5


def test_batch_norm_train_eval_and_running_stats():
    bn = nn.BatchNorm2d(2, momentum=0.5)
    x = om.tensor(np.arange(16, dtype=np.float32).reshape(2, 2, 2, 2))
    y = bn(x)
    xs = x.numpy().transpose(1, 0, 2, 3).reshape(2, -1)
    mean, var_b, var_u = xs.mean(1), xs.var(1), xs.var(1, ddof=1)
    np.testing.assert_allclose(y.detach().numpy().transpose(1, 0, 2, 3).reshape(2, -1), (xs - mean[:, None]) / np.sqrt(var_b[:, None] + 1e-5), rtol=1e-5)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.5 * mean, rtol=1e-6)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.5 + 0.5 * var_u, rtol=1e-6)
    assert int(bn.num_batches_tracked.item()) == 1
    bn.eval()
    z = bn(x)
    rm, rv = bn.running_mean.numpy(), bn.running_var.numpy()
    np.testing.assert_allclose(z.detach().numpy().transpose(1, 0, 2, 3).reshape(2, -1), (xs - rm[:, None]) / np.sqrt(rv[:, None] + 1e-5), rtol=1e-5)
    assert int(bn.num_batches_tracked.item()) == 1  # eval does not count
    cma = nn.BatchNorm2d(2, momentum=None)
    cma(x)
    cma(x * 3.0)
    np.testing.assert_allclose(cma.running_mean.numpy(), (mean + 3 * mean) / 2, rtol=1e-6)


def test_state_dict_round_trip_and_numpy_loading():
    a = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 8, 2))
    b = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 8, 2))
    a(om.randn(2, 2, 4, 6))
    b.load_state_dict({k: v.numpy() for k, v in a.state_dict().items()})
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ka == kb and np.array_equal(va.numpy(), vb.numpy())
    x = om.randn(3, 2, 4, 6)
    a.eval(), b.eval()
    assert np.array_equal(a(x).detach().numpy(), b(x).detach().numpy())


def test_dropout_is_seeded_thread_independent_and_identity_at_zero():
    x = om.randn(64, 33)
    outs = set()
    for threads in THREAD_COUNTS:
        with om.compute.threads(threads):
            d = nn.Dropout(0.3, generator=om.Generator().manual_seed(11))
            outs.add(d(x).numpy().tobytes())
    assert len(outs) == 1
    y = np.frombuffer(outs.pop(), dtype=np.float32).reshape(64, 33)
    kept = y != 0
    assert 0.6 < kept.mean() < 0.8
    np.testing.assert_array_equal(y[kept], (x.numpy()[kept] * np.float32(1 / 0.7)).astype(np.float32))
    assert nn.Dropout(0.0)(x) is x
    d = nn.Dropout(0.5)
    d.eval()
    assert d(x) is x
    g = om.Generator().manual_seed(11)
    first, second = F.dropout(x, 0.5, generator=g).numpy(), F.dropout(x, 0.5, generator=g).numpy()
    assert not np.array_equal(first, second)  # each call draws a new key


def test_max_pool_ties_and_nan():
    x = om.tensor([[[[1.0, 3.0], [3.0, float("nan")]]]])
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    assert out.item() == 3.0 and idx.item() == 1
    y = om.tensor([[[[float("nan"), -5.0], [float("nan"), float("nan")]]]])
    assert F.max_pool2d(y, 2).item() == -5.0


def test_embedding_backward_accumulates_and_skips_padding():
    w = om.randn(4, 2).requires_grad_()
    out = F.embedding(om.tensor([1, 0, 1, 1, 3]), w, padding_idx=0)
    out.backward(om.tensor([[1.0, 2.0], [5.0, 5.0], [0.5, 0.25], [1e8, 1.0], [-1.0, 0.0]]))
    g = w.grad.numpy()
    assert g[0].tolist() == [0.0, 0.0]
    assert g[1].tolist() == [np.float32(1.0 + 0.5 + 1e8), 3.25]
    assert g[3].tolist() == [-1.0, 0.0] and g[2].tolist() == [0.0, 0.0]


def test_transformer_encoder_layer_masks_and_shapes():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    x = om.randn(2, 5, 8)
    kpm = np.array([[False] * 5, [False, False, False, True, True]])
    y = layer(x, src_key_padding_mask=kpm)
    assert y.shape == (2, 5, 8)
    # Padded keys do not influence the other positions.
    x2 = x.numpy().copy()
    x2[1, 3:] += 10.0
    y2 = layer(om.tensor(x2), src_key_padding_mask=kpm)
    np.testing.assert_allclose(y.detach().numpy()[1, :3], y2.detach().numpy()[1, :3], rtol=1e-5, atol=1e-6)
    seq_first = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    seq_first.load_state_dict(layer.state_dict())
    z = seq_first(x.transpose(0, 1), src_mask=np.zeros((5, 5), dtype=bool))
    np.testing.assert_allclose(z.transpose(0, 1).detach().numpy(), layer(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    enc = nn.TransformerEncoder(layer, 2)
    assert enc(x).shape == (2, 5, 8) and len(list(enc.parameters())) == 24


BAD = [
    (lambda: F.conv2d(om.randn(2, 3, 5), om.randn(4, 3, 3, 3)), r"conv2d.*\(2, 3, 5\)"),  # unbatched but wrong channels
    (lambda: F.conv2d(om.randn(1, 2, 5, 5, 1), om.randn(4, 2, 3, 3)), r"conv2d.*3-D or 4-D.*\(1, 2, 5, 5, 1\)"),
    (lambda: F.conv2d(om.randn(1, 4, 5, 5), om.randn(6, 3, 3, 3), groups=2), r"conv2d.*\(1, 4, 5, 5\).*\(6, 3, 3, 3\).*groups=2"),
    (lambda: F.conv2d(om.randn(1, 4, 5, 5), om.randn(5, 2, 3, 3), groups=2), r"conv2d.*out_channels 5.*groups=2"),
    (lambda: F.conv2d(om.randn(1, 1, 2, 2), om.randn(1, 1, 3, 3)), r"conv2d.*larger than the padded input 2x2.*\(1, 1, 2, 2\)"),
    (lambda: F.conv2d(om.randn(1, 2, 5, 5), om.randn(3, 2, 3, 3), om.randn(4)), r"conv2d.*bias of shape \(4,\)"),
    (lambda: F.conv_transpose2d(om.randn(1, 2, 3, 3), om.randn(2, 2, 3, 3), stride=2, output_padding=2), r"conv_transpose2d.*output_padding"),
    (lambda: F.conv_transpose2d(om.randn(1, 3, 3, 3), om.randn(2, 2, 3, 3)), r"conv_transpose2d.*\(1, 3, 3, 3\).*\(2, 2, 3, 3\)"),
    (lambda: F.max_pool2d(om.randn(1, 1, 2, 2), 3), r"max_pool2d.*larger than the padded input.*\(1, 1, 2, 2\)"),
    (lambda: F.max_pool2d(om.randn(1, 1, 6, 6), 2, padding=2), r"max_pool2d.*at most half"),
    (lambda: F.avg_pool2d(om.randn(4), 2), r"avg_pool2d.*\(4,\)"),
    (lambda: F.interpolate(om.randn(1, 2, 3, 3, 3, 3), size=4), r"interpolate.*\(1, 2, 3, 3, 3, 3\)"),
    (lambda: F.interpolate(om.randn(1, 1, 3, 3), size=4, mode="bogus"), r"interpolate.*bogus"),
    (lambda: F.interpolate(om.randn(1, 1, 3, 3), size=4, align_corners=True), r"interpolate.*align_corners"),
    (lambda: F.batch_norm(om.randn(1, 3), None, None, training=True), r"batch_norm.*more than 1 value.*\(1, 3\)"),
    (lambda: F.batch_norm(om.randn(2, 3), om.zeros(2), om.ones(2)), r"batch_norm.*running_mean of shape \(2,\).*\(2, 3\)"),
    (lambda: nn.BatchNorm2d(3)(om.randn(2, 3, 4)), r"BatchNorm2d.*4D.*3D"),
    (lambda: F.layer_norm(om.randn(2, 3), (4,)), r"layer_norm.*\(2, 3\).*\(4,\)"),
    (lambda: F.cross_entropy(om.randn(3, 4), om.tensor([0, 1])), r"nll_loss.*\(2,\).*\(3, 4\)"),
    (lambda: F.cross_entropy(om.randn(2, 4), om.tensor([0, 4])), r"nll_loss.*target 4.*4 classes"),
    (lambda: F.scaled_dot_product_attention(om.randn(2, 3, 4), om.randn(2, 5, 3), om.randn(2, 5, 4)), r"scaled_dot_product_attention.*\(2, 3, 4\).*\(2, 5, 3\)"),
    (lambda: F.scaled_dot_product_attention(om.randn(2, 3, 4), om.randn(2, 5, 4), om.randn(2, 5, 4), attn_mask=np.ones((3, 4), bool)), r"scaled_dot_product_attention.*attn_mask of shape \(3, 4\).*\(2, 3, 5\)"),
    (lambda: nn.MultiheadAttention(8, 2)(om.randn(3, 2, 8), om.randn(5, 2, 8), om.randn(5, 2, 8), key_padding_mask=np.zeros((2, 4), bool)), r"MultiheadAttention.*key_padding_mask of shape \(2, 4\)"),
    (lambda: nn.MultiheadAttention(8, 3), r"MultiheadAttention.*divisible"),
    (lambda: F.embedding(om.tensor([0, 5]), om.randn(5, 2)), r"embedding.*index 5.*5 rows"),
    (lambda: om.cat([om.randn(2, 3), om.randn(3, 2)], 0), r"cat.*\(2, 3\).*\(3, 2\)"),
    (lambda: om.stack([om.randn(2, 3), om.randn(3, 2)]), r"stack.*\(3, 2\)"),
    (lambda: om.split(om.randn(5, 2), [2, 2]), r"split.*\[2, 2\].*5"),
    (lambda: F.pad(om.randn(2, 2), (1, 1, 1)), r"pad.*\(1, 1, 1\)"),
    (lambda: F.pad(om.randn(2, 2), (1, 1, 1)), r"pad.*even"),
    (lambda: F.dropout(om.randn(2), 1.5), r"dropout.*1.5"),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_bad_input_raises_value_error_naming_op_and_shapes(i):
    fn, pattern = BAD[i]
    with pytest.raises(ValueError, match=pattern):
        fn()


def test_encoder_layer_dropout_is_seeded_and_thread_independent():
    x = om.randn(2, 5, 8, generator=om.Generator().manual_seed(4))
    outs = set()
    for threads in (1, 3):
        with om.compute.threads(threads):
            layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.2, batch_first=True, generator=om.Generator().manual_seed(9))
            y = layer(x)
            y.sum().backward()
            outs.add(y.detach().numpy().tobytes() + layer.linear1.weight.grad.numpy().tobytes())
    assert len(outs) == 1
    layer.eval()
    a, b = layer(x).detach().numpy(), layer(x).detach().numpy()
    assert np.array_equal(a, b)  # eval: no dropout
