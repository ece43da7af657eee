"""Layer and loss cases of the rest of torch.nn (pads, Fold/Unfold,
RMSNorm, LocalResponseNorm, LPPool, MaxUnpool, Bilinear, Softmax2d, alpha
dropout in eval, grid_sample/affine_grid, the margin and Gaussian losses),
shared by tools/surface_oracle.py's ``breadth`` section (torch, writes
testdata/surface/breadth_layers.npz and breadth_losses.npz) and
tests/test_breadth_layers.py (onemodel). The formats are those of
tests/surface_layer_cases.py and tests/surface_loss_cases.py."""

from __future__ import annotations

from surface_layer_cases import _lib, _mod


def _F(t):
    return t.nn.functional


def _unpool_call(m, x):
    lib = _lib(m)
    pooled, idx = lib.nn.functional.max_pool2d(x, 2, return_indices=True)
    return m(pooled, idx)


def _unpool1d_call(m, x):
    lib = _lib(m)
    pooled, idx = lib.nn.functional.max_pool1d(x, 3, stride=2, return_indices=True)
    return m(pooled, idx, output_size=[x.shape[-1]])


def _fold_roundtrip(m, x):
    lib = _lib(m)
    cols = lib.nn.functional.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    return cols, lib.nn.functional.fold(cols, (5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))


def _grid_call(mode, padding_mode, align):
    def call(m, x, theta):
        lib = _lib(m)
        grid = lib.nn.functional.affine_grid(theta * 0.6, (2, 3, 4, 5), align_corners=align)
        return grid, lib.nn.functional.grid_sample(x, grid, mode=mode, padding_mode=padding_mode, align_corners=align)

    return call


def _grid_direct(m, x, g):
    lib = _lib(m)
    return lib.nn.functional.grid_sample(x, g * 1.3, align_corners=False)


def _rotary_tables(n, d):
    import numpy as np

    pos = np.arange(n, dtype=np.float64)[:, None]
    inv = 1.0 / (10000 ** (np.arange(0, d, 2, dtype=np.float64) / d))
    ang = pos * inv[None, :]
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


class _LlamaBlock:
    @staticmethod
    def build(t):
        cos, sin = _rotary_tables(5, 4)

        class Block(t.nn.Module):
            def __init__(self):
                super().__init__()
                self.norm1 = t.nn.RMSNorm(8, eps=1e-6)
                self.qkv = t.nn.Linear(8, 24, bias=False)
                self.proj = t.nn.Linear(8, 8, bias=False)
                self.norm2 = t.nn.RMSNorm(8)
                self.fc = t.nn.Linear(8, 16)
                self.out = t.nn.Linear(16, 8)
                self.cos, self.sin = t.tensor(cos), t.tensor(sin)  # plain attributes: constants

            def rotate(self, x):  # x [b, n, heads, 4]
                x1, x2 = x[..., 0::2], x[..., 1::2]
                c, s = self.cos[None, :, None, :], self.sin[None, :, None, :]
                return t.stack([x1 * c - x2 * s, x1 * s + x2 * c], dim=-1).flatten(-2)

            def forward(self, x):
                b, n, _ = x.shape
                q, k, v = self.qkv(self.norm1(x)).reshape(b, n, 3, 2, 4).unbind(2)
                q, k = self.rotate(q), self.rotate(k)
                att = t.einsum("bqhd,bkhd->bhqk", q, k) * 0.5
                causal = t.triu(t.ones(n, n, dtype=t.bool), diagonal=1)
                att = att.masked_fill(causal, float("-inf")).softmax(-1)
                y = t.einsum("bhqk,bkhd->bqhd", att, v).reshape(b, n, 8)
                x = x + self.proj(y)
                return x + self.out(t.relu(self.fc(self.norm2(x))))

        return Block()


def _cnn_reflect(t):
    return t.nn.Sequential(
        t.nn.ReflectionPad2d(1), t.nn.Conv2d(2, 8, 3), t.nn.ReLU(),
        t.nn.ReplicationPad2d((1, 0, 1, 0)), t.nn.Conv2d(8, 8, 2), t.nn.ReLU(),
        t.nn.Conv2d(8, 12, 1), t.nn.PixelShuffle(2), t.nn.LocalResponseNorm(2),
    )


