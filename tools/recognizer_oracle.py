"""PyTorch parity fixtures for the crnn-v0 trainer (docs/recognizer.md, "Against PyTorch").

Run (needs torch; not needed by CI, which only reads what this writes):

    PYTHONPATH=python python tools/recognizer_oracle.py [--train-steps 150]

Writes testdata/recognizer/:
  crnn_v0_digits.safetensors  a crnn-v0 (default architecture, charset digits
                              + space) trained on synthetic lines by
                              onemodel's own trainer, so its weights are not
                              random (F16 container);
  fixtures.npz                every fp32 PyTorch reference with its float64
                              floor (`<key>.floor` = max |fp32 − float64| of
                              that tensor in PyTorch):
    conv{b}.*                 per-layer: each block on the model's own
                              activations of one line, random upstream gradient;
    lstm{l}.*                 per-layer: each bidirectional layer likewise;
    cls.*                     the classifier;
    ctc.*                     CTC loss and logit gradient of one line;
    adam.*                    one AdamW step (foreach=False) on stored gradients;
    grad.*                    whole-model gradients on a batch of four lines
                              (sampled elements, floor over the whole tensor);
    steps.*                   weights after three real steps (clip_grad_norm_ +
                              AdamW), sampled where |gradient| ≥ 50 floors in
                              every step.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

from onemodel.recognizer import CrnnV0, CrnnV0Config, Trainer
from onemodel.recognizer import synth

OUT = os.path.join(os.path.dirname(__file__), "..", "testdata", "recognizer")
SAMPLE = 1024


class TorchCrnn(torch.nn.Module):
    """crnn-v0 in PyTorch, loaded from the container's tensors."""

    def __init__(self, cfg: CrnnV0Config, state: dict, dtype):
        super().__init__()
        self.cfg = cfg
        self.convs = torch.nn.ModuleList()
        c = 1
        for b, o in enumerate(cfg.channels):
            conv = torch.nn.Conv2d(c, o, 3, padding=1).to(dtype)
            conv.weight.data = torch.tensor(state[f"conv{b + 1}.weight"], dtype=dtype).permute(0, 3, 1, 2).contiguous()
            conv.bias.data = torch.tensor(state[f"conv{b + 1}.bias"], dtype=dtype)
            self.convs.append(conv)
            c = o
        self.lstms = torch.nn.ModuleList()
        h = cfg.hidden
        for l in range(cfg.layers):
            inp = state[f"lstm{l + 1}.fwd.w_ih"].shape[1]
            m = torch.nn.LSTM(inp, h, bidirectional=True).to(dtype)
            for d, sfx in (("fwd", ""), ("rev", "_reverse")):
                getattr(m, "weight_ih_l0" + sfx).data = torch.tensor(state[f"lstm{l + 1}.{d}.w_ih"], dtype=dtype)
                getattr(m, "weight_hh_l0" + sfx).data = torch.tensor(state[f"lstm{l + 1}.{d}.w_hh"], dtype=dtype)
                getattr(m, "bias_ih_l0" + sfx).data = torch.tensor(state[f"lstm{l + 1}.{d}.b"], dtype=dtype)
                # b = b_ih + b_hh is one parameter: b_hh stays 0, frozen.
                getattr(m, "bias_hh_l0" + sfx).data = torch.zeros(4 * h, dtype=dtype)
                getattr(m, "bias_hh_l0" + sfx).requires_grad_(False)
            self.lstms.append(m)
        self.cls = torch.nn.Linear(2 * h, cfg.classes).to(dtype)
        self.cls.weight.data = torch.tensor(state["classifier.weight"], dtype=dtype)
        self.cls.bias.data = torch.tensor(state["classifier.bias"], dtype=dtype)

    def params(self) -> dict:
        """Container name → parameter (b of the LSTM is bias_ih)."""
        d = {}
        for b, conv in enumerate(self.convs):
            d[f"conv{b + 1}.weight"] = conv.weight
            d[f"conv{b + 1}.bias"] = conv.bias
        for l, m in enumerate(self.lstms):
            for dn, sfx in (("fwd", ""), ("rev", "_reverse")):
                d[f"lstm{l + 1}.{dn}.w_ih"] = getattr(m, "weight_ih_l0" + sfx)
                d[f"lstm{l + 1}.{dn}.w_hh"] = getattr(m, "weight_hh_l0" + sfx)
                d[f"lstm{l + 1}.{dn}.b"] = getattr(m, "bias_ih_l0" + sfx)
        d["classifier.weight"] = self.cls.weight
        d["classifier.bias"] = self.cls.bias
        return d

    def forward(self, img, keep=None):
        x = img[None, None]
        for b, conv in enumerate(self.convs):
            if keep is not None:
                keep[f"conv{b + 1}.in"] = x[0].permute(1, 2, 0)  # [H][W][C]
            x = F.max_pool2d(F.relu(conv(x)), self.cfg.pools[b])
        feat = x[0].permute(2, 1, 0).reshape(x.shape[3], -1)  # [T][Hf·C]
        y = feat
        for l, m in enumerate(self.lstms):
            if keep is not None:
                keep[f"lstm{l + 1}.in"] = y
            y = m(y[:, None, :])[0][:, 0, :]
        if keep is not None:
            keep["cls.in"] = y
        return self.cls(y)


