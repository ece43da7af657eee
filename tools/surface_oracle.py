"""Record PyTorch's behaviour of the program surface (issue: ports by
changing the import) as fixtures under testdata/surface/, for the tests
named below. Needs torch and numpy; CI never runs it.

    /work/venvs/torch/bin/python tools/surface_oracle.py [section ...]

Sections (all by default):
  structure  module printouts, traversal names, state-dict keys and
             load_state_dict's messages (tests/surface_cases.py builds the
             models from the library passed in)  -> structure.json
  layers     forward values and gradients of layers and functional ops
             on seeded inputs with torch's parameters  -> layers.npz/json
  losses     every loss, functional and module forms  -> losses.npz/json
  optim      Adadelta, Adagrad, RMSprop, Adamax, NAdam, RAdam over three
             steps of stored gradients  -> optim.npz/json
  schedules  learning rates of every scheduler step by step -> schedules.json
  init       nn.init's gains, fans and bounds  -> init.json
  ports      the six ported programs' losses (tests/ports/)  -> ports.json
"""

from __future__ import annotations

import json
import os
import sys
import warnings

import numpy as np
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "testdata", "surface")
sys.path.insert(0, os.path.join(ROOT, "tests"))


def _write_json(name: str, data) -> None:
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")


def structure() -> None:
    import surface_cases as cases

    out = {"torch": torch.__version__, "cases": {}}
    for name, build in cases.STRUCTURE_CASES.items():
        torch.manual_seed(0)
        out["cases"][name] = cases.describe(build(torch))
    out["load_errors"] = cases.load_errors(torch)
    _write_json("structure.json", out)


SECTIONS = {"structure": structure}


def main(argv) -> None:
    os.makedirs(OUT, exist_ok=True)
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    chosen = argv or list(SECTIONS)
    for name in chosen:
        SECTIONS[name]()
        print(f"wrote section {name}")


if __name__ == "__main__":
    main(sys.argv[1:])
