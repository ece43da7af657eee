"""The Python layering rules (docs/architecture.md, "Python layers"):

* module-level imports inside onemodel form no cycle (a module never needs
  a half-initialised one, whatever is imported first);
* each layer imports only from the layers below it, lazily or not: the
  backward engine and the kernel helpers do not import the operators, the
  operators no module, optimizer or recognizer, the library never the
  command line, and the command line's and Ray's packages are imported only
  where docs/architecture.md says;
* every Tensor method is declared in the class or one of its mixins
  (nothing attached at import).
"""

import ast
from pathlib import Path

import onemodel as om

PKG = Path(om.__file__).parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in PKG.rglob("*.py")}


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if path.name != "__init__.py":
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str, *, top_level_only: bool, source: str | None = None) -> set:
    """The names `module` imports: onemodel modules resolved to their full
    name (``from . import x`` gives the submodule x when it is one), other
    packages by their top-level name. With `top_level_only`, only the
    imports that run when the module is loaded (not those inside functions
    or classes). `source` stands for the module's file (the checker's own
    test)."""
    path = MODULES.get(module, PKG / "_probe.py")
    tree = ast.parse(path.read_text() if source is None else source)
    if top_level_only:
        nodes, todo = [], list(tree.body)
        while todo:
            n = todo.pop()
            nodes.append(n)
            if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test):
                todo.extend(n.orelse)  # imports for the type checker only never run
            elif isinstance(n, (ast.If, ast.Try, ast.With)):
                todo.extend(ast.iter_child_nodes(n))
            elif isinstance(n, ast.ExceptHandler):
                todo.extend(n.body)
    else:
        nodes = list(ast.walk(tree))
    out = set()
    for n in nodes:
        if isinstance(n, ast.ImportFrom):
            base = _resolve(module, path, n)
            for a in n.names:
                sub = f"{base}.{a.name}"
                out.add(sub if sub in MODULES or sub == "onemodel._core" else base)
        elif isinstance(n, ast.Import):
            out.update(a.name for a in n.names)
    # Loading a module first loads its packages: those edges are no cycle.
    return {m for m in out if not module.startswith(m + ".") and m != module}


def _layer(module: str) -> str:
    """The layer of a onemodel module: its first component below onemodel
    (``onemodel.ops.conv`` -> ``ops``, ``onemodel.tensor`` -> ``tensor``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "onemodel"


def _cycles(graph: dict) -> list:
    """The import cycles of {module: modules it imports}: Tarjan's strongly
    connected components of more than one module."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_module_level_imports_have_no_cycle():
    graph = {m: {d for d in _imports(m, top_level_only=True) if d in MODULES} for m in MODULES}
    assert not _cycles(graph), _cycles(graph)
    # The finder itself: engine -> arith -> tensor -> engine is one cycle.
    made_up = {"engine": {"arith"}, "arith": {"tensor"}, "tensor": {"engine", "shape"}, "shape": set()}
    assert _cycles(made_up) == [["arith", "engine", "tensor"]]


# What a layer may not import (anywhere in its files, inside functions too).
# Read bottom-up: the core (tensor, autograd, kernel helpers) knows no
# operator; the operators know no layer built on them; nn and optim know
# neither each other's internals nor the applications; the applications
# (recognizer, distributed) know no command line.
APPS = {"recognizer", "distributed", "cli", "commands", "__main__"}
FORBIDDEN = {
    "tensor": {"ops", "functional", "nn", "optim", "linalg", "utils"} | APPS,
    "_kernels": {"ops", "functional", "nn", "optim", "linalg", "utils", "autograd"} | APPS,
    "_shape": {"tensor", "ops", "functional", "nn", "optim", "autograd"} | APPS,
    **{m: {"ops", "functional", "nn", "optim", "autograd", "linalg", "utils"} | APPS
       for m in ("_device", "_typeinfo", "errors", "grad_mode", "scope", "return_types")},
    "_methods": {"nn", "optim", "functional", "utils"} | APPS,
    "ops": {"functional", "nn", "optim", "linalg", "utils", "serialization"} | APPS,
    "functional": {"nn", "optim", "utils"} | APPS,
    "linalg": {"nn", "optim", "utils"} | APPS,
    "serialization": {"nn", "optim"} | APPS,
    "nn": {"optim"} | APPS,
    "optim": {"nn"} | APPS,
    "utils": {"nn", "optim", "recognizer", "cli", "commands", "__main__"},
    "recognizer": {"cli", "commands", "__main__", "distributed"},
    "distributed": {"cli", "commands", "__main__"},
}
# The autograd engine proper: not the operators (custom.py's views and the
# package's lazy helpers are the autograd front end, above ops).
ENGINE_FILES = ("autograd.engine", "autograd.function", "_kernels", "tensor")

