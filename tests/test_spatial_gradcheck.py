"""GradientCheck on every spatial, normalization, softmax, attention and
shape operator: groups, dilation, depthwise, strided and transposed views,
broadcasting, masks, in both modes."""

import numpy as np
import pytest

import onemodel as om
import onemodel.functional as F
import onemodel.nn as nn
from onemodel.gradcheck import gradient_check

GEN = om.Generator().manual_seed(7)


def leaf(*shape, scale=1.0):
    return (om.randn(*shape, generator=GEN) * scale).detach().requires_grad_()


def strided_leaf(*shape):
    """A non-contiguous leaf: the last two dims transposed from a larger buffer."""
    big = om.randn(*shape[:-2], shape[-1], shape[-2] * 2, generator=GEN)
    return big[..., ::2].transpose(-1, -2).detach().requires_grad_()


CASES = {
    "conv2d_basic": (lambda x, w, b: F.conv2d(x, w, b), lambda: (leaf(2, 3, 5, 4), leaf(4, 3, 3, 3), leaf(4))),
    "conv2d_stride_pad_dil": (lambda x, w: F.conv2d(x, w, None, stride=2, padding=2, dilation=2), lambda: (leaf(1, 2, 7, 6), leaf(3, 2, 3, 2))),
    "conv2d_groups": (lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=2), lambda: (leaf(2, 4, 4, 5), leaf(6, 2, 3, 3), leaf(6))),
    "conv2d_depthwise": (lambda x, w, b: F.conv2d(x, w, b, stride=(1, 2), padding=1, groups=3), lambda: (leaf(2, 3, 5, 5), leaf(3, 1, 3, 3), leaf(3))),
    "conv2d_pointwise_strided_input": (lambda x, w: F.conv2d(x, w), lambda: (strided_leaf(2, 3, 4, 5), leaf(2, 3, 1, 1))),
    "conv2d_same": (lambda x, w: F.conv2d(x, w, padding="same"), lambda: (leaf(1, 2, 5, 4), leaf(2, 2, 2, 3))),
    "conv_transpose2d": (lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1), lambda: (leaf(2, 3, 3, 4), leaf(3, 2, 3, 3), leaf(2))),
    "conv_transpose2d_groups_dil": (lambda x, w: F.conv_transpose2d(x, w, None, stride=1, padding=1, groups=2, dilation=2, output_padding=1), lambda: (leaf(1, 4, 3, 3), leaf(4, 3, 2, 2))),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), lambda: (leaf(2, 2, 4, 6),)),
    "max_pool2d_pad_stride_ceil": (lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True), lambda: (strided_leaf(1, 2, 5, 6),)),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 2, stride=1, padding=1), lambda: (leaf(2, 2, 3, 4),)),
    "avg_pool2d_exclude_pad_ceil": (lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), lambda: (leaf(1, 2, 6, 5),)),
    "interpolate_nearest": (lambda x: F.interpolate(x, size=(5, 7)), lambda: (leaf(1, 2, 3, 4),)),
    "interpolate_nearest_scale": (lambda x: F.interpolate(x, scale_factor=2), lambda: (leaf(1, 2, 3, 2),)),
    "interpolate_bilinear": (lambda x: F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=False), lambda: (leaf(2, 1, 3, 4),)),
    "interpolate_bilinear_down": (lambda x: F.interpolate(x, size=(2, 3), mode="bilinear"), lambda: (leaf(1, 2, 5, 7),)),
    "interpolate_bilinear_align": (lambda x: F.interpolate(x, size=(5, 6), mode="bilinear", align_corners=True), lambda: (strided_leaf(1, 2, 3, 4),)),
    "batch_norm_train": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), lambda: (leaf(3, 2, 2, 3), leaf(2), leaf(2))),
    "batch_norm_train_running": (lambda x: F.batch_norm(x, om.zeros(3), om.ones(3), training=True), lambda: (leaf(4, 3),)),
    "batch_norm_eval": (lambda x, w, b: F.batch_norm(x, om.tensor([0.1, -0.2]), om.tensor([1.5, 0.5]), w, b), lambda: (leaf(2, 2, 3), leaf(2), leaf(2))),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (3, 4), w, b), lambda: (leaf(2, 3, 4), leaf(3, 4), leaf(3, 4))),
    "layer_norm_strided_noaffine": (lambda x: F.layer_norm(x, 4), lambda: (strided_leaf(3, 4),)),
    "softmax": (lambda x: F.softmax(x, 1), lambda: (leaf(2, 5, 3),)),
    "log_softmax": (lambda x: F.log_softmax(x, -1), lambda: (strided_leaf(3, 4),)),
    "cross_entropy": (lambda x: F.cross_entropy(x, om.tensor([1, 0, 3, -100]), weight=om.tensor([1.0, 2.0, 0.5, 1.5])), lambda: (leaf(4, 4),)),
    "cross_entropy_probs": (lambda x, t: F.cross_entropy(x, t.softmax(1)), lambda: (leaf(3, 4), leaf(3, 4))),
    "nll_loss": (lambda x: F.nll_loss(F.log_softmax(x, 1), om.tensor([[1, 2], [0, 1]]), reduction="sum"), lambda: (leaf(2, 3, 2),)),
    "sdpa": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v), lambda: (leaf(2, 3, 4), leaf(2, 5, 4), leaf(2, 5, 3))),
    "sdpa_masks": (
        lambda q, k, v: F.scaled_dot_product_attention(
            q, k, v, attn_mask=np.array([[True, True, False, True], [True, False, True, True], [True, True, True, False]]),
            key_padding_mask=np.array([[False, False, False, True], [False, True, False, False]]), scale=0.3),
        lambda: (leaf(2, 3, 4), leaf(2, 4, 4), strided_leaf(2, 4, 2)),
    ),
    "sdpa_causal": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), lambda: (leaf(2, 2, 3, 4), leaf(2, 2, 3, 4), leaf(2, 2, 3, 4))),
    "cat": (lambda a, b: om.cat([a, b, a], 1) * om.arange(24.0).reshape(2, 12), lambda: (leaf(2, 3), strided_leaf(2, 6))),
    "stack_split": (lambda a, b: om.stack([a, b], 1).split([1, 2], 2)[1] * 2.0, lambda: (leaf(2, 3), leaf(2, 3))),
    "pad": (lambda x: F.pad(x, (1, 2, -1, 0), value=0.5) * 2.0, lambda: (leaf(2, 3, 2),)),
    "embedding": (lambda w: F.embedding(om.tensor([[1, 3, 1], [0, 1, 2]]), w) * 1.5, lambda: (leaf(4, 3),)),
    "dropout": (lambda x: F.dropout(x, 0.4, generator=om.Generator().manual_seed(3)), lambda: (leaf(4, 5),)),
    "mha_masks": (
        lambda q, kv: _MHA(q, kv, kv, key_padding_mask=np.array([[0, 0, 1], [0, 0, 0]], bool), attn_mask=np.array([[0, 1, 0], [0, 0, 0]], bool), need_weights=False)[0],
        lambda: (leaf(2, 2, 4, scale=0.5), leaf(2, 3, 4, scale=0.5)),
    ),
    "mha_need_weights": (lambda q: sum_outputs(_MHA(q, q, q)), lambda: (leaf(2, 3, 4, scale=0.5),)),
    "encoder_layer": (lambda x: _LAYER(x, src_key_padding_mask=np.array([[0, 0, 1], [0, 0, 0]], bool)), lambda: (leaf(2, 3, 4, scale=0.5),)),
    "encoder_layer_gelu_causal": (lambda x: _GELU_LAYER(x, is_causal=True), lambda: (leaf(3, 2, 4, scale=0.5),)),
}


_MHA = nn.MultiheadAttention(4, 2, batch_first=True, generator=om.Generator().manual_seed(1))
_LAYER = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, batch_first=True, norm_first=True, generator=om.Generator().manual_seed(2))
_GELU_LAYER = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, activation="gelu", generator=om.Generator().manual_seed(3))


def sum_outputs(pair):
    out, weights = pair
    return out * 1.0 + weights.sum() * 0.5


@pytest.fixture(params=["fast", "exact"])
def mode(request):
    om.compute.set_mode(request.param)
    return request.param


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_check(case, mode):
    fn, make = CASES[case]
    report = gradient_check(fn, make(), name=f"{case}[{mode}]")
    assert report.passed, str(report)
