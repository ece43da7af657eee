"""Write PyTorch's results for the cases of a case table (tests/<module>.py,
by default tests/tensor_cases.py) to its fixture file in testdata/tensor/
(SUITES in tests/tensor_cases.py: tensor_cases -> cases.npz).

Runs PyTorch 2.15.0 on the CPU as a black box. Per case:

  <case>/in<i>      the inputs (NumPy, any dtype)
  <case>/out<j>     every output, flattened from nested tuples/lists in
                    order (Python numbers and bools as 0-d arrays)
  <case>/w<j>       the seeded weight W of each float output
  <case>/grad<i>    the gradient of L = Σ_j Σ W_j·out_j for each float input
                    that requires grad
  <case>/error      set instead when torch raises (the message), so a test
                    can require that onemodel refuses the case too

Needs torch; CI never runs it, the tests read the file it wrote.
Usage: /work/venvs/torch/bin/python tools/tensor_oracle.py [module ...]
(no module: every table in SUITES; the files are written in testdata/tensor/).
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import tensor_cases  # noqa: E402


def flatten(out) -> list:
    if isinstance(out, (tuple, list)):
        return [y for x in out for y in flatten(x)]
    return [out]


def as_array(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().numpy().copy()
    return np.asarray(x)


def run_case(name: str, c) -> dict:
    rng = tensor_cases.seeded(name)
    xs = c.inputs(rng)
    ts = []
    for i, x in enumerate(xs):
        t = torch.from_numpy(np.array(x, copy=True))
        if c.grad and x.dtype == np.float32 and i not in c.no_grad:
            t.requires_grad_()
        ts.append(t)
    arrays = {f"{name}/in{i}": np.asarray(x) for i, x in enumerate(xs)}
    try:
        outs = flatten(c.fn(torch, *ts))
    except Exception as e:  # noqa: BLE001 - recorded for the test
        arrays[f"{name}/error"] = np.array(f"{type(e).__name__}: {e}")
        return arrays
    loss = None
    wrng = np.random.default_rng([99, len(name)])
    for j, o in enumerate(outs):
        arrays[f"{name}/out{j}"] = as_array(o)
        if isinstance(o, torch.Tensor) and o.dtype == torch.float32 and o.requires_grad:
            w = wrng.uniform(-1, 1, size=tuple(o.shape)).astype(np.float32)
            arrays[f"{name}/w{j}"] = w
            term = (o * torch.from_numpy(w)).sum()
            loss = term if loss is None else loss + term
    if loss is not None:
        try:
            loss.backward()
        except Exception as e:  # noqa: BLE001 - recorded for the test
            return {**{k: v for k, v in arrays.items() if "/in" in k}, f"{name}/error": np.array(f"{type(e).__name__}: {e}")}
        for i, t in enumerate(ts):
            if t.requires_grad:
                arrays[f"{name}/grad{i}"] = t.grad.numpy().copy() if t.grad is not None else np.zeros(t.shape, np.float32)
    return arrays


def write_suite(module: str, outdir: Path) -> None:
    cases = importlib.import_module(module).CASES
    torch.manual_seed(0)
    torch.set_num_threads(1)
    arrays = {}
    for name, c in cases.items():
        arrays.update(run_case(name, c))
    arrays["meta"] = np.array(json.dumps({"torch": torch.__version__, "cases": len(cases)}))
    out = outdir / tensor_cases.SUITES[module]
    np.savez_compressed(out, **arrays)
    errors = sum(1 for k in arrays if k.endswith("/error"))
    print(f"wrote {out} ({len(cases)} cases, {errors} refused by torch)")


def main() -> None:
    outdir = ROOT / "testdata" / "tensor"
    outdir.mkdir(parents=True, exist_ok=True)
    for module in sys.argv[1:] or list(tensor_cases.SUITES):
        write_suite(module, outdir)


if __name__ == "__main__":
    main()