# Third-party packages only some layers may import: the command line's
# display and plot (the 'cli' extra) and Ray (the 'distributed' extra).
ONLY_IN = {"rich": {"commands"}, "matplotlib": {"commands"}, "ray": {"distributed"}}


def _violations(imports: dict) -> list:
    """The broken rules in {module: the names it imports}."""
    bad = []
    for m in sorted(imports):
        layer = _layer(m)
        for dep in sorted(imports[m]):
            top = dep.split(".")[0]
            if top in ONLY_IN and layer not in ONLY_IN[top]:
                bad.append(f"{m} imports {dep} (only {sorted(ONLY_IN[top])} may)")
            if top != "onemodel" or dep == "onemodel":
                continue
            if _layer(dep) in FORBIDDEN.get(layer, ()):
                bad.append(f"{m} imports {dep}")
            elif layer not in {"cli", "commands", "__main__"} and _layer(dep) in {"cli", "commands"}:
                bad.append(f"{m} (library) imports the command line: {dep}")
            if m.removeprefix("onemodel.") in ENGINE_FILES and "ops" in dep.split("."):
                bad.append(f"{m} (engine) imports an operator: {dep}")
    return bad


def test_each_layer_imports_only_the_layers_below_it():
    bad = _violations({m: _imports(m, top_level_only=False) for m in MODULES})
    assert not bad, "\n".join(bad)


def test_the_rules_see_a_violation():
    # The checker itself, on made-up modules: an operator importing nn
    # lazily, the engine importing an operator, a layer importing rich.
    probe = "def f():\n    from ..nn import Linear\n    return Linear\n"
    deps = _imports("onemodel.ops._probe", top_level_only=False, source=probe)
    assert "onemodel.nn" in deps
    assert "onemodel.nn" not in _imports("onemodel.ops._probe", top_level_only=True, source=probe)
    assert _violations({"onemodel.ops._probe": deps}) == ["onemodel.ops._probe imports onemodel.nn"]
    assert _violations({"onemodel.autograd.engine": {"onemodel.ops.arith"}}) == [
        "onemodel.autograd.engine (engine) imports an operator: onemodel.ops.arith"]
    assert _violations({"onemodel.nn.module": {"rich"}}) == ["onemodel.nn.module imports rich (only ['commands'] may)"]
    assert _violations({"onemodel.recognizer.training": {"onemodel.commands.progress"}}) == [
        "onemodel.recognizer.training imports onemodel.commands.progress"]
    assert not _violations({"onemodel.commands.plot": {"matplotlib", "onemodel.recognizer.training"}})


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
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
            names.add(item.target.id)
    return names


def test_tensor_methods_are_declared_in_the_class_hierarchy():
    # Tensor's own attributes are exactly what its class body declares (plus
    # the slots and what Python adds): nothing is attached after import.
    body = _class_body_names(PKG / "tensor.py", "Tensor")
    # (__hash__: Python sets it to None in a class defining __eq__; Tensor
    # declares its own, identity-based, as torch.)
    auto = {"__module__", "__qualname__", "__doc__", "__slots__", "__weakref__", "__firstlineno__", "__static_attributes__",
            "__hash__", "__annotations__", "__annotate_func__", "__annotations_cache__"}
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
