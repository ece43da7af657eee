"""Data-parallel training on a local Ray cluster gives the bits of one
process: engine models (an MLP, the CRNN with conv, LSTM and CTC, a model
with a tied weight) for W = 1, 2, 3 workers, the recognizer for W = 1, 2, 3
at several thread counts and kernel paths, a worker killed in the middle of
a step, and the refusals. One local cluster (127.0.0.1 only) serves the
module and is shut down at its end; every step has a timeout, so nothing
here can hang."""

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="needs the distributed extra: pip install 'onemodel[distributed]'")

import onemodel as om
from onemodel.distributed import DataParallel, DistributedTrainer, connect, disconnect
from onemodel.recognizer import CrnnV0, CrnnV0Config, Trainer

import distributed_models as dm

TIMEOUT = 300  # seconds per step: far above a step here (< 5 s), so only a hang trips it


@pytest.fixture(scope="module", autouse=True)
def cluster():
    ray.cloudpickle.register_pickle_by_value(dm)
    connect(num_cpus=8)
    try:
        yield
    finally:
        disconnect()
        ray.cloudpickle.unregister_pickle_by_value(dm)


def test_the_local_cluster_listens_on_the_loopback_only():
    assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}


def _run(make, loss_fn, batches, micro_batches, workers, **kw):
    with DataParallel(make, loss_fn, dm.adamw, micro_batches=micro_batches, workers=workers, threads=1,
                      timeout=TIMEOUT, **kw) as dp:
        losses = [dp.step(b) for b in batches]
        return dm.state_bytes(dp.model, dp.optimizer), losses, dp.computed(), dp


def _assert_each_worker_computed_its_own_micro_batches(computed, workers, micro_batches, steps):
    from onemodel.distributed.plan import even_bounds

    expected = [list(range(a, b)) for a, b in even_bounds(micro_batches, workers)]
    for rank, log in enumerate(computed):
        assert len(log) == (steps if expected[rank] else 0)
        for _token, _round, parts in log:
            assert parts == expected[rank]  # its block only, never the whole batch


@pytest.mark.parametrize("workers,mode", [(1, "exact"), (2, "exact"), (3, "exact"), (2, "fast")])
def test_mlp_equals_gradient_accumulation_in_one_process(workers, mode):
    om.compute.set_mode(mode)
    make, batches = dm.build(dm.MLP), dm.classify_batches(3)
    model, opt, ref_losses = dm.one_process(make, dm.classify, batches, 4)
    got, losses, computed, _ = _run(make, dm.classify, batches, 4, workers)
    assert got == dm.state_bytes(model, opt)  # parameters, gradients, AdamW state
    assert losses == ref_losses
    _assert_each_worker_computed_its_own_micro_batches(computed, workers, 4, 3)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_crnn_with_lstm_and_ctc_equals_one_process(workers):
    om.compute.set_mode("exact")
    make, batches = dm.build(dm.CRNN), dm.ctc_batches(2)
    model, opt, ref_losses = dm.one_process(make, dm.ctc, batches, 3)
    got, losses, computed, _ = _run(make, dm.ctc, batches, 3, workers)
    assert got == dm.state_bytes(model, opt)
    assert losses == ref_losses
    _assert_each_worker_computed_its_own_micro_batches(computed, workers, 3, 2)


def test_a_tied_weight_and_rounds_of_one_micro_batch():
    om.compute.set_mode("exact")
    make, batches = dm.build(dm.Tied), dm.classify_batches(2, features=6, classes=3)
    model, opt, _ = dm.one_process(make, dm.classify, batches, 5)
    got, _, computed, _ = _run(make, dm.classify, batches, 5, 2, micro_batches_per_worker=1)
    assert got == dm.state_bytes(model, opt)
    # Rounds: parts 0|1, 2|3, 4 — a worker holds one micro-batch at a time.
    assert [[p for _, _, p in log] for log in computed] == [[[0], [2], [4]] * 2, [[1], [3]] * 2]


def test_a_worker_killed_in_the_middle_of_a_step_is_replaced_and_the_step_recomputed():
    om.compute.set_mode("exact")
    make, batches = dm.build(dm.MLP), dm.classify_batches(3)
    model, opt, _ = dm.one_process(make, dm.classify, batches, 4)
    lines = []
    with DataParallel(make, dm.classify, dm.adamw, micro_batches=4, workers=3, threads=1, timeout=TIMEOUT,
                      log=lines.append) as dp:
        dp.step(batches[0])
        victim = dp.workers[1]["pid"]

        def kill_once():
            dp.runner.after_submit = None  # the recomputed attempt runs undisturbed
            os.kill(victim, signal.SIGKILL)

        dp.runner.after_submit = kill_once
        dp.step(batches[1])
        dp.step(batches[2])
        assert dp.cluster.replacements == 1
        assert dp.workers[1]["pid"] != victim
        assert dm.state_bytes(dp.model, dp.optimizer) == dm.state_bytes(model, opt)
    assert len(lines) == 1 and f"pid {victim}" in lines[0] and "computed again" in lines[0]


