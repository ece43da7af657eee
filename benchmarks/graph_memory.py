"""Python heap held by the recorded graph of one step of each oracle model
(records, saved-tensor handles, Tensor objects; tensor memory itself is
pooled and not counted), measured with tracemalloc after two warm-up steps.

    python benchmarks/graph_memory.py"""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import onemodel as om  # noqa: E402
import onemodel.functional as F  # noqa: E402
from onemodel.autograd import topological_order  # noqa: E402
from oracle_models import build, load  # noqa: E402


def forward(name, model, data):
    cfg = data["meta"]["config"]
    if name == "convnet":
        x = om.tensor(data["input/x"]).requires_grad_()
        return F.cross_entropy(model(x), om.tensor(data["input/targets"]))
    logits = model(om.tensor(data["input/tokens"]), data["input/pad_mask"])
    return F.cross_entropy(logits.reshape(-1, cfg["classes"]), om.tensor(data["input/targets"]).reshape(-1))


def main() -> None:
    for name in ("convnet", "encoder"):
        data = load(name)
        model = build(name, data)
        for i in range(3):
            for p in model.parameters():
                p.grad = None
            with om.ActivationScope():
                if i == 2:
                    tracemalloc.start()
                    before = tracemalloc.take_snapshot()
                loss = forward(name, model, data)
                if i == 2:
                    after = tracemalloc.take_snapshot()
                    tracemalloc.stop()
                    held = sum(s.size_diff for s in after.compare_to(before, "filename"))
                    records = len(topological_order(loss._record))
                loss.backward()
        print(f"{name}: {records} records, {held / 1024:.1f} KB held by the graph ({held / 1024 / records:.2f} KB per record)")


if __name__ == "__main__":
    main()
