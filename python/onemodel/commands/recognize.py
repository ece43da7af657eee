"""``onemodel recognize`` (the text of line images) and ``onemodel eval``
(CER and WER of a model on a dataset)."""

from __future__ import annotations

import json
import sys

from .common import CliError, apply_compute, load_model


def recognize(args) -> int:
    from ..recognizer.data import DataError, load_image

    apply_compute(args)
    model = load_model(args.model)
    status = 0
    for p in args.images:
        try:
            img = load_image(p, model.config.height, args.polarity)
        except DataError as e:
            print(f"error: {e}", file=sys.stderr)
            status = 1
            continue
        text = model.recognize(img) if img.shape[1] >= model.config.min_width else ""
        if len(args.images) > 1:
            print(f"{p}\t{text}")
        else:
            print(text)
    return status


def evaluate(args) -> int:
    from ..recognizer.data import DataError, error_rates, levenshtein, load_dataset

    apply_compute(args)
    model = load_model(args.model)
    try:
        lines = load_dataset(args.data, model.config.height, args.polarity)
    except DataError as e:
        raise CliError(str(e)) from None
    hyps = [model.recognize(ln.image) if ln.image.shape[1] >= model.config.min_width else "" for ln in lines]
    rates = error_rates([ln.text for ln in lines], hyps)
    outside = sorted({c for ln in lines for c in ln.text if c not in model.config.charset})
    if args.json:
        print(json.dumps({"lines": rates.lines, "cer": rates.cer, "wer": rates.wer, "char_errors": rates.char_errors,
                          "chars": rates.chars, "word_errors": rates.word_errors, "words": rates.words}))
        return 0
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