class _Siamese:
    @staticmethod
    def build(t):
        class Siamese(t.nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = t.nn.Sequential(t.nn.Linear(6, 8), t.nn.Tanh(), t.nn.Linear(8, 4))

            def forward(self, a, b):
                ea, eb = self.enc(a), self.enc(b)
                return t.cdist(ea, eb), t.pdist(ea), t.nn.functional.pairwise_distance(ea[:4], eb)

        return Siamese()


class _LstmCellSeries:
    @staticmethod
    def build(t):
        class Series(t.nn.Module):
            def __init__(self):
                super().__init__()
                self.cell = t.nn.LSTMCell(3, 6)
                self.head = t.nn.Linear(6, 1)

            def forward(self, x):  # x [T, B, 3]
                h = t.zeros(x.shape[1], 6)
                c = t.zeros(x.shape[1], 6)
                outs = []
                for step in x.unbind(0):
                    h, c = self.cell(step, (h, c))
                    outs.append(self.head(h))
                return t.stack(outs).squeeze(-1).cumsum(0)

        return Series()


def _hooked_mlp(t):
    """Module hooks as torch's: a full backward hook doubling the first
    layer's grad_input, a backward pre-hook halving the Tanh's grad_output,
    a forward hook adding to an output, a forward pre-hook scaling an input."""
    m = t.nn.Sequential(t.nn.Linear(4, 6), t.nn.Tanh(), t.nn.Linear(6, 3))
    m[0].register_full_backward_hook(lambda mod, gi, go: tuple(g * 2.0 if g is not None else None for g in gi))
    m[1].register_full_backward_pre_hook(lambda mod, go: (go[0] * 0.5,))
    m[2].register_forward_hook(lambda mod, args, out: out + 1.0)
    m[2].register_forward_pre_hook(lambda mod, args: (args[0] * 3.0,))
    seen = []
    m[2].register_full_backward_hook(lambda mod, gi, go: seen.append((gi[0].shape, go[0].shape)) and None)
    return m


class _TwoInput:
    @staticmethod
    def build(t):
        class Pair(t.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = t.nn.Linear(3, 3)

            def forward(self, a, b):
                return self.lin(a) * b, a - b

        m = Pair()
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 3.0, gi[1]))
        return m


def _interp(**kw):
    return lambda m, x: _lib(m).nn.functional.interpolate(x, **kw)


def _with_indices(m, x):
    out, idx = m(x)
    return out, idx.float()


