"""Data-loading cases shared by tools/surface_oracle.py (torch) and
tests/test_surface_data.py (onemodel): the batches default_collate makes
and what DataLoader yields for map-style and iterable datasets, in a form
both libraries' results can be compared in (``describe``)."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

Point = namedtuple("Point", ["x", "y"])


def collate_cases(lib):
    t = lib.tensor
    return {
        "tensors": [t([1.0, 2.0]), t([3.0, 4.0])],
        "ints": [1, 2, 3],
        "floats": [0.5, 1.5],
        "strings": ["a", "bc"],
        "numpy_arrays": [np.arange(3, dtype=np.float32), np.ones(3, dtype=np.float32)],
        "numpy_int_arrays": [np.arange(2, dtype=np.int64), np.arange(2, 4, dtype=np.int64)],
        "numpy_scalars": [np.float32(1.5), np.float32(2.5)],
        "tuples": [(t([1.0]), 0, "x"), (t([2.0]), 1, "y")],
        "lists": [[t([1.0]), 3], [t([2.0]), 4]],
        "dicts": [{"img": t([[1.0, 2.0]]), "label": 1}, {"img": t([[3.0, 4.0]]), "label": 0}],
        "nested": [{"a": (1, [2.0, 3.0])}, {"a": (4, [5.0, 6.0])}],
        "namedtuples": [Point(t([1.0]), 2), Point(t([3.0]), 4)],
    }


def describe(obj):
    """A JSON view: tensors as (shape, dtype kind, values); containers by type."""
    if hasattr(obj, "shape") and hasattr(obj, "dtype") and not isinstance(obj, np.ndarray):
        kind = "float" if obj.dtype.is_floating_point else "int"
        return {"tensor": list(obj.shape), "kind": kind, "values": np.asarray(obj.tolist()).reshape(-1).tolist()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return {"namedtuple": type(obj).__name__, "items": [describe(o) for o in obj]}
    if isinstance(obj, dict):
        return {"dict": {k: describe(v) for k, v in obj.items()}}
    if isinstance(obj, (list, tuple)):
        return {type(obj).__name__: [describe(o) for o in obj]}
    return {"value": obj}


def distributed_cases(lib):
    """Each rank's indices of a DistributedSampler without shuffling."""
    data = lib.utils.data
    out = {}
    for n, replicas, drop_last in [(10, 3, False), (10, 3, True), (2, 4, False), (9, 3, False)]:
        out[f"{n}_{replicas}_{drop_last}"] = [list(data.DistributedSampler(range(n), replicas, r, shuffle=False, drop_last=drop_last))
                                              for r in range(replicas)]
    return out


def loader_cases(lib):
    """(name, loader) pairs whose batches do not depend on random draws."""
    data = lib.utils.data
    x = lib.arange(20).reshape(10, 2).float()
    y = lib.arange(10)
    ds = data.TensorDataset(x, y)

    class Squares(data.Dataset):
        def __len__(self):
            return 7

        def __getitem__(self, i):
            return {"i": i, "sq": float(i * i)}

    class Stream(data.IterableDataset):
        def __iter__(self):
            return iter(range(11))

    return [
        ("tensor_dataset", data.DataLoader(ds, batch_size=4)),
        ("drop_last", data.DataLoader(ds, batch_size=4, drop_last=True)),
        ("no_batching", data.DataLoader(Squares(), batch_size=None)),
        ("dict_samples", data.DataLoader(Squares(), batch_size=3)),
        ("batch_sampler", data.DataLoader(ds, batch_sampler=data.BatchSampler(data.SequentialSampler(ds), 3, False))),
        ("subset", data.DataLoader(data.Subset(ds, [9, 0, 5, 5]), batch_size=2)),
        ("concat", data.DataLoader(data.ConcatDataset([Squares(), Squares()]), batch_size=5)),
        ("iterable", data.DataLoader(Stream(), batch_size=4)),
        ("iterable_drop_last", data.DataLoader(Stream(), batch_size=4, drop_last=True)),
        ("collate_fn", data.DataLoader(ds, batch_size=3, collate_fn=lambda b: len(b))),
    ]
