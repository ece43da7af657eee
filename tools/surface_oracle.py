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
  breadth    the rest of torch.nn: pads, fold, RMSNorm, ... and the margin
             losses (tests/breadth_layer_cases.py), ASGD/Rprop/LBFGS
             (tests/breadth_optim_cases.py)  -> breadth_{layers,losses,optim}.npz
"""

from __future__ import annotations

import contextlib
import io
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


SEED = 20250119


def _flatten(out) -> list:
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flatten(o)]
    return [out]


def _save_npz(name: str, arrays: dict) -> None:
    np.savez_compressed(os.path.join(OUT, name), **arrays)


def layers(cases=None, out_name: str = "layers.npz") -> None:
    """Every layer case: seeded parameters, inputs and output gradients G;
    torch's outputs, the gradients of sum(out · G), buffers and parameters
    after the call."""
    if cases is None:
        import surface_layer_cases as lc

        cases = lc.LAYER_CASES
    rng = np.random.default_rng(SEED)
    arrays = {}
    for name, case in cases.items():
        torch.manual_seed(0)
        m = case["build"](torch)
        m.train(case["train"])
        with torch.no_grad():
            for _, p in m.named_parameters():
                p.copy_(torch.tensor((rng.standard_normal(tuple(p.shape)) * 0.5).astype(np.float32)))
            for bn, b in m.named_buffers():
                if b.dtype == torch.float32:
                    b.copy_(torch.tensor((rng.random(tuple(b.shape)) + 0.5).astype(np.float32)))
        for k, v in m.state_dict().items():
            arrays[f"{name}/state/{k}"] = v.numpy().copy()
        inputs = []
        for i, (kind, shape) in enumerate(case["inputs"]):
            if kind == "f":
                a = rng.standard_normal(shape).astype(np.float32)
                t = torch.tensor(a, requires_grad=True)
            else:
                a = rng.integers(0, int(kind[1:]), shape).astype(np.int64)
                t = torch.tensor(a)
            arrays[f"{name}/input/{i}"] = a
            inputs.append(t)
        outs = _flatten(case["call"](m, *inputs))
        loss = 0
        for k, o in enumerate(outs):
            g = rng.standard_normal(tuple(o.shape)).astype(np.float32)
            arrays[f"{name}/G/{k}"] = g
            arrays[f"{name}/out/{k}"] = o.detach().numpy().copy()
            loss = loss + (o * torch.tensor(g)).sum()
        loss.backward()
        for pn, p in m.named_parameters():
            if p.grad is not None:
                arrays[f"{name}/grad/{pn}"] = p.grad.numpy().copy()
            arrays[f"{name}/param_after/{pn}"] = p.detach().numpy().copy()
        for i, t in enumerate(inputs):
            if t.grad is not None:
                arrays[f"{name}/input_grad/{i}"] = t.grad.numpy().copy()
        for bn, b in m.named_buffers():
            arrays[f"{name}/buffer_after/{bn}"] = b.numpy().copy()
    _save_npz(out_name, arrays)


def _loss_input(rng, kind: str, shape):
    kind = kind.rstrip("+")
    if kind == "f":
        return rng.standard_normal(shape).astype(np.float32)
    if kind == "L":  # logits large enough to saturate a float32 sigmoid
        return (rng.standard_normal(shape) * 30).astype(np.float32)
    if kind == "p":
        return (1 / (1 + np.exp(-rng.standard_normal(shape)))).astype(np.float32)
    if kind == "s":
        a = (1 / (1 + np.exp(-rng.standard_normal(shape) * 4))).astype(np.float32)
        a.reshape(-1)[:4] = [0.0, 1.0, 0.0, 1.0]
        return a
    if kind == "b":
        return rng.integers(0, 2, shape).astype(np.float32)
    if kind == "u":
        return rng.random(shape).astype(np.float32)
    if kind == "w":
        return (rng.random(shape) + 0.5).astype(np.float32)
    if kind == "pm":
        return (rng.integers(0, 2, shape) * 2 - 1).astype(np.float32)
    if kind == "c":
        return rng.integers(0, 5, shape).astype(np.float32)
    if kind.startswith("i"):
        return rng.integers(0, int(kind[1:]), shape).astype(np.int64)
    x = rng.standard_normal(shape)
    x = x - x.max(axis=1, keepdims=True)
    lp = x - np.log(np.exp(x).sum(axis=1, keepdims=True))
    return (lp if kind == "lp" else np.exp(lp)).astype(np.float32)


def losses(cases=None, out_name: str = "losses.npz") -> None:
    """Every loss case: its inputs, torch's loss and the gradients of
    sum(loss · G) for the inputs that require grad."""
    if cases is None:
        import surface_loss_cases as lcs

        cases = lcs.LOSS_CASES
    rng = np.random.default_rng(SEED + 1)
    arrays = {}
    for name, (specs, fn) in cases.items():
        tensors = []
        for i, (kind, shape) in enumerate(specs):
            a = _loss_input(rng, kind, shape)
            arrays[f"{name}/input/{i}"] = a
            tensors.append(torch.tensor(a, requires_grad=kind.endswith("+")))
        out = fn(torch, *tensors)
        g = rng.standard_normal(tuple(out.shape)).astype(np.float32)
        arrays[f"{name}/G"] = g
        arrays[f"{name}/out"] = out.detach().numpy().copy()
        (out * torch.tensor(g)).sum().backward()
        for i, t in enumerate(tensors):
            if t.grad is not None:
                arrays[f"{name}/input_grad/{i}"] = t.grad.numpy().copy()
    _save_npz(out_name, arrays)


def optim() -> None:
    """Each optimizer case: seeded initial parameters and per-step
    gradients (with exact zeros, tiny and huge values), and torch's
    parameters and state after every step (single-tensor path)."""
    import surface_optim_cases as oc

    rng = np.random.default_rng(SEED + 2)
    arrays = {}
    for i, shape in enumerate(oc.SHAPES):
        arrays[f"init/{i}"] = rng.standard_normal(shape).astype(np.float32)
    scales = [1.0, 1e-3, 10.0, 0.5]
    for s in range(oc.STEPS):
        for i, shape in enumerate(oc.SHAPES):
            g = (rng.standard_normal(shape) * scales[i]).astype(np.float32)
            flat = g.reshape(-1)
            if flat.size > 8:
                flat[::7] = 0.0
                flat[3] = np.float32(1e-20)
                flat[5] = np.float32(-3e-30)
                flat[6] = np.float32(1e4)
            arrays[f"grad/{s}/{i}"] = g
    meta = []
    for name, cls_name, defaults, group_opts in oc.OPTIM_CASES:
        params = [torch.tensor(arrays[f"init/{i}"], requires_grad=True) for i in range(len(oc.SHAPES))]
        groups = [dict({"params": params[0:2]}, **group_opts[0]), dict({"params": params[2:4]}, **group_opts[1])]
        opt = getattr(torch.optim, cls_name)(groups, foreach=False, **defaults)
        for s in range(oc.STEPS):
            for i, p in enumerate(params):
                p.grad = torch.tensor(arrays[f"grad/{s}/{i}"])
            opt.step()
            for i, p in enumerate(params):
                arrays[f"{name}/{s}/param/{i}"] = p.detach().numpy().copy()
                for key, value in opt.state[p].items():
                    if key != "step" and torch.is_tensor(value) and value.shape == p.shape:
                        arrays[f"{name}/{s}/{key}/{i}"] = value.detach().numpy().copy()
        meta.append({"name": name, "state_keys": sorted(opt.state[params[0]].keys()),
                     "state_dict_keys": sorted(opt.state_dict()["param_groups"][0].keys())})
    _save_npz("optim.npz", arrays)
    _write_json("optim.json", {"torch": torch.__version__, "cases": meta})


def schedules() -> None:
    import surface_optim_cases as oc

    out = []
    for name, cls_name, kwargs, opt_name, steps in oc.SCHEDULES:
        opt = oc.make_optimizer(torch, opt_name)
        sched = oc.build_schedule(torch, cls_name, kwargs, opt)
        seq = [[float(x) for x in sched.get_last_lr()]]
        mom = [oc.momenta(opt)]
        for _ in range(steps):
            opt.step()
            sched.step()
            seq.append([float(x) for x in sched.get_last_lr()])
            mom.append(oc.momenta(opt))
        out.append({"name": name, "values": seq, "momenta": mom})
    plateau = []
    for name, kwargs, metrics in oc.PLATEAU:
        opt = oc.make_optimizer(torch, "SGD")
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        seq = []
        for m in metrics:
            opt.step()
            sched.step(m)
            seq.append([float(g["lr"]) for g in opt.param_groups])
        plateau.append({"name": name, "values": seq})
    _write_json("schedules.json", {"torch": torch.__version__, "schedules": out, "plateau": plateau})


def init() -> None:
    """nn.init's gains and fans, its error messages, and the default
    initialisation bounds of torch's layers (the largest |value| over many
    draws approaches the bound from below)."""
    from torch import nn

    gains = {}
    for name, param in [("linear", None), ("conv1d", None), ("conv_transpose2d", None), ("sigmoid", None), ("tanh", None),
                        ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu", None)]:
        gains[f"{name}/{param}"] = nn.init.calculate_gain(name, param)
    fans = {str(s): list(nn.init._calculate_fan_in_and_fan_out(torch.empty(*s))) for s in [(3, 4), (5, 2, 3), (6, 4, 3, 2), (2, 3, 1, 1, 4)]}
    errors = {}
    for label, call in [
        ("gain", lambda: nn.init.calculate_gain("swish")),
        ("slope", lambda: nn.init.calculate_gain("leaky_relu", "x")),
        ("fan", lambda: nn.init.xavier_uniform_(torch.empty(3))),
        ("mode", lambda: nn.init.kaiming_normal_(torch.empty(3, 3), mode="fan_avg")),
        ("eye", lambda: nn.init.eye_(torch.empty(2, 2, 2))),
        ("dirac", lambda: nn.init.dirac_(torch.empty(2, 2))),
    ]:
        try:
            call()
            errors[label] = None
        except Exception as e:  # noqa: BLE001 - recording torch's message
            errors[label] = [type(e).__name__, str(e)]
    torch.manual_seed(0)
    bounds = {}
    for label, build in [
        ("linear", lambda: nn.Linear(30, 20)),
        ("conv2d", lambda: nn.Conv2d(4, 6, 3)),
        ("conv1d", lambda: nn.Conv1d(5, 4, 2)),
        ("conv_transpose2d", lambda: nn.ConvTranspose2d(4, 6, 3)),
        ("lstm", lambda: nn.LSTM(7, 9)),
        ("gru_cell", lambda: nn.GRUCell(5, 8)),
        ("mha", lambda: nn.MultiheadAttention(8, 2)),
    ]:
        acc = {}
        for _ in range(200):
            for n, p in build().named_parameters():
                acc[n] = max(acc.get(n, 0.0), float(p.detach().abs().max()))
        bounds[label] = acc
    _write_json("init.json", {"torch": torch.__version__, "gains": gains, "fans": fans, "errors": errors, "max_abs": bounds})


def data() -> None:
    """default_collate's batches and the batches of deterministic loaders."""
    import surface_data_cases as dc
    from torch.utils.data import default_collate

    collate = {}
    for name, batch in dc.collate_cases(torch).items():
        collate[name] = dc.describe(default_collate(batch))
    loaders = {}
    for name, loader in dc.loader_cases(torch):
        loaders[name] = {"len": len(loader) if name not in ("iterable", "iterable_drop_last") else None,
                         "batches": [dc.describe(b) for b in loader]}
    _write_json("data.json", {"torch": torch.__version__, "collate": collate, "loaders": loaders,
                              "distributed": dc.distributed_cases(torch)})


