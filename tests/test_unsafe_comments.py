"""Every unsafe block of the Rust core states why it is sound (issue 20,
item 1; the project's style rule): a `// SAFETY:` comment on the block's
line or in the comment lines just above the statement that holds it.

The bounds themselves are asserted in debug builds (and so in `cargo
test`) where the accesses go through `ptr::Ptr`'s checked accessors; see
docs/reliability.md ("Unsafe code") for which kernels do and which still
offset raw pointers under the SAFETY line alone."""

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "rust" / "src"

#: Files not yet audited (none left).
NOT_YET: set = set()

BLOCK = re.compile(r"\bunsafe\s*\{")


def _has_safety(lines: list, i: int) -> bool:
    if "SAFETY" in lines[i]:
        return True
    k, steps = i - 1, 0
    while k >= 0 and steps < 12:
        s = lines[k].strip()
        if "SAFETY" in s:
            return True
        if s.startswith("//") or s == "" or s.startswith("#["):
            k, steps = k - 1, steps + 1
            continue
        # The block may be part of a longer statement (`let x =`, `.map(|g|`).
        if steps < 6 and not s.endswith(";") and not s.endswith("}"):
            k, steps = k - 1, steps + 1
            continue
        return False
    return False


def unsafe_blocks_without_safety(src: Path = SRC) -> list:
    missing = []
    for path in sorted(src.rglob("*.rs")):
        rel = path.relative_to(src).as_posix()
        if rel in NOT_YET:
            continue
        lines = path.read_text().split("\n")
        for i, line in enumerate(lines):
            if BLOCK.search(line.split("//")[0]) and not _has_safety(lines, i):
                missing.append(f"rust/src/{rel}:{i + 1}: {line.strip()}")
    return missing


def test_every_unsafe_block_states_its_safety():
    missing = unsafe_blocks_without_safety()
    assert not missing, "unsafe blocks without a // SAFETY: line:\n" + "\n".join(missing)


def test_the_check_finds_a_missing_comment(tmp_path):
    # The scan itself: a block with no comment is found, one with it is not.
    (tmp_path / "a.rs").write_text("fn f(p: *const u8) -> u8 {\n    let x = 1;\n    unsafe { *p }\n}\n")
    (tmp_path / "b.rs").write_text("fn f(p: *const u8) -> u8 {\n    // SAFETY: p is valid.\n    unsafe { *p }\n}\n")
    assert unsafe_blocks_without_safety(tmp_path) == ["rust/src/a.rs:3: unsafe { *p }"]
