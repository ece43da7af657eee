"""Models, losses and data of the data-parallel tests (tests/test_distributed*.py).

Ray workers unpickle these; the tests register this module to be pickled by
value, so the workers need not import it from tests/."""

from __future__ import annotations

import numpy as np

import onemodel as om
import onemodel.functional as F
import onemodel.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 5)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class CRNN(nn.Module):
    """tools/rnn_oracle.py's CRNN (two conv-relu-maxpool stages, a two-layer
    bidirectional LSTM, a linear classifier), as tests/test_oracle_crnn.py
    rebuilds it."""

    def __init__(self, classes=6):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 6, 3, padding=1)
        self.lstm = nn.LSTM(6 * 2, 5, num_layers=2, bidirectional=True)
        self.fc = nn.Linear(10, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        b, c, h, w = x.shape
        seq = x.permute(3, 0, 1, 2).reshape(w, b, c * h)
        out, _ = self.lstm(seq)
        return self.fc(out)


class Tied(nn.Module):
    """One weight used twice in the graph: each backward emits to it twice."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        return self.head(F.relu(self.fc(F.relu(self.fc(x)))))


class WithDropout(MLP):
    def forward(self, x):
        return self.fc3(F.dropout(F.relu(self.fc1(x)), 0.5, training=self.training))


class WithBatchNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 5)
        self.bn = nn.BatchNorm1d(5)

    def forward(self, x):
        return self.bn(self.fc(x))


def build(cls):
    def make():
        om.manual_seed(7)
        return cls()
    return make


def classify(model, mb):
    x, y = mb
    return F.cross_entropy(model(om.tensor(x)), om.tensor(y))


def ctc(model, mb):
    """Mean CTC loss of the CRNN on a micro-batch (x [B,1,8,W], targets,
    input and target lengths)."""
    x, targets, in_len, tgt_len = mb
    lp = F.log_softmax(model(om.tensor(x)), dim=-1)
    return F.ctc_loss(lp, om.tensor(targets), in_len, tgt_len, reduction="mean")


def adamw(params):
    return om.optim.AdamW(params, lr=1e-2, weight_decay=0.05)


def classify_batches(steps, rows=12, features=8, classes=5, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((rows, features)).astype(np.float32), rng.integers(0, classes, rows))
            for _ in range(steps)]


def ctc_batches(steps, rows=6, seed=1):
    """Lines of width 32 (8 time steps), targets of 1 to 4 labels in 1..5,
    input lengths 5 to 8 (unequal, as in the oracle's fixture)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        x = rng.standard_normal((rows, 1, 8, 32)).astype(np.float32)
        tgt_len = rng.integers(1, 5, rows)
        targets = np.zeros((rows, 4), np.int64)
        for i, n in enumerate(tgt_len):
            targets[i, :n] = rng.integers(1, 6, n)
        in_len = rng.integers(5, 9, rows)
        out.append((x, targets, in_len.astype(np.int64), tgt_len.astype(np.int64)))
    return out


def one_process(make, loss_fn, batches, micro_batches):
    """The reference: gradient accumulation over split_batch's micro-batches
    in one process. Returns (model, optimizer, per-step losses)."""
    from onemodel.distributed import split_batch

    model = make()
    opt = adamw(list(model.parameters()))
    losses = []
    for batch in batches:
        opt.zero_grad()
        step = []
        for mb in split_batch(batch, micro_batches):
            loss = loss_fn(model, mb)
            loss.backward()
            step.append(loss.item())
        opt.step()
        losses.append(step)
    return model, opt, losses


def state_bytes(model, opt) -> dict:
    """Every parameter, gradient and optimizer-state tensor as bytes."""
    out = {}
    for name, p in model.named_parameters():
        out[f"param {name}"] = p.detach().numpy(force=True).tobytes()
        out[f"grad {name}"] = None if p.grad is None else p.grad.numpy(force=True).tobytes()
        for k, v in opt.state[p].items():
            out[f"state {name} {k}"] = v.numpy(force=True).tobytes() if hasattr(v, "numpy") else repr(v)
    return out
