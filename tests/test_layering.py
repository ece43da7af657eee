"""The Python layering rules (docs/engine.md): the backward engine and the
kernel helpers do not import the operators, and every Tensor method is
declared in the class or one of its mixins (nothing attached at import)."""

import ast
from pathlib import Path

import onemodel as om

PKG = Path(om.__file__).parent


def _imports(path: Path) -> set:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            names.add(base)
            names.update(f"{base}.{a.name}" if base.endswith(".") is False else base + a.name for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_engine_and_kernel_helpers_do_not_import_the_operators():
    for rel in ("autograd/engine.py", "autograd/function.py", "_kernels.py", "tensor.py"):
        bad = [n for n in _imports(PKG / rel) if "ops" in n.split(".")]
        assert not bad, (rel, bad)


def _class_body_names(path: Path, cls: str) -> set:
    tree = ast.parse(path.read_text())
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    names = set()
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(item.name)
        elif isinstance(item, ast.Assign):
            for t in item.targets:
                elts = t.elts if isinstance(t, ast.Tuple) else [t]
                names.update(e.id for e in elts if isinstance(e, ast.Name))
    return names


def test_tensor_methods_are_declared_in_the_class_hierarchy():
    # Tensor's own attributes are exactly what its class body declares (plus
    # the slots and what Python adds): nothing is attached after import.
    body = _class_body_names(PKG / "tensor.py", "Tensor")
    # (__hash__: Python sets it to None in a class defining __eq__; Tensor
    # declares its own, identity-based, as torch.)
    auto = {"__module__", "__qualname__", "__doc__", "__slots__", "__weakref__", "__firstlineno__", "__static_attributes__", "__hash__"}
    extra = set(om.Tensor.__dict__) - body - auto - set(om.Tensor.__slots__)
    assert not extra, extra
    # The mixins are the onemodel._methods classes, and they too hold only
    # what their class bodies declare.
    for cls in om.Tensor.__mro__[1:-1]:
        assert cls.__module__.startswith("onemodel._methods."), cls
        path = PKG / "_methods" / (cls.__module__.rsplit(".", 1)[1] + ".py")
        extra = set(cls.__dict__) - _class_body_names(path, cls.__name__) - auto
        assert not extra, (cls, extra)
    for name in ("add", "sum", "reshape", "__getitem__", "__add__", "clamp", "to", "T"):
        assert any(name in c.__dict__ for c in om.Tensor.__mro__[:-1]), name
