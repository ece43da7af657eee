"""Layer cases shared by tools/surface_oracle.py (torch) and
tests/test_surface_layers.py (onemodel): each case builds a module from the
library passed in as ``torch``, names its inputs (shapes and kinds; the
oracle draws and stores the values) and says how to call it. The oracle
overwrites every parameter with seeded values, runs forward and a backward
of sum(output · G) for a stored G, and records outputs, gradients and the
buffers after the call."""

from __future__ import annotations


def _mod(build, inputs, call=None, train=True):
    return {"build": build, "inputs": inputs, "call": call or (lambda m, *xs: m(*xs)), "train": train}


def _lib(m):
    """The library a module comes from (torch or onemodel)."""
    import sys

    return sys.modules[type(m).__module__.split(".")[0]]


def _decoder_call(m, tgt, memory):
    import sys

    lib = sys.modules[type(m).__module__.split(".")[0]]
    mask = lib.nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
    return m(tgt, memory, tgt_mask=mask)


def _bool_masks_decoder_call(m, tgt, memory):
    lib = _lib(m)
    causal = lib.tensor([[j > i for j in range(4)] for i in range(4)])
    tgt_pad = lib.tensor([[False, False, False, True], [False, False, False, False]])
    mem_pad = lib.tensor([[False, False, False, True, True], [False, False, False, False, True]])
    return m(tgt, memory, tgt_mask=causal, tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=mem_pad)


def _bool_padding_encoder_call(m, src):
    lib = _lib(m)
    pad = lib.tensor([[False, False, True, True, True], [False, False, False, False, False], [False, True, True, True, True]])
    return m(src, src_key_padding_mask=pad)


def _transformer_call(m, src, tgt):
    import sys

    lib = sys.modules[type(m).__module__.split(".")[0]]
    mask = lib.nn.Transformer.generate_square_subsequent_mask(tgt.shape[0])
    return m(src, tgt, tgt_mask=mask)


def _packed_call(m, x):
    """A padded batch packed with lengths out of order, run, and padded back."""
    import sys

    lib = sys.modules[type(m).__module__.split(".")[0]]
    rnn = lib.nn.utils.rnn
    packed = rnn.pack_padded_sequence(x, [3, 5, 2, 5], batch_first=m.batch_first, enforce_sorted=False)
    out, state = m(packed)
    padded, _ = rnn.pad_packed_sequence(out, batch_first=m.batch_first, total_length=6)
    return (padded,) + (tuple(state) if isinstance(state, tuple) else (state,))


