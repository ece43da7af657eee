"""The pieces of onemodel.distributed that need no Ray: the cut of a batch,
the schedule of parts over workers, the engine's emission chain and the
recognizer's line chain, each against one process computing the whole
batch."""

import numpy as np
import pytest

import onemodel as om
from onemodel.distributed import emissions, plan, split_batch
from onemodel.recognizer import CrnnV0, CrnnV0Config, Trainer

import distributed_models as dm


def test_split_batch_uses_tensor_split_boundaries():
    # torch.tensor_split(range(10), 4) -> sizes 3, 3, 2, 2 (the larger first).
    x = np.arange(10)
    parts = split_batch(x, 4)
    assert [p.tolist() for p in parts] == [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]
    pairs = split_batch((x, x * 2), 3)
    assert [type(p) for p in pairs] == [tuple] * 3
    assert [p[1].tolist() for p in pairs] == [[0, 2, 4, 6], [8, 10, 12], [14, 16, 18]]
    t = om.tensor(np.arange(6, dtype=np.float32))
    assert [p.shape for p in split_batch([t], 2)[0]] == [(3,)]


@pytest.mark.parametrize("bad,msg", [((np.zeros(3), np.zeros(4)), "different first dimensions"),
                                     (np.zeros(3), "between 1 and the batch's 3 rows")])
def test_split_batch_errors(bad, msg):
    with pytest.raises(ValueError, match=msg):
        split_batch(bad, 5 if not isinstance(bad, tuple) else 2)


@pytest.mark.parametrize("parts,workers,per", [(10, 3, None), (10, 3, 1), (10, 3, 2), (2, 4, None), (7, 1, 3)])
def test_schedule_covers_the_parts_in_order_with_the_memory_bound(parts, workers, per):
    rounds = plan.schedule(parts, workers, per)
    flat = [i for blocks in rounds for b in blocks for i in range(b.start, b.stop)]
    assert flat == list(range(parts))  # every part once, in part order
    for blocks in rounds:
        assert [b.worker for b in blocks] == sorted({b.worker for b in blocks})
        if per is not None:
            assert all(b.stop - b.start <= per for b in blocks)


def test_weights_reach_each_machine_once():
    # All workers on the driver's machine: every one reads the driver's copy.
    assert plan.weight_sources("d", ["d", "d", "d"]) == [("read", None)] * 3
    # Machines a, a, b, b, c: the first worker of each further machine relays
    # the copy of the machine before it; the others read their machine's.
    assert plan.weight_sources("d", ["a", "a", "b", "b", "c"]) == [
        ("relay", None), ("read", 0), ("relay", 0), ("read", 2), ("relay", 2)]
    # A worker on the driver's machine after others: the driver's copy.
    assert plan.weight_sources("d", ["a", "d", "a"]) == [("relay", None), ("read", None), ("read", 0)]


@pytest.mark.parametrize("workers", [1, 2, 3, 4, 8, 32, 128])
def test_the_default_slice_count_is_the_fastest_pipeline(workers):
    p = 1_012_203  # the default crnn-v0's gradient
    cost = lambda n: (workers + n - 1) * (1e-3 + 4 * p / (n * 1.25e9))  # noqa: E731 (the formula, written out)
    best = min(range(1, 2000), key=cost)
    assert plan.slice_count(p, workers) == best
    assert len(plan.slices(p, None, workers)) == best


def test_slices_cover_the_vector():
    assert plan.slices(10, 4) == [(0, 4), (4, 7), (7, 10)]
    assert plan.slices(0, 4) == [(0, 0)]


def _micro_batch_emissions(make, loss_fn, mbs):
    model = make()
    params = list(model.parameters())
    out = []
    for mb in mbs:
        for p in params:
            p.grad = None
        with emissions.capture(params) as rec:
            loss_fn(model, mb).backward()
        out.append(rec)
    return params, out


@pytest.mark.parametrize("mode", ["fast", "exact"])
@pytest.mark.parametrize("cls", [dm.MLP, dm.Tied])
def test_emission_chain_equals_gradient_accumulation(mode, cls):
    om.compute.set_mode(mode)
    make = dm.build(cls)
    rng = np.random.default_rng(3)
    feats = 8 if cls is dm.MLP else 6
    batch = (rng.standard_normal((8, feats)).astype(np.float32) * 3, rng.integers(0, 3, 8))
    mbs = split_batch(batch, 4)
    ref = make()
    for mb in mbs:
        dm.classify(ref, mb).backward()
    params, parts = _micro_batch_emissions(make, dm.classify, mbs)
    layout = plan.flat_layout(p.numel() for p in params)
    total = sum(n for _, n in layout)
    # Cut the vector and the parts at arbitrary places: three "workers"
    # holding parts [0], [1, 2], [3], slices of 37 elements.
    flat = np.empty(total, np.float32)
    for lo, hi in plan.slices(total, 37):
        acc, started = np.zeros(hi - lo, np.float32), np.zeros(len(params), bool)
        for held in (parts[:1], parts[1:3], parts[3:]):
            emissions.chain(acc, started, lo, layout, held)
        flat[lo:hi] = acc
    for p, (off, n) in zip(ref.parameters(), layout):
        assert flat[off:off + n].tobytes() == p.grad.numpy().reshape(-1).tobytes()
    if cls is dm.Tied:
        # The tied weight gets two emissions per micro-batch; adding each
        # micro-batch's own sum instead (g0 + (e1a + e1b)) is another order,
        # and on this data it gives other bits: the test can tell.
        i = [n for n, _ in ref.named_parameters()].index("fc.weight")
        assert all(len(part[i]) == 2 for part in parts)
        naive = parts[0][i][0] + parts[0][i][1]
        for part in parts[1:]:
            naive = naive + (part[i][0] + part[i][1])
        assert naive.tobytes() != ref.fc.weight.grad.numpy().reshape(-1).tobytes()