def ports() -> None:
    """The six ported programs (tests/ports/) run on torch through the
    harness: their results, torch's initial weights and every random draw."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "ports"))
    import harness

    arrays, results = {}, {}
    for name in harness.NAMES:
        run = harness.Run(torch, record=True, prefix=f"{name}/")
        harness.DRIVERS[name](torch, run)
        arrays.update(run.arrays)
        results[name] = run.results
    _save_npz("ports.npz", arrays)
    _write_json("ports.json", {"torch": torch.__version__, "results": results})


def sweep_ports() -> None:
    """The sweep's ported programs (tests/ports/sweep_drivers.py) run on
    torch: their results, initial weights and random draws."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "ports"))
    import harness
    import sweep_drivers

    arrays, results = {}, {}
    for name in sweep_drivers.SWEEP_PORTS:
        torch.manual_seed(0)
        run = harness.Run(torch, record=True, prefix=f"{name}/")
        with contextlib.redirect_stdout(io.StringIO()):
            sweep_drivers.drive(name, torch, run)
        arrays.update(run.arrays)
        results[name] = run.results
    _save_npz("sweep_ports.npz", arrays)
    _write_json("sweep_ports.json", {"torch": torch.__version__, "results": results})


def runtime() -> None:
    """finfo/iinfo of the dtypes programs name, and torch.Size's behaviour."""
    fi = {}
    for name in ["float32", "float16", "bfloat16", "float64"]:
        f = torch.finfo(getattr(torch, name))
        fi[name] = {"repr": repr(f), "values": [f.bits, f.eps, f.max, f.min, f.tiny, f.resolution, f.smallest_normal]}
    ii = {}
    for name in ["int64", "int32", "int16", "int8", "uint8"]:
        i = torch.iinfo(getattr(torch, name))
        ii[name] = {"repr": repr(i), "values": [i.bits, i.max, i.min]}
    _write_json("runtime.json", {"torch": torch.__version__, "finfo": fi, "iinfo": ii, "size_numel": torch.Size([2, 3, 4]).numel()})


