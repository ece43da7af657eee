"""PyTorch oracle for the recurrent operators (black box, CPU).

Builds three models from seeded NumPy weights, runs one forward and backward
pass in float32 on the CPU and writes weights, inputs, loss values and every
gradient to testdata/autograd/{crnn,gru,decoder}.npz:

* crnn: two conv-relu-maxpool stages, height collapsed into features, a
  two-layer bidirectional LSTM, linear, log_softmax, CTC loss (mean) with
  unequal input and target lengths and a repeated label; also the CTC losses
  for reductions none/sum/mean, a zero_infinity case, and the gradient with
  respect to the logits (through log_softmax).
* gru: a bidirectional two-layer GRU with initial states, batch_first.
* decoder: conv, two ConvTranspose2d (one with stride 2, output_padding 1
  and groups 2), nearest and both bilinear resizes.

Run with PyTorch 2.15.0 (never a dependency of the package or of CI):
    python tools/rnn_oracle.py
"""

from __future__ import annotations

import pathlib

import numpy as np
import torch
import torch.nn.functional as F

OUT = pathlib.Path(__file__).resolve().parent.parent / "testdata" / "autograd"
SEED = 20261129


def seeded(rng, shape, scale):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def params_of(module: torch.nn.Module, rng, scale=0.3) -> dict:
    """Overwrite every parameter with seeded values; return them as NumPy."""
    out = {}
    with torch.no_grad():
        for name, p in module.named_parameters():
            v = seeded(rng, tuple(p.shape), scale)
            p.copy_(torch.from_numpy(v))
            out[name] = v
    return out


def grads_of(module: torch.nn.Module) -> dict:
    return {f"grad.{n}": p.grad.detach().numpy().copy() for n, p in module.named_parameters()}


class CRNN(torch.nn.Module):
    def __init__(self, classes=6):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(4, 6, 3, padding=1)
        self.lstm = torch.nn.LSTM(6 * 2, 5, num_layers=2, bidirectional=True)
        self.fc = torch.nn.Linear(10, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)  # [B, 4, 4, W/2]
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)  # [B, 6, 2, W/4]
        b, c, h, w = x.shape
        seq = x.permute(3, 0, 1, 2).reshape(w, b, c * h)  # time = width
        out, _ = self.lstm(seq)
        return self.fc(out)  # logits [T, B, classes]


def crnn(rng) -> dict:
    model = CRNN()
    data = {f"param.{k}": v for k, v in params_of(model, rng).items()}
    x = seeded(rng, (3, 1, 8, 32), 1.0)
    targets = np.array([[1, 2, 2, 3], [4, 5, 0, 0], [3, 0, 0, 0]], dtype=np.int64)  # repeated label in line 0
    input_lengths = np.array([8, 7, 5], dtype=np.int64)
    target_lengths = np.array([4, 2, 1], dtype=np.int64)
    xt = torch.from_numpy(x).requires_grad_()
    logits = model(xt)
    logits.retain_grad()
    lp = F.log_softmax(logits, dim=-1)
    loss = F.ctc_loss(lp, torch.from_numpy(targets), torch.from_numpy(input_lengths), torch.from_numpy(target_lengths), reduction="mean")
    loss.backward()
    data.update(grads_of(model))
    data.update(
        input=x,
        grad_input=xt.grad.numpy().copy(),
        logits=logits.detach().numpy().copy(),
        grad_logits=logits.grad.numpy().copy(),
        targets=targets,
        input_lengths=input_lengths,
        target_lengths=target_lengths,
        loss=np.float32(loss.item()),
    )
    with torch.no_grad():
        lpd = lp.detach()
        tt, il, tl = torch.from_numpy(targets), torch.from_numpy(input_lengths), torch.from_numpy(target_lengths)
        data["loss_none"] = F.ctc_loss(lpd, tt, il, tl, reduction="none").numpy()
        data["loss_sum"] = np.float32(F.ctc_loss(lpd, tt, il, tl, reduction="sum").item())
        data["loss_mean"] = np.float32(F.ctc_loss(lpd, tt, il, tl, reduction="mean").item())
        # zero_infinity: line 2 made impossible (target longer than input).
        tl_inf = torch.tensor([4, 2, 4])
        tt_inf = torch.tensor([[1, 2, 2, 3], [4, 5, 0, 0], [1, 1, 1, 1]])
        il_inf = torch.tensor([8, 7, 5])
        data["inf_targets"] = tt_inf.numpy()
        data["inf_target_lengths"] = tl_inf.numpy()
        data["inf_loss_none"] = F.ctc_loss(lpd, tt_inf, il_inf, tl_inf, reduction="none").numpy()
        data["inf_loss_zero"] = F.ctc_loss(lpd, tt_inf, il_inf, tl_inf, reduction="none", zero_infinity=True).numpy()
    return data


def gru(rng) -> dict:
    model = torch.nn.GRU(4, 5, num_layers=2, bidirectional=True, batch_first=True)
    data = {f"param.{k}": v for k, v in params_of(model, rng).items()}
    x = seeded(rng, (3, 7, 4), 1.0)
    h0 = seeded(rng, (4, 3, 5), 0.5)
    w = seeded(rng, (3, 7, 10), 1.0)
    xt = torch.from_numpy(x).requires_grad_()
    ht = torch.from_numpy(h0).requires_grad_()
    out, h_n = model(xt, ht)
    loss = (out * torch.from_numpy(w)).sum() + (h_n * h_n).sum()
    loss.backward()
    data.update(grads_of(model))
    data.update(input=x, h0=h0, weight=w, grad_input=xt.grad.numpy().copy(), grad_h0=ht.grad.numpy().copy(),
                loss=np.float32(loss.item()), output=out.detach().numpy().copy())
    return data


class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.up1 = torch.nn.ConvTranspose2d(4, 4, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.up2 = torch.nn.ConvTranspose2d(4, 2, 2, stride=1, dilation=2)

    def forward(self, x):
        x = F.relu(self.conv(x))
        x = self.up1(x)
        a = F.interpolate(x, size=(9, 13), mode="nearest")
        b = F.interpolate(x, size=(9, 13), mode="bilinear", align_corners=False)
        c = F.interpolate(x, size=(9, 13), mode="bilinear", align_corners=True)
        return self.up2(a + 0.5 * b - 0.25 * c)


def decoder(rng) -> dict:
    model = Decoder()
    data = {f"param.{k}": v for k, v in params_of(model, rng).items()}
    x = seeded(rng, (2, 3, 5, 6), 1.0)
    xt = torch.from_numpy(x).requires_grad_()
    y = model(xt)
    w = seeded(rng, tuple(y.shape), 1.0)
    loss = (y * torch.from_numpy(w)).sum()
    loss.backward()
    data.update(grads_of(model))
    data.update(input=x, weight=w, grad_input=xt.grad.numpy().copy(), output=y.detach().numpy().copy(), loss=np.float32(loss.item()))
    return data


def main() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in (("crnn", crnn), ("gru", gru), ("decoder", decoder)):
        rng = np.random.default_rng(SEED + len(name))
        data = build(rng)
        data["torch_version"] = np.array(torch.__version__)
        np.savez(OUT / f"{name}.npz", **data)
        print(f"wrote {OUT / (name + '.npz')} ({len(data)} arrays)")


if __name__ == "__main__":
    main()
