"""Module: the base of layers, with torch's registration, traversal and
state-dict conventions (names, order, ``strict`` loading)."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ..grad_mode import no_grad
from ..tensor import Tensor
from .parameter import Parameter


class Module:
    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # -- registration -----------------------------------------------------------
    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError("Module.__init__() must be called before assigning attributes")
        for d in (self._parameters, self._buffers, self._modules):
            d.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            if key in d and name in d[key]:
                return d[key][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for d in (self._parameters, self._buffers, self._modules):
            if name in d:
                del d[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if param is None:
            self._parameters[name] = None
        else:
            self.__setattr__(name, param)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        self._buffers[name] = tensor
        if not persistent:
            self.__dict__.setdefault("_non_persistent", set()).add(name)

    def add_module(self, name: str, module: "Module | None") -> None:
        self._modules[name] = module

    # -- traversal -----------------------------------------------------------------
    def named_modules(self, prefix: str = ""):
        seen = set()
        stack = [(prefix, self)]
        while stack:
            name, m = stack.pop(0)
            if id(m) in seen:
                continue
            seen.add(id(m))
            yield name, m
            children = [(f"{name}.{k}" if name else k, v) for k, v in m._modules.items() if v is not None]
            stack[0:0] = children

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        for k, v in self._modules.items():
            if v is not None:
                yield k, v

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_parameters(self, prefix: str = "", recurse: bool = True):
        seen = set()
        mods = self.named_modules(prefix) if recurse else [(prefix, self)]
        for mname, m in mods:
            for k, p in m._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{mname}.{k}" if mname else k), p

    def parameters(self, recurse: bool = True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True):
        mods = self.named_modules(prefix) if recurse else [(prefix, self)]
        for mname, m in mods:
            for k, b in m._buffers.items():
                if b is not None:
                    yield (f"{mname}.{k}" if mname else k), b

    def buffers(self, recurse: bool = True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # -- modes -------------------------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        from ..autograd import zero_grad

        for p in self.parameters():
            if set_to_none:
                p.grad = None
            else:
                zero_grad(p)

    # -- state dict ----------------------------------------------------------------------
    def state_dict(self) -> "OrderedDict[str, Tensor]":
        out = OrderedDict()
        for mname, m in self.named_modules():
            for k, p in m._parameters.items():
                if p is not None:
                    out[f"{mname}.{k}" if mname else k] = p.detach()
            skip = m.__dict__.get("_non_persistent", set())
            for k, b in m._buffers.items():
                if b is not None and k not in skip:
                    out[f"{mname}.{k}" if mname else k] = b.detach()
        return out

    def load_state_dict(self, state_dict, strict: bool = True):
        """Copy values (Tensors or NumPy arrays, e.g. a torch state dict
        converted with ``{k: v.numpy()}``) into the parameters and buffers."""
        own = self.state_dict()
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise KeyError(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")
        from ..creation import tensor as make_tensor

        # Validate every shape before writing anything.
        staged = []
        for k, target in own.items():
            if k not in state_dict:
                continue
            v = state_dict[k]
            if not isinstance(v, Tensor):
                v = make_tensor(np.asarray(v), dtype=target.dtype)
            if tuple(v.shape) != tuple(target.shape):
                raise ValueError(f"load_state_dict: {k} has shape {tuple(v.shape)} in the state dict but {tuple(target.shape)} in the model")
            staged.append((target, v))
        with no_grad():
            for target, v in staged:
                target.copy_(v if v.dtype is target.dtype else make_tensor(v.numpy(force=True), dtype=target.dtype))
        return missing, unexpected

    # -- calling -------------------------------------------------------------------------
    def forward(self, *args, **kwargs):  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        if self._modules:
            lines[0] = f"{type(self).__name__}("
            if self.extra_repr():
                lines.append(f"  {self.extra_repr()}")
            for k, m in self._modules.items():
                sub = repr(m).replace("\n", "\n  ")
                lines.append(f"  ({k}): {sub}")
            lines.append(")")
            return "\n".join(lines)
        return lines[0] + ")"
