"""torch.jit's decorators and entry points as a library without a compiler
answers them: ``script`` and ``trace`` return the function or module
unchanged (onemodel runs eagerly, with the same results), the markers
(``ignore``, ``unused``, ``export``) return what they decorate; saving or
loading a compiled program raises."""

from __future__ import annotations


def script(obj=None, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    return obj


def trace(func, example_inputs=None, *args, **kwargs):
    return func


def ignore(drop=False, **kwargs):
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False


def save(m, f, _extra_files=None):
    raise RuntimeError("onemodel.jit.save: onemodel has no TorchScript; save the state_dict with onemodel.save")


def load(f, map_location=None, _extra_files=None):
    raise RuntimeError("onemodel.jit.load: onemodel has no TorchScript; build the module and load its state_dict")


class ScriptModule:
    """Exists so isinstance checks work; nothing is ever a ScriptModule."""


__all__ = ["script", "trace", "ignore", "unused", "export", "is_scripting", "is_tracing", "save", "load", "ScriptModule"]