LAYER_CASES = {
    "conv1d": _mod(lambda t: t.nn.Conv1d(3, 4, 3, stride=2, padding=1), [("f", (2, 3, 9))]),
    "conv1d_same_groups": _mod(lambda t: t.nn.Conv1d(4, 6, 3, padding="same", dilation=2, groups=2), [("f", (2, 4, 10))]),
    "conv1d_unbatched": _mod(lambda t: t.nn.Conv1d(3, 2, 2, bias=False), [("f", (3, 7))]),
    "conv_transpose1d": _mod(lambda t: t.nn.ConvTranspose1d(4, 2, 4, stride=2, padding=1, output_padding=1), [("f", (2, 4, 5))]),
    "max_pool1d": _mod(lambda t: t.nn.MaxPool1d(3, 2, padding=1), [("f", (2, 3, 10))]),
    "avg_pool1d": _mod(lambda t: t.nn.AvgPool1d(3, 2, padding=1, count_include_pad=False), [("f", (2, 3, 10))]),
    "adaptive_avg_2d_uneven": _mod(lambda t: t.nn.AdaptiveAvgPool2d((3, 2)), [("f", (2, 3, 7, 5))]),
    "adaptive_avg_2d_global": _mod(lambda t: t.nn.AdaptiveAvgPool2d((1, 1)), [("f", (2, 3, 4, 6))]),
    "adaptive_avg_2d_none": _mod(lambda t: t.nn.AdaptiveAvgPool2d((None, 3)), [("f", (1, 2, 4, 7))]),
    "adaptive_avg_1d": _mod(lambda t: t.nn.AdaptiveAvgPool1d(4), [("f", (2, 3, 10))]),
    "adaptive_max_2d_uneven": _mod(lambda t: t.nn.AdaptiveMaxPool2d((3, 3)), [("f", (2, 2, 7, 8))]),
    "adaptive_max_1d": _mod(lambda t: t.nn.AdaptiveMaxPool1d(3), [("f", (2, 3, 8))]),
    "group_norm": _mod(lambda t: t.nn.GroupNorm(2, 6), [("f", (3, 6, 4, 4))]),
    "group_norm_plain": _mod(lambda t: t.nn.GroupNorm(3, 6, affine=False), [("f", (2, 6, 5))]),
    "instance_norm2d": _mod(lambda t: t.nn.InstanceNorm2d(3, affine=True), [("f", (2, 3, 4, 5))]),
    "instance_norm1d_running": _mod(lambda t: t.nn.InstanceNorm1d(3, track_running_stats=True), [("f", (4, 3, 6))]),
    "instance_norm1d_eval": _mod(lambda t: t.nn.InstanceNorm1d(3, affine=True, track_running_stats=True), [("f", (2, 3, 6))], train=False),
    "lstm_dropout_eval": _mod(lambda t: t.nn.LSTM(4, 6, num_layers=2, dropout=0.3), [("f", (5, 3, 4))], train=False),
    "rnn_tanh_bidir": _mod(lambda t: t.nn.RNN(4, 5, num_layers=2, bidirectional=True), [("f", (5, 3, 4)), ("f", (4, 3, 5))]),
    "rnn_relu_batch_first": _mod(lambda t: t.nn.RNN(3, 4, nonlinearity="relu", batch_first=True), [("f", (2, 6, 3))]),
    "lstm_cell": _mod(lambda t: t.nn.LSTMCell(4, 5), [("f", (3, 4)), ("f", (3, 5)), ("f", (3, 5))],
                      call=lambda m, x, h, c: m(x, (h, c))),
    "lstm_cell_unbatched": _mod(lambda t: t.nn.LSTMCell(4, 5), [("f", (4,))]),
    "gru_cell": _mod(lambda t: t.nn.GRUCell(4, 5), [("f", (3, 4)), ("f", (3, 5))]),
    "gru_cell_no_bias": _mod(lambda t: t.nn.GRUCell(4, 5, bias=False), [("f", (3, 4))]),
    "rnn_cell_relu": _mod(lambda t: t.nn.RNNCell(4, 5, nonlinearity="relu"), [("f", (3, 4)), ("f", (3, 5))]),
    "decoder_layer": _mod(lambda t: t.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
                          [("f", (2, 5, 8)), ("f", (2, 4, 8))], call=_decoder_call),
    "decoder_layer_norm_first_gelu": _mod(
        lambda t: t.nn.TransformerDecoderLayer(8, 4, 12, dropout=0.0, activation="gelu", norm_first=True, batch_first=True),
        [("f", (2, 3, 8)), ("f", (2, 6, 8))], call=_decoder_call),
    "decoder_bool_masks": _mod(lambda t: t.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
                               [("f", (2, 4, 8)), ("f", (2, 5, 8))], call=_bool_masks_decoder_call),
    "encoder_bool_padding": _mod(lambda t: t.nn.TransformerEncoder(t.nn.TransformerEncoderLayer(8, 4, 16, dropout=0.0, batch_first=True), 2,
                                                                  enable_nested_tensor=False),
                                 [("f", (3, 5, 8))], call=_bool_padding_encoder_call),
    "transformer": _mod(lambda t: t.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0), [("f", (6, 2, 8)), ("f", (4, 2, 8))], call=_transformer_call),
    "lstm_packed_bidir": _mod(lambda t: t.nn.LSTM(3, 4, num_layers=2, bidirectional=True), [("f", (6, 4, 3))], call=_packed_call),
    "gru_packed_batch_first": _mod(lambda t: t.nn.GRU(3, 5, batch_first=True), [("f", (4, 6, 3))], call=_packed_call),
    "embedding_max_norm": _mod(lambda t: t.nn.Embedding(10, 4, max_norm=1.5), [("i10", (3, 5))]),
    "embedding_padding": _mod(lambda t: t.nn.Embedding(10, 4, padding_idx=2), [("i10", (2, 6))]),
    "embedding_bag_mean_offsets": _mod(lambda t: t.nn.EmbeddingBag(10, 4), [("i10", (9,))],
                                       call=lambda m, x: m(x, _lib(m).tensor([0, 2, 2, 5]))),
    "embedding_bag_sum_2d_weights": _mod(lambda t: t.nn.EmbeddingBag(10, 3, mode="sum"), [("i10", (3, 4)), ("f", (3, 4))],
                                         call=lambda m, x, w: m(x, per_sample_weights=w)),
    "embedding_bag_max_last_offset": _mod(lambda t: t.nn.EmbeddingBag(8, 3, mode="max", include_last_offset=True), [("i8", (7,))],
                                          call=lambda m, x: m(x, _lib(m).tensor([0, 3, 3, 7]))),
    "embedding_bag_padding_mean": _mod(lambda t: t.nn.EmbeddingBag(6, 2, padding_idx=1), [("i6", (4, 3))]),
    "upsample_bilinear": _mod(lambda t: t.nn.Upsample(size=(5, 7), mode="bilinear", align_corners=True), [("f", (2, 2, 3, 4))]),
    "unflatten": _mod(lambda t: t.nn.Sequential(t.nn.Unflatten(1, (2, 6)), t.nn.Unflatten(-1, (3, -1))), [("f", (2, 12))]),
    "pixel_shuffle": _mod(lambda t: t.nn.Sequential(t.nn.PixelShuffle(2), t.nn.PixelUnshuffle(2), t.nn.PixelShuffle(2)), [("f", (2, 8, 3, 2))]),
    "zero_pad2d": _mod(lambda t: t.nn.ZeroPad2d((1, 2, 0, 1)), [("f", (1, 2, 3, 3))]),
    "constant_pad1d": _mod(lambda t: t.nn.ConstantPad1d(2, 1.5), [("f", (2, 3, 4))]),
    "cosine_similarity": _mod(lambda t: t.nn.CosineSimilarity(dim=-1), [("f", (3, 4, 5)), ("f", (4, 5))]),
    "pairwise_distance": _mod(lambda t: t.nn.PairwiseDistance(p=3.0, keepdim=True), [("f", (4, 6)), ("f", (4, 6))]),
    "pairwise_distance_l2": _mod(lambda t: t.nn.PairwiseDistance(), [("f", (4, 6)), ("f", (1, 6))]),
    "normalize": _mod(lambda t: t.nn.Identity(), [("f", (3, 5))], call=lambda m, x: _lib(m).nn.functional.normalize(x, dim=0)),
    "normalize_p1": _mod(lambda t: t.nn.Identity(), [("f", (2, 3, 4))], call=lambda m, x: _lib(m).nn.functional.normalize(x, p=1.0, dim=-1)),
    "dropout2d_eval": _mod(lambda t: t.nn.Dropout2d(0.5), [("f", (2, 3, 2, 2))], train=False),
}
