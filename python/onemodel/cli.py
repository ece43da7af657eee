"""The ``onemodel`` command line.

``onemodel info`` describes the machine; ``demo``, ``train``, ``finetune``,
``recognize`` and ``eval`` drive the crnn-v0 text-line recognizer (see
docs/cli.md). Training writes into ``--output``:

* ``checkpoint.safetensors``: F32 masters + AdamW state (atomic; ``--resume``)
* ``model.safetensors``: the final model (F16, for ``recognize``/``eval``)
* ``history.tsv`` and ``plot.png``: loss and held-out CER per step
* ``run.json``: the options that fix the data order, checked on ``--resume``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import signal
import sys
import time
import warnings
from pathlib import Path


def _cmd_info(args) -> int:
    from . import compute

    info = compute.info()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"onemodel {info['version']}")
    print(f"  CPU features:          {', '.join(info['cpu_features']) or '(none detected)'}")
    print(f"  kernel paths available: {', '.join(info['kernel_paths_available'])}")
    print(f"  kernel path best:      {info['kernel_path_best']}")
    print(f"  kernel path in use:    {info['kernel_path']}")
    print(f"  threads:               {info['threads']}")
    print(f"  mode:                  {info['mode']}")
    return 0


class CliError(Exception):
    """A problem to report in one message and exit 2 (no traceback)."""


# -- architectures ------------------------------------------------------------------

#: Named sizes for training from scratch. "crnn-v0" is the full default of
#: CrnnV0Config; "small" is the demo's (see docs/cli.md for the measurement).
ARCHS = {
    "crnn-v0": dict(channels=(32, 64, 96), hidden=128, layers=2),
    "small": dict(channels=(16, 32, 48), hidden=48, layers=1),
}


def _config(arch: str, charset):
    from .recognizer import CrnnV0Config

    return CrnnV0Config(charset=tuple(charset), **ARCHS[arch])


# -- compute settings -------------------------------------------------------------


def _apply_compute(args) -> None:
    from . import compute

    if getattr(args, "threads", None) is not None:
        if args.threads < 1:
            raise CliError(f"--threads must be at least 1, got {args.threads}")
        compute.set_threads(args.threads)
    if getattr(args, "kernel_path", None):
        try:
            compute.set_kernel_path(args.kernel_path)
        except (RuntimeError, ValueError) as e:
            raise CliError(f"--kernel-path {args.kernel_path}: {e} "
                           f"(available: {', '.join(compute.available_kernel_paths())})") from None


def weights_sha256(model) -> str:
    """sha256 of the float32 masters, in parameter order, little-endian: the
    identity of a trained model (the same on every path and thread count)."""
    import numpy as np

    h = hashlib.sha256()
    for name, a in model.state_dict().items():
        h.update(np.ascontiguousarray(a, dtype="<f4").tobytes())
    return h.hexdigest()


def file_sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# -- progress --------------------------------------------------------------------


def _fmt_time(s: float) -> str:
    if not math.isfinite(s) or s < 0:
        return "--:--"
    s = int(s + 0.5)
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress:
    """A single-line progress display on stderr: a bar, step, loss (running
    mean of the last 20 steps), lines/s, elapsed and ETA, last held-out CER.
    On a terminal it redraws in place (at most 10 times a second); elsewhere
    (a log file, CI) it prints a line every ``every`` steps."""

    def __init__(self, start: int, total: int, batch: int, enabled: bool = True, every: int = 50, stream=None):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if hasattr(self.stream, "isatty") else False
        self.start, self.total, self.batch = start, total, batch
        self.enabled, self.every = enabled, max(1, every)
        self.t0 = time.perf_counter()
        self.last_draw = 0.0
        self.losses = []
        self.cer = None
        self.drawn = False

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


# -- Ctrl-C ------------------------------------------------------------------------


class StopFlag:
    """SIGINT handler for training: the first Ctrl-C sets a flag that the loop
    reads at the next step boundary (it then saves a checkpoint and says how
    to resume); a second Ctrl-C stops at once (KeyboardInterrupt)."""

    def __init__(self):
        self.stop = False
        self._prev = None

    def handler(self, signum, frame):
        if self.stop:
            raise KeyboardInterrupt
        self.stop = True
        sys.stderr.write("\nInterrupted: saving a checkpoint after this step (Ctrl-C again to abort)...\n")
        sys.stderr.flush()

    def __enter__(self):
        try:
            self._prev = signal.signal(signal.SIGINT, self.handler)
        except ValueError:  # not the main thread: no handler, Ctrl-C behaves as usual
            self._prev = None
        return self

    def __exit__(self, *exc):
        if self._prev is not None:
            signal.signal(signal.SIGINT, self._prev)
        return False


# -- plot ---------------------------------------------------------------------------


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


# -- the training loop -------------------------------------------------------------


class NonFinite(CliError):
    pass


def evaluate(model, lines):
    """(ErrorRates, hypotheses) of greedy decoding over (image, text) lines."""
    from .recognizer.data import error_rates

    hyps = [model.recognize(im) for im, _ in lines]
    return error_rates([t for _, t in lines], hyps), hyps


def train_loop(trainer, train, held_out, *, steps, batch_size, seed, eval_every, checkpoint_every, out_dir,
               resume_cmd, progress=True, history=None, log=print):
    """Train until ``trainer.step_count == steps``.

    ``train`` and ``held_out`` are lists of (image, text, name). The batch of
    0-based step s is a function of (seed, s) alone (data.batch_indices), so
    stopping and resuming from a checkpoint gives the same bits as never
    stopping. Returns (status, history): status 0 when done, 130 when stopped
    by Ctrl-C (a checkpoint was saved first)."""
    from .recognizer.data import batch_indices

    out_dir = Path(out_dir)
    ckpt = out_dir / "checkpoint.safetensors"
    history = list(history or [])
    start = trainer.step_count
    n = len(train)
    bar = Progress(start, steps, batch_size, enabled=progress,
                   every=max(1, min(eval_every or 50, 50)))
    eval_set = [(im, t) for im, t, _ in held_out]

    def do_eval(step, loss):
        if not eval_set:
            history.append({"step": step, "loss": loss, "cer": None})
            return None
        rates, _ = evaluate(trainer.model, eval_set)
        bar.cer = rates.cer
        history.append({"step": step, "loss": loss, "cer": rates.cer})
        return rates

    if start == 0 and not history and eval_set:
        do_eval(0, None)
    with StopFlag() as flag:
        for s in range(start, steps):
            idx = batch_indices(n, batch_size, seed, s)
            imgs = [train[i][0] for i in idx]
            texts = [train[i][1] for i in idx]
            step = s + 1
            try:
                with warnings.catch_warnings(record=True):
                    warnings.simplefilter("always")
                    loss, norm = trainer.step(imgs, texts)
                problem = None if math.isfinite(loss) and math.isfinite(norm) else \
                    f"the loss is {loss} and the gradient norm {norm}"
            except FloatingPointError as e:
                problem = str(e)
            if problem is not None:
                bar.close()
                raise NonFinite(_non_finite_message(trainer, step, problem, idx, train, ckpt))
            bar.update(step, loss)
            evaluated = False
            if eval_every and (step % eval_every == 0 or step == steps):
                do_eval(step, loss)
                evaluated = True
            if not evaluated:
                history.append({"step": step, "loss": loss, "cer": None})
            if flag.stop and step < steps:
                _check_finite_weights(trainer.model, step)
                trainer.save_checkpoint(ckpt)
                _write_history(out_dir, history)
                bar.close()
                log(f"Stopped at step {step}/{steps}; checkpoint saved to {ckpt}.")
                log(f"Resume with:\n  {resume_cmd(ckpt)}")
                return 130, history
            if checkpoint_every and step % checkpoint_every == 0 and step < steps:
                _check_finite_weights(trainer.model, step)
                trainer.save_checkpoint(ckpt)
                _write_history(out_dir, history)
        bar.close()
    _check_finite_weights(trainer.model, trainer.step_count)
    trainer.save_checkpoint(ckpt)
    _write_history(out_dir, history)
    return 0, history


def _non_finite_message(trainer, step, problem, idx, train, ckpt) -> str:
    """Name the step and the lines whose own gradient (at the weights before
    the step) is not finite; all the batch's lines when none is alone."""
    import numpy as np

    culprits = []
    for i in idx:
        img, text, name = train[i]
        try:
            with warnings.catch_warnings(record=True):
                warnings.simplefilter("always")
                loss, grads = trainer.gradients([img], [text])
            line_loss = float(trainer.last_line_losses[0]) if len(trainer.last_line_losses) else loss
            ok = math.isfinite(line_loss) and all(bool(np.isfinite(g).all()) for g in grads.values())
            why = "" if ok else f"loss {line_loss}, non-finite gradient" if math.isfinite(line_loss) \
                else f"loss {line_loss}"
        except (FloatingPointError, ValueError) as e:
            ok, why = False, str(e)
        if not ok:
            culprits.append(f"  {name} ({text!r}): {why}")
    if not culprits:
        culprits = [f"  {train[i][2]} ({train[i][1]!r})" for i in idx]
        head = "No line is non-finite alone; the batch's lines were:"
    else:
        head = "Lines with a non-finite loss or gradient:"
    weights_ok = all(bool(np.isfinite(a).all()) for a in trainer.model.state_dict().values())
    saved = (f"The last good checkpoint is {ckpt} (step {_ckpt_step(ckpt)})." if ckpt.exists()
             else "No checkpoint was written.")
    return (f"step {step}: {problem}. Training stopped; this step's update was not saved"
            f"{'' if weights_ok else ' (the weights already hold non-finite values: the learning rate is too large)'}."
            f"\n{head}\n" + "\n".join(culprits) + f"\n{saved} Try a smaller --lr or a --clip.")


