"""Run code in a child Python process, so that a crash (a segmentation
fault, an abort, a hang) is a test failure naming the case instead of a
dead test run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

#: Seconds a child may take before its case counts as a hang.
TIMEOUT = 120


def run_child(code: str, timeout: float = TIMEOUT, env: dict | None = None) -> dict:
    """Run ``code`` (which may ``emit(obj)`` JSON results) in a fresh
    interpreter; returns ``{"rc", "out", "err", "results"}``. A child killed
    by a signal has a negative ``rc``."""
    prelude = (
        "import json as _json, sys as _sys\n"
        "def emit(obj):\n"
        "    _sys.stdout.write('@@' + _json.dumps(obj) + '\\n'); _sys.stdout.flush()\n"
    )
    full_env = dict(os.environ)
    full_env.setdefault("ONEMODEL_THREADS", "2")
    if env:
        full_env.update(env)
    try:
        p = subprocess.run(
            [sys.executable, "-c", prelude + textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=full_env,
        )
    except subprocess.TimeoutExpired as e:
        return {"rc": "timeout", "out": e.stdout or "", "err": e.stderr or "", "results": []}
    results = [json.loads(line[2:]) for line in p.stdout.splitlines() if line.startswith("@@")]
    return {"rc": p.returncode, "out": p.stdout, "err": p.stderr, "results": results}


def describe(r: dict) -> str:
    how = "hung" if r["rc"] == "timeout" else f"exited with status {r['rc']}"
    return f"the child {how}; stderr tail:\n{r['err'][-2000:]}"


def raises_in_child(expr: str, setup: str = "", timeout: float = TIMEOUT) -> tuple:
    """(exception class name, message) that evaluating ``expr`` raised in a
    child process, or ("", repr of the value) when it returned; a crash or a
    hang fails the calling test with the case in the message."""
    code = f"""
import onemodel as om
import onemodel.nn.functional as F
{setup}
try:
    _v = {expr}
    emit(["", repr(type(_v))])
except BaseException as _e:
    emit([type(_e).__name__, str(_e)])
"""
    r = run_child(code, timeout=timeout)
    assert r["rc"] == 0 and r["results"], f"{expr}: {describe(r)}"
    return tuple(r["results"][-1])
