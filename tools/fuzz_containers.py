"""Coverage-guided fuzzing of the file readers (atheris, libFuzzer for
Python): om.load (onemodel's safetensors reader and the state structure),
CrnnV0.load and Trainer.load_checkpoint. Every input must either load or
raise ContainerError naming the file; any other exception, a crash or a
hang is a finding (atheris stops and writes the input as crash-*).

    pip install atheris
    python tools/fuzz_containers.py [--seconds 300] [--runs N] [--corpus DIR]

The seed corpus is made fresh: a saved state dict, a crnn-v0 model file and
a fine-tuning checkpoint of a small model. The budget and the findings of
the last run are recorded in docs/reliability.md.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile

import atheris

with atheris.instrument_imports(include=["onemodel"]):
    import onemodel as om
    from onemodel.errors import ContainerError
    from onemodel.recognizer import CrnnV0, CrnnV0Config, Trainer

SMALL = CrnnV0Config(channels=(2, 2, 2), hidden=4, layers=1, charset="ab")
_SCRATCH = tempfile.mkdtemp(prefix="onemodel-fuzz-")
_PATH = os.path.join(_SCRATCH, "input.safetensors")


def seeds(corpus: str) -> None:
    os.makedirs(corpus, exist_ok=True)
    om.save({"w": om.arange(6.0).reshape(2, 3), "opt": {"lr": 0.5, "betas": (0.9, 0.99), 3: [1, None]}, "n": om.tensor([1, 2])},
            os.path.join(corpus, "state.safetensors"))
    m = CrnnV0(SMALL, seed=1)
    m.save(os.path.join(corpus, "model.safetensors"))
    Trainer(m).save_checkpoint(os.path.join(corpus, "checkpoint.safetensors"))


def one_input(data: bytes) -> None:
    # The first byte picks the reader, the rest is the file.
    if not data:
        return
    which, body = data[0] % 3, data[1:]
    try:
        if which == 0:
            om.load(io.BytesIO(body))
            return
        with open(_PATH, "wb") as f:
            f.write(body)
        (CrnnV0.load if which == 1 else Trainer.load_checkpoint)(_PATH)
    except ContainerError as e:
        if which and _PATH not in str(e):
            raise AssertionError(f"a ContainerError that does not name the file: {e}") from None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=300, help="the budget in seconds (libFuzzer -max_total_time)")
    ap.add_argument("--runs", type=int, default=0, help="stop after this many inputs instead (0: no limit)")
    ap.add_argument("--corpus", default=os.path.join(_SCRATCH, "corpus"))
    args, rest = ap.parse_known_args()
    seeds(args.corpus)
    # Each seed with its reader byte in front.
    for name, which in (("state", 0), ("model", 1), ("checkpoint", 2)):
        src = os.path.join(args.corpus, f"{name}.safetensors")
        with open(src, "rb") as f:
            body = f.read()
        os.remove(src)
        with open(os.path.join(args.corpus, f"{name}.seed"), "wb") as f:
            f.write(bytes([which]) + body)
    # Tokens of the format and the metadata, so that mutations reach past
    # the JSON syntax into the entries and the recognizer's config.
    words = ['"dtype"', '"shape"', '"data_offsets"', '"__metadata__"', '"F16"', '"F32"', '"I64"', '"BOOL"', '"F64"',
             '"format"', '"onemodel.state"', '"onemodel.crnn-v0"', '"onemodel.structure"', '"config"', '"charset"',
             '"trainer"', '"height"', '"channels"', '"pools"', '"hidden"', '"layers"', '"step"', '"__tensor__"',
             '"__ndarray__"', '"__dict__"', '"__tuple__"', '"__float__"', '"adam.m.', '"lstm1.fwd.w_ih"', "4294967296",
             "18446744073709551616", "-1", "1e308", "[]", "{}", "null"]
    dict_path = os.path.join(_SCRATCH, "tokens.dict")
    with open(dict_path, "w") as f:
        f.writelines('"' + w.replace("\\", "\\\\").replace('"', '\\"') + '"\n' for w in words)
    flags = [sys.argv[0], args.corpus, f"-max_total_time={args.seconds}", "-rss_limit_mb=4096", "-timeout=20",
             "-max_len=65536", "-print_final_stats=1", f"-dict={dict_path}"]
    if args.runs:
        flags.append(f"-runs={args.runs}")
    atheris.Setup(flags + rest, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