def natural(name, t):
    t = t.detach()
    if name.startswith("conv") and name.endswith("weight"):
        t = t.permute(0, 2, 3, 1)
    return t.numpy()


def floor(a32, a64):
    return float(np.max(np.abs(np.asarray(a32, np.float64) - np.asarray(a64, np.float64)))) if np.size(a32) else 0.0


_PUT_RNG = np.random.default_rng(77)


def put(fx, key, a32, a64):
    """The fp32 reference and its floor; tensors over 8192 elements are
    stored at SAMPLE sampled elements (`key.idx`), the floor taken over all."""
    a32 = np.asarray(a32, np.float32)
    fx[key + ".floor"] = np.float64(floor(a32, a64))
    if a32.size > 8192:
        idx = sample_idx(a32.size, _PUT_RNG)
        fx[key + ".idx"] = idx
        fx[key] = a32.reshape(-1)[idx]
    else:
        fx[key] = a32


def train_model(steps, seed=0):
    cfg = CrnnV0Config(charset=synth.CHARSET)
    model = CrnnV0(cfg, seed=seed)
    tr = Trainer(model, lr=3e-3)
    rng = np.random.default_rng(seed)
    t0 = time.time()
    for s in range(steps):
        texts = [synth.random_text(rng, 2, 5) for _ in range(8)]
        imgs = [synth.render(t, rng) for t in texts]
        loss, norm = tr.step(imgs, texts)
        if s % 25 == 0 or s == steps - 1:
            print(f"train step {s}: loss {loss:.3f} norm {norm:.2f} ({time.time() - t0:.0f}s)", flush=True)
    texts = [synth.random_text(rng) for _ in range(20)]
    ok = sum(model.recognize(synth.render(t, rng)) == t for t in texts)
    print(f"held-out exact lines: {ok}/20", flush=True)
    return model