def breadth() -> None:
    """The rest of torch.nn (tests/breadth_layer_cases.py): layers and
    losses as the layers and losses sections record them, into
    breadth_layers.npz and breadth_losses.npz; the optimizers ASGD, Rprop
    and LBFGS into breadth_optim.npz (tests/breadth_optim_cases.py)."""
    import breadth_layer_cases as bc

    layers(bc.LAYER_CASES, "breadth_layers.npz")
    losses(bc.LOSS_CASES, "breadth_losses.npz")
    breadth_optim()


def breadth_optim() -> None:
    import breadth_optim_cases as oc

    arrays = oc.inputs()
    for name, cls_name, kwargs in oc.OPTIM_CASES:
        params = [torch.tensor(arrays[f"init/{i}"], requires_grad=True) for i in range(len(oc.SHAPES))]
        opt = getattr(torch.optim, cls_name)(params, **kwargs)
        for s in range(oc.STEPS):
            if cls_name == "LBFGS":
                def closure():
                    opt.zero_grad()
                    loss = oc.objective(torch, params)
                    loss.backward()
                    return loss
                arrays[f"{name}/{s}/loss"] = np.asarray(opt.step(closure).detach().numpy())
            else:
                for i, p in enumerate(params):
                    p.grad = torch.tensor(arrays[f"grad/{s}/{i}"])
                opt.step()
            for i, p in enumerate(params):
                arrays[f"{name}/{s}/param/{i}"] = p.detach().numpy().copy()
                for key, value in opt.state[p].items():
                    if torch.is_tensor(value) and value.shape == p.shape:
                        arrays[f"{name}/{s}/{key}/{i}"] = value.detach().numpy().copy()
    _save_npz("breadth_optim.npz", arrays)


