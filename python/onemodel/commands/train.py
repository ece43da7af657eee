"""``onemodel train`` and ``onemodel finetune``: train a crnn-v0 on a
dataset folder or TSV manifest, from scratch or from a model, resumable."""

from __future__ import annotations

import math
import sys
from pathlib import Path

from .common import CliError, apply_compute, command_line, drop_option, given_argv, load_checkpoint, load_model, \
    require_extras, summary

#: Options whose value, when given with --resume, must equal the run's.
_CHECKED = ("seed", "batch_size", "eval_split", "max_eval", "polarity", "lr", "weight_decay", "clip")


def _defaults(finetune: bool) -> dict:
    return dict(seed=0, batch_size=8, eval_split=0.1, max_eval=500, polarity="dark",
                lr=3e-4 if finetune else 1e-3, weight_decay=0.01, clip=5.0)


def _option(key: str) -> str:
    return "--" + key.replace("_", "-")


def _resume(args, explicit: set):
    """The checkpoint's trainer, with the run's order settings put in ``args``
    (refusing explicit options that differ from the run's)."""
    from ..recognizer.training import ORDER_KEYS, SettingMismatch, read_run_settings, resumed_settings

    trainer = load_checkpoint(args.resume)
    run = read_run_settings(args.resume)
    if run is not None:
        where = Path(args.resume).parent / "run.json"
        try:
            settings = resumed_settings(run, {k: getattr(args, k) for k in explicit}, str(where))
        except SettingMismatch as e:
            raise CliError(f"--resume: {_option(e.key)} {e.given} differs from the run's {e.saved} "
                           f"(in {e.where}); drop it to continue the same run") from None
        defaults = _defaults(False)
        for k in ORDER_KEYS:
            if k != "data":
                setattr(args, k, settings.get(k, defaults[k]))
        if str(Path(args.data).resolve()) != run.get("data"):
            print(f"warning: resuming on {args.data}, the run started on {run.get('data')}", file=sys.stderr)
    for k in ("lr", "weight_decay", "clip"):
        if k in explicit and getattr(args, k) != getattr(trainer, k):
            raise CliError(f"--resume: {_option(k)} {getattr(args, k)} differs from the checkpoint's "
                           f"{getattr(trainer, k)}; drop it to continue the same run")
    return trainer


def _read_lines(args):
    from ..recognizer.data import DataError, list_dataset, load_image

    print(f"Reading {args.data} ...")
    try:
        lines = list_dataset(args.data)
        for ln in lines:
            ln.image = load_image(ln.path, 32, args.polarity)
    except DataError as e:
        raise CliError(str(e)) from None
    return lines


def _check_charset(lines, charset, hint):
    from ..recognizer.data import DataError, check_charset

    try:
        check_charset(lines, charset, hint=hint)
    except DataError as e:
        raise CliError(str(e)) from None


def _model(args, lines, finetune: bool):
    """The model to train: from --model (finetune) or fresh (train), its
    charset extended by the data's characters with --extend-charset."""
    from ..recognizer import DEFAULT_CHARSET, CrnnV0
    from ..recognizer.data import charset_of
    from ..recognizer.training import architecture, extend_charset

    if finetune:
        model = load_model(args.model)
        unknown = [c for c in charset_of(lines) if c not in model.config.charset]
        if unknown and args.extend_charset:
            model = extend_charset(model, unknown, args.seed)
            print(f"  extended the charset by {' '.join(repr(c) for c in unknown)} (new classifier rows "
                  f"initialized from seed {args.seed})")
        _check_charset(lines, model.config.charset,
                       "Use --extend-charset to add them (new classifier rows), or fix the transcriptions.")
        return model
    charset = list(DEFAULT_CHARSET) if args.charset is None else list(dict.fromkeys(args.charset))
    unknown = [c for c in charset_of(lines) if c not in charset]
    if unknown and args.extend_charset:
        charset += unknown
        print(f"  extended the charset by {' '.join(repr(c) for c in unknown)}")
    _check_charset(lines, charset, "Use --extend-charset to add them to the charset, or --charset.")
    return CrnnV0(architecture(args.arch, charset), seed=args.seed)


