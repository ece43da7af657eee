"""Write the PyTorch reference gradients of the two engine models to
testdata/autograd/ (docs/ops.md, "Checks").

Runs PyTorch 2.15.0 on the CPU as a black box: each model is built from
torch.nn modules, its state dict is replaced by seeded NumPy values, and one
forward + backward is run in float32. Written per model (one .npz each):

  param/<name>   every parameter (torch's state-dict names and order)
  buffer/<name>  every buffer after the step (BatchNorm running stats)
  input/<name>   the inputs (and masks / targets)
  grad/<name>    the gradient of every parameter and of the float input
  loss           the scalar loss
  meta           JSON: torch version, seed, the model's configuration

Needs torch (``pip install torch==2.15.0``); CI never runs it, the tests
read the files it wrote. Usage: python tools/autograd_oracle.py [outdir]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 20240611

CONVNET = dict(batch=4, in_channels=3, size=16, c1=8, c2=16, classes=10)
ENCODER = dict(batch=3, seq=7, vocab=20, d_model=16, nhead=4, dim_feedforward=32, classes=5)


class ConvNet(nn.Module):
    """conv (bias, feeding batch norm) → BN → ReLU → maxpool → depthwise conv
    → ReLU → pointwise conv → avgpool → flatten → linear."""

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
        return self.fc(torch.flatten(x, 1))


class Encoder(nn.Module):
    """embedding → two encoder layers (post-norm, then pre-norm; batch first;
    key padding mask) → linear per token."""

    def __init__(self, c):
        super().__init__()
        self.embed = nn.Embedding(c["vocab"], c["d_model"])
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(c["d_model"], c["nhead"], c["dim_feedforward"], dropout=0.0, batch_first=True, norm_first=nf)
            for nf in (False, True)
        )
        self.head = nn.Linear(c["d_model"], c["classes"])

    def forward(self, tokens, pad_mask):
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x, src_key_padding_mask=pad_mask)
        return self.head(x)


def seeded_state(model: nn.Module, rng: np.random.Generator) -> dict:
    """New values for every parameter; buffers keep their initial values."""
    params = dict(model.named_parameters())
    state = {}
    for name, value in model.state_dict().items():
        if name in params:
            scale = 1.0 if name.endswith("embed.weight") else 0.3
            if name.endswith(".bias"):
                scale = 0.1
            state[name] = (rng.standard_normal(tuple(value.shape)) * scale).astype(np.float32)
            if name.endswith("norm1.weight") or name.endswith("norm2.weight") or name.endswith("bn1.weight"):
                state[name] = (1.0 + state[name]).astype(np.float32)
        else:
            state[name] = value.numpy().copy()
    return state


def run_convnet(rng):
    c = CONVNET
    model = ConvNet(c).train()
    state = seeded_state(model, rng)
    model.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    x = rng.standard_normal((c["batch"], c["in_channels"], c["size"], c["size"])).astype(np.float32)
    targets = rng.integers(0, c["classes"], size=c["batch"]).astype(np.int64)
    xt = torch.from_numpy(x.copy()).requires_grad_()
    loss = F.cross_entropy(model(xt), torch.from_numpy(targets))
    loss.backward()
    out = {"input/x": x, "input/targets": targets, "loss": np.float32(loss.item()), "grad/input.x": xt.grad.numpy()}
    return model, state, out, c


def run_encoder(rng):
    c = ENCODER
    model = Encoder(c).train()
    state = seeded_state(model, rng)
    model.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    tokens = rng.integers(0, c["vocab"], size=(c["batch"], c["seq"])).astype(np.int64)
    lengths = [c["seq"], c["seq"] - 2, c["seq"] - 4]
    pad = np.array([[j >= n for j in range(c["seq"])] for n in lengths])
    targets = rng.integers(0, c["classes"], size=(c["batch"], c["seq"])).astype(np.int64)
    targets[pad] = -100
    logits = model(torch.from_numpy(tokens), torch.from_numpy(pad))
    loss = F.cross_entropy(logits.reshape(-1, c["classes"]), torch.from_numpy(targets).reshape(-1))
    loss.backward()
    out = {"input/tokens": tokens, "input/pad_mask": pad, "input/targets": targets, "loss": np.float32(loss.item())}
    return model, state, out, c


def save(path: Path, model, state, out, config) -> None:
    arrays = dict(out)
    params = dict(model.named_parameters())
    for name in state:
        if name in params:
            arrays[f"param/{name}"] = state[name]
            arrays[f"grad/{name}"] = params[name].grad.numpy().copy()
    for name, buf in model.named_buffers():
        arrays[f"buffer/{name}"] = buf.numpy().copy()
    arrays["meta"] = np.array(json.dumps({"torch": torch.__version__, "seed": SEED, "config": config, "params": [n for n in state if n in params]}))
    np.savez_compressed(path, **arrays)
    print(f"wrote {path} (loss {float(out['loss']):.6f}, {len(params)} parameters)")


def run_op_cases(outdir: Path) -> None:
    """Small operator cases (tests/op_cases.py): output and input gradients."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import op_cases

    arrays = {}
    for name, (shapes, fn) in op_cases.CASES.items():
        xs, rng = op_cases.seeded_inputs(name, shapes)
        ts = [torch.from_numpy(x.copy()).requires_grad_() for x in xs]
        out = fn(F, torch, *ts)
        w = rng.uniform(-1, 1, size=tuple(out.shape)).astype(np.float32)
        (out * torch.from_numpy(w)).sum().backward()
        arrays[f"{name}/out"] = out.detach().numpy()
        for i, t in enumerate(ts):
            arrays[f"{name}/grad{i}"] = t.grad.numpy() if t.grad is not None else np.zeros_like(xs[i])
    c = op_cases.MHA
    for name, (batch_first, need_weights, kind) in op_cases.MHA_CASES.items():
        rng = np.random.default_rng([7, sum(map(ord, name))])
        mha = nn.MultiheadAttention(c["embed_dim"], c["num_heads"], batch_first=batch_first)
        state = {k: (rng.standard_normal(tuple(v.shape)) * 0.4).astype(np.float32) for k, v in mha.state_dict().items()}
        mha.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
        shape = lambda n: (c["batch"], n, c["embed_dim"]) if batch_first else (n, c["batch"], c["embed_dim"])
        q, k, v = (rng.standard_normal(shape(n)).astype(np.float32) for n in (c["L"], c["S"], c["S"]))
        ts = [torch.from_numpy(a.copy()).requires_grad_() for a in (q, k, v)]
        attn, kpm = op_cases.mha_masks(torch, kind)
        out, weights = mha(*ts, key_padding_mask=kpm, attn_mask=attn, need_weights=need_weights)
        w = rng.uniform(-1, 1, size=tuple(out.shape)).astype(np.float32)
        loss = (out * torch.from_numpy(w)).sum()
        if weights is not None:
            loss = loss + weights.sum() * 0.5 + (weights * weights).sum()
            arrays[f"{name}/weights"] = weights.detach().numpy()
        loss.backward()
        arrays[f"{name}/out"] = out.detach().numpy()
        for i, (a, t) in enumerate(zip((q, k, v), ts)):
            arrays[f"{name}/input{i}"] = a
            arrays[f"{name}/grad{i}"] = t.grad.numpy()
        for pname, p in mha.named_parameters():
            arrays[f"{name}/param/{pname}"] = state[pname]
            arrays[f"{name}/pgrad/{pname}"] = p.grad.numpy()
        arrays[f"{name}/lossweight"] = w
    np.savez_compressed(outdir / "ops.npz", **arrays)
    print(f"wrote {outdir / 'ops.npz'} ({len(op_cases.CASES) + len(op_cases.MHA_CASES)} cases)")


def main() -> None:
    outdir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "testdata" / "autograd"
    outdir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    rng = np.random.default_rng(SEED)
    save(outdir / "convnet.npz", *run_convnet(rng))
    save(outdir / "encoder.npz", *run_encoder(rng))
    run_op_cases(outdir)


if __name__ == "__main__":
    main()
