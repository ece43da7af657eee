"""The ``onemodel`` command line: argument parsing only.

``onemodel info`` describes the machine; ``demo``, ``train``, ``finetune``,
``recognize`` and ``eval`` drive the crnn-v0 text-line recognizer (see
docs/cli.md). The commands' bodies are in ``onemodel.commands``; the
training loop, evaluation and the run's files in
``onemodel.recognizer.training``.
"""

from __future__ import annotations

import argparse
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


# -- parser ---------------------------------------------------------------------------


def _add_compute(p):
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="kernel threads (default: ONEMODEL_THREADS or all cores); changes speed, never the bits")
    p.add_argument("--kernel-path", default=None, metavar="NAME",
                   help="force an instruction path: scalar, v128, avx2, avx512 (default: the best this CPU has); "
                        "changes speed, never the bits")


def _add_polarity(p):
    p.add_argument("--polarity", choices=("dark", "light"), default=None,
                   help="dark text on light paper (default; pixel p becomes 1 - p/255) or light text on dark")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="onemodel", description="Bit-identical CPU training: the crnn-v0 text-line "
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
    d.add_argument("--steps", type=int, default=None, help="training steps")
    d.add_argument("--quick", action="store_true",
                   help="a few seconds: " + ", ".join(f"{k.replace('_', '-')} {v}" for k, v in _demo.QUICK.items()))
    d.add_argument("--batch-size", type=int, default=None, help="lines per step")
    d.add_argument("--lr", type=float, default=None, help="AdamW learning rate")
    d.add_argument("--seed", type=int, default=None, help="seed of the data and the initialization")
    d.add_argument("--train-lines", type=int, default=None, help="synthetic training lines")
    d.add_argument("--eval-lines", type=int, default=None, help="held-out lines")
    d.add_argument("--eval-every", type=int, default=None, help="held-out CER every N steps")
    d.add_argument("--charset", default=None, help="characters of the synthetic lines")
    d.add_argument("--min-len", type=int, default=None, help="shortest line (characters)")
    d.add_argument("--max-len", type=int, default=None, help="longest line (characters)")
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
        g.add_argument("--steps", type=int, default=None, help="train until this step (counting resumed steps)")
        g.add_argument("--epochs", type=float, default=None, help="train for this many passes over the data "
                       "(default 10 when --steps is not given)")
        t.add_argument("--batch-size", type=int, default=None, help="lines per step (default 8)")
        t.add_argument("--lr", type=float, default=None,
                       help=f"AdamW learning rate (default {'3e-4' if ft else '1e-3'})")
        t.add_argument("--weight-decay", type=float, default=None, help="AdamW weight decay (default 0.01)")
        t.add_argument("--clip", type=float, default=None, help="gradient norm clip, 0 = off (default 5)")
        t.add_argument("--eval-split", type=float, default=None,
                       help="fraction of the lines held out for the CER (default 0.1)")
        t.add_argument("--max-eval", type=int, default=None, help="at most this many held-out lines (default 500)")
        t.add_argument("--eval-every", type=int, default=200, help="held-out CER every N steps, 0: only at the end (default 200)")
        t.add_argument("--checkpoint-every", type=int, default=500,
                       help="save the checkpoint every N steps (default 500)")
        t.add_argument("--seed", type=int, default=None, help="seed of the split, the order and the initialization "
                       "(default 0)")
        t.add_argument("--resume", default=None, metavar="CKPT", help="continue a run from its checkpoint, "
                       "bit-identically (the run's seed, batch size and split are read from run.json beside it)")
        t.add_argument("--extend-charset", action="store_true",
                       help="add the data's characters that the charset lacks" +
                       (" (new classifier rows)" if ft else ""))
        if not ft:
            t.add_argument("--charset", default=None, help="the charset as one string (default: printable ASCII)")
            t.add_argument("--arch", choices=sorted(ARCHITECTURES), default="crnn-v0",
                           help="model size: crnn-v0 (default) or small (the demo's)")
        _add_polarity(t)
        t.add_argument("--no-progress", action="store_true", help="no progress display")
        _add_compute(t)
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
    e.add_argument("--show-errors", type=int, default=0, metavar="N", help="list the N worst lines")
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
    if getattr(args, "polarity", "x") is None and args.command in ("recognize", "eval"):
        args.polarity = "dark"
    try:
        return args.func(args)
    except CliError as e:
        sys.stdout.flush()
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
