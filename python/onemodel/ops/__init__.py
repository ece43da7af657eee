"""The differentiable operators, grouped by family (one module each).

The Tensor methods that call them are declared in ``onemodel._methods``.
This package imports no submodule itself, so that those mixins can refer to
it while ``onemodel.tensor`` is being defined; a submodule is imported on
first attribute access (``onemodel`` imports all of them at start-up).
"""

from __future__ import annotations

import importlib


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
