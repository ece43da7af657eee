"""Run every side-by-side comparison of benchmarks/ and write the table of
docs/performance.md ("Side by side: every benchmark").

    python benchmarks/run_all.py [--rounds 3] [--only calls conv ...] [--quick]
        [--extra-site DIR] [--profile] [--doc docs/performance.md | --no-doc]

Each benchmark runs in its own process (bench_*.py with --json), `--rounds`
times, the benchmarks interleaved (round 1 runs each once, then round 2 ...),
so a slow spell of a shared machine falls on every benchmark rather than on
one. Every benchmark pins the threads of every library it times to the
thread count of its row (onemodel's pool, torch.set_num_threads, numpy's
BLAS through threadpoolctl: benchmarks/_timing.py). torch is imported as
is, or from --extra-site (a site-packages directory appended to sys.path,
default the project's development venv when it exists) when it is not
importable. Each figure of the table is the median of the rounds' figures
(each of which is already a median over that benchmark's own interleaved
repeats), with the range over rounds; a ratio is the ratio of two such
medians, with the range of the per-round ratios.

--profile adds, per benchmark, one `perf record -e cpu-clock` run (when
perf works here) and the three symbols that took most samples, overall and
inside onemodel's extension. --keep DIR keeps the results (and perf data);
--from DIR writes the table from them again without running anything.

The doc's section is replaced between the markers
``<!-- run_all:begin -->`` and ``<!-- run_all:end -->`` (appended when they
are missing). Not a test: nothing asserts on time.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_SITE = "/work/venvs/torch/lib/python3.11/site-packages"
BEGIN, END = "<!-- run_all:begin -->", "<!-- run_all:end -->"

# name: (script, arguments, arguments with --quick). bench_gemm.py is not
# here: it interleaves its own rounds and writes its own table (the GEMM
# section of docs/performance.md) and has no --json yet.
BENCHMARKS = {
    "calls": ("bench_calls.py", ["--rounds", "15", "--clock", "thread"], ["--rounds", "5", "--clock", "thread"]),
    "conv": ("bench_conv.py", ["--repeat", "7", "--clock", "thread"], ["--repeat", "3", "--clock", "thread"]),
    "rnn": ("bench_rnn.py", ["--repeats", "5"], ["--repeats", "3"]),
    "crnn": ("bench_crnn.py", ["--repeats", "3"], ["--repeats", "2"]),
    "crnn_layers": ("bench_crnn_layers.py", ["--rounds", "7"], ["--rounds", "3"]),
    "conv_large": ("bench_conv_large.py", ["--repeats", "5"], ["--repeats", "3"]),
    "recognizer": ("bench_recognizer.py", ["--steps", "5"], ["--steps", "3"]),
    "optim": ("bench_optim.py", ["--repeat", "50"], ["--repeat", "20"]),
    "elementwise": ("bench_elementwise.py", ["--repeats", "9", "--paths", "BEST"], ["--n", "200000", "--repeats", "5", "--paths", "BEST"]),
}


def machine() -> dict:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "load": os.getloadavg()}


def best_path() -> str:
    import onemodel as om

    return om.compute.best_kernel_path()


def run_one(name: str, quick: bool, site: str | None, out: Path) -> dict | None:
    script, full, short = BENCHMARKS[name]
    args = [a if a != "BEST" else best_path() for a in (short if quick else full)]
    cmd = [sys.executable, str(HERE / script), *args, "--json", str(out)]
    if site:
        cmd += ["--extra-site", site]
    print(f"  $ {shlex.join(cmd[1:])}", flush=True)
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0 or not out.exists():
        print(f"  {name} failed (exit {r.returncode}):\n{r.stderr[-2000:]}", file=sys.stderr, flush=True)
        return None
    with open(out) as f:
        return json.load(f)


def profile_one(name: str, quick: bool, site: str | None, tmp: Path) -> list | None:
    """The three hottest symbols overall and inside _core, by perf samples."""
    if subprocess.run(["perf", "--version"], capture_output=True).returncode != 0:
        return None
    script, full, short = BENCHMARKS[name]
    args = [a if a != "BEST" else best_path() for a in (short if quick else full)]
    data = tmp / f"{name}.perf"
    cmd = ["perf", "record", "-e", "cpu-clock", "-F", "999", "--inherit", "-o", str(data), "--",
           sys.executable, str(HERE / script), *args, "--json", str(tmp / f"{name}.prof.json")]
    if site:
        cmd += ["--extra-site", site]
    if subprocess.run(cmd, cwd=ROOT, capture_output=True).returncode != 0:
        return None
    return hottest(data)


def hottest(data: Path) -> list | None:
    """(top three symbols, top three inside onemodel's _core) of a perf data file."""
    if not data.exists():
        return None
    rep = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--sort", "dso,sym", "--percent-limit", "0.5"],
                         capture_output=True, text=True).stdout
    rows = []
    for line in rep.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "%" not in line:
            continue
        parts = line.split(None, 3)
        if len(parts) == 4:
            pct, dso, _, sym = parts
            rows.append((float(pct.rstrip("%")), dso, sym.strip()))
    top = rows[:3]
    ours = [r for r in rows if "_core" in r[1]][:3]
    return [list(r) for r in top], [list(r) for r in ours]


