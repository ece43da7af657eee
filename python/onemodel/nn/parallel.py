"""torch.nn.parallel's single-process names on a CPU-only library:
DataParallel and data_parallel run the module in this process (torch does
the same when no GPU is visible); naming GPU devices raises. Data-parallel
training over several processes with the bits of one is
onemodel.distributed's work."""

from __future__ import annotations

from typing import Any

from .._device import as_device
from .module import Module


def _check_devices(op: str, device_ids, output_device) -> None:
    for d in list(device_ids or []) + ([output_device] if output_device is not None else []):
        as_device(d if not isinstance(d, int) or isinstance(d, bool) else f"cuda:{d}", op)


class DataParallel(Module):
    """Wraps a module (``.module``; state-dict keys gain the ``module.``
    prefix, as torch's) and calls it on the CPU."""

    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        _check_devices("DataParallel", device_ids, output_device)
        self.module = module
        self.device_ids = []
        self.output_device = None
        self.dim = dim

    def forward(self, *inputs, **kwargs) -> Any:
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim: int = 0, module_kwargs=None):
    _check_devices("data_parallel", device_ids, output_device)
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return module(*inputs, **(module_kwargs or {}))


__all__ = ["DataParallel", "data_parallel"]
