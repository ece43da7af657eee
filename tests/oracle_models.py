"""The two engine reference models of tools/autograd_oracle.py, rebuilt on
onemodel with the same module names, so the oracle's torch state dicts load
unchanged. Shared by tests/test_oracle_autograd.py and benchmarks/."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import onemodel as om
import onemodel.functional as F
import onemodel.nn as nn

DATA = Path(__file__).resolve().parent.parent / "testdata" / "autograd"


class ConvNet(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c["in_channels"], c["c1"], 3, padding=1, bias=True)
        self.bn1 = nn.BatchNorm2d(c["c1"])
        self.pool1 = nn.MaxPool2d(2)
        self.dw = nn.Conv2d(c["c1"], c["c1"], 3, padding=1, groups=c["c1"])
        self.pw = nn.Conv2d(c["c1"], c["c2"], 1)
        self.pool2 = nn.AvgPool2d(2)
        self.fc = nn.Linear(c["c2"] * (c["size"] // 4) ** 2, c["classes"])

    def forward(self, x):
        x = self.pool1(F.relu(self.bn1(self.conv1(x))))
        x = self.pool2(self.pw(F.relu(self.dw(x))))
        return self.fc(x.flatten(1))


class Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed = nn.Embedding(c["vocab"], c["d_model"])
        self.layers = nn.ModuleList(
            [nn.TransformerEncoderLayer(c["d_model"], c["nhead"], c["dim_feedforward"], dropout=0.0, batch_first=True, norm_first=nf) for nf in (False, True)]
        )
        self.head = nn.Linear(c["d_model"], c["classes"])

    def forward(self, tokens, pad_mask):
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x, src_key_padding_mask=pad_mask)
        return self.head(x)


def load(name: str) -> dict:
    with np.load(DATA / f"{name}.npz") as z:
        data = {k: z[k] for k in z.files}
    data["meta"] = json.loads(str(data["meta"]))
    return data


def build(name: str, data: dict):
    """The model with the oracle's parameters and initial buffers loaded."""
    cfg = data["meta"]["config"]
    model = ConvNet(cfg) if name == "convnet" else Encoder(cfg)
    state = {k[len("param/"):]: v for k, v in data.items() if k.startswith("param/")}
    for k, v in model.state_dict().items():
        if k not in state:  # buffers start from their initial values, as in the oracle
            state[k] = v
    model.load_state_dict(state)
    return model


def step(name: str, model, data: dict):
    """One forward + backward; returns (loss, input gradient or None)."""
    cfg = data["meta"]["config"]
    if name == "convnet":
        x = om.tensor(data["input/x"]).requires_grad_()
        loss = F.cross_entropy(model(x), om.tensor(data["input/targets"]))
        loss.backward()
        return loss, x.grad
    logits = model(om.tensor(data["input/tokens"]), data["input/pad_mask"])
    loss = F.cross_entropy(logits.reshape(-1, cfg["classes"]), om.tensor(data["input/targets"]).reshape(-1))
    loss.backward()
    return loss, None
