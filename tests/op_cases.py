"""Operator cases shared by tools/autograd_oracle.py (run on torch) and
tests/test_spatial_torch_ops.py (run on onemodel): torch.nn.functional and
onemodel.functional share names and signatures, so one table serves both.

Each case: (input shapes, fn(F, lib, *inputs)). Inputs are seeded normals;
the checked scalar is L = Σ W·out with a seeded W per output."""

from __future__ import annotations

import numpy as np


def _mask(lib, arr):
    """A boolean mask: a torch.bool tensor for torch, the NumPy array for onemodel."""
    return lib.from_numpy(arr) if lib.__name__ == "torch" else arr


def _long(lib, arr):
    return lib.from_numpy(np.asarray(arr, dtype=np.int64))


BOOL_3x5 = np.array([[1, 1, 0, 1, 1], [1, 0, 1, 1, 0], [0, 1, 1, 1, 1]], dtype=bool)
KPM_2x5 = np.array([[0, 0, 0, 0, 1], [0, 1, 0, 0, 0]], dtype=bool)

CASES = {
    "conv2d_stride_dil_groups": ([(2, 4, 7, 6), (6, 2, 3, 2), (6,)], lambda F, lib, x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)),
    "conv2d_depthwise": ([(2, 3, 6, 5), (6, 1, 3, 3)], lambda F, lib, x, w: F.conv2d(x, w, None, padding=1, groups=3)),
    "conv_transpose_s2_op1_groups": ([(2, 4, 3, 3), (4, 3, 3, 3), (6,)], lambda F, lib, x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2)),
    "conv_transpose_dil_op": ([(1, 2, 4, 4), (2, 2, 3, 3)], lambda F, lib, x, w: F.conv_transpose2d(x, w, None, stride=1, padding=2, output_padding=1, dilation=2)),
    "conv_transpose_s3": ([(1, 3, 3, 2), (3, 2, 2, 4), (2,)], lambda F, lib, x, w, b: F.conv_transpose2d(x, w, b, stride=(3, 2), padding=(0, 1))),
    "max_pool_ceil_pad": ([(1, 2, 7, 6)], lambda F, lib, x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)),
    "max_pool_dilation": ([(2, 1, 6, 7)], lambda F, lib, x: F.max_pool2d(x, 2, stride=1, dilation=2)),
    "avg_pool_ceil_exclude_pad": ([(1, 2, 6, 7)], lambda F, lib, x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    "avg_pool_include_pad": ([(1, 2, 5, 5)], lambda F, lib, x: F.avg_pool2d(x, 3, stride=2, padding=1)),
    "avg_pool_divisor": ([(1, 1, 4, 6)], lambda F, lib, x: F.avg_pool2d(x, 2, divisor_override=3)),
    "nearest_up": ([(1, 2, 3, 4)], lambda F, lib, x: F.interpolate(x, size=(7, 9), mode="nearest")),
    "nearest_down": ([(1, 2, 7, 5)], lambda F, lib, x: F.interpolate(x, size=(3, 2), mode="nearest")),
    "nearest_scale": ([(1, 1, 4, 3)], lambda F, lib, x: F.interpolate(x, scale_factor=1.5, mode="nearest")),
    "bilinear_up": ([(2, 1, 3, 4)], lambda F, lib, x: F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=False)),
    "bilinear_down": ([(1, 2, 7, 5)], lambda F, lib, x: F.interpolate(x, size=(3, 2), mode="bilinear", align_corners=False)),
    "bilinear_align": ([(1, 2, 3, 4)], lambda F, lib, x: F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=True)),
    "bilinear_scale": ([(1, 1, 3, 4)], lambda F, lib, x: F.interpolate(x, scale_factor=2.5, mode="bilinear", align_corners=False)),
    "batch_norm_train": ([(3, 4, 2, 3), (4,), (4,)], lambda F, lib, x, w, b: F.batch_norm(x, None, None, w, b, training=True)),
    "layer_norm": ([(3, 4, 5), (4, 5), (4, 5)], lambda F, lib, x, w, b: F.layer_norm(x, (4, 5), w, b)),
    "softmax_dim1": ([(2, 5, 3)], lambda F, lib, x: F.softmax(x, 1)),
    "log_softmax_dim0": ([(4, 3)], lambda F, lib, x: F.log_softmax(x, 0)),
    "cross_entropy_kdim_weight_ignore": (
        [(3, 4, 5)],
        lambda F, lib, x: F.cross_entropy(x, _long(lib, [[0, 1, 3, -100, 2], [3, 3, 0, 1, -100], [2, 1, 0, 0, 1]]), weight=lib.tensor([1.0, 2.0, 0.5, 1.5])),
    ),
    "cross_entropy_sum": ([(5, 3)], lambda F, lib, x: F.cross_entropy(x, _long(lib, [0, 2, 1, 1, 0]), reduction="sum")),
    "nll_loss_none": ([(4, 3)], lambda F, lib, x: F.nll_loss(x, _long(lib, [2, 0, 1, 2]), reduction="none")),
    "sdpa_bool_mask": ([(2, 3, 4), (2, 5, 4), (2, 5, 2)], lambda F, lib, q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=_mask(lib, BOOL_3x5))),
    "sdpa_float_mask_scale": ([(2, 3, 4), (2, 5, 4), (2, 5, 2), (3, 5)], lambda F, lib, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m.detach(), scale=0.7)),
    "sdpa_causal_heads": ([(2, 2, 4, 3), (2, 2, 4, 3), (2, 2, 4, 5)], lambda F, lib, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
    "embedding_padding": ([(6, 3)], lambda F, lib, w: F.embedding(_long(lib, [[1, 4, 1], [0, 1, 5]]), w, padding_idx=4)),
    "pad_crop": ([(2, 3, 4)], lambda F, lib, x: F.pad(x, (1, -1, 2, 0), value=0.25)),
}

MHA_CASES = {
    # (batch_first, need_weights, attn_mask kind)
    "mha_seq_first_weights_bool": (False, True, "bool"),
    "mha_batch_first_float_mask": (True, False, "float"),
}
MHA = dict(embed_dim=8, num_heads=2, batch=2, L=3, S=5)


def mha_masks(lib, kind):
    if kind == "bool":
        attn = _mask(lib, ~BOOL_3x5)  # MHA: True = not allowed
    else:
        attn = lib.from_numpy(np.where(BOOL_3x5, 0.0, -2.5).astype(np.float32))
    return attn, _mask(lib, KPM_2x5)


def seeded_inputs(name, shapes, seed=123):
    rng = np.random.default_rng([seed, sum(map(ord, name))])
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    return xs, rng
