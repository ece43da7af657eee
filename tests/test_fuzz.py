"""The fuzz suite (tests/fuzz/properties.py): each property runs its
hypothesis cases in one child process, so that a crash, an abort or a hang
fails the property with the case the child was running.

CI runs the "ci" profile: derandomized (the same cases every run) with a
fixed ONEMODEL_FUZZ_EXAMPLES (100) per property and no deadline; set
ONEMODEL_FUZZ_PROFILE=explore for a random search with more examples."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("hypothesis")

HERE = Path(__file__).parent / "fuzz"
sys.path.insert(0, str(HERE))
from properties import PROPERTIES  # noqa: E402

TIMEOUT = 600


@pytest.mark.parametrize("name", sorted(PROPERTIES))
def test_property(name):
    env = dict(os.environ, ONEMODEL_THREADS=os.environ.get("ONEMODEL_THREADS", "2"))
    try:
        p = subprocess.run([sys.executable, str(HERE / "properties.py"), name], capture_output=True, text=True,
                           timeout=TIMEOUT, env=env, cwd=str(HERE))
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, err = "timeout", (e.stderr or b"").decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
    cases = [line[8:] for line in err.splitlines() if line.startswith("@@case ")]
    last = cases[-1] if cases else "(before the first case)"
    if rc != 0:
        how = "hung" if rc == "timeout" else ("crashed (signal %d)" % -rc if isinstance(rc, int) and rc < 0 else f"failed (status {rc})")
        tail = "\n".join(line for line in err.splitlines() if not line.startswith("@@case "))[-6000:]
        pytest.fail(f"{name} {how} at case: {last}\n{tail}")
    assert "@@done" in err, err[-2000:]
