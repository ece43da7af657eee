"""docs/architecture.md walks F.conv2d from Python to the tile kernel, file
by file: every function its tables name exists in the file named beside it
(so a rename or a move that leaves the walk stale fails here)."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"


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
    assert _rust_defines(loops, "Chunk::go")
    assert not _rust_defines(loops, "Chunk::no_such_fn")
