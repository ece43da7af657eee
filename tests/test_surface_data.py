"""onemodel.utils.data against torch 2.15 (testdata/surface/data.json):
default_collate's batches (tensors, NumPy arrays and scalars, numbers,
strings, tuples, lists, dicts, named tuples) and the batches of
deterministic loaders are torch's, except that Python floats collate to
float32 (torch: float64, a dtype onemodel does not compute in). Shuffled
orders come from onemodel's generator: the same for the same seed, and
the same with worker processes as without."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

import onemodel as om
from onemodel.utils import data
from surface_data_cases import collate_cases, describe, loader_cases

FIX = json.loads((Path(__file__).resolve().parent.parent / "testdata" / "surface" / "data.json").read_text())


@pytest.mark.parametrize("name", sorted(FIX["collate"]))
def test_default_collate_matches_torch(name):
    batch = collate_cases(om)[name]
    assert describe(data.default_collate(batch)) == FIX["collate"][name]


@pytest.mark.parametrize("name", sorted(FIX["loaders"]))
def test_loader_batches_match_torch(name):
    loader = dict(loader_cases(om))[name]
    want = FIX["loaders"][name]
    if want["len"] is not None:
        assert len(loader) == want["len"]
    assert [describe(b) for b in loader] == want["batches"]


def test_distributed_sampler_splits_as_torch():
    from surface_data_cases import distributed_cases

    assert distributed_cases(om) == FIX["distributed"]
    s = data.DistributedSampler(range(10), num_replicas=2, rank=1, seed=4)
    s.set_epoch(1)
    a = list(s)
    s.set_epoch(2)
    assert len(a) == 5 and a != list(s)
    with pytest.raises(ValueError, match="Invalid rank"):
        data.DistributedSampler(range(3), 2, 2)
    with pytest.raises(RuntimeError, match="no process group"):
        data.DistributedSampler(range(3))


def test_default_collate_refuses_what_torch_refuses():
    with pytest.raises(TypeError, match="batch must contain tensors"):
        data.default_collate([object(), object()])
    with pytest.raises(RuntimeError, match="equal size"):
        data.default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="equal size"):
        data.default_collate([om.ones(2), om.ones(3)])
    assert data.default_convert(np.ones(2, np.float32)).tolist() == [1.0, 1.0]


class Numbers(data.Dataset):
    """Module level, so spawned workers can unpickle it."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == 13 and getattr(self, "fail", False):
            raise KeyError("thirteen")
        return om.tensor([float(i)]), i


