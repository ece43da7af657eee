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


#: The command line's optional dependencies (``pip install 'onemodel[cli]'``):
#: the progress display and results table (rich) and the plot (matplotlib).
CLI_EXTRAS = ("rich", "matplotlib")


def require_extras(command: str) -> None:
    """A clear message, before anything is written, when the extras that
    ``command`` draws with are not installed."""
    import importlib

    missing = []
    for name in CLI_EXTRAS:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise CliError(f"onemodel {command} needs the command line's extras ({', '.join(CLI_EXTRAS)}); missing: "
                       f"{', '.join(missing)}. Install them with: python3 -m pip install 'onemodel[cli]'")


def summary(title: str, rows) -> None:
    """The results table (rich) on stdout: one ``name  value`` row each,
    values never wrapped (the weights sha256 stays on one line)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, title_justify="left", show_header=False, box=None, padding=(0, 0, 0, 2),
                  title_style="bold")
    table.add_column("name", no_wrap=True, style="bold")
    table.add_column("value", no_wrap=True)
    for k, v in rows:
        table.add_row(k, v)
    # As wide as the rows need: a narrow terminal wraps a long line itself
    # rather than rich cutting a value (the sha256 is meant to be copied).
    width = 4 + max(len(k) for k, _ in rows) + max(len(v) for _, v in rows)
    console = Console()
    console.width = max(console.width, width)
    with console.capture() as captured:
        console.print(table)
    stream = sys.stdout
    stream.write("".join(line.rstrip(" ") + "\n" for line in captured.get().splitlines()))
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