LAYER_CASES = {
    "conv3d": _mod(lambda t: t.nn.Conv3d(2, 4, 3, stride=(1, 2, 1), padding=1), [("f", (2, 2, 4, 5, 4))]),
    "conv3d_groups_dilation_nobias": _mod(lambda t: t.nn.Conv3d(4, 6, (2, 3, 2), dilation=(1, 2, 1), groups=2, bias=False), [("f", (1, 4, 3, 6, 4))]),
    "conv3d_same_reflect_unbatched": _mod(lambda t: t.nn.Conv3d(2, 2, 3, padding="same", padding_mode="reflect"), [("f", (2, 4, 4, 4))]),
    "max_pool3d": _mod(lambda t: t.nn.MaxPool3d(2), [("f", (2, 2, 4, 5, 4))]),
    "max_pool3d_pad_ceil_indices": _mod(lambda t: t.nn.MaxPool3d(3, stride=2, padding=1, ceil_mode=True, return_indices=True), [("f", (1, 2, 5, 6, 5))],
                                        call=_with_indices),
    "avg_pool3d": _mod(lambda t: t.nn.AvgPool3d(2, stride=1), [("f", (2, 2, 3, 4, 3))]),
    "avg_pool3d_pad_exclude_ceil": _mod(lambda t: t.nn.AvgPool3d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), [("f", (1, 2, 5, 6, 4))]),
    "avg_pool3d_divisor": _mod(lambda t: t.nn.AvgPool3d((2, 2, 1), divisor_override=3), [("f", (1, 1, 4, 4, 3))]),
    "adaptive_avg_pool3d": _mod(lambda t: t.nn.AdaptiveAvgPool3d((2, 3, None)), [("f", (2, 2, 5, 7, 3))]),
    "adaptive_max_pool3d_indices": _mod(lambda t: t.nn.AdaptiveMaxPool3d(2, return_indices=True), [("f", (1, 2, 5, 4, 3))], call=_with_indices),
    "batch_norm3d": _mod(lambda t: t.nn.BatchNorm3d(3), [("f", (2, 3, 2, 3, 2))]),
    "instance_norm3d": _mod(lambda t: t.nn.InstanceNorm3d(2, affine=True), [("f", (2, 2, 3, 2, 3))]),
    "weight_norm_linear": _mod(lambda t: t.nn.utils.weight_norm(t.nn.Linear(4, 3)), [("f", (5, 4))]),
    "weight_norm_conv_dim_none": _mod(lambda t: t.nn.utils.weight_norm(t.nn.Conv1d(2, 3, 3), dim=None), [("f", (2, 2, 6))]),
    "weight_norm_dim1": _mod(lambda t: t.nn.utils.weight_norm(t.nn.Linear(3, 4), dim=1), [("f", (2, 3))]),
    "spectral_norm_linear_train": _mod(lambda t: t.nn.utils.spectral_norm(t.nn.Linear(5, 4), n_power_iterations=2), [("f", (3, 5))]),
    "spectral_norm_conv_eval": _mod(lambda t: t.nn.utils.spectral_norm(t.nn.Conv2d(2, 3, 2)), [("f", (1, 2, 4, 4))], train=False),
    "spectral_norm_conv_transpose": _mod(lambda t: t.nn.utils.spectral_norm(t.nn.ConvTranspose2d(2, 3, 2)), [("f", (1, 2, 3, 3))]),
    "interpolate_bicubic": _mod(lambda t: t.nn.Identity(), [("f", (2, 2, 4, 5))], call=_interp(size=(7, 3), mode="bicubic", align_corners=False)),
    "interpolate_bicubic_align_scale": _mod(lambda t: t.nn.Identity(), [("f", (1, 2, 3, 4))], call=_interp(scale_factor=2.5, mode="bicubic", align_corners=True)),
    "interpolate_linear_1d": _mod(lambda t: t.nn.Identity(), [("f", (2, 3, 5))], call=_interp(size=9, mode="linear", align_corners=False)),
    "interpolate_linear_1d_align": _mod(lambda t: t.nn.Identity(), [("f", (2, 3, 5))], call=_interp(scale_factor=1.7, mode="linear", align_corners=True)),
    "interpolate_nearest_1d": _mod(lambda t: t.nn.Identity(), [("f", (2, 3, 5))], call=_interp(scale_factor=2.0)),
    "interpolate_nearest_exact": _mod(lambda t: t.nn.Identity(), [("f", (1, 2, 4, 5))], call=_interp(size=(7, 3), mode="nearest-exact")),
    "interpolate_nearest_exact_1d_scale": _mod(lambda t: t.nn.Identity(), [("f", (1, 2, 6))], call=_interp(scale_factor=1.5, mode="nearest-exact")),
    "interpolate_area": _mod(lambda t: t.nn.Identity(), [("f", (2, 2, 6, 7))], call=_interp(size=(3, 4), mode="area")),
    "interpolate_area_scale_1d": _mod(lambda t: t.nn.Identity(), [("f", (2, 2, 9))], call=_interp(scale_factor=0.5, mode="area")),
    "upsample_bicubic_module": _mod(lambda t: t.nn.Upsample(scale_factor=2, mode="bicubic"), [("f", (1, 1, 3, 3))]),
    "conv2d_padding_mode_reflect": _mod(lambda t: t.nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"), [("f", (2, 2, 5, 5))]),
    "conv2d_padding_mode_circular_same": _mod(lambda t: t.nn.Conv2d(2, 2, (3, 2), padding="same", padding_mode="circular", dilation=(1, 2)), [("f", (1, 2, 4, 6))]),
    "conv1d_padding_mode_replicate": _mod(lambda t: t.nn.Conv1d(3, 2, 3, stride=2, padding=2, padding_mode="replicate"), [("f", (2, 3, 7))]),
    "module_backward_hooks": _mod(_hooked_mlp, [("f", (5, 4))]),
    "module_backward_hook_two_inputs": _mod(_TwoInput.build, [("f", (2, 3)), ("f", (2, 3))]),
    "reflection_pad1d": _mod(lambda t: t.nn.ReflectionPad1d((2, 3)), [("f", (2, 3, 5))]),
    "reflection_pad2d": _mod(lambda t: t.nn.ReflectionPad2d((1, 2, 2, 0)), [("f", (2, 2, 4, 5))]),
    "reflection_pad2d_unbatched": _mod(lambda t: t.nn.ReflectionPad2d(1), [("f", (3, 3, 4))]),
    "reflection_pad3d": _mod(lambda t: t.nn.ReflectionPad3d(1), [("f", (1, 2, 3, 3, 4))]),
    "replication_pad1d": _mod(lambda t: t.nn.ReplicationPad1d((3, 1)), [("f", (2, 3, 4))]),
    "replication_pad2d": _mod(lambda t: t.nn.ReplicationPad2d((2, 1, 0, 3)), [("f", (1, 2, 3, 3))]),
    "replication_pad3d": _mod(lambda t: t.nn.ReplicationPad3d((1, 0, 0, 1, 2, 0)), [("f", (1, 1, 2, 3, 3))]),
    "circular_pad1d": _mod(lambda t: t.nn.CircularPad1d((2, 4)), [("f", (2, 2, 4))]),
    "circular_pad2d": _mod(lambda t: t.nn.CircularPad2d((1, 1, 2, 0)), [("f", (1, 2, 3, 4))]),
    "pad_functional_modes": _mod(lambda t: t.nn.Identity(), [("f", (2, 3, 4, 5))],
                                 call=lambda m, x: [_lib(m).nn.functional.pad(x, (1, 2, 3, 1), mode) for mode in ("reflect", "replicate", "circular")]
                                 + [_lib(m).nn.functional.pad(x[0], (-1, 2), "circular"), _lib(m).nn.functional.pad(x, (1, 1, 1, 1, 1, 1), "reflect")]),
    "unfold_module": _mod(lambda t: t.nn.Unfold(kernel_size=(2, 3), dilation=1, padding=1, stride=2), [("f", (2, 3, 5, 6))]),
    "unfold_unbatched": _mod(lambda t: t.nn.Unfold(2), [("f", (2, 3, 3))]),
    "fold_module": _mod(lambda t: t.nn.Fold(output_size=(4, 5), kernel_size=2, stride=1), [("f", (2, 8, 12))]),
    "fold_unfold_roundtrip": _mod(lambda t: t.nn.Identity(), [("f", (2, 2, 5, 6))], call=_fold_roundtrip),
    "rms_norm": _mod(lambda t: t.nn.RMSNorm(6), [("f", (3, 4, 6))]),
    "rms_norm_2d_eps": _mod(lambda t: t.nn.RMSNorm((3, 4), eps=1e-3), [("f", (2, 3, 4))]),
    "rms_norm_no_affine": _mod(lambda t: t.nn.RMSNorm(5, elementwise_affine=False), [("f", (4, 5))]),
    "rms_norm_functional": _mod(lambda t: t.nn.Identity(), [("f", (3, 5)), ("f", (5,))],
                                call=lambda m, x, w: _lib(m).nn.functional.rms_norm(x, (5,), w, 1e-5)),
    "local_response_norm_3d": _mod(lambda t: t.nn.LocalResponseNorm(3, alpha=0.1, beta=0.5, k=2.0), [("f", (2, 5, 4))]),
    "local_response_norm_4d": _mod(lambda t: t.nn.LocalResponseNorm(2), [("f", (2, 4, 3, 3))]),
    "lp_pool1d": _mod(lambda t: t.nn.LPPool1d(2, 3, stride=2), [("f", (2, 3, 9))]),
    "lp_pool2d": _mod(lambda t: t.nn.LPPool2d(3, (2, 2)), [("f", (1, 2, 4, 6))], call=lambda m, x: m(x.abs() + 0.1)),
    "lp_pool2d_p1_ceil": _mod(lambda t: t.nn.LPPool2d(1, 2, stride=2, ceil_mode=True), [("f", (1, 2, 5, 5))], call=lambda m, x: m(x.abs() + 0.1)),
    "max_unpool2d": _mod(lambda t: t.nn.MaxUnpool2d(2), [("f", (2, 3, 4, 6))], call=_unpool_call),
    "max_unpool1d_output_size": _mod(lambda t: t.nn.MaxUnpool1d(3, stride=2), [("f", (2, 2, 9))], call=_unpool1d_call),
    "bilinear": _mod(lambda t: t.nn.Bilinear(4, 3, 5), [("f", (6, 4)), ("f", (6, 3))]),
    "bilinear_batch_dims_no_bias": _mod(lambda t: t.nn.Bilinear(2, 3, 4, bias=False), [("f", (2, 3, 2)), ("f", (2, 3, 3))]),
    "softmax2d": _mod(lambda t: t.nn.Softmax2d(), [("f", (2, 3, 2, 4))]),
    "softmax2d_unbatched": _mod(lambda t: t.nn.Softmax2d(), [("f", (3, 2, 2))]),
    "alpha_dropout_eval": _mod(lambda t: t.nn.AlphaDropout(0.4), [("f", (3, 5))], train=False),
    "feature_alpha_dropout_eval": _mod(lambda t: t.nn.FeatureAlphaDropout(0.4), [("f", (2, 3, 4))], train=False),
    "alpha_dropout_p0_train": _mod(lambda t: t.nn.AlphaDropout(0.0), [("f", (3, 5))]),
    "affine_grid_sample_bilinear": _mod(lambda t: t.nn.Identity(), [("f", (2, 3, 4, 5)), ("f", (2, 2, 3))], call=_grid_call("bilinear", "zeros", False)),
    "affine_grid_sample_align_border": _mod(lambda t: t.nn.Identity(), [("f", (2, 3, 4, 5)), ("f", (2, 2, 3))], call=_grid_call("bilinear", "border", True)),
    "grid_sample_out_of_range": _mod(lambda t: t.nn.Identity(), [("f", (1, 2, 3, 4)), ("f", (1, 5, 3, 2))], call=_grid_direct),
    "llama_block": _mod(_LlamaBlock.build, [("f", (2, 5, 8))]),
    "cnn_reflect_pixelshuffle": _mod(_cnn_reflect, [("f", (2, 2, 6, 6))]),
    "siamese_cdist_pdist": _mod(_Siamese.build, [("f", (5, 6)), ("f", (4, 6))]),
    "lstm_cell_time_series": _mod(_LstmCellSeries.build, [("f", (6, 3, 3))]),
    # Added on 2026-12-06 (night).
    "conv_transpose3d": _mod(lambda t: t.nn.ConvTranspose3d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2), [("f", (1, 4, 3, 2, 3))]),
    "conv_transpose3d_output_size_dilation": _mod(lambda t: t.nn.ConvTranspose3d(2, 3, 2, stride=(2, 1, 2), dilation=(1, 2, 1)),
                                                  [("f", (2, 2, 2, 3, 2))], call=lambda m, x: m(x, output_size=[5, 5, 5])),
    "interpolate_trilinear": _mod(lambda t: t.nn.Identity(), [("f", (1, 2, 3, 4, 5))], call=_interp(size=(5, 3, 6), mode="trilinear")),
    "interpolate_trilinear_align_scale": _mod(lambda t: t.nn.Identity(), [("f", (1, 2, 3, 4, 2))],
                                              call=_interp(scale_factor=1.5, mode="trilinear", align_corners=True)),
    "interpolate_nearest_3d": _mod(lambda t: t.nn.Identity(), [("f", (2, 1, 3, 4, 5))], call=_interp(size=(4, 6, 3))),
    "quantiles": _mod(lambda t: t.nn.Identity(), [("f", (3, 5, 4))],
                      call=lambda m, x: [_lib(m).quantile(x, 0.3, 1), _lib(m).quantile(x, _lib(m).tensor([0.1, 0.9]), -1, interpolation="midpoint"),
                                         _lib(m).nanquantile(x, 0.5), x.quantile(0.75, 0, keepdim=True, interpolation="lower")]),
    "matrix_norms": _mod(lambda t: t.nn.Identity(), [("f", (2, 3, 4))],
                         call=lambda m, x: [_lib(m).linalg.matrix_norm(x, 1), _lib(m).linalg.matrix_norm(x, float("inf"), dim=(0, 2)),
                                            _lib(m).linalg.norm(x[0], -1), _lib(m).linalg.vecdot(x, x.flip(-1))]),
    "special_functions": _mod(lambda t: t.nn.Identity(), [("f", (3, 4))],
                              call=lambda m, x: [_lib(m).special.entr(x.abs()), _lib(m).special.xlog1py(x, x.abs()), _lib(m).special.ndtr(x),
                                                 _lib(m).special.expit(x), _lib(m).special.xlogy(x, x.abs())]),
    "weight_norm_parametrization": _mod(lambda t: t.nn.utils.parametrizations.weight_norm(t.nn.Linear(4, 3)), [("f", (5, 4))]),
    "weight_norm_parametrization_conv_dim1": _mod(lambda t: t.nn.utils.parametrizations.weight_norm(t.nn.Conv1d(2, 3, 3), dim=1), [("f", (2, 2, 6))]),
}

