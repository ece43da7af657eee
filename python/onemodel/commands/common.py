"""What the commands share: the one-message error, compute settings,
loading a model, the results table and the command that resumes a run."""

from __future__ import annotations

import shlex
import sys


class CliError(Exception):
    """A problem to report in one message and exit 2 (no traceback)."""


def apply_compute(args) -> None:
    """``--threads`` and ``--kernel-path`` (process-wide settings)."""
    from .. import compute

    if getattr(args, "threads", None) is not None:
        compute.set_threads(args.threads)
    if getattr(args, "kernel_path", None):
        try:
            compute.set_kernel_path(args.kernel_path)
        except (RuntimeError, ValueError) as e:
            raise CliError(f"--kernel-path {args.kernel_path}: {e} "
                           f"(available: {', '.join(compute.available_kernel_paths())})") from None


def load_model(path):
    from ..recognizer import ContainerError, CrnnV0

    try:
        return CrnnV0.load(path)
    except (ContainerError, OSError, ValueError) as e:
        raise CliError(f"--model {path}: {e}") from None


def load_checkpoint(path):
    from ..recognizer import ContainerError, Trainer

    try:
        return Trainer.load_checkpoint(path)
    except (ContainerError, OSError, ValueError) as e:
        raise CliError(f"--resume {path}: {e}") from None


def summary(rows, stream=None) -> None:
    """The results table: one ``name  value`` row each."""
    stream = stream or sys.stdout
    w = max(len(k) for k, _ in rows)
    for k, v in rows:
        stream.write(f"  {k:<{w}}  {v}\n")
    stream.flush()


def drop_option(argv, opt):
    """``argv`` without ``opt`` and its value (``--opt V`` or ``--opt=V``)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == opt:
            skip = True
            continue
        if a.startswith(opt + "="):
            continue
        out.append(a)
    return out


def command_line(argv) -> str:
    return "onemodel " + " ".join(shlex.quote(a) for a in argv)


def given_argv(args) -> list:
    """The arguments of this invocation (``main(argv)``'s, else sys.argv's)."""
    return list(sys.argv[1:]) if args._argv is None else list(args._argv)