def _check_finite_weights(model, step) -> None:
    import numpy as np

    bad = [n for n, a in model.state_dict().items() if not np.isfinite(a).all()]
    if bad:
        raise NonFinite(f"step {step}: the weights {', '.join(bad)} hold non-finite values (the update overflowed: "
                        "try a smaller --lr or a --clip); nothing was saved")


def _ckpt_step(path) -> str:
    try:
        from .recognizer import _container

        meta, _, _ = _container.read(path)
        return str(json.loads(meta["trainer"])["step"])
    except Exception:  # pragma: no cover - only for the message
        return "?"


def _write_history(out_dir: Path, history) -> None:
    path = out_dir / "history.tsv"
    tmp = out_dir / "history.tsv.tmp"
    with open(tmp, "w") as f:
        f.write("step\tloss\tcer\n")
        for h in history:
            loss = "" if h["loss"] is None else repr(float(h["loss"]))
            cer = "" if h["cer"] is None else f"{h['cer']:.6f}"
            f.write(f"{h['step']}\t{loss}\t{cer}\n")
    os.replace(tmp, path)


def _read_history(out_dir: Path, upto: int):
    path = out_dir / "history.tsv"
    if not path.exists():
        return []
    out = []
    for row in path.read_text().splitlines()[1:]:
        parts = row.split("\t")
        if len(parts) != 3:
            continue
        step = int(parts[0])
        if step > upto:
            break
        out.append({"step": step, "loss": float(parts[1]) if parts[1] else None,
                    "cer": float(parts[2]) if parts[2] else None})
    return out


