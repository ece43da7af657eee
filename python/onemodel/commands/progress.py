"""The training progress display (rich): on a terminal a live bar with the
step, the loss (mean of the last 20 steps), lines/s, elapsed time, ETA and
the last held-out CER; elsewhere (a log file, CI) the same figures as a line
every ``every`` steps. Written to stderr, so stdout keeps the results."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
    TimeRemainingColumn

from ..recognizer.training import Callback


class TrainingProgress(Callback):
    def __init__(self, enabled: bool = True, every: int = 50, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.enabled, self.every = enabled, max(1, every)
        self.live = enabled and self.console.is_terminal
        self.losses: list = []
        self.cer: float | None = None
        self.batch = 1
        # The task's clock and speed come from rich in both modes; the bar is
        # only drawn on a terminal.
        self.progress = Progress(
            TextColumn("[bold]train"), BarColumn(), MofNCompleteColumn(),
            TextColumn("loss {task.fields[loss]}"), TextColumn("{task.fields[rate]} lines/s"),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.fields[cer]}"),
            console=self.console, disable=not self.live)
        self.task = None

    def on_start(self, start: int, steps: int, batch_size: int) -> None:
        self.batch = batch_size
        self.task = self.progress.add_task("train", total=steps, completed=start, loss="-", rate="-", cer="")
        self.progress.start()

    def on_step(self, step: int, loss: float, grad_norm: float) -> None:
        self.losses = (self.losses + [loss])[-20:]
        mean = sum(self.losses) / len(self.losses)
        self.progress.update(self.task, completed=step, loss=f"{mean:7.4f}", rate=self._rate(),
                             cer=self._cer())
        t = self.progress.tasks[0]
        if self.enabled and not self.live and (step % self.every == 0 or step == t.total):
            eta = t.time_remaining
            self.console.print(
                f"step {step}/{int(t.total)}  loss {mean:7.4f}  {self._rate()} lines/s  "
                f"{_clock(t.elapsed)} elapsed  ETA {_clock(eta)}{self._cer()}", markup=False, highlight=False,
                soft_wrap=True)

    def on_eval(self, step: int, rates) -> None:
        self.cer = rates.cer
        if self.task is not None:
            self.progress.update(self.task, cer=self._cer())

    def on_end(self) -> None:
        self.progress.stop()

    def _rate(self) -> str:
        speed = self.progress.tasks[0].speed if self.progress.tasks else None
        return "-" if speed is None else f"{speed * self.batch:6.1f}"

    def _cer(self) -> str:
        return "" if self.cer is None else f"  CER {100 * self.cer:5.2f}%"


def _clock(seconds) -> str:
    if seconds is None:
        return "-:--:--"
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
