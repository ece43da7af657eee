"""Process-wide switches that torch programs set, mapped onto onemodel:
seeds, grad/inference modes, threads, default dtype and device, matmul
precision and determinism flags, ``compile``.

onemodel computes in float32 on the CPU and is deterministic by
construction (docs/engine.md): the precision and determinism switches are
accepted and recorded so programs run unchanged, and change nothing.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

from . import compute
from .grad_mode import _GradModeContext, is_grad_enabled

if TYPE_CHECKING:
    from ._device import device
    from .tensor import Tensor, dtype

_state = {"matmul_precision": "highest", "deterministic": False, "deterministic_warn_only": False, "interop_threads": 1}


# -- seeds -------------------------------------------------------------------------------

def seed() -> int:
    """Seed the default generator from the operating system's entropy and
    return the seed (torch.seed)."""
    from .creation import default_generator

    s = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
    default_generator.manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    from .creation import default_generator

    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state as an int64 tensor (pass it to
    set_rng_state). Its layout is onemodel's, not torch's ByteTensor."""
    from .creation import default_generator, tensor

    return tensor(list(default_generator.get_state()))


def set_rng_state(new_state) -> None:
    from .creation import default_generator

    values = new_state.tolist() if hasattr(new_state, "tolist") else list(new_state)
    default_generator.set_state(tuple(int(v) for v in values))


# -- grad modes -----------------------------------------------------------------------------

class inference_mode(_GradModeContext):
    """``with onemodel.inference_mode():`` or ``@onemodel.inference_mode()``:
    no recording, as no_grad (onemodel has no separate inference tensors).
    ``inference_mode(False)`` leaves recording as it is."""

    def __init__(self, mode: bool = True) -> None:
        if callable(mode) and not isinstance(mode, bool):
            # Used as a bare decorator: @inference_mode
            self._mode = True
            self._wrapped = mode
            functools.update_wrapper(self, mode)
            return
        self._mode = bool(mode)
        self._wrapped = None

    def __enter__(self):
        self._prev = is_grad_enabled()
        if self._mode:
            from .grad_mode import _set_enabled

            _set_enabled(False)
        return self

    def __exit__(self, *exc):
        from .grad_mode import _set_enabled

        _set_enabled(self._prev)
        return False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._wrapped is not None:
            with inference_mode(True):
                return self._wrapped(*args, **kwargs)
        func = args[0]
        mode = self._mode

        @functools.wraps(func)
        def wrapper(*a, **k):
            with inference_mode(mode):
                return func(*a, **k)

        return wrapper


def is_inference_mode_enabled() -> bool:
    """onemodel has no inference tensors: always False."""
    return False


# -- threads ---------------------------------------------------------------------------------

def set_num_threads(n: int) -> None:
    """The kernels' thread count (onemodel.compute.set_threads): threads
    change speed only, never results."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"set_num_threads: expected a positive int, got {n!r}")
    compute.set_threads(n)


def get_num_threads() -> int:
    return compute.get_threads()


def set_num_interop_threads(n: int) -> None:
    """Accepted and recorded; onemodel runs one operator at a time."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"set_num_interop_threads: expected a positive int, got {n!r}")
    _state["interop_threads"] = n


def get_num_interop_threads() -> int:
    return _state["interop_threads"]


# -- dtypes and devices ----------------------------------------------------------------------

def set_default_dtype(d) -> None:
    """Only float32 (onemodel's one floating dtype); anything else raises."""
    from .tensor import as_dtype, float32

    dt = as_dtype(d, "set_default_dtype")
    if dt is not float32:
        raise TypeError(f"set_default_dtype: only floating point types are supported as the default type; onemodel's is float32, got {dt!r}")


def get_default_dtype() -> dtype:
    from .tensor import float32

    return float32


def set_default_device(device) -> None:
    """Only the CPU (or None)."""
    from ._device import as_device

    as_device(device, "set_default_device")


def get_default_device() -> device:
    from ._device import CPU

    return CPU


def is_floating_point(input) -> bool:
    from .tensor import Tensor
    from . import _shape
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("is_floating_point", input)
    return input.is_floating_point()


def numel(input) -> int:
    from .tensor import Tensor
    from . import _shape
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("numel", input)
    return input.numel()


# -- precision and determinism flags -----------------------------------------------------------

def set_float32_matmul_precision(precision: str) -> None:
    """Accepted ('highest', 'high', 'medium') and recorded; onemodel's
    products are always full float32 (no TF32 or bfloat16 passes)."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision {precision!r}: expected 'highest', 'high' or 'medium'")
    _state["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    return _state["matmul_precision"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Accepted and recorded; every onemodel operator is deterministic."""
    _state["deterministic"] = bool(mode)
    _state["deterministic_warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["deterministic_warn_only"]


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="inductor", mode=None, options=None, disable: bool = False):
    """torch.compile's signature; returns the model (or function) unchanged:
    onemodel runs eagerly."""
    if model is None:
        return lambda m: m
    return model


__all__ = [
    "seed", "initial_seed", "get_rng_state", "set_rng_state", "inference_mode", "is_inference_mode_enabled", "set_num_threads",
    "get_num_threads", "set_num_interop_threads", "get_num_interop_threads", "set_default_dtype", "get_default_dtype",
    "set_default_device", "get_default_device", "is_floating_point", "numel", "set_float32_matmul_precision",
    "get_float32_matmul_precision", "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "compile",
]