def _summary(rows, stream=None) -> None:
    stream = stream or sys.stdout
    w = max(len(k) for k, _ in rows)
    for k, v in rows:
        stream.write(f"  {k:<{w}}  {v}\n")
    stream.flush()


# -- demo ---------------------------------------------------------------------------

DEMO_DEFAULTS = dict(steps=800, batch_size=8, lr=3e-3, train_lines=4000, eval_lines=200, eval_every=100,
                     min_len=3, max_len=8, charset="0123456789", arch="small", seed=0)
DEMO_QUICK = dict(steps=8, train_lines=32, eval_lines=8, eval_every=4)


def _cmd_demo(args) -> int:
    from .recognizer import CrnnV0, Trainer
    from .recognizer.demo import make_lines

    _apply_compute(args)
    from . import compute

    if args.quick:
        for k, v in DEMO_QUICK.items():
            if getattr(args, k) is None:
                setattr(args, k, v)
    for k, v in DEMO_DEFAULTS.items():
        if getattr(args, k, None) is None:
            setattr(args, k, v)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    cfg = _config(args.arch, args.charset)
    print(f"onemodel demo: crnn-v0 ({args.arch}: channels {list(cfg.channels)}, hidden {cfg.hidden}, "
          f"layers {cfg.layers}) from scratch on synthetic lines, seed {args.seed}")
    print(f"  charset {args.charset!r}, {args.min_len}-{args.max_len} characters a line, batch {args.batch_size}, "
          f"lr {args.lr:g}, {args.steps} steps; kernel path {compute.kernel_path()}, "
          f"{compute.get_threads()} threads")
    t = time.perf_counter()
    train = [(im, tx, f"synthetic #{i}") for i, (im, tx) in
             enumerate(make_lines(args.train_lines, args.seed, 0, args.charset, args.min_len, args.max_len))]
    held = [(im, tx, f"held-out #{i}") for i, (im, tx) in
            enumerate(make_lines(args.eval_lines, args.seed, 1, args.charset, args.min_len, args.max_len))]
    print(f"  rendered {len(train)} training and {len(held)} held-out lines with Pillow's built-in font "
          f"in {time.perf_counter() - t:.1f} s")
    history = []
    if args.resume:
        from .recognizer import ContainerError

        try:
            trainer = Trainer.load_checkpoint(args.resume)
        except (ContainerError, OSError, ValueError) as e:
            raise CliError(f"--resume {args.resume}: {e}") from None
        model = trainer.model
        if model.config != cfg or trainer.lr != args.lr:
            raise CliError(f"--resume {args.resume}: the checkpoint is not this demo's (model or lr differ); "
                           "give the options of the interrupted run")
        history = _read_history(Path(args.resume).parent, trainer.step_count)
        print(f"  resuming from step {trainer.step_count}")
    else:
        model = CrnnV0(cfg, seed=args.seed)
        trainer = Trainer(model, lr=args.lr, weight_decay=0.01, clip=5.0)

    def resume_cmd(ckpt):
        argv = list(sys.argv[1:]) if args._argv is None else list(args._argv)
        return "onemodel " + " ".join(_quote(a) for a in _drop_opt(argv, "--resume") + ["--resume", str(ckpt)])

    t0 = time.perf_counter()
    status, history = train_loop(trainer, train, held, steps=args.steps, batch_size=args.batch_size, seed=args.seed,
                                 eval_every=args.eval_every, checkpoint_every=0, out_dir=out,
                                 resume_cmd=resume_cmd, progress=not args.no_progress, history=history)
    elapsed = time.perf_counter() - t0
    if status:
        return status
    model.save(out / "model.safetensors")
    write_plot(out / "plot.png", history, title=f"onemodel demo: crnn-v0 {args.arch}, seed {args.seed}")
    rates, hyps = evaluate(model, [(im, tx) for im, tx, _ in held])
    print()
    print("Examples (held-out):")
    for (im, tx, _), h in list(zip(held, hyps))[:5]:
        print(f"  {tx:<{args.max_len}}  ->  {h}{'' if h == tx else '   (wrong)'}")
    print()
    print("Result:")
    _summary([
        ("steps", f"{trainer.step_count} (batch {args.batch_size}, {trainer.step_count * args.batch_size} lines)"),
        ("training time", f"{elapsed:.1f} s ({trainer.step_count * args.batch_size / max(elapsed, 1e-9):.1f} lines/s, "
                          f"{compute.get_threads()} threads, {compute.kernel_path()})"),
        ("held-out CER", f"{100 * rates.cer:.2f}% ({rates.char_errors}/{rates.chars} characters, "
                         f"{len(held)} lines)"),
        ("held-out WER", f"{100 * rates.wer:.2f}%"),
        ("weights sha256", weights_sha256(model)),
        ("checkpoint", str(out / "checkpoint.safetensors")),
        ("model", str(out / "model.safetensors")),
        ("plot", str(out / "plot.png")),
    ])
    return 0