def run(args, finetune: bool = False) -> int:
    from .. import compute
    from ..recognizer import Trainer
    from ..recognizer.data import split
    from ..recognizer.training import NonFiniteError, Sample, StopOnInterrupt, drop_narrow_lines, evaluate, \
        read_history, train, weights_sha256, write_run_settings

    require_extras(args.command)
    from .plot import write_plot
    from .progress import TrainingProgress

    apply_compute(args)
    out = Path(args.output)
    explicit = {k for k in _CHECKED if getattr(args, k) is not None}
    trainer = _resume(args, explicit) if args.resume else None
    for k, v in _defaults(finetune).items():
        if getattr(args, k) is None:
            setattr(args, k, v)

    lines = _read_lines(args)
    if trainer is not None:
        model = trainer.model
        _check_charset(lines, model.config.charset, "(the checkpoint's charset is fixed)")
    else:
        model = _model(args, lines, finetune)

    train_idx, eval_idx = split(len(lines), args.eval_split, args.seed, args.max_eval)
    train_lines, narrow = drop_narrow_lines(model, [lines[i] for i in train_idx])
    if narrow:
        print(f"warning: skipping {len(narrow)} line(s) too narrow for their transcription:\n"
              + "\n".join("  " + m for m in narrow[:10])
              + (f"\n  ... and {len(narrow) - 10} more" if len(narrow) > 10 else ""), file=sys.stderr)
    held = [Sample(ln.image, ln.text, ln.path) for ln in (lines[i] for i in eval_idx)]
    if not train_lines:
        raise CliError(f"{args.data}: no training lines left")
    if args.steps is not None and args.epochs is not None:
        raise CliError("give --steps or --epochs, not both")
    if args.steps is not None:
        steps = args.steps
    else:
        epochs = args.epochs if args.epochs is not None else 10
        steps = int(math.ceil(epochs * len(train_lines) / args.batch_size))
    if trainer is not None and steps < trainer.step_count:
        raise CliError(f"--steps {steps}: the checkpoint is already at step {trainer.step_count}")
    history = []
    if trainer is None:
        trainer = Trainer(model, lr=args.lr, weight_decay=args.weight_decay,
                          clip=None if args.clip <= 0 else args.clip)
    else:
        history = read_history(Path(args.resume).parent, trainer.step_count)

    out.mkdir(parents=True, exist_ok=True)
    write_run_settings(out, {"data": str(Path(args.data).resolve()), "seed": args.seed,
                             "batch_size": args.batch_size, "eval_split": args.eval_split,
                             "max_eval": args.max_eval, "polarity": args.polarity})

    cfg = model.config
    verb = "fine-tuning" if finetune else "training"
    print(f"  {len(train_lines)} training lines, {len(held)} held out; charset of {len(cfg.charset)}; "
          f"channels {list(cfg.channels)}, hidden {cfg.hidden}, layers {cfg.layers}")
    print(f"  {verb} steps {trainer.step_count} -> {steps}, batch {args.batch_size}, lr {trainer.lr:g}, "
          f"weight decay {trainer.weight_decay:g}, clip {trainer.clip}; kernel path {compute.kernel_path()}, "
          f"{compute.get_threads()} threads")

    progress = TrainingProgress(enabled=not args.no_progress, every=max(1, min(args.eval_every or 50, 50)))
    stepper = _workers(args, trainer)
    try:
        with StopOnInterrupt() as stop:
            res = train(stepper, train_lines, held, steps=steps, batch_size=args.batch_size, seed=args.seed,
                        eval_every=args.eval_every, checkpoint_every=args.checkpoint_every, out_dir=out,
                        history=history, callbacks=[progress], should_stop=stop)
    except NonFiniteError as e:
        raise CliError(f"{e} (--lr, --clip)") from None
    finally:
        if stepper is not trainer:
            stepper.close()
    if res.stopped:
        print(f"Stopped at step {res.step}/{res.steps}; checkpoint saved to {res.checkpoint}.")
        print(f"Resume with:\n  {_resume_command(args, finetune, res.checkpoint)}")
        return 130
    trainer.model.save(out / "model.safetensors")
    write_plot(out / "plot.png", res.history, title=f"onemodel {'finetune' if finetune else 'train'}: {args.data}")
    rows = [("steps", f"{trainer.step_count} (batch {args.batch_size})"),
            ("training time", f"{res.elapsed:.1f} s for {res.steps_run} steps")]
    if held:
        rates, _ = evaluate(trainer.model, held)
        rows += [("held-out CER", f"{100 * rates.cer:.2f}% ({len(held)} lines)"),
                 ("held-out WER", f"{100 * rates.wer:.2f}%")]
    rows += [("weights sha256", weights_sha256(trainer.model)),
             ("checkpoint", str(out / "checkpoint.safetensors")),
             ("model", str(out / "model.safetensors")),
             ("plot", str(out / "plot.png"))]
    summary("Result", rows)
    return 0


def _workers(args, trainer):
    """With ``--workers N``: the trainer's steps on N Ray workers (the same
    bits), the workers and their hosts printed. Otherwise the trainer."""
    if args.workers is None:
        if args.ray_address is not None:
            raise CliError("--ray-address needs --workers N")
        return trainer
    try:
        from ..distributed import DistributedTrainer
        from ..distributed._ray import require

        require()
    except ImportError as e:
        raise CliError(str(e)) from None
    where = f"the Ray cluster at {args.ray_address}" if args.ray_address else "a local Ray cluster (127.0.0.1)"
    print(f"  starting {args.workers} workers on {where} ...")
    try:
        dt = DistributedTrainer(trainer, workers=args.workers, threads=args.threads, address=args.ray_address,
                                log=lambda line: print(f"  {line}", flush=True), kernel_path=args.kernel_path)
    except (ConnectionError, TimeoutError) as e:
        raise CliError(f"--workers {args.workers}: {e}") from None
    for line in dt.describe():
        print(f"  {line}")
    sys.stdout.flush()
    return dt


def _resume_command(args, finetune: bool, ckpt) -> str:
    """The command that continues this run: a finetune resumes as ``train``
    (the model comes from the checkpoint)."""
    argv = drop_option(given_argv(args), "--resume")
    if finetune:
        argv = drop_option(argv, "--model")
        argv = ["train" if a == "finetune" else a for a in argv]
    return command_line(argv + ["--resume", str(ckpt)])
