"""A float64 reference of crnn-v0, written straight from the definitions
with exact functions (numpy's exp, log, tanh; no 16-lane order, no fixed
transcendentals): forward, CTC (Graves et al. 2006) and backpropagation.

It takes the model's parameters in natural layout (the container's) and
returns the loss and the gradient of every parameter for one line.
"""

from __future__ import annotations

import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def im2col(x):
    """x [H][W][C] → col [H·W][9·C], taps in (ky, kx, c) order, padding 1."""
    h, w, c = x.shape
    xp = np.zeros((h + 2, w + 2, c))
    xp[1:-1, 1:-1] = x
    cols = [xp[ky:ky + h, kx:kx + w, :] for ky in range(3) for kx in range(3)]
    return np.concatenate(cols, axis=2).reshape(h * w, 9 * c)


def col2im(dcol, h, w, c):
    dxp = np.zeros((h + 2, w + 2, c))
    d = dcol.reshape(h, w, 9, c)
    for ky in range(3):
        for kx in range(3):
            dxp[ky:ky + h, kx:kx + w, :] += d[:, :, ky * 3 + kx, :]
    return dxp[1:-1, 1:-1]


def pool_forward(z, ph, pw):
    """ReLU + max pooling: max over the window starting from 0 (first of
    equals wins); the winner's index or -1."""
    h, w, o = z.shape
    oh, ow = h // ph, w // pw
    win = -np.ones((oh, ow, o), dtype=np.int64)
    best = np.zeros((oh, ow, o))
    for dy in range(ph):
        for dx in range(pw):
            v = z[dy:oh * ph:ph, dx:ow * pw:pw, :][:oh, :ow]
            idx = ((np.arange(oh)[:, None] * ph + dy) * w + (np.arange(ow)[None, :] * pw + dx))[:, :, None] * o \
                + np.arange(o)[None, None, :]
            better = v > best
            best = np.where(better, v, best)
            win = np.where(better, idx, win)
    return best, win


def lstm_dir(x, w_ih, w_hh, b, reverse):
    t_len = x.shape[0]
    hsz = w_hh.shape[1]
    h = np.zeros(hsz)
    c = np.zeros(hsz)
    out = np.zeros((t_len, hsz))
    cache = [None] * t_len
    order = range(t_len - 1, -1, -1) if reverse else range(t_len)
    for t in order:
        z = w_ih @ x[t] + b + w_hh @ h
        i, f, g, o = sigmoid(z[:hsz]), sigmoid(z[hsz:2 * hsz]), np.tanh(z[2 * hsz:3 * hsz]), sigmoid(z[3 * hsz:])
        c_new = f * c + i * g
        tc = np.tanh(c_new)
        cache[t] = (i, f, g, o, c.copy(), tc, h.copy())
        c = c_new
        h = o * tc
        out[t] = h
    return out, cache, order


def lstm_dir_backward(dout, x, w_ih, w_hh, cache, order):
    t_len, hsz = dout.shape
    dz = np.zeros((t_len, 4 * hsz))
    dh_rec = np.zeros(hsz)
    dc_next = np.zeros(hsz)
    for t in reversed(list(order)):
        i, f, g, o, c_prev, tc, _ = cache[t]
        dh = dout[t] + dh_rec
        do = dh * tc
        dc = dc_next + dh * o * (1 - tc * tc)
        dz[t] = np.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g * g), do * o * (1 - o)])
        dc_next = dc * f
        dh_rec = w_hh.T @ dz[t]
    hprev = np.stack([cache[t][6] for t in range(t_len)])
    return dz, dz.T @ x, dz.T @ hprev, dz.sum(0), dz @ w_ih


def logsumexp(a, axis=None):
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.squeeze(m + np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)), axis=axis)


