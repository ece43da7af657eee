"""The loss/CER plot of a training run (``plot.png``)."""

from __future__ import annotations

import math
import os
from pathlib import Path


def write_plot(path, history, title: str = "") -> None:
    """Training loss and held-out CER against steps, drawn with Pillow's
    ImageDraw (no plotting library needed): loss in blue (left axis, log
    scale), CER in red (right axis, percent)."""
    from PIL import Image, ImageDraw

    W, H, L, R, T, B = 720, 360, 64, 64, 30, 40
    im = Image.new("RGB", (W, H), "white")
    d = ImageDraw.Draw(im)
    d.rectangle([L, T, W - R, H - B], outline="black")
    if title:
        d.text((L, 8), title, fill="black")
    steps = [h["step"] for h in history]
    if not steps:
        im.save(path)
        return
    s0, s1 = min(steps), max(max(steps), min(steps) + 1)

    def x(s):
        return L + (W - L - R) * (s - s0) / (s1 - s0)

    losses = [(h["step"], h["loss"]) for h in history if h.get("loss") is not None and h["loss"] > 0
              and math.isfinite(h["loss"])]
    if losses:
        lo = math.log10(min(v for _, v in losses))
        hi = math.log10(max(v for _, v in losses))
        lo, hi = math.floor(lo), max(math.ceil(hi), math.floor(lo) + 1)

        def yl(v):
            return H - B - (H - T - B) * (math.log10(v) - lo) / (hi - lo)

        for e in range(lo, hi + 1):
            yy = yl(10.0 ** e)
            d.line([L - 4, yy, L, yy], fill="blue")
            d.text((4, yy - 6), f"1e{e}", fill="blue")
        pts = [(x(s), yl(v)) for s, v in losses]
        if len(pts) > 1:
            d.line(pts, fill="blue", width=1)
        d.text((L + 4, T + 4), "loss (log)", fill="blue")
    cers = [(h["step"], h["cer"]) for h in history if h.get("cer") is not None]
    if cers:
        top = max(5.0, math.ceil(max(100 * c for _, c in cers) / 5) * 5)

        def yc(c):
            return H - B - (H - T - B) * min(100 * c, top) / top

        for k in range(0, 6):
            v = top * k / 5
            yy = yc(v / 100)
            d.line([W - R, yy, W - R + 4, yy], fill="red")
            d.text((W - R + 8, yy - 6), f"{v:g}%", fill="red")
        pts = [(x(s), yc(c)) for s, c in cers]
        if len(pts) > 1:
            d.line(pts, fill="red", width=2)
        for px, py in pts:
            d.ellipse([px - 2, py - 2, px + 2, py + 2], fill="red")
        d.text((W - R - 110, T + 4), "held-out CER", fill="red")
    for k in range(0, 6):
        s = s0 + (s1 - s0) * k / 5
        d.line([x(s), H - B, x(s), H - B + 4], fill="black")
        d.text((x(s) - 12, H - B + 8), f"{int(round(s))}", fill="black")
    d.text(((W - 30) // 2, H - 16), "step", fill="black")
    tmp = Path(str(path) + ".tmp")
    im.save(tmp, format="PNG")
    os.replace(tmp, path)
