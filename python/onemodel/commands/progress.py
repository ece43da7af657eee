"""The training progress display on stderr: a bar, step, loss (running mean
of the last 20 steps), lines/s, elapsed and ETA, last held-out CER. On a
terminal it redraws in place (at most 10 times a second); elsewhere (a log
file, CI) it prints a line every ``every`` steps."""

from __future__ import annotations

import math
import sys
import time

from ..recognizer.training import Callback


def _fmt_time(s: float) -> str:
    if not math.isfinite(s) or s < 0:
        return "--:--"
    s = int(s + 0.5)
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress(Callback):
    def __init__(self, enabled: bool = True, every: int = 50, stream=None):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if hasattr(self.stream, "isatty") else False
        self.enabled, self.every = enabled, max(1, every)
        self.start, self.total, self.batch = 0, 0, 1
        self.t0 = time.perf_counter()
        self.last_draw = 0.0
        self.losses = []
        self.cer = None
        self.drawn = False

    def on_start(self, start, steps, batch_size):
        self.start, self.total, self.batch = start, steps, batch_size
        self.t0 = time.perf_counter()

    def on_step(self, step, loss, grad_norm):
        self.update(step, loss)

    def on_eval(self, step, rates):
        self.cer = rates.cer

    def on_end(self):
        self.close()

    def update(self, step: int, loss: float, force: bool = False):
        self.losses = (self.losses + [loss])[-20:]
        if not self.enabled:
            return
        now = time.perf_counter()
        if self.tty:
            if not force and now - self.last_draw < 0.1 and step < self.total:
                return
        elif not force and step % self.every and step != self.total:
            return
        self.last_draw = now
        elapsed = now - self.t0
        done = step - self.start
        rate = done * self.batch / elapsed if elapsed > 0 else 0.0
        eta = (self.total - step) * self.batch / rate if rate > 0 else float("nan")
        frac = step / self.total if self.total else 1.0
        bar = "#" * int(20 * frac) + "-" * (20 - int(20 * frac))
        cer = f"  CER {100 * self.cer:5.2f}%" if self.cer is not None else ""
        mean = sum(self.losses) / len(self.losses)
        text = (f"[{bar}] {step}/{self.total}  loss {mean:7.4f}  {rate:6.1f} lines/s  "
                f"{_fmt_time(elapsed)} elapsed  ETA {_fmt_time(eta)}{cer}")
        if self.tty:
            self.stream.write("\r" + text + "\x1b[K")
            self.drawn = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self):
        if self.tty and self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False