class Shards(data.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = data.get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


def _order(loader):
    return [int(i) for _, idx in loader for i in idx.tolist()]


def test_shuffle_is_a_function_of_the_seed():
    ds = Numbers(20)
    om.manual_seed(7)
    a = _order(data.DataLoader(ds, batch_size=6, shuffle=True))
    om.manual_seed(7)
    b = _order(data.DataLoader(ds, batch_size=6, shuffle=True))
    assert a == b and sorted(a) == list(range(20)) and a != list(range(20))
    g = om.Generator().manual_seed(3)
    c = _order(data.DataLoader(ds, batch_size=6, shuffle=True, generator=g))
    g.manual_seed(3)
    assert c == _order(data.DataLoader(ds, batch_size=6, shuffle=True, generator=g))


def test_workers_keep_the_order_and_seed_as_documented():
    ds = Numbers(23)
    g = om.Generator()
    g.manual_seed(11)
    single = [(x.tolist(), i.tolist()) for x, i in data.DataLoader(ds, batch_size=4, shuffle=True, generator=g)]
    g.manual_seed(11)
    multi = [(x.tolist(), i.tolist()) for x, i in data.DataLoader(ds, batch_size=4, shuffle=True, generator=g, num_workers=3)]
    assert single == multi

    seen = []

    def init(worker_id):
        info = data.get_worker_info()
        assert info.id == worker_id and info.num_workers == 2 and info.seed - worker_id == info.seed - info.id

    loader = data.DataLoader(ds, batch_size=5, num_workers=2, worker_init_fn=init, prefetch_factor=1)
    assert len(list(loader)) == 5 and data.get_worker_info() is None
    del seen


def test_iterable_dataset_with_workers_interleaves_as_torch():
    loader = data.DataLoader(Shards(10), batch_size=2, num_workers=2)
    # torch's order: worker 0's first batch, worker 1's first batch, ...
    assert [b.tolist() for b in loader] == [[0, 2], [1, 3], [4, 6], [5, 7], [8], [9]]


def test_persistent_workers_serve_several_epochs():
    loader = data.DataLoader(Numbers(9), batch_size=4, num_workers=2, persistent_workers=True)
    first = [i.tolist() for _, i in loader]
    workers = loader._workers
    second = [i.tolist() for _, i in loader]
    assert first == second == [[0, 1, 2, 3], [4, 5, 6, 7], [8]] and loader._workers is workers
    workers.shutdown()


def test_worker_errors_reach_the_main_process():
    ds = Numbers(20)
    ds.fail = True
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process"):
        list(data.DataLoader(ds, batch_size=4, num_workers=2))


def test_spawned_workers():
    loader = data.DataLoader(Numbers(6), batch_size=2, num_workers=2, multiprocessing_context="spawn")
    assert [i.tolist() for _, i in loader] == [[0, 1], [2, 3], [4, 5]]


def test_loader_argument_checks_are_torchs():
    ds = Numbers(4)
    cases = [
        (dict(num_workers=-1), "num_workers option should be non-negative"),
        (dict(prefetch_factor=2), "prefetch_factor option could only be specified in multiprocessing"),
        (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
        (dict(sampler=data.SequentialSampler(ds), shuffle=True), "sampler option is mutually exclusive with shuffle"),
        (dict(batch_sampler=data.BatchSampler(data.SequentialSampler(ds), 2, False), batch_size=3), "mutually exclusive"),
        (dict(batch_size=None, drop_last=True), "batch_size=None option disables auto-batching"),
        (dict(timeout=-1), "timeout option should be non-negative"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            data.DataLoader(ds, **kwargs)
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        data.DataLoader(Shards(3), shuffle=True)
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        data.BatchSampler(data.SequentialSampler(ds), 0, False)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        data.RandomSampler(ds, num_samples=0)


def test_datasets_and_splits():
    x, y = om.arange(12).reshape(6, 2).float(), om.arange(6)
    ds = data.TensorDataset(x, y)
    assert len(ds) == 6 and ds[2][0].tolist() == [4.0, 5.0] and ds[2][1].item() == 2
    with pytest.raises(ValueError, match="Size mismatch"):
        data.TensorDataset(x, om.arange(5))
    parts = data.random_split(ds, [0.5, 0.3, 0.2], generator=om.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [4, 1, 1]  # torch's: floors 3, 1, 1, the remainder to the first
    assert [len(p) for p in data.random_split(range(10), [0.33, 0.33, 0.34])] == [4, 3, 3]
    assert sorted(i for p in parts for i in p.indices) == list(range(6))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        data.random_split(ds, [2, 2])
    cat = data.ConcatDataset([ds, ds])
    assert len(cat) == 12 and cat[-1][1].item() == 5 and cat[7][1].item() == 1
    assert isinstance(ds + ds, data.ConcatDataset)
    stacked = data.StackDataset(ds, ds)
    assert stacked[1][0][1].item() == 1
    chain = data.ChainDataset([Shards(2), Shards(3)])
    assert list(chain) == [0, 1, 0, 1, 2]


def test_samplers():
    ds = Numbers(10)
    g = om.Generator().manual_seed(5)
    order = list(data.RandomSampler(ds, generator=g))
    assert sorted(order) == list(range(10))
    more = list(data.RandomSampler(ds, num_samples=25, generator=g))
    assert len(more) == 25 and sorted(more[:10]) == list(range(10))
    rep = list(data.RandomSampler(ds, replacement=True, num_samples=40, generator=g))
    assert len(rep) == 40 and all(0 <= i < 10 for i in rep)
    sub = list(data.SubsetRandomSampler([3, 5, 7], generator=g))
    assert sorted(sub) == [3, 5, 7]
    weights = [0.0, 1.0, 0.0, 3.0]
    w = list(data.WeightedRandomSampler(weights, 400, generator=g))
    assert set(w) <= {1, 3} and 250 < w.count(3) < 350
    w2 = list(data.WeightedRandomSampler(weights, 2, replacement=False, generator=g))
    assert sorted(w2) == [1, 3]
    with pytest.raises(RuntimeError, match="without replacement"):
        data.WeightedRandomSampler(weights, 3, replacement=False)
    assert list(data.BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(data.BatchSampler(range(7), 3, False)) == 3


def test_tensors_pickle_for_worker_transport():
    t = om.arange(6).reshape(2, 3).float()[:, 1:]
    back = pickle.loads(pickle.dumps(t))
    assert back.tolist() == t.tolist() and back.dtype is om.float32