def fmt(v: float | None, unit: str) -> str:
    if v is None:
        return "—"
    return f"{v:.3g}" if v < 10 else f"{v:.1f}"


def table(name: str, runs: list) -> list:
    """Markdown lines: median (range) of every column over the rounds, and
    every column's ratio to the reference column."""
    first = runs[0]
    ref = first["reference"]
    keys, cells = [], {}
    for run in runs:
        for row in run["rows"]:
            key = (row["case"], row["threads"])
            if key not in cells:
                keys.append(key)
                cells[key] = {}
            for col, v in row["values"].items():
                cells[key].setdefault(col, []).append(v)
    cols = []
    for key in keys:
        for col in cells[key]:
            if col not in cols:
                cols.append(col)
    others = [c for c in cols if c != ref]
    better = "higher" if first["higher_is_better"] else "lower"
    lines = [f"**{name}** ({first['unit']}, {better} is better; {first.get('note', '')}; "
             f"ratio = column / {ref}, median of rounds with the per-round range)", "",
             "| case | threads | " + " | ".join(cols) + " | " + " | ".join(f"{c} / {ref}" for c in others) + " |",
             "|---|---|" + "---|" * (len(cols) + len(others))]
    for key in keys:
        c = cells[key]
        out = []
        for col in cols:
            vs = [v for v in c.get(col, []) if v is not None]
            if not vs:
                out.append("—")
            elif len(vs) == 1:
                out.append(fmt(vs[0], first["unit"]))
            else:
                out.append(f"{fmt(statistics.median(vs), first['unit'])} ({fmt(min(vs), '')}–{fmt(max(vs), '')})")
        for col in others:
            pairs = [(a, b) for a, b in zip(c.get(col, []), c.get(ref, [])) if a is not None and b]
            if not pairs:
                out.append("—")
                continue
            med = statistics.median(a for a, _ in pairs) / statistics.median(b for _, b in pairs)
            rs = [a / b for a, b in pairs]
            out.append(f"{med:.2f}×" + (f" ({min(rs):.2f}–{max(rs):.2f})" if len(rs) > 1 else ""))
        lines.append(f"| {key[0]} | {key[1]} | " + " | ".join(out) + " |")
    return lines + [""]


