"""Module: the base of layers, with torch's registration, traversal,
conversion, hook and state-dict conventions (names, order, errors).

Registration follows torch.nn.Module's rules: assigning a Parameter
registers it, assigning a Module registers a child, assigning to a
registered buffer's name replaces the buffer, and assigning anything else
to a parameter's or child's name is a TypeError. Traversals deduplicate by
identity (a weight tied between two layers is one parameter).

One deliberate difference: ``load_state_dict`` checks every key and shape
before it copies anything, so a failing load leaves the module unchanged
(torch copies the matching entries before it raises)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Iterator

from ..tensor import Tensor
from .hooks import RemovableHandle, _ModuleHooks
from .parameter import Buffer, Parameter
from .state_dict import _EXTRA_STATE_KEY_SUFFIX, _IncompatibleKeys, _ModuleState  # noqa: F401


def _typename(value) -> str:
    if isinstance(value, Tensor):
        return "onemodel.Tensor"
    module = type(value).__module__
    name = type(value).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


def _addindent(s: str, spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


def _attribute_owner(module: "Module", target: str) -> tuple:
    """The submodule of `module` that holds the dotted name `target`, and the
    last name (an AttributeError in torch's words if it has no such
    attribute): what get_parameter and get_buffer share."""
    module_path, _, name = target.rpartition(".")
    mod = module.get_submodule(module_path)
    if not hasattr(mod, name):
        raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
    return mod, name


class Module(_ModuleState, _ModuleHooks):
    """Base class of every layer (torch.nn.Module)."""

    training: bool
    _version: int = 1
    call_super_init: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments {args or ''} {kwargs or ''}".rstrip())
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", OrderedDict())
        setattr_(self, "_buffers", OrderedDict())
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", OrderedDict())
        setattr_(self, "_forward_pre_hooks", OrderedDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", {})
        setattr_(self, "_forward_hooks", OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", {})
        setattr_(self, "_forward_hooks_always_called", {})
        setattr_(self, "_load_state_dict_post_hooks", OrderedDict())

    # -- registration -----------------------------------------------------------
    def _check_name(self, kind: str, name, store: str) -> None:
        if store not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain ".", got: {name}' if kind == "module" else f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in self.__dict__[store]:
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer (state that is not a parameter, e.g. running
        statistics). Persistent buffers are part of ``state_dict()``."""
        self._check_name("buffer", name, "_buffers")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (onemodel Tensor or None required)")
        if isinstance(tensor, Buffer):
            tensor = tensor.detach()
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (None registers the name without a tensor)."""
        self._check_name("parameter", name, "_parameters")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' (onemodel.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created explicitly. "
                f"To express '{name}' as a function of another Tensor, compute the value in the forward() method."
            )
        else:
            self._parameters[name] = param

    def add_module(self, name: str, module: "Module | None") -> None:
        """Add a child module (None registers the name without a module)."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name("module", name, "_modules")
        self._modules[name] = module

    def register_module(self, name: str, module: "Module | None") -> None:
        """Alias of ``add_module``."""
        self.add_module(name, module)

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__

        def remove_from(*stores):
            for s in stores:
                if name in s:
                    if isinstance(s, dict):
                        del s[name]
                    else:
                        s.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' (onemodel.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' (onemodel.nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = d.get("_buffers")
                if isinstance(value, Buffer) or (buffers is not None and name in buffers):
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' (onemodel.nn.Buffer, onemodel.Tensor or None expected)")
                    if isinstance(value, Buffer):
                        persistent = value.persistent
                        remove_from(d)
                    else:
                        persistent = name not in self._non_persistent_buffers_set
                    self.register_buffer(name, value, persistent)
                else:
                    object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            store = d.get(key)
            if store is not None and name in store:
                return store[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        attrs = dir(self.__class__) + list(self.__dict__)
        keys = attrs + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # -- lookup by dotted name ---------------------------------------------------------
    def get_submodule(self, target: str) -> "Module":
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        mod, name = _attribute_owner(self, target)
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        mod, name = _attribute_owner(self, target)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(mod, name)

    # -- traversal -----------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """Pre-order (self, then each child's subtree in registration order);
        a module reachable twice is yielded once unless remove_duplicate=False."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        for _, m in self.named_modules(remove_duplicate=remove_duplicate):
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, get_members, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        memo = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in mods:
            for k, v in get_members(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(name, parameter) pairs; a parameter shared by several modules
        (tied weights) comes once, under its first name."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn: Callable[[Module], Any]) -> "Module":
        """Call ``fn`` on every child's subtree (post-order), then on self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- modes -------------------------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        from ..autograd import _zero_grads

        _zero_grads(self.parameters(), set_to_none)

    def share_memory(self) -> "Module":
        """Accepted and ignored (onemodel's tensors live in one process)."""
        return self

    # -- devices and dtypes -------------------------------------------------------------
    def to(self, *args: Any, **kwargs: Any) -> "Module":
        """torch's forms ``to(device)``, ``to(dtype)``, ``to(device, dtype)``,
        ``to(tensor)``, with ``non_blocking`` (ignored). The device must be
        the CPU; the dtype must be float32 (the only floating dtype onemodel
        computes in), so this returns the module unchanged or raises."""
        from ..ops.convert import parse_to_args as _parse_to_args

        if args and isinstance(args[0], Tensor):
            other = args[0]
            args = (other.device, other.dtype) + tuple(args[1:])
        dt, _ = _parse_to_args("Module.to", self, args, kwargs)
        if dt is not None and not dt.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dt!r}")
        return self

    def cpu(self) -> "Module":
        return self

    def cuda(self, device: Any = None) -> "Module":
        from .._device import device as make_device

        make_device("cuda")  # raises: onemodel runs on the CPU only
        return self  # pragma: no cover

    def float(self) -> "Module":
        return self

    def _refuse(self, name: str) -> "Module":
        from ..tensor import _UNSUPPORTED, as_dtype

        as_dtype(_UNSUPPORTED[name], f"Module.{name}")
        return self  # pragma: no cover

    def double(self) -> "Module":
        return self._refuse("float64")

    def half(self) -> "Module":
        return self._refuse("float16")

    def bfloat16(self) -> "Module":
        return self._refuse("bfloat16")

    def type(self, dst_type: Any) -> "Module":
        from ..tensor import as_dtype

        as_dtype(dst_type, "Module.type")
        return self

    # -- calling -------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        d = self.__dict__
        if d.get("_forward_hooks") or d.get("_forward_pre_hooks") or d.get("_backward_hooks") or d.get("_backward_pre_hooks"):
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    # -- printing ----------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    # -- pickling and copying -----------------------------------------------------------------
    def __getstate__(self) -> dict:
        return self.__dict__.copy()

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)


__all__ = ["Module", "RemovableHandle"]