def test_weights_relayed_machine_to_machine_give_the_same_bits():
    """Every worker told it is on a machine of its own: each relays the
    weights to the next (the path a multi-machine cluster takes), and the
    bits are one process's."""
    om.compute.set_mode("exact")
    make, batches = dm.build(dm.MLP), dm.classify_batches(2)
    model, opt, _ = dm.one_process(make, dm.classify, batches, 3)
    with DataParallel(make, dm.classify, dm.adamw, micro_batches=3, workers=3, threads=1, timeout=TIMEOUT,
                      slice_elems=500) as dp:
        for i, info in enumerate(dp.cluster.infos):
            info["node"] = f"machine {i}"
        for b in batches:
            dp.step(b)
        relayed = ray.get([a.relayed.remote() for a in dp.cluster.actors])
        slices = len(dp.runner.last_slices)
        assert dm.state_bytes(dp.model, dp.optimizer) == dm.state_bytes(model, opt)
    assert slices > 1 and relayed == [slices * len(batches)] * 3


def test_exact_mode_allows_mixed_kernel_paths_and_fast_mode_refuses_them():
    make, batches = dm.build(dm.MLP), dm.classify_batches(2)
    om.compute.set_mode("exact")
    model, opt, _ = dm.one_process(make, dm.classify, batches, 3)
    got, *_ = _run(make, dm.classify, batches, 3, 3, _worker_kernel_paths=["scalar", None, "scalar"])
    assert got == dm.state_bytes(model, opt)
    if om.compute.kernel_path() == "scalar":
        pytest.skip("this machine's best path is scalar: no mix to refuse")
    om.compute.set_mode("fast")
    with pytest.raises(ValueError, match="kernel paths must agree"):
        _run(make, dm.classify, batches, 3, 2, _worker_kernel_paths=["scalar", None])
    model, opt, _ = dm.one_process(make, dm.classify, batches, 3)
    got, _, _, dp = _run(make, dm.classify, batches, 3, 2, _worker_kernel_paths=["scalar", None], kernel_path="common")
    # 'common' forced the best path every worker's CPU has, on the driver too.
    assert [w["kernel_path"] for w in dp.workers] == [om.compute.kernel_path()] * 2
    assert got == dm.state_bytes(model, opt)


@pytest.mark.parametrize("cls,msg", [(dm.WithDropout, "drew from onemodel's default generator"),
                                     (dm.WithBatchNorm, r"changed buffers \['bn.running_mean'")])
def test_models_whose_forward_draws_or_writes_buffers_are_refused(cls, msg):
    with pytest.raises(ValueError, match=msg):
        _run(dm.build(cls), dm.classify, dm.classify_batches(1), 2, 2)


def _recognizer():
    cfg = CrnnV0Config(channels=(8, 16, 24), hidden=24, charset="0123456789 ")
    return Trainer(CrnnV0(cfg, seed=3), lr=1e-3, clip=1.0, weight_decay=0.05)


def _line_batches(steps=3):
    rng = np.random.default_rng(1)
    widths = [100, 64, 37, 90, 50]
    return [([rng.random((32, w)).astype(np.float32) for w in widths], ["123", "42", "7", "9 9", "0"])
            for _ in range(steps)]


def _trainer_bytes(tr):
    m, v = tr._core.adam_state(tr.model._core)
    return ([a.tobytes() for a in tr.model.state_dict().values()], [a.tobytes() for a in m],
            [a.tobytes() for a in v], tr.step_count)


@pytest.mark.parametrize("workers,threads,per_worker,paths", [
    (1, 1, None, None), (2, 2, None, None), (3, 1, None, ["scalar", None, "v128"]), (3, 1, 1, None)])
def test_recognizer_on_the_cluster_equals_trainer_step(workers, threads, per_worker, paths):
    batches = _line_batches()
    ref = _recognizer()
    ref_out = [ref.step(im, t) for im, t in batches]
    avail = om.compute.available_kernel_paths()
    paths = None if paths is None else [p if p in avail or p is None else None for p in paths]
    # Rounds of one line each also cut the gradient into 7-ish slices.
    with DistributedTrainer(_recognizer(), workers=workers, threads=threads, lines_per_worker=per_worker,
                            timeout=TIMEOUT, kernel_path=paths, slice_elems=None if per_worker is None else 5000) as dt:
        out = [dt.step(im, t) for im, t in batches]
        assert _trainer_bytes(dt.trainer) == _trainer_bytes(ref)
        assert out == ref_out
        loss, grads = dt.gradients(*batches[0])
        ref_loss, ref_grads = ref.gradients(*batches[0])
        assert loss == ref_loss and all(grads[k].tobytes() == ref_grads[k].tobytes() for k in grads)
        blocks = dt.runner.last_blocks
    lines = [i for _, ls in blocks for i in ls]
    assert lines == list(range(5))  # each line computed once, in order over the blocks
    assert len({w for w, _ in blocks}) == min(workers, 5)


def test_missing_ray_names_the_extra():
    code = ("import sys; sys.modules['ray'] = None\n"
            "from onemodel.distributed import DataParallel\n"
            "try:\n    DataParallel(lambda: None, None, None, micro_batches=1, workers=1)\n"
            "except ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "pip install 'onemodel[distributed]'" in out.stdout, out.stderr