# -- train / finetune --------------------------------------------------------------

#: The options that fix which lines make each batch; --resume checks them.
_ORDER_KEYS = ("data", "seed", "batch_size", "eval_split", "max_eval", "polarity")


def _prepare_lines(model, lines, log):
    """Encode and drop lines too narrow for their targets (with a warning naming
    the files). Returns [(image, text, path)]."""
    from .recognizer.data import ctc_min_steps

    cfg = model.config
    kept, narrow = [], []
    for ln in lines:
        need = ctc_min_steps(model.encode(ln.text))
        have = cfg.time_steps(ln.image.shape[1])
        if have < max(1, need):
            narrow.append(f"  {ln.path}: {ln.image.shape[1]} px wide gives {have} time steps, "
                          f"{ln.text!r} needs {need}")
        else:
            kept.append((ln.image, ln.text, ln.path))
    if narrow:
        log(f"warning: skipping {len(narrow)} line(s) too narrow for their transcription:\n"
            + "\n".join(narrow[:10]) + (f"\n  ... and {len(narrow) - 10} more" if len(narrow) > 10 else ""))
    return kept


def _cmd_train(args, finetune: bool = False) -> int:
    from .recognizer import CrnnV0, ContainerError, DEFAULT_CHARSET, Trainer
    from .recognizer.data import DataError, check_charset, charset_of, list_dataset, load_image, split

    _apply_compute(args)
    from . import compute

    out = Path(args.output)
    run_path = out / "run.json"
    explicit = {k for k in ("seed", "batch_size", "eval_split", "max_eval", "polarity", "lr", "weight_decay",
                            "clip") if getattr(args, k) is not None}
    defaults = dict(seed=0, batch_size=8, eval_split=0.1, max_eval=500, polarity="dark",
                    lr=3e-4 if finetune else 1e-3, weight_decay=0.01, clip=5.0)
    trainer = None
    history = []
    if args.resume:
        try:
            trainer = Trainer.load_checkpoint(args.resume)
        except (ContainerError, OSError, ValueError) as e:
            raise CliError(f"--resume {args.resume}: {e}") from None
        saved_run = Path(args.resume).parent / "run.json"
        if saved_run.exists():
            run = json.loads(saved_run.read_text())
            for k in _ORDER_KEYS:
                if k == "data":
                    continue
                if k in explicit and getattr(args, k) != run.get(k):
                    raise CliError(f"--resume: --{k.replace('_', '-')} {getattr(args, k)} differs from the run's "
                                   f"{run.get(k)} (in {saved_run}); drop it to continue the same run")
                setattr(args, k, run.get(k, defaults[k]))
            if str(Path(args.data).resolve()) != run.get("data"):
                print(f"warning: resuming on {args.data}, the run started on {run.get('data')}", file=sys.stderr)
        for k, attr in (("lr", "lr"), ("weight_decay", "weight_decay"), ("clip", "clip")):
            if k in explicit and getattr(args, k) != getattr(trainer, attr):
                raise CliError(f"--resume: --{k.replace('_', '-')} {getattr(args, k)} differs from the checkpoint's "
                               f"{getattr(trainer, attr)}; drop it to continue the same run")
    for k, v in defaults.items():
        if getattr(args, k) is None:
            setattr(args, k, v)

    print(f"Reading {args.data} ...")
    try:
        lines = list_dataset(args.data)
        for ln in lines:
            ln.image = load_image(ln.path, 32, args.polarity)
    except DataError as e:
        raise CliError(str(e)) from None

    if trainer is not None:
        model = trainer.model
        try:
            check_charset(lines, model.config.charset, hint="(the checkpoint's charset is fixed)")
        except DataError as e:
            raise CliError(str(e)) from None
    elif finetune:
        try:
            model = CrnnV0.load(args.model)
        except (ContainerError, OSError, ValueError) as e:
            raise CliError(f"--model {args.model}: {e}") from None
        unknown = [c for c in charset_of(lines) if c not in model.config.charset]
        if unknown and args.extend_charset:
            model = _extend_model(model, unknown, args.seed)
            print(f"  extended the charset by {' '.join(repr(c) for c in unknown)} (new classifier rows "
                  f"initialized from seed {args.seed})")
        try:
            check_charset(lines, model.config.charset,
                          hint="Use --extend-charset to add them (new classifier rows), or fix the transcriptions.")
        except DataError as e:
            raise CliError(str(e)) from None
    else:
        charset = list(DEFAULT_CHARSET) if args.charset is None else list(dict.fromkeys(args.charset))
        unknown = [c for c in charset_of(lines) if c not in charset]
        if unknown and args.extend_charset:
            charset += unknown
            print(f"  extended the charset by {' '.join(repr(c) for c in unknown)}")
        try:
            check_charset(lines, charset, hint="Use --extend-charset to add them to the charset, or --charset.")
        except DataError as e:
            raise CliError(str(e)) from None
        model = CrnnV0(_config(args.arch, charset), seed=args.seed)

    train_idx, eval_idx = split(len(lines), args.eval_split, args.seed, args.max_eval)
    log = lambda m: print(m, file=sys.stderr)  # noqa: E731
    train = _prepare_lines(model, [lines[i] for i in train_idx], log)
    held = [(ln.image, ln.text, ln.path) for ln in (lines[i] for i in eval_idx)]
    if not train:
        raise CliError(f"{args.data}: no training lines left")
    if args.steps is not None and args.epochs is not None:
        raise CliError("give --steps or --epochs, not both")
    if args.steps is not None:
        steps = args.steps
    else:
        epochs = args.epochs if args.epochs is not None else 10
        steps = int(math.ceil(epochs * len(train) / args.batch_size))
    if trainer is None:
        trainer = Trainer(model, lr=args.lr, weight_decay=args.weight_decay,
                          clip=None if args.clip <= 0 else args.clip)
    else:
        history = _read_history(Path(args.resume).parent, trainer.step_count)

    out.mkdir(parents=True, exist_ok=True)
    run = {"data": str(Path(args.data).resolve()), "seed": args.seed, "batch_size": args.batch_size,
           "eval_split": args.eval_split, "max_eval": args.max_eval, "polarity": args.polarity}
    tmp = out / "run.json.tmp"
    tmp.write_text(json.dumps(run, indent=2) + "\n")
    os.replace(tmp, run_path)

    cfg = model.config
    verb = "fine-tuning" if finetune else "training"
    print(f"  {len(train)} training lines, {len(held)} held out; charset of {len(cfg.charset)}; "
          f"channels {list(cfg.channels)}, hidden {cfg.hidden}, layers {cfg.layers}")
    print(f"  {verb} steps {trainer.step_count} -> {steps}, batch {args.batch_size}, lr {trainer.lr:g}, "
          f"weight decay {trainer.weight_decay:g}, clip {trainer.clip}; kernel path {compute.kernel_path()}, "
          f"{compute.get_threads()} threads")

    def resume_cmd(ckpt):
        argv = [a for a in sys.argv[1:]] if args._argv is None else list(args._argv)
        argv = _drop_opt(argv, "--resume")
        if finetune:
            argv = _drop_opt(argv, "--model")
            argv = ["train" if a == "finetune" else a for a in argv]
        return "onemodel " + " ".join(_quote(a) for a in argv + ["--resume", str(ckpt)])

    t0 = time.perf_counter()
    start = trainer.step_count
    status, history = train_loop(trainer, train, held, steps=steps, batch_size=args.batch_size, seed=args.seed,
                                 eval_every=args.eval_every, checkpoint_every=args.checkpoint_every,
                                 out_dir=out, resume_cmd=resume_cmd, progress=not args.no_progress,
                                 history=history)
    elapsed = time.perf_counter() - t0
    if status:
        return status
    trainer.model.save(out / "model.safetensors")
    write_plot(out / "plot.png", history, title=f"onemodel {'finetune' if finetune else 'train'}: {args.data}")
    rows = [("steps", f"{trainer.step_count} (batch {args.batch_size})"),
            ("training time", f"{elapsed:.1f} s for {trainer.step_count - start} steps")]
    if held:
        rates, _ = evaluate(trainer.model, [(im, t) for im, t, _ in held])
        rows += [("held-out CER", f"{100 * rates.cer:.2f}% ({len(held)} lines)"),
                 ("held-out WER", f"{100 * rates.wer:.2f}%")]
    rows += [("weights sha256", weights_sha256(trainer.model)),
             ("checkpoint", str(out / "checkpoint.safetensors")),
             ("model", str(out / "model.safetensors")),
             ("plot", str(out / "plot.png"))]
    print("Result:")
    _summary(rows)
    return 0