def ctc(logits, labels):
    """Loss −log p(labels | x) and its gradient with respect to the logits."""
    t_len, k = logits.shape
    lp = logits - logsumexp(logits, axis=1)[:, None]
    ext = [0]
    for lab in labels:
        ext += [lab, 0]
    s_len = len(ext)
    ninf = -np.inf
    alpha = np.full((t_len, s_len), ninf)
    beta = np.full((t_len, s_len), ninf)
    alpha[0, 0] = lp[0, ext[0]]
    if s_len > 1:
        alpha[0, 1] = lp[0, ext[1]]
    skip = [s >= 2 and ext[s] != 0 and ext[s] != ext[s - 2] for s in range(s_len)]
    for t in range(1, t_len):
        for s in range(s_len):
            terms = [alpha[t - 1, s]] + ([alpha[t - 1, s - 1]] if s >= 1 else []) + ([alpha[t - 1, s - 2]] if skip[s] else [])
            alpha[t, s] = logsumexp(np.array(terms)) + lp[t, ext[s]]
    beta[-1, -1] = lp[-1, ext[-1]]
    if s_len > 1:
        beta[-1, -2] = lp[-1, ext[-2]]
    for t in range(t_len - 2, -1, -1):
        for s in range(s_len):
            terms = [beta[t + 1, s]] + ([beta[t + 1, s + 1]] if s + 1 < s_len else []) \
                + ([beta[t + 1, s + 2]] if s + 2 < s_len and skip[s + 2] else [])
            beta[t, s] = logsumexp(np.array(terms)) + lp[t, ext[s]]
    logp = logsumexp(alpha[-1, -2:]) if s_len > 1 else alpha[-1, -1]
    if not np.isfinite(logp):
        return np.inf, np.zeros_like(logits)
    ab = alpha + beta
    grad = np.exp(lp).copy()
    for c in range(k):
        sel = [s for s in range(s_len) if ext[s] == c]
        if sel:
            acc = logsumexp(ab[:, sel], axis=1)
            grad[:, c] -= np.exp(acc - lp[:, c] - logp)
    return -logp, grad


def line(params: dict, cfg, image, labels, scale=1.0):
    """(loss, logits, {name: gradient}) of one line, all float64."""
    p = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    nb = len(cfg.channels)
    x = np.asarray(image, dtype=np.float64)[:, :, None]
    blocks = []
    for b in range(nb):
        w = p[f"conv{b + 1}.weight"]
        o = w.shape[0]
        h_, w_, c_ = x.shape
        col = im2col(x)
        z = (col @ w.reshape(o, -1).T + p[f"conv{b + 1}.bias"]).reshape(h_, w_, o)
        y, win = pool_forward(z, *cfg.pools[b])
        blocks.append((x, col, win, z.shape))
        x = y
    hf, t_len, c = x.shape
    feat = x.transpose(1, 0, 2).reshape(t_len, hf * c)
    layers = []
    inp = feat
    for l in range(cfg.layers):
        outs, caches = [], []
        for d, name in enumerate(("fwd", "rev")):
            q = f"lstm{l + 1}.{name}"
            out, cache, order = lstm_dir(inp, p[q + ".w_ih"], p[q + ".w_hh"], p[q + ".b"], d == 1)
            outs.append(out)
            caches.append((cache, order))
        layers.append((inp, caches))
        inp = np.concatenate(outs, axis=1)
    logits = inp @ p["classifier.weight"].T + p["classifier.bias"]
    loss, dlog = ctc(logits, labels)
    dlog = dlog * scale
    g = {}
    g["classifier.weight"] = dlog.T @ inp
    g["classifier.bias"] = dlog.sum(0)
    dx = dlog @ p["classifier.weight"]
    hsz = cfg.hidden
    for l in range(cfg.layers - 1, -1, -1):
        x_in, caches = layers[l]
        dxi = np.zeros_like(x_in)
        for d, name in enumerate(("fwd", "rev")):
            q = f"lstm{l + 1}.{name}"
            cache, order = caches[d]
            _, dwih, dwhh, db, dxd = lstm_dir_backward(dx[:, d * hsz:(d + 1) * hsz], x_in, p[q + ".w_ih"], p[q + ".w_hh"], cache, order)
            g[q + ".w_ih"], g[q + ".w_hh"], g[q + ".b"] = dwih, dwhh, db
            dxi += dxd
        dx = dxi
    dy = dx.reshape(t_len, hf, c).transpose(1, 0, 2)
    for b in range(nb - 1, -1, -1):
        xin, col, win, zshape = blocks[b]
        h_, w_, o = zshape
        dz = np.zeros(h_ * w_ * o)
        m = win.reshape(-1) >= 0
        dz[win.reshape(-1)[m]] = dy.reshape(-1)[m]
        dz = dz.reshape(h_ * w_, o)
        g[f"conv{b + 1}.weight"] = (dz.T @ col).reshape(p[f"conv{b + 1}.weight"].shape)
        g[f"conv{b + 1}.bias"] = dz.sum(0)
        if b > 0:
            dy = col2im(dz @ p[f"conv{b + 1}.weight"].reshape(o, -1), h_, w_, xin.shape[2])
    return loss, logits, g


def batch(params, cfg, images, label_lists):
    """Mean loss (infinite lines as 0) and the batch gradient."""
    n = len(images)
    total, grads = 0.0, None
    for im, lab in zip(images, label_lists):
        loss, _, g = line(params, cfg, im, lab, scale=1.0 / n)
        if np.isfinite(loss):
            total += loss
        grads = g if grads is None else {k: grads[k] + g[k] for k in g}
    return total / n, grads