LOSS_CASES = {
    "multi_margin_mean": ([("f+", (5, 4)), ("i4", (5,))], lambda t, x, y: _F(t).multi_margin_loss(x, y)),
    "multi_margin_p2_margin_sum": ([("f+", (5, 4)), ("i4", (5,))], lambda t, x, y: t.nn.MultiMarginLoss(p=2, margin=0.7, reduction="sum")(x, y)),
    "multi_margin_weight_none": ([("f+", (6, 3)), ("i3", (6,)), ("w", (3,))],
                                 lambda t, x, y, w: t.nn.MultiMarginLoss(weight=w, reduction="none")(x, y)),
    "multi_margin_vector": ([("f+", (5,)), ("i5", ())], lambda t, x, y: _F(t).multi_margin_loss(x, y.reshape(1))),
    "multilabel_margin": ([("f+", (3, 5)), ("i5", (3, 5))], lambda t, x, y: t.nn.MultiLabelMarginLoss()(x, _ml_targets(t, y))),
    "multilabel_margin_none": ([("f+", (3, 5)), ("i5", (3, 5))], lambda t, x, y: _F(t).multilabel_margin_loss(x, _ml_targets(t, y), reduction="none")),
    "gaussian_nll": ([("f+", (4, 3)), ("f", (4, 3)), ("w+", (4, 3))], lambda t, x, y, v: t.nn.GaussianNLLLoss()(x, y, v)),
    "gaussian_nll_full_sum_homoscedastic": ([("f+", (4, 3)), ("f+", (4, 3)), ("w+", (4, 1))],
                                            lambda t, x, y, v: _F(t).gaussian_nll_loss(x, y, v, full=True, reduction="sum")),
    "gaussian_nll_var_short_none": ([("f+", (4, 3)), ("f", (4, 3)), ("w+", (4,))],
                                    lambda t, x, y, v: t.nn.GaussianNLLLoss(reduction="none")(x, y, v)),
    "gaussian_nll_eps_clamp": ([("f+", (6,)), ("f", (6,)), ("u+", (6,))],
                               lambda t, x, y, v: _F(t).gaussian_nll_loss(x, y, v * 1e-3, eps=1e-4)),
}


def _ml_targets(t, y):
    """Valid multilabel targets from random class draws: each row's first
    distinct values, then −1 and arbitrary values after it."""
    rows = []
    for k, r in enumerate(y.tolist()):
        seen = []
        for v in r:
            if v not in seen:
                seen.append(v)
        cut = 1 + k % max(1, len(seen))
        row = seen[:cut] + [-1] + [0] * (len(r) - cut - 1)
        rows.append(row[: len(r)])
    return t.tensor(rows)
