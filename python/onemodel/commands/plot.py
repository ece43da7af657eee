"""The loss/CER plot of a training run (``plot.png``), drawn by matplotlib's
Agg canvas (no pyplot, no display, no global backend switch): the training
loss on a log scale (left axis) and the held-out CER in percent (right)."""

from __future__ import annotations

import math
import os
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


def write_plot(path, history, title: str = "") -> None:
    """``history``: records with ``step``, ``loss`` and ``cer`` (None where
    absent). A 720×360 PNG, written atomically."""
    fig = Figure(figsize=(7.2, 3.6), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_xlabel("step")
    if title:
        ax.set_title(title, fontsize=10)
    losses = [(h["step"], h["loss"]) for h in history
              if h.get("loss") is not None and h["loss"] > 0 and math.isfinite(h["loss"])]
    if losses:
        ax.plot(*zip(*losses), color="tab:blue", linewidth=1)
        ax.set_yscale("log")
    ax.set_ylabel("training loss (log)", color="tab:blue")
    cers = [(h["step"], 100 * h["cer"]) for h in history if h.get("cer") is not None]
    right = ax.twinx()
    if cers:
        right.plot(*zip(*cers), color="tab:red", marker="o", markersize=3, linewidth=1.5, clip_on=False)
        right.set_ylim(0, max(5.0, math.ceil(max(c for _, c in cers) / 5) * 5))
    right.set_ylabel("held-out CER (%)", color="tab:red")
    ax.grid(True, alpha=0.3)
    tmp = Path(str(path) + ".tmp")
    fig.savefig(tmp, format="png")
    os.replace(tmp, path)
