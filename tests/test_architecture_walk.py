"""docs/architecture.md stays true to the tree: every function its walk of
F.conv2d names exists in the file named beside it, and every module its
layer tables name exists (so a rename or a move that leaves the document
stale fails here)."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
PKG_DIR = ROOT / "python" / "onemodel"


def _walk_rows() -> list:
    """(file, [names]) of the rows of the walk's tables."""
    text = DOC.read_text()
    start = text.index("## One operator end to end")
    end = text.index("\n## ", start + 1)
    rows = []
    for line in text[start:end].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[0].isdigit():
            continue
        file = cells[1].strip("`")
        names = re.findall(r"`([^`]+)`", cells[2])
        rows.append((file, names))
    return rows


def _python_defines(path: Path, name: str) -> bool:
    tree = ast.parse(path.read_text())
    *owner, leaf = name.split(".")
    scopes = [tree]
    for part in owner:
        scopes = [n for s in scopes for n in ast.walk(s) if isinstance(n, ast.ClassDef) and n.name == part]
    return any(isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == leaf for s in scopes for n in ast.walk(s))


def _rust_defines(path: Path, name: str) -> bool:
    text = path.read_text()
    *owner, leaf = name.split("::")
    if not re.search(rf"\bfn {re.escape(leaf)}\b", text):
        return False
    return all(re.search(rf"\b(impl|struct|mod)\b[^{{;]*\b{re.escape(o)}\b", text) for o in owner)


def test_the_walk_names_functions_that_exist_where_it_says():
    rows = _walk_rows()
    assert len(rows) >= 25, rows  # the forward and backward tables
    bad = []
    for file, names in rows:
        path = ROOT / file
        if not path.is_file():
            bad.append(f"{file}: no such file")
            continue
        for name in names:
            found = _python_defines(path, name) if path.suffix == ".py" else _rust_defines(path, name)
            if not found:
                bad.append(f"{file}: no {name}")
    assert not bad, "\n".join(bad)


def test_the_checks_see_a_missing_function():
    conv = ROOT / "python/onemodel/ops/conv.py"
    assert _python_defines(conv, "Conv2dFn.backward")
    assert not _python_defines(conv, "Conv2dFn.no_such_method")
    assert not _python_defines(conv, "NoSuchClass.backward")
    loops = ROOT / "rust/src/gemm/loops.rs"
    assert _rust_defines(loops, "Chunk::call")
    assert not _rust_defines(loops, "Chunk::no_such_fn")


def _first_column(section: str) -> list:
    text = DOC.read_text()
    start = text.index(f"## {section}\n")
    end = text.index("\n## ", start + 1)
    rows = []
    for line in text[start:end].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].startswith("`"):
            rows.append(re.findall(r"`([^`]+)`", re.sub(r"\(.*?\)", "", cells[0])))  # not "(feature `python`)"
    return rows


def test_the_layer_tables_name_modules_that_exist():
    bad = []
    for names in _first_column("Python layers"):
        for name in names:
            base = PKG_DIR / name.rstrip("/")
            if name != "_core" and not (base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()):
                bad.append(f"python/onemodel/{name}")
    for names in _first_column("Rust layers"):
        for name in names:
            base = ROOT / "rust" / "src" / name.rstrip("/")
            if not (base.with_suffix(".rs").is_file() or (base / "mod.rs").is_file()):
                bad.append(f"rust/src/{name}")
    assert not bad, bad

