"""``onemodel train --workers N`` on Ray: the same weights sha256 as one
process for N = 1..4 and several --threads, after a worker is killed in the
middle of the run, after the driver is killed and the run resumed with
another N, and when joining a running cluster with --ray-address. Runs that
start their own local cluster are subprocesses (each stops its cluster when
it ends); the others use the module's cluster. Every wait has a deadline."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

ray = pytest.importorskip("ray", reason="needs the distributed extra: pip install 'onemodel[distributed]'")

from onemodel.cli import main
from onemodel.distributed import connect, disconnect

from test_cli_recognizer import TRAIN, write_lines

STEPS = ["--steps", "8", "--eval-split", "0", "--batch-size", "5"]
DEADLINE = 600  # seconds for one subprocess run: a run here takes well under a minute


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_lines(tmp_path_factory.mktemp("lines") / "d", 30, seed=4)


@pytest.fixture(scope="module")
def one_process(data, tmp_path_factory):
    """The one-process run's weights sha256 after 8 and after 20 steps."""
    out = {}
    for steps in ("8", "20"):
        d = tmp_path_factory.mktemp(f"one{steps}")
        text = _run_in_process(["train", str(data), "--output", str(d), *TRAIN, *STEPS[2:], "--steps", steps])
        out[steps] = _sha(text)
    return out


@pytest.fixture(scope="module")
def cluster():
    """One local cluster for the in-process runs (the tests before the first
    one using it run without Ray in this process)."""
    connect(num_cpus=8)
    try:
        yield
    finally:
        disconnect()


def _run_in_process(argv):
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0
    return buf.getvalue()


def _sha(text):
    m = re.search(r"weights sha256\s+([0-9a-f]{64})", text)
    assert m, text
    return m.group(1)


def test_option_errors(data, tmp_path, capsys):
    assert main(["train", str(data), "--output", str(tmp_path), *TRAIN, "--ray-address", "auto"]) == 2
    assert "--ray-address needs --workers N" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train", str(data), "--workers", "0"])
    assert "--workers: expected an integer in [1, 4096]" in capsys.readouterr().err
    dead = f"127.0.0.1:{_free_port()}"  # nothing listens there: one message, not Ray's minutes of retries
    assert main(["train", str(data), "--output", str(tmp_path), *TRAIN, "--workers", "2", "--ray-address", dead]) == 2
    assert f"no Ray cluster answers at {dead}" in capsys.readouterr().err


