"""Typing of the public API (docs/architecture.md, "Typing"): the package is
marked typed (py.typed), the extension's stubs (_core.pyi) declare exactly
what the extension holds with its parameter names, every public callable of
the Python API carries annotations (so that ``mypy --strict`` callers may
call it), and ``mypy --strict`` passes on examples/typed_training.py, which
uses tensors, nn, optim and the recognizer — and fails on a wrong program.

The mypy run costs a few seconds of CPU (about 3 s without a cache: it reads
the package and NumPy's stubs); it is skipped, with the reason shown, only
where mypy is not installed (the 'test' extra installs it)."""

import ast
import importlib.util
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import onemodel as om
from onemodel import _core

ROOT = Path(__file__).resolve().parent.parent
PKG = Path(om.__file__).parent
EXAMPLE = ROOT / "examples" / "typed_training.py"

# Files whose public callables are not annotated yet; everything else
# reachable from the public namespaces is checked.
PENDING_FILES: set[str] = set()


def test_the_package_is_marked_typed():
    assert (PKG / "py.typed").is_file()


def _stub():
    return ast.parse((PKG / "_core.pyi").read_text())


def _params(node: ast.FunctionDef) -> list:
    a = node.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    return [n for n in names if n not in ("self", "cls")]


def _runtime_params(obj) -> list | None:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [p for p in sig.parameters if p not in ("self", "cls")]


def test_core_stubs_declare_the_extension_exactly():
    stub = _stub()
    declared = {n.name for n in stub.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    declared |= {t.id for n in stub.body if isinstance(n, ast.AnnAssign) for t in [n.target] if isinstance(t, ast.Name)}
    declared |= {t.id for n in stub.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    public = {n for n in dir(_core) if not n.startswith("__")}
    assert public - declared == set(), f"_core.pyi lacks {sorted(public - declared)}"
    aliases = {t.id for n in stub.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    assert declared - public - aliases - {"__version__"} == set(), f"_core.pyi declares {sorted(declared - public - aliases)}"
    bad = []
    for n in stub.body:
        if isinstance(n, ast.FunctionDef):
            real = _runtime_params(getattr(_core, n.name))
            if real is not None and real != _params(n):
                bad.append(f"{n.name}: stub {_params(n)}, extension {real}")
        elif isinstance(n, ast.ClassDef):
            cls = getattr(_core, n.name)
            for m in n.body:
                if not isinstance(m, ast.FunctionDef):
                    continue
                if not hasattr(cls, m.name):
                    bad.append(f"{n.name}.{m.name}: not in the extension")
                    continue
                is_property = any(ast.unparse(d) == "property" for d in m.decorator_list)
                if m.name != "__init__" and not is_property:
                    real = _runtime_params(getattr(cls, m.name))
                    if real is not None and real != _params(m):
                        bad.append(f"{n.name}.{m.name}: stub {_params(m)}, extension {real}")
    assert not bad, "\n".join(bad)


def _public_callables():
    """(qualified name, function) for every public function of the public
    namespaces and the __init__/forward/step and public methods of their
    classes (Tensor's methods included)."""
    import onemodel.functional as F
    import onemodel.nn as nn
    import onemodel.optim as optim
    import onemodel.optim.lr_scheduler as lr_scheduler
    import onemodel.recognizer as recognizer

    seen = set()
    for ns in (om, nn, F, optim, lr_scheduler, recognizer):
        for name in getattr(ns, "__all__", ()):
            obj = getattr(ns, name, None)
            if inspect.isclass(obj) and obj.__module__.startswith("onemodel"):
                for klass in obj.__mro__:
                    if not klass.__module__.startswith("onemodel"):
                        continue
                    for attr, f in vars(klass).items():
                        if isinstance(f, property):
                            f = f.fget
                        if inspect.isfunction(f) and (not attr.startswith("_") or attr in ("__init__", "__call__")):
                            if id(f) not in seen:
                                seen.add(id(f))
                                yield f"{klass.__name__}.{attr}", f
            elif inspect.isfunction(obj) and obj.__module__.startswith("onemodel") and id(obj) not in seen:
                seen.add(id(obj))
                yield f"{ns.__name__}.{name}", obj


def test_every_public_callable_is_annotated():
    bad = []
    for name, f in _public_callables():
        f = inspect.unwrap(f)
        path = Path(inspect.getsourcefile(f) or "<generated>").resolve()
        where = path.relative_to(PKG.resolve()).as_posix() if PKG.resolve() in path.parents else "<generated>"
        if where in PENDING_FILES:
            continue
        if not f.__annotations__:
            bad.append(f"{name} ({where}:{f.__code__.co_firstlineno})")
    assert not bad, "no annotations (mypy --strict callers get an error): give each at least its return type\n" + "\n".join(bad)


def test_the_all_list_names_every_public_name():
    # onemodel.__all__ is written out (mypy reads only a literal list); it
    # must hold every public name the package module binds when imported.
    code = (
        "import onemodel, json; print(json.dumps(sorted(n for n in vars(onemodel) if not n.startswith('_') "
        "and n not in ('int', 'float', 'bool', 'bool_', 'annotations'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    import json

    bound = set(json.loads(out))
    assert bound - set(om.__all__) == set(), f"onemodel.__all__ lacks {sorted(bound - set(om.__all__))}"
    assert set(om.__all__) - bound == set(), f"onemodel.__all__ names what is not there: {sorted(set(om.__all__) - bound)}"


def _mypy(*args: str, cwd: Path, cache: Path):
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", str(cache), *args],
        capture_output=True, text=True, cwd=cwd,
    )


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory):
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[test]' installs it)")
    return tmp_path_factory.mktemp("mypy_cache")


def test_mypy_strict_passes_on_the_typed_example(mypy_cache, tmp_path):
    r = _mypy(str(EXAMPLE), cwd=tmp_path, cache=mypy_cache)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_strict_fails_on_a_wrong_program(mypy_cache, tmp_path):
    # The check can fail: a Tensor is not an int, a Trainer step is no str.
    bad = tmp_path / "wrong.py"
    bad.write_text(
        "import onemodel as om\n"
        "from onemodel.recognizer import CrnnV0, Trainer\n"
        "x: int = om.zeros(1)\n"
        "s: str = Trainer(CrnnV0()).step([], [])\n"
    )
    r = _mypy(str(bad), cwd=tmp_path, cache=mypy_cache)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "wrong.py:3: error: Incompatible types in assignment" in r.stdout, r.stdout
    assert "wrong.py:4: error: Incompatible types in assignment" in r.stdout, r.stdout


def test_the_typed_example_runs():
    r = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    first, last = (float(v) for v in r.stdout.split("regressor: loss ")[1].split(",")[0].split("\n")[0].split(" -> "))
    assert last < first / 10, r.stdout  # the regression fits
