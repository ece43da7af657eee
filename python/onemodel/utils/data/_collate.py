"""torch's default_collate and default_convert.

default_collate turns a list of samples into a batch, by the type of the
first sample: tensors are stacked along a new first dimension, NumPy arrays
and NumPy scalars become tensors and are stacked, Python floats a float32
tensor (torch: float64, which onemodel does not compute in), ints an int64
tensor, bools a bool tensor, strings and bytes stay a list, mappings are
collated per key, named tuples per field, and other sequences per position
(a tuple sample gives a list, as torch's)."""

from __future__ import annotations

import collections.abc
import re

import numpy as np

from ...tensor import Tensor

__all__ = ["default_collate", "default_convert", "collate"]

_np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def default_convert(data):
    """NumPy arrays (and scalars) to tensors, through mappings and
    sequences; everything else unchanged (the collate of batch_size=None)."""
    from ...creation import as_tensor

    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and _np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def _stack(batch: list) -> Tensor:
    from ...ops.join import stack

    shape = batch[0].shape
    for t in batch:
        if t.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {tuple(shape)} at entry 0 and {tuple(t.shape)} at another entry")
    return stack(batch, 0)


def default_collate(batch):
    """Collate a list of samples into a batch (see the module docstring)."""
    from ...creation import as_tensor, tensor

    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, Tensor):
        return _stack(batch)
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ in ("ndarray", "memmap"):
            if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
                raise TypeError(default_collate_err_msg_format.format(elem.dtype))
            return default_collate([as_tensor(np.asarray(b)) for b in batch])
        if elem.shape == ():  # NumPy scalars
            return as_tensor(np.asarray(batch))
    if isinstance(elem, bool):
        return tensor(batch)
    if isinstance(elem, float):
        return tensor(batch)
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            return elem_type({key: default_collate([d[key] for d in batch]) for key in elem})
        except TypeError:
            return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            return elem_type([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate(batch, *, collate_fn_map=None):
    """torch.utils.data._utils.collate.collate: default_collate, with
    per-type overrides from ``collate_fn_map`` (type -> fn(batch, *,
    collate_fn_map))."""
    if collate_fn_map:
        elem_type = type(batch[0])
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for t, fn in collate_fn_map.items():
            if isinstance(batch[0], t):
                return fn(batch, collate_fn_map=collate_fn_map)
    return default_collate(batch)
