"""What weight_norm and spectral_norm share: a forward pre-hook per
(module, parameter name) that recomputes the parameter, at most one of a
kind per name, and its removal by name (torch's errors)."""

from __future__ import annotations

from typing import Any


def _hooks_named(module, kind: type, name: str):
    """(key, hook) of `module`'s forward pre-hooks of class `kind` on `name`."""
    return [(key, hook) for key, hook in module._forward_pre_hooks.items() if isinstance(hook, kind) and hook.name == name]


def refuse_second(module, kind: type, name: str, what: str) -> None:
    if _hooks_named(module, kind, name):
        raise RuntimeError(f"Cannot register two {what} hooks on the same parameter {name}")


def remove_hook(module, kind: type, name: str, what: str) -> Any:
    """Undo the reparametrisation of `name` (the hook's remove) and drop
    the hook; ValueError if there is none."""
    found = _hooks_named(module, kind, name)
    if not found:
        raise ValueError(f"{what} of '{name}' not found in {module}")
    key, hook = found[0]
    hook.remove(module)
    del module._forward_pre_hooks[key]
    return module