def write_doc(doc: Path, body: list) -> None:
    text = doc.read_text() if doc.exists() else "# Performance\n"
    section = "\n".join([BEGIN, *body, END])
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        text = head + section + tail
    else:
        text = text.rstrip("\n") + "\n\n## Side by side: every benchmark\n\n" + section + "\n"
    doc.write_text(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", nargs="+", choices=list(BENCHMARKS), default=None)
    ap.add_argument("--quick", action="store_true", help="smaller repeats and shapes (a smoke run)")
    ap.add_argument("--extra-site", default=None, help=f"where torch is when not importable (default {DEFAULT_SITE} if it exists)")
    ap.add_argument("--profile", action="store_true", help="also perf-profile each benchmark once")
    ap.add_argument("--doc", default=str(ROOT / "docs" / "performance.md"))
    ap.add_argument("--no-doc", action="store_true", help="print the table only")
    ap.add_argument("--keep", default=None, metavar="DIR",
                    help="keep every benchmark's JSON results (and perf data) in DIR")
    ap.add_argument("--from", dest="from_dir", default=None, metavar="DIR",
                    help="write the table from the results a run kept in DIR, without running anything "
                    "(the machine line is then today's)")
    args = ap.parse_args()

    site = args.extra_site
    try:
        import torch  # noqa: F401

        site = None
    except ImportError:
        if site is None and os.path.isdir(DEFAULT_SITE):
            site = DEFAULT_SITE
    names = args.only or list(BENCHMARKS)
    start = machine()
    started = datetime.datetime.now(datetime.timezone.utc)
    results: dict = {n: [] for n in names}
    if args.from_dir:
        src = Path(args.from_dir)
        for name in names:
            for r in range(args.rounds):
                f = src / f"{name}.{r}.json"
                if f.exists():
                    results[name].append(json.loads(f.read_text()))
        profiles = {n: hottest(src / f"{n}.perf") for n in names} if args.profile else {}
    else:
        with tempfile.TemporaryDirectory() as tmpd:
            tmp = Path(args.keep or tmpd)
            tmp.mkdir(parents=True, exist_ok=True)
            for r in range(args.rounds):
                print(f"round {r + 1}/{args.rounds} (load average {os.getloadavg()[0]:.2f})", flush=True)
                for name in names:
                    res = run_one(name, args.quick, site, tmp / f"{name}.{r}.json")
                    if res is not None:
                        results[name].append(res)
            profiles = {n: profile_one(n, args.quick, site, tmp) for n in names} if args.profile else {}
    end = machine()

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = "?"
    import numpy as np

    import onemodel as om

    torch_v = "not importable"
    probe = subprocess.run([sys.executable, "-c", "import sys; sys.path.append(sys.argv[1]) if sys.argv[1] else None; import torch; print(torch.__version__)",
                            site or ""], capture_output=True, text=True)
    if probe.returncode == 0:
        torch_v = probe.stdout.strip()
    command = "python benchmarks/run_all.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    body = [
        f"Generated by `{command.strip()}` on {started:%Y-%m-%d %H:%M} UTC, commit {commit}.",
        f"Machine: {start['cpu']}, {start['cores']} logical CPUs, kernel path {om.compute.best_kernel_path()} "
        f"(features {', '.join(om.compute.cpu_features())}); load average (1, 5, 15 min) "
        f"{', '.join(f'{x:.2f}' for x in start['load'])} at the start, {', '.join(f'{x:.2f}' for x in end['load'])} at the end.",
        f"numpy {np.__version__}, torch {torch_v}{' (from ' + site + ')' if site else ''}, Python {platform.python_version()}; "
        f"{args.rounds} interleaved rounds.",
        "",
    ]
    for name in names:
        runs = results[name]
        if not runs:
            body += [f"**{name}**: failed (see the command's output).", ""]
            continue
        body += table(name, runs)
        prof = profiles.get(name)
        if prof:
            top, ours = prof
            body.append("Hottest symbols (perf, cpu-clock samples of one run): " + "; ".join(
                f"{p:.1f}% {sym} ({Path(dso).name})" for p, dso, sym in top) + ".")
            if ours:
                body.append("Inside onemodel's extension: " + "; ".join(f"{p:.1f}% {sym}" for p, _, sym in ours) + ".")
            body.append("")
    print("\n".join(body))
    if not args.no_doc:
        write_doc(Path(args.doc), body)
        print(f"wrote {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