def test_chain_order_matters_on_this_data():
    """A witness for the tests of the distributed step: on the MLP data the
    micro-batch gradients summed in another order (a tree) give other bits
    than the chain, so a reduction in the wrong order cannot pass them."""
    om.compute.set_mode("exact")
    batch = dm.classify_batches(1)[0]
    params, parts = _micro_batch_emissions(dm.build(dm.MLP), dm.classify, split_batch(batch, 4))
    i = 0  # fc1.weight
    g = [part[i][0] for part in parts]
    chain = ((g[0] + g[1]) + g[2]) + g[3]
    tree = (g[0] + g[1]) + (g[2] + g[3])
    assert chain.tobytes() != tree.tobytes()


def test_capture_leaves_the_gradients_as_backward_makes_them():
    model = dm.build(dm.MLP)()
    x, y = dm.classify_batches(1)[0]
    dm.classify(model, (x, y)).backward()
    ref = [p.grad.numpy().copy() for p in model.parameters()]
    for p in model.parameters():
        p.grad = None
    with emissions.capture(list(model.parameters())) as rec:
        dm.classify(model, (x, y)).backward()
    assert sorted(rec) == list(range(6))
    for p, r in zip(model.parameters(), ref):
        assert p.grad.numpy().tobytes() == r.tobytes()


def _lines(widths, seed=5):
    rng = np.random.default_rng(seed)
    texts = ["123", "42", "7", "9 9", "0", "55"]
    return [rng.random((32, w)).astype(np.float32) for w in widths], texts[:len(widths)]


def test_recognizer_lines_computed_apart_chain_to_the_batch_gradient():
    """Lines 0-1, 2-3 and 4 computed by three trainer cores (each told the
    batch has 5 lines) and chained in line order over slices give the bits
    of Trainer.gradients on the whole batch."""
    cfg = CrnnV0Config(channels=(8, 16, 24), hidden=24, charset="0123456789 ")
    model = CrnnV0(cfg, seed=11)
    images, texts = _lines([100, 64, 37, 90, 50])
    ref = Trainer(model)
    loss, grads = ref.gradients(images, texts)
    labels = [model.encode(t) for t in texts]
    cores = []
    for a, b in [(0, 2), (2, 4), (4, 5)]:
        tr = Trainer(model)
        losses = tr._core.compute_lines(model._core, images[a:b], labels[a:b], 5)
        assert losses == ref.last_line_losses[a:b].tolist()
        cores.append(tr._core)
    total = cores[0].flat_len()
    flat = np.empty(total, np.float32)
    for lo, hi in plan.slices(total, 1000):
        acc = np.empty(hi - lo, np.float32)
        for k, core in enumerate(cores):
            core.chain_lines(lo, acc, k == 0)
        flat[lo:hi] = acc
    check = Trainer(model)
    norm = check._core.set_flat_grads(flat)
    got = check._core.grads(model._core)
    for name, g in zip(model.parameter_names, got):
        assert g.tobytes() == grads[name].reshape(-1).tobytes(), name
    assert norm == ref._core.gradients(model._core, images, [model.encode(t) for t in texts])[0][2]


def test_recognizer_chain_errors():
    cfg = CrnnV0Config(channels=(8, 16, 24), hidden=24, charset="0123456789 ")
    model = CrnnV0(cfg, seed=1)
    tr = Trainer(model)
    with pytest.raises(ValueError, match="no lines were computed"):
        tr._core.chain_lines(0, np.zeros(4, np.float32), True)
    images, texts = _lines([40, 40])
    with pytest.raises(ValueError, match="cannot hold"):
        tr._core.compute_lines(model._core, images, [model.encode(t) for t in texts], 1)
    tr._core.compute_lines(model._core, images, [model.encode(t) for t in texts], 2)
    with pytest.raises(ValueError, match="outside"):
        tr._core.chain_lines(tr._core.flat_len() - 2, np.zeros(4, np.float32), True)
    with pytest.raises(ValueError, match="expected"):
        tr._core.set_flat_grads(np.zeros(3, np.float32))


def test_a_micro_batch_item_keeps_its_shape_and_dtype_on_the_wire():
    from onemodel.distributed.engine import _from_wire, _to_wire

    items = (om.tensor(2.5), [om.arange(6).reshape(2, 3).t(), om.tensor([True, False])], 7, "label")
    back = _from_wire(_to_wire(items))
    assert back[0].shape == () and back[0].item() == 2.5
    assert back[1][0].dtype == om.int64 and back[1][0].tolist() == [[0, 3], [1, 4], [2, 5]]
    assert back[1][1].dtype == om.bool and back[1][1].tolist() == [True, False]
    assert back[2:] == (7, "label")
