"""Bit-identity of the program surface's new layers and losses
(docs/engine.md, "Pinned gradient hashes"): one exact-mode gradient hash of a model built from them — Conv1d,
GroupNorm, InstanceNorm, adaptive average and max pooling (uneven windows:
the NumPy double sums), max/avg pool 1-D, RNN, GRU and LSTM cells, the
transformer decoder layer, Embedding with max_norm, and the losses
(binary cross-entropy, with logits and pos_weight, label-smoothed
cross-entropy, smooth L1, KL) — equal across every kernel path × threads
{1, 3, 8} and pinned as a literal."""

import onemodel as om
import onemodel.nn as nn
import onemodel.nn.functional as F
from conftest import PATHS, THREAD_COUNTS, sha256_of, assert_splits

SURFACE_EXACT_SHA256 = "d2b12a30d2d90134bfb2ffbccfc9e49d7ab9a12c8412f5cc230f277b5ab1015d"


class Model(nn.Module):
    def __init__(self, gen):
        super().__init__()
        self.conv = nn.Conv1d(3, 6, 3, padding=1, generator=gen)
        self.gn = nn.GroupNorm(2, 6)
        self.inorm = nn.InstanceNorm1d(6, affine=True)
        self.rnn = nn.RNN(6, 5, generator=gen)
        self.lstm_cell = nn.LSTMCell(5, 4, generator=gen)
        self.gru_cell = nn.GRUCell(4, 4, generator=gen)
        self.emb = nn.Embedding(7, 8, max_norm=1.0, generator=gen)
        self.decoder = nn.TransformerDecoderLayer(8, 2, 12, dropout=0.0, batch_first=True, generator=gen)
        self.head = nn.Linear(8, 3, generator=gen)

    def forward(self, x, tokens):
        h = self.inorm(self.gn(self.conv(x)))  # [B, 6, L]
        h = F.adaptive_avg_pool1d(h, 5) + F.adaptive_max_pool1d(h, 5)
        h = h + F.max_pool1d(F.avg_pool1d(h, 2, 1, padding=1, count_include_pad=False), 2, 1)
        out, _ = self.rnn(h.permute(2, 0, 1))  # [5, B, 5]
        hx, cx = self.lstm_cell(out[-1])
        g = self.gru_cell(hx, cx)  # [B, 4]
        mem = self.emb(tokens)  # [B, T, 8]
        tgt = mem[:, :3] + om.cat([g, g], 1).unsqueeze(1)
        y = self.decoder(tgt, mem, tgt_mask=nn.Transformer.generate_square_subsequent_mask(3))
        return self.head(y)


def _gradients():
    gen = om.Generator().manual_seed(11)
    model = Model(gen)
    x = om.randn(2, 3, 9, generator=gen)
    tokens = om.tensor([[1, 4, 4, 6, 0], [3, 3, 2, 5, 1]])
    logits = model(x, tokens)  # [2, 3, 3]
    flat = logits.reshape(-1, 3)
    target = om.tensor([0, 2, 1, 1, 0, 2])
    probs = om.sigmoid(flat)
    y = om.rand(6, 3, generator=gen)
    loss = (F.cross_entropy(flat, target, label_smoothing=0.1)
            + F.binary_cross_entropy(probs, y)
            + F.binary_cross_entropy_with_logits(flat, y, pos_weight=om.tensor([1.0, 2.0, 0.5]))
            + F.smooth_l1_loss(flat, y, beta=0.5)
            + F.kl_div(F.log_softmax(flat, 1), F.softmax(y, 1), reduction="batchmean"))
    loss.backward()
    return [p.grad.numpy() for p in model.parameters()] + [loss.detach().reshape(1).numpy()]


def test_exact_mode_hash_is_pinned_on_every_path_and_thread_count():
    with om.compute.mode("exact"):
        assert_splits(_gradients)
    seen = {}
    for path in PATHS:
        for threads in THREAD_COUNTS:
            with om.compute.settings(mode="exact", kernel_path=path, threads=threads):
                seen[(path, threads)] = sha256_of(_gradients())
    assert len(set(seen.values())) == 1, seen
    assert next(iter(seen.values())) == SURFACE_EXACT_SHA256