def _extend_model(model, new_chars, seed):
    """The same model with ``new_chars`` appended to its charset: every weight
    kept, the classifier's new rows taken from a fresh initialization."""
    import numpy as np

    from .recognizer import CrnnV0, CrnnV0Config

    c = model.config
    cfg = CrnnV0Config(height=c.height, channels=c.channels, pools=c.pools, hidden=c.hidden, layers=c.layers,
                       charset=tuple(c.charset) + tuple(new_chars))
    new = CrnnV0(cfg, seed=seed)
    state = new.state_dict()
    old = model.state_dict()
    k = c.classes
    for name, a in old.items():
        if name.startswith("classifier."):
            b = np.array(state[name])
            b[:k] = a
            state[name] = b
        else:
            state[name] = a
    new.load_state_dict(state)
    return new


def _drop_opt(argv, opt):
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


def _quote(a: str) -> str:
    import shlex

    return shlex.quote(a)


# -- recognize / eval ---------------------------------------------------------------


def _load_model(path):
    from .recognizer import ContainerError, CrnnV0

    try:
        return CrnnV0.load(path)
    except (ContainerError, OSError, ValueError) as e:
        raise CliError(f"--model {path}: {e}") from None


def _cmd_recognize(args) -> int:
    from .recognizer.data import DataError, load_image

    _apply_compute(args)
    model = _load_model(args.model)
    status = 0
    for p in args.images:
        try:
            img = load_image(p, model.config.height, args.polarity)
        except DataError as e:
            print(f"error: {e}", file=sys.stderr)
            status = 1
            continue
        if img.shape[1] < model.config.min_width:
            text = ""
        else:
            text = model.recognize(img)
        if len(args.images) > 1:
            print(f"{p}\t{text}")
        else:
            print(text)
    return status


