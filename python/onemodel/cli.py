"""The ``onemodel`` command line: argument parsing only.

``onemodel info`` describes the machine; ``demo``, ``train``, ``finetune``,
``recognize`` and ``eval`` drive the crnn-v0 text-line recognizer (see
docs/cli.md). The commands' bodies are in ``onemodel.commands``; the
training loop, evaluation and the run's files in
``onemodel.recognizer.training``.
"""

from __future__ import annotations

import argparse
import math
import sys

from .commands import demo as _demo
from .commands.common import CliError
from .recognizer.training import ARCHITECTURES


def _run(module: str, func: str = "run", **kw):
    """The command body ``onemodel.commands.<module>.<func>``, imported when called."""

    def call(args):
        import importlib

        return getattr(importlib.import_module(f".commands.{module}", __package__), func)(args, **kw)

    return call


# -- option values ---------------------------------------------------------------------
#
# Every numeric option is checked here, at parse time: a bad value is one line
# on stderr naming the option and the accepted range, exit status 2, before
# anything runs or is written (docs/cli.md, its opening section).

#: The largest float32: learning rates, decay and clip are float32 in the trainer.
F32_MAX = 3.4028234663852886e38
BIG = 1_000_000_000


def _integer(lo: int, hi: int):
    """An argparse type: an integer in [lo, hi]."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            v = None
        if v is None or not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"expected an integer in [{lo}, {hi}], got {text!r}")
        return v

    parse.__name__ = "integer"
    return parse


def _number(lo: float, hi: float, lo_open: bool = False, hi_open: bool = False):
    """An argparse type: a finite number in the interval (open or closed at each end)."""
    top = "3.4e38" if hi == F32_MAX else f"{hi:g}"
    span = f"{'(' if lo_open else '['}{lo:g}, {top}{')' if hi_open else ']'}"

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            v = math.nan
        ok = math.isfinite(v) and (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
        if not ok:
            raise argparse.ArgumentTypeError(f"expected a finite number in {span}, got {text!r}")
        return v

    parse.__name__ = "number"
    return parse


def _charset(text: str) -> str:
    if not text:
        raise argparse.ArgumentTypeError("expected at least one character, got ''")
    return text


def _distinct_charset(text: str) -> str:
    """The demo's charset: the characters its lines are drawn from, each once."""
    _charset(text)
    repeated = sorted({c for c in text if text.count(c) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(f"expected distinct characters, got {text!r} (repeats {' '.join(map(repr, repeated))})")
    return text


STEPS = _integer(1, BIG)
EVERY = _integer(0, BIG)          # 0: off
BATCH = _integer(1, 65536)
LINES = _integer(1, 100_000)
LINE_LENGTH = _integer(1, 200)
SEED = _integer(0, 2**64 - 1)
THREADS = _integer(1, 1024)
WORKERS = _integer(1, 4096)
LR = _number(0.0, F32_MAX, lo_open=True)
NON_NEGATIVE = _number(0.0, F32_MAX)
EPOCHS = _number(0.0, 1e6, lo_open=True)
FRACTION = _number(0.0, 1.0, hi_open=True)
KERNEL_PATHS = ("scalar", "v128", "avx2", "avx512")


class Parser(argparse.ArgumentParser):
    """argparse with errors in one line (no usage block): ``onemodel train:
    error: argument --lr: expected ...``, exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


# -- parser ---------------------------------------------------------------------------


def _add_compute(p):
    p.add_argument("--threads", type=THREADS, default=None, metavar="N",
                   help="kernel threads (default: ONEMODEL_THREADS or all cores); changes speed, never the bits")
    p.add_argument("--kernel-path", default=None, metavar="NAME", choices=KERNEL_PATHS,
                   help="force an instruction path: scalar, v128, avx2, avx512 (default: the best this CPU has); "
                        "changes speed, never the bits")


def _add_polarity(p):
    p.add_argument("--polarity", choices=("dark", "light"), default=None,
                   help="dark text on light paper (default; pixel p becomes 1 - p/255) or light text on dark")


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="onemodel", description="Bit-identical CPU training: the crnn-v0 text-line "
                                "recognizer and the machine it runs on. See docs/cli.md.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    info = sub.add_parser("info", help="print version, CPU features, kernel paths, threads and mode")
    info.add_argument("--json", action="store_true", help="print the same as JSON")
    info.set_defaults(func=_run("info"))

    d = sub.add_parser("demo", help="train a recognizer from scratch on synthetic lines (the main job)",
                       description="Render synthetic digit lines with Pillow's built-in font, train crnn-v0 "
                       "from scratch with a fixed seed, evaluate the held-out CER as it goes, and write the "
                       "checkpoint, the F16 model and a loss/CER plot. The weights sha256 is the same at every "
                       "--threads and --kernel-path. Defaults: "
                       + ", ".join(f"{k.replace('_', '-')} {v}" for k, v in _demo.DEFAULTS.items()) + ".")
    d.add_argument("--output", default="onemodel-demo", help="output folder (default onemodel-demo)")
    d.add_argument("--resume", default=None, metavar="CKPT",
                   help="continue an interrupted demo from its checkpoint (same options), bit-identically")
    d.add_argument("--steps", type=STEPS, default=None, help="training steps")
    d.add_argument("--quick", action="store_true",
                   help="a few seconds: " + ", ".join(f"{k.replace('_', '-')} {v}" for k, v in _demo.QUICK.items()))
    d.add_argument("--batch-size", type=BATCH, default=None, help="lines per step")
    d.add_argument("--lr", type=LR, default=None, help="AdamW learning rate")
    d.add_argument("--seed", type=SEED, default=None, help="seed of the data and the initialization")
    d.add_argument("--train-lines", type=LINES, default=None, help="synthetic training lines")
    d.add_argument("--eval-lines", type=LINES, default=None, help="held-out lines")
    d.add_argument("--eval-every", type=EVERY, default=None, help="held-out CER every N steps")
    d.add_argument("--charset", type=_distinct_charset, default=None, help="characters of the synthetic lines")
    d.add_argument("--min-len", type=LINE_LENGTH, default=None, help="shortest line (characters)")
    d.add_argument("--max-len", type=LINE_LENGTH, default=None, help="longest line (characters)")
    d.add_argument("--arch", choices=sorted(ARCHITECTURES), default=None, help="model size")
    d.add_argument("--no-progress", action="store_true", help="no progress display")
    _add_compute(d)
    d.set_defaults(func=_run("demo"))

    for name in ("train", "finetune"):
        ft = name == "finetune"
        t = sub.add_parser(name,
                           help=("fine-tune a model on a dataset" if ft else "train a recognizer from scratch on a dataset"),
                           description=("Fine-tune a crnn-v0 model (--model) on line images" if ft else
                                        "Train a crnn-v0 from scratch on line images")
                           + ": DATA is a folder of images with .gt.txt sidecar transcriptions (ocropus/kraken) or "
                           "a TSV manifest 'path<TAB>text'. Images are made grayscale and resized to height 32. "
                           "Ctrl-C saves a checkpoint at the next step and prints the command that resumes.")
        t.add_argument("data", help="dataset folder or TSV manifest")
        if ft:
            t.add_argument("--model", required=True, help="the model (or checkpoint) to start from")
        t.add_argument("--output", default="onemodel-run", help="output folder")
        g = t.add_mutually_exclusive_group()
        g.add_argument("--steps", type=STEPS, default=None, help="train until this step (counting resumed steps)")
        g.add_argument("--epochs", type=EPOCHS, default=None, help="train for this many passes over the data "
                       "(default 10 when --steps is not given)")
        t.add_argument("--batch-size", type=BATCH, default=None, help="lines per step (default 8)")
        t.add_argument("--lr", type=LR, default=None,
                       help=f"AdamW learning rate (default {'3e-4' if ft else '1e-3'})")
        t.add_argument("--weight-decay", type=NON_NEGATIVE, default=None, help="AdamW weight decay (default 0.01)")
        t.add_argument("--clip", type=NON_NEGATIVE, default=None, help="gradient norm clip, 0 = off (default 5)")
        t.add_argument("--eval-split", type=FRACTION, default=None,
                       help="fraction of the lines held out for the CER (default 0.1)")
        t.add_argument("--max-eval", type=EVERY, default=None, help="at most this many held-out lines (default 500)")
        t.add_argument("--eval-every", type=EVERY, default=200, help="held-out CER every N steps, 0: only at the end (default 200)")
        t.add_argument("--checkpoint-every", type=EVERY, default=500,
                       help="save the checkpoint every N steps (default 500)")
        t.add_argument("--seed", type=SEED, default=None, help="seed of the split, the order and the initialization "
                       "(default 0)")
        t.add_argument("--resume", default=None, metavar="CKPT", help="continue a run from its checkpoint, "
                       "bit-identically (the run's seed, batch size and split are read from run.json beside it)")
        t.add_argument("--extend-charset", action="store_true",
                       help="add the data's characters that the charset lacks" +
                       (" (new classifier rows)" if ft else ""))
        if not ft:
            t.add_argument("--charset", type=_charset, default=None, help="the charset as one string (default: printable ASCII)")
            t.add_argument("--arch", choices=sorted(ARCHITECTURES), default="crnn-v0",
                           help="model size: crnn-v0 (default) or small (the demo's)")
        _add_polarity(t)
        t.add_argument("--no-progress", action="store_true", help="no progress display")
        _add_compute(t)
        t.add_argument("--workers", type=WORKERS, default=None, metavar="N",
                       help="compute each step on N Ray workers (pip install 'onemodel[distributed]'), in a local "
                       "Ray cluster on 127.0.0.1 unless --ray-address is given; --threads and --kernel-path then "
                       "apply to each worker. The same weights sha256 as one process (docs/distributed.md)")
        t.add_argument("--ray-address", default=None, metavar="ADDR",
                       help="join a running Ray cluster ('auto' or host:port) instead of starting a local one "
                       "(with --workers)")
        t.set_defaults(func=_run("train", finetune=ft))

    r = sub.add_parser("recognize", help="print the text of line images",
                       description="Print the text of each line image (greedy CTC). With several images, each "
                       "output line is 'path<TAB>text' (the manifest format).")
    r.add_argument("--model", required=True, help="model or checkpoint")
    r.add_argument("images", nargs="+", metavar="IMAGE")
    _add_polarity(r)
    _add_compute(r)
    r.set_defaults(func=_run("recognize", "recognize"))

    e = sub.add_parser("eval", help="print the CER and WER of a model on a dataset",
                       description="Character and word error rates (total edit distance over total reference "
                       "length) of a model on a dataset folder or TSV manifest.")
    e.add_argument("--model", required=True, help="model or checkpoint")
    e.add_argument("data", help="dataset folder or TSV manifest")
    e.add_argument("--json", action="store_true", help="print the numbers as JSON")
    e.add_argument("--show-errors", type=EVERY, default=0, metavar="N", help="list the N worst lines")
    _add_polarity(e)
    _add_compute(e)
    e.set_defaults(func=_run("recognize", "evaluate"))
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args._argv = None if argv is None else list(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    if args.command == "demo":
        lo = args.min_len if args.min_len is not None else _demo.DEFAULTS["min_len"]
        hi = args.max_len if args.max_len is not None else _demo.DEFAULTS["max_len"]
        if hi < lo:
            parser.exit(2, f"onemodel demo: error: argument --max-len: {hi} is below --min-len {lo}\n")
    if getattr(args, "polarity", "x") is None and args.command in ("recognize", "eval"):
        args.polarity = "dark"
    try:
        return args.func(args)
    except (CliError, OSError) as e:  # OSError: a file or folder that cannot be written or read; it names it
        sys.stdout.flush()
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