def layer_fixtures(fx, model, rng):
    cfg = model.config
    state = model.state_dict()
    text = "40712"
    img = synth.render(text, rng)
    fx["line.image"] = img
    fx["line.labels"] = np.array(model.encode(text), np.int64)
    keeps = {}
    for dt in (torch.float32, torch.float64):
        tm = TorchCrnn(cfg, state, dt)
        keep = {}
        with torch.no_grad():
            tm(torch.tensor(img, dtype=dt), keep)
        keeps[dt] = keep
    k32 = keeps[torch.float32]
    # Inputs are the fp32 activations, shared by both precisions and by us.
    for b, o in enumerate(cfg.channels):
        x = k32[f"conv{b + 1}.in"].numpy().astype(np.float32)
        h, w, c = x.shape
        ph, pw = cfg.pools[b]
        dy = rng.normal(0, 1, (h // ph, w // pw, o)).astype(np.float32)
        fx[f"conv{b + 1}.x"], fx[f"conv{b + 1}.dy"] = x, dy
        res = {}
        for dt in (torch.float32, torch.float64):
            conv = torch.nn.Conv2d(c, o, 3, padding=1).to(dt)
            conv.weight.data = torch.tensor(state[f"conv{b + 1}.weight"], dtype=dt).permute(0, 3, 1, 2).contiguous()
            conv.bias.data = torch.tensor(state[f"conv{b + 1}.bias"], dtype=dt)
            xt = torch.tensor(x, dtype=dt).permute(2, 0, 1)[None].requires_grad_(True)
            y = F.max_pool2d(F.relu(conv(xt)), (ph, pw))
            y.backward(torch.tensor(dy, dtype=dt).permute(2, 0, 1)[None])
            res[dt] = dict(y=y[0].permute(1, 2, 0).detach().numpy(), dw=natural(f"conv{b + 1}.weight", conv.weight.grad),
                           db=conv.bias.grad.numpy(), dx=xt.grad[0].permute(1, 2, 0).numpy())
        for key in ("y", "dw", "db", "dx"):
            put(fx, f"conv{b + 1}.{key}", res[torch.float32][key], res[torch.float64][key])
    for l in range(cfg.layers):
        x = k32[f"lstm{l + 1}.in"].numpy().astype(np.float32)
        t_len = x.shape[0]
        dout = rng.normal(0, 1, (t_len, 2 * cfg.hidden)).astype(np.float32)
        fx[f"lstm{l + 1}.x"], fx[f"lstm{l + 1}.dout"] = x, dout
        res = {}
        for dt in (torch.float32, torch.float64):
            tm = TorchCrnn(cfg, state, dt)
            m = tm.lstms[l]
            xt = torch.tensor(x, dtype=dt).requires_grad_(True)
            y = m(xt[:, None, :])[0][:, 0, :]
            y.backward(torch.tensor(dout, dtype=dt))
            r = dict(out=y.detach().numpy(), dx=xt.grad.numpy())
            for dn, sfx in (("fwd", ""), ("rev", "_reverse")):
                r[f"{dn}.w_ih"] = getattr(m, "weight_ih_l0" + sfx).grad.numpy()
                r[f"{dn}.w_hh"] = getattr(m, "weight_hh_l0" + sfx).grad.numpy()
                r[f"{dn}.b"] = getattr(m, "bias_ih_l0" + sfx).grad.numpy()
            res[dt] = r
        for key in res[torch.float32]:
            put(fx, f"lstm{l + 1}.{key}", res[torch.float32][key], res[torch.float64][key])
    x = k32["cls.in"].numpy().astype(np.float32)
    dy = rng.normal(0, 1, (x.shape[0], cfg.classes)).astype(np.float32)
    fx["cls.x"], fx["cls.dy"] = x, dy
    res = {}
    for dt in (torch.float32, torch.float64):
        lin = torch.nn.Linear(2 * cfg.hidden, cfg.classes).to(dt)
        lin.weight.data = torch.tensor(state["classifier.weight"], dtype=dt)
        lin.bias.data = torch.tensor(state["classifier.bias"], dtype=dt)
        xt = torch.tensor(x, dtype=dt).requires_grad_(True)
        y = lin(xt)
        y.backward(torch.tensor(dy, dtype=dt))
        res[dt] = dict(y=y.detach().numpy(), dw=lin.weight.grad.numpy(), db=lin.bias.grad.numpy(), dx=xt.grad.numpy())
    for key in res[torch.float32]:
        put(fx, f"cls.{key}", res[torch.float32][key], res[torch.float64][key])
    # CTC on the model's own logits of the line (ours, fp32), labels of its text.
    logits = model.logits(img)
    fx["ctc.logits"] = logits
    labels = model.encode(text)
    res = {}
    for dt in (torch.float32, torch.float64):
        z = torch.tensor(logits, dtype=dt).requires_grad_(True)
        lp = F.log_softmax(z, dim=1)
        loss = F.ctc_loss(lp[:, None, :], torch.tensor([labels]), torch.tensor([z.shape[0]]), torch.tensor([len(labels)]),
                          blank=0, reduction="sum")
        loss.backward()
        res[dt] = (loss.detach().numpy().reshape(1), z.grad.numpy())
    put(fx, "ctc.loss", res[torch.float32][0], res[torch.float64][0])
    put(fx, "ctc.grad", res[torch.float32][1], res[torch.float64][1])


def batch_grads(tm, imgs, labels):
    """Mean over lines of each line's CTC loss (reduction 'sum' per line)."""
    for p in tm.params().values():
        p.grad = None
    total = 0
    for img, lab in zip(imgs, labels):
        z = tm(torch.tensor(img, dtype=tm.cls.weight.dtype))
        lp = F.log_softmax(z, dim=1)
        total = total + F.ctc_loss(lp[:, None, :], torch.tensor([lab]), torch.tensor([z.shape[0]]),
                                   torch.tensor([len(lab)]), blank=0, reduction="sum", zero_infinity=True)
    loss = total / len(imgs)
    loss.backward()
    return float(loss.detach()), {n: natural(n, p.grad) for n, p in tm.params().items()}


def sample_idx(n, rng):
    return np.sort(rng.choice(n, size=min(n, SAMPLE), replace=False)).astype(np.int64)


def whole_model_fixtures(fx, model, rng):
    cfg = model.config
    state = model.state_dict()
    texts = ["3141", "27 18", "0099", "5"]
    imgs = [synth.render(t, rng) for t in texts]
    labels = [model.encode(t) for t in texts]
    for i, (im, lab) in enumerate(zip(imgs, labels)):
        fx[f"batch.image{i}"] = im
        fx[f"batch.labels{i}"] = np.array(lab, np.int64)
    res = {dt: batch_grads(TorchCrnn(cfg, state, dt), imgs, labels) for dt in (torch.float32, torch.float64)}
    put(fx, "grad.loss", np.array([res[torch.float32][0]]), np.array([res[torch.float64][0]]))
    g32, g64 = res[torch.float32][1], res[torch.float64][1]
    for n in g32:
        idx = sample_idx(g32[n].size, rng)
        fx[f"grad.{n}.idx"] = idx
        fx[f"grad.{n}"] = g32[n].reshape(-1)[idx]
        fx[f"grad.{n}.floor"] = np.float64(floor(g32[n], g64[n]))
    # One AdamW step on these stored gradients, from the trained weights.
    hyper = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    fx["adam.hyper"] = np.array([hyper["lr"], *hyper["betas"], hyper["eps"], hyper["weight_decay"]])
    out = {}
    for dt, g in ((torch.float32, g32), (torch.float64, g64)):
        ps = {n: torch.tensor(state[n], dtype=dt).requires_grad_(True) for n in state}
        for n, p in ps.items():
            p.grad = torch.tensor(g32[n], dtype=dt)  # the stored (fp32) gradients, in both precisions
        groups = [{"params": [p for n, p in ps.items() if not n.endswith(("bias", ".b"))]},
                  {"params": [p for n, p in ps.items() if n.endswith(("bias", ".b"))], "weight_decay": 0.0}]
        opt = torch.optim.AdamW(groups, foreach=False, **hyper)
        opt.step()
        out[dt] = {n: p.detach().numpy() for n, p in ps.items()}
    for n in state:
        idx = fx[f"grad.{n}.idx"]  # AdamW is element-wise: the sampled elements suffice
        fx[f"adam.{n}.g"] = g32[n].reshape(-1)[idx]
        fx[f"adam.{n}"] = out[torch.float32][n].reshape(-1)[idx]
        fx[f"adam.{n}.floor"] = np.float64(floor(out[torch.float32][n], out[torch.float64][n]))


def three_steps_fixtures(fx, model, rng):
    cfg = model.config
    state = model.state_dict()
    batches = []
    for s in range(3):
        texts = [synth.random_text(rng) for _ in range(4)]
        imgs = [synth.render(t, rng) for t in texts]
        batches.append((imgs, [model.encode(t) for t in texts]))
        for i in range(4):
            fx[f"steps.{s}.image{i}"] = imgs[i]
            fx[f"steps.{s}.labels{i}"] = np.array(batches[-1][1][i], np.int64)
    runs = {}
    for dt in (torch.float32, torch.float64):
        tm = TorchCrnn(cfg, state, dt)
        ps = tm.params()
        groups = [{"params": [p for n, p in ps.items() if not n.endswith(("bias", ".b"))]},
                  {"params": [p for n, p in ps.items() if n.endswith(("bias", ".b"))], "weight_decay": 0.0}]
        opt = torch.optim.AdamW(groups, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01, foreach=False)
        grads = []
        for imgs, labels in batches:
            batch_grads(tm, imgs, labels)
            grads.append({n: natural(n, p.grad).copy() for n, p in ps.items()})
            torch.nn.utils.clip_grad_norm_(list(ps.values()), 5.0, foreach=False)
            opt.step()
        runs[dt] = ({n: natural(n, p) for n, p in ps.items()}, grads)
    w32, gr32 = runs[torch.float32]
    w64, gr64 = runs[torch.float64]
    for n in w32:
        ok = np.ones(w32[n].size, bool)
        for s in range(3):
            fl = floor(gr32[s][n], gr64[s][n])
            ok &= np.abs(gr64[s][n].reshape(-1)) >= 50 * fl
        elig = np.flatnonzero(ok)
        idx = np.sort(rng.choice(elig, size=min(elig.size, SAMPLE), replace=False)) if elig.size else elig
        fx[f"steps.{n}.idx"] = idx.astype(np.int64)
        fx[f"steps.{n}"] = w32[n].reshape(-1)[idx]
        fx[f"steps.{n}.floor"] = np.float64(floor(w32[n], w64[n]))
        fx[f"steps.{n}.eligible"] = np.int64(elig.size)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train-steps", type=int, default=150)
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args()
    torch.manual_seed(0)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "crnn_v0_digits.safetensors")
    if not os.path.exists(path):
        train_model(args.train_steps).save(path)
    model = CrnnV0.load(path)
    rng = np.random.default_rng(2024)
    fx = {"torch_version": np.array(torch.__version__)}
    layer_fixtures(fx, model, rng)
    whole_model_fixtures(fx, model, rng)
    three_steps_fixtures(fx, model, rng)
    np.savez_compressed(os.path.join(args.out, "fixtures.npz"), **fx)
    print("wrote", os.path.join(args.out, "fixtures.npz"), sum(v.nbytes for v in fx.values()) / 1e6, "MB raw")


if __name__ == "__main__":
    sys.exit(main())