def _cmd_eval(args) -> int:
    from .recognizer.data import DataError, load_dataset

    _apply_compute(args)
    model = _load_model(args.model)
    try:
        lines = load_dataset(args.data, model.config.height, args.polarity)
    except DataError as e:
        raise CliError(str(e)) from None
    hyps = []
    for ln in lines:
        hyps.append(model.recognize(ln.image) if ln.image.shape[1] >= model.config.min_width else "")
    from .recognizer.data import error_rates, levenshtein

    rates = error_rates([ln.text for ln in lines], hyps)
    outside = sorted({c for ln in lines for c in ln.text if c not in model.config.charset})
    if args.json:
        print(json.dumps({"lines": rates.lines, "cer": rates.cer, "wer": rates.wer, "char_errors": rates.char_errors,
                          "chars": rates.chars, "word_errors": rates.word_errors, "words": rates.words}))
    else:
        print(f"lines  {rates.lines}")
        print(f"CER    {100 * rates.cer:.2f}%  ({rates.char_errors} errors / {rates.chars} characters)")
        print(f"WER    {100 * rates.wer:.2f}%  ({rates.word_errors} errors / {rates.words} words)")
        if outside:
            print(f"note: the references use {len(outside)} character(s) outside the model's charset "
                  f"({' '.join(repr(c) for c in outside)}); they always count as errors")
        if args.show_errors:
            worst = sorted(((levenshtein(ln.text, h), i) for i, (ln, h) in enumerate(zip(lines, hyps))),
                           key=lambda e: (-e[0], e[1]))
            for d, i in worst[:args.show_errors]:
                if d == 0:
                    break
                print(f"  {d:3d}  {lines[i].path}\n       ref {lines[i].text!r}\n       hyp {hyps[i]!r}")
    return 0


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
    info.set_defaults(func=_cmd_info)

    d = sub.add_parser("demo", help="train a recognizer from scratch on synthetic lines (the main job)",
                       description="Render synthetic digit lines with Pillow's built-in font, train crnn-v0 "
                       "from scratch with a fixed seed, evaluate the held-out CER as it goes, and write the "
                       "checkpoint, the F16 model and a loss/CER plot. The weights sha256 is the same at every "
                       "--threads and --kernel-path. Defaults: "
                       + ", ".join(f"{k.replace('_', '-')} {v}" for k, v in DEMO_DEFAULTS.items()) + ".")
    d.add_argument("--output", default="onemodel-demo", help="output folder (default onemodel-demo)")
    d.add_argument("--resume", default=None, metavar="CKPT",
                   help="continue an interrupted demo from its checkpoint (same options), bit-identically")
    d.add_argument("--steps", type=int, default=None, help="training steps")
    d.add_argument("--quick", action="store_true",
                   help="a few seconds: " + ", ".join(f"{k.replace('_', '-')} {v}" for k, v in DEMO_QUICK.items()))
    d.add_argument("--batch-size", type=int, default=None, help="lines per step")
    d.add_argument("--lr", type=float, default=None, help="AdamW learning rate")
    d.add_argument("--seed", type=int, default=None, help="seed of the data and the initialization")
    d.add_argument("--train-lines", type=int, default=None, help="synthetic training lines")
    d.add_argument("--eval-lines", type=int, default=None, help="held-out lines")
    d.add_argument("--eval-every", type=int, default=None, help="held-out CER every N steps")
    d.add_argument("--charset", default=None, help="characters of the synthetic lines")
    d.add_argument("--min-len", type=int, default=None, help="shortest line (characters)")
    d.add_argument("--max-len", type=int, default=None, help="longest line (characters)")
    d.add_argument("--arch", choices=sorted(ARCHS), default=None, help="model size")
    d.add_argument("--no-progress", action="store_true", help="no progress display")
    _add_compute(d)
    d.set_defaults(func=_cmd_demo)

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
            t.add_argument("--arch", choices=sorted(ARCHS), default="crnn-v0",
                           help="model size: crnn-v0 (default) or small (the demo's)")
        _add_polarity(t)
        t.add_argument("--no-progress", action="store_true", help="no progress display")
        _add_compute(t)
        t.set_defaults(func=(lambda a, ft=ft: _cmd_train(a, finetune=ft)))

    r = sub.add_parser("recognize", help="print the text of line images",
                       description="Print the text of each line image (greedy CTC). With several images, each "
                       "output line is 'path<TAB>text' (the manifest format).")
    r.add_argument("--model", required=True, help="model or checkpoint")
    r.add_argument("images", nargs="+", metavar="IMAGE")
    _add_polarity(r)
    _add_compute(r)
    r.set_defaults(func=_cmd_recognize)

    e = sub.add_parser("eval", help="print the CER and WER of a model on a dataset",
                       description="Character and word error rates (total edit distance over total reference "
                       "length) of a model on a dataset folder or TSV manifest.")
    e.add_argument("--model", required=True, help="model or checkpoint")
    e.add_argument("data", help="dataset folder or TSV manifest")
    e.add_argument("--json", action="store_true", help="print the numbers as JSON")
    e.add_argument("--show-errors", type=int, default=0, metavar="N", help="list the N worst lines")
    _add_polarity(e)
    _add_compute(e)
    e.set_defaults(func=_cmd_eval)
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