def test_workers_without_ray_is_one_message(data, tmp_path):
    code = ("import sys; sys.modules['ray'] = None\nfrom onemodel.cli import main\n"
            f"sys.exit(main(['train', {str(data)!r}, '--output', {str(tmp_path)!r}, '--steps', '1', "
            "'--arch', 'small', '--charset', '0123456789', '--no-progress', '--workers', '2']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "error: onemodel.distributed needs Ray, which is not installed: pip install 'onemodel[distributed]'" \
        in out.stderr


@pytest.mark.parametrize("workers,threads", [(1, 2), (2, 1), (3, 1), (4, 1), (3, 2)])
def test_train_on_workers_prints_the_one_process_sha256(data, one_process, cluster, tmp_path, workers, threads):
    text = _run_in_process(["train", str(data), "--output", str(tmp_path), *TRAIN, *STEPS,
                            "--workers", str(workers), "--threads", str(threads)])
    assert _sha(text) == one_process["8"]
    for i in range(workers):
        assert re.search(rf"worker {i}: host \S+ \(127\.0\.0\.1\), pid \d+, {threads} threads", text), text


def test_finetune_on_workers_equals_one_process(data, cluster, tmp_path):
    base = tmp_path / "base"
    _run_in_process(["train", str(data), "--output", str(base), *TRAIN, *STEPS])
    shas = []
    for w in (None, 2):
        extra = [] if w is None else ["--workers", str(w)]
        shas.append(_sha(_run_in_process(["finetune", str(data), "--model", str(base / "model.safetensors"),
                                          "--output", str(tmp_path / f"ft{w}"), "--eval-every", "0",
                                          "--no-progress", *STEPS, *extra])))
    assert shas[0] == shas[1]


def _spawn(argv, env=None):
    return subprocess.Popen([sys.executable, "-m", "onemodel", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)


def _steps_done(out_dir):
    path = out_dir / "metrics.jsonl"
    if not path.exists():
        return 0
    done = 0
    for line in path.read_text().splitlines():
        try:
            done += json.loads(line)["step"] > 0
        except (ValueError, KeyError):  # a line being written
            pass
    return done


def _wait_for(cond, proc, what):
    end = time.monotonic() + DEADLINE
    while not cond():
        if proc.poll() is not None:
            pytest.fail(f"the run ended before {what}:\n{proc.stdout.read() if proc.stdout else ''}")
        if time.monotonic() > end:
            proc.kill()
            pytest.fail(f"no {what} within {DEADLINE} s")
        time.sleep(0.05)


def _finish(proc):
    try:
        out, _ = proc.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the run did not finish in time")
    return out


def test_a_worker_killed_mid_run_changes_nothing(data, one_process, tmp_path):
    """A local cluster of the run's own; worker 1's process is killed with
    SIGKILL after the second step; the run replaces it, recomputes the step
    and prints the one-process sha256."""
    out = tmp_path / "run"
    proc = _spawn(["train", str(data), "--output", str(out), *TRAIN, *STEPS[2:], "--steps", "20", "--workers", "3",
                   "--threads", "1"])
    lines = []
    pid = None
    while pid is None:
        lines.append(proc.stdout.readline())
        if not lines[-1] and proc.poll() is not None:
            pytest.fail("".join(lines))
        m = re.search(r"worker 1: host \S+ \(127\.0\.0\.1\), pid (\d+)", lines[-1])
        pid = int(m.group(1)) if m else None
    _wait_for(lambda: _steps_done(out) >= 2, proc, "two steps")
    os.kill(pid, signal.SIGKILL)
    text = "".join(lines) + _finish(proc)
    assert proc.returncode == 0, text
    assert re.search(rf"worker 1 \(pid {pid} on \S+\) died during a step; replaced by pid \d+", text), text
    assert _sha(text) == one_process["20"]


def _descendants(pid):
    """Pids of the processes below ``pid`` (from /proc)."""
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_driver_killed_leaves_a_checkpoint_and_resume_with_another_n_is_bit_identical(data, one_process, tmp_path):
    out = tmp_path / "run"
    proc = _spawn(["train", str(data), "--output", str(out), *TRAIN, *STEPS[2:], "--steps", "20", "--workers", "2",
                   "--threads", "1", "--checkpoint-every", "3"])
    _wait_for(lambda: _steps_done(out) >= 7, proc, "seven steps")
    family = _descendants(proc.pid)
    proc.kill()  # SIGKILL: no atexit, no cleanup
    proc.communicate(timeout=60)
    killed = time.monotonic()
    ckpt = out / "checkpoint.safetensors"
    from onemodel.recognizer import Trainer

    assert Trainer.load_checkpoint(ckpt).step_count in (6, 9)  # the last one written, whole
    proc = _spawn(["train", str(data), "--output", str(out), *TRAIN, *STEPS[2:], "--steps", "20", "--workers", "3",
                   "--threads", "1", "--checkpoint-every", "3", "--resume", str(ckpt)])
    text = _finish(proc)
    assert proc.returncode == 0, text
    assert _sha(text) == one_process["20"]
    # The local cluster ends with its driver: its services at once, Ray's two
    # agents once their calls to the dead GCS time out (about 60 s).
    while any(_alive(p) for p in family) and time.monotonic() < killed + 180:
        time.sleep(0.5)
    left = [p for p in family if _alive(p)]
    for p in left:  # ours: stop them before failing
        os.kill(p, signal.SIGKILL)
    assert not left, "the local Ray cluster outlived its driver"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_joining_a_running_cluster_with_ray_address_auto(data, one_process, tmp_path):
    port = _free_port()
    # The head on 127.0.0.1 only, with Ray's token authentication, which a
    # joining driver uses when told to (RAY_AUTH_MODE).
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_AUTH_MODE="token")
    # Ray's command line run by this interpreter (its `ray` script need not
    # sit beside it, e.g. in a venv over the system's site-packages), so the
    # head's workers import this onemodel.
    ray_cli = [sys.executable, "-m", "ray.scripts.scripts"]
    log = tmp_path / "head.log"
    # A short folder of its own: Ray's socket paths must fit in 107 bytes.
    temp = tempfile.mkdtemp(prefix="omray", dir="/tmp")
    with open(log, "w") as f:
        head = subprocess.Popen([*ray_cli, "start", "--head", "--block", f"--port={port}", "--num-cpus=4",
                                 "--include-dashboard=false", f"--temp-dir={temp}"],
                                stdout=f, stderr=subprocess.STDOUT, env=env)
    try:
        _wait_for(lambda: "will now block" in log.read_text(), head, "the head's start")
        env["RAY_ADDRESS"] = f"127.0.0.1:{port}"  # what 'auto' resolves to first
        proc = _spawn(["train", str(data), "--output", str(tmp_path / "run"), *TRAIN, *STEPS, "--workers", "2",
                       "--threads", "1", "--ray-address", "auto"], env=env)
        text = _finish(proc)
        assert proc.returncode == 0, text
        assert "the Ray cluster at auto" in text
        assert _sha(text) == one_process["8"]
    finally:
        head.send_signal(signal.SIGTERM)  # --block: the head drains, stops its processes and exits
        try:
            head.wait(timeout=180)
        except subprocess.TimeoutExpired:
            head.kill()
        shutil.rmtree(temp, ignore_errors=True)