def activations() -> None:
    """The activation modules' printouts, parameters, outputs (eval mode)
    and parameter gradients (tests/activation_modules.py)."""
    import activation_modules as am

    out = {}
    for name, build in am.MODULES.items():
        torch.manual_seed(0)
        m = build(torch.nn).eval()
        x = torch.from_numpy(am.module_input())
        if name == "Sequential":
            with torch.no_grad():
                for i, p in enumerate(m.parameters()):
                    p.copy_(torch.from_numpy(am.weights(tuple(p.shape)) * (0.5 if i else 1.0)))
        y = m(x.clone())
        entry = {"repr": repr(m), "params": {n: [list(p.shape), p.detach().numpy().tolist()] for n, p in m.named_parameters()}}
        entry["output"] = [list(y.shape), y.detach().numpy().tolist()]
        if y.requires_grad:
            (y * torch.from_numpy(am.weights(tuple(y.shape)))).sum().backward()
            entry["grads"] = {n: p.grad.numpy().tolist() for n, p in m.named_parameters()}
        out[name] = entry
    _write_json("activations.json", {"torch": torch.__version__, "modules": out})


SECTIONS = {"runtime": runtime, "structure": structure, "layers": layers, "losses": losses, "optim": optim, "schedules": schedules, "init": init,
            "data": data, "ports": ports, "breadth": breadth, "activations": activations,
            "sweep_ports": sweep_ports}


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
