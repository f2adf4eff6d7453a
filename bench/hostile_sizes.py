"""The steps whose cost a hostile input sets (issue 25, item 8), at the hostile sizes, on this
checkout and on an earlier commit in one run: wall time, peak memory and the ratio.

Usage::

    python bench/hostile_sizes.py                      # against 99a3a56 (the release the issue tried)
    python bench/hostile_sizes.py --before COMMIT --timeout 60

The earlier commit is checked out with ``git worktree add --detach`` in a temporary directory
(removed at the end); every case runs in a child process with ``PYTHONPATH`` on one of the two
trees, so both run the same functions on the same inputs. A child that runs past ``--timeout``
seconds is stopped and shown as ``> timeout`` (its ratio as a lower bound). Peak memory is the
growth of the child's resident set during the measured call (``VmHWM`` after the call, reset just
before it through ``/proc/self/clear_refs``, minus ``VmRSS`` before it).

Cases:

- ``trace``: ``task.traces.parse_frames`` on a Go trace whose function line (``a.a.…a(``, a call
  that never closes, followed by a location line) is 40,000 and 120,000 characters long, and on a
  1 MiB error file of such lines 1,990 characters long (under the line cap, so the patterns
  themselves are measured);
- ``similarity``: a 2,000-file repository and a change that adds 20,000 files, through
  ``history.filesignals.change_signals`` (every signal of the ranked file list) and through its
  content part alone (``_content_signals``), with distinct contents and with 20,000 copies of
  one file. Sketches are random 64-bin rows (a real sketch of distinct content is as spread out):
  sketching 22,000 files would measure the index, not the signal.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: run in the child: build a case's input, measure one call, print JSON
CHILD = r"""
import json, sys, time
case = sys.argv[1]

def rss_kb(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0

def go_line(width):  # a function line whose call never closes: the old pattern tries every split
    return "a." * (width // 2 - 1) + "a(\n\t/src/x.go:1 +0x1\n"

def go_trace(width):
    return "goroutine 1 [running]:\n" + go_line(width)

def error_file():
    pair = go_line(1990)
    return pair * ((1 << 20) // len(pair))

def similarity_inputs(identical):
    import numpy as np
    from knowing_pr.config import Settings
    from knowing_pr.graph.paths import is_test_path
    from knowing_pr.history import HistoryState
    from knowing_pr.history.fileinputs import FileGraph, FileUniverse, HistoryView, Sketches
    rng = np.random.default_rng(0)
    base = [f"src/pkg{i % 50}/mod{i}.py" for i in range(2000)]
    added = [f"gen/d{i % 100}/f{i}.py" for i in range(20000)]
    matrix = rng.integers(0, 2**32 - 1, size=(len(base) + len(added), 64), dtype=np.uint32)
    if identical:
        matrix[len(base):] = matrix[len(base)]
    settings = Settings()
    paths = base + added
    return (
        added,
        HistoryView(HistoryState.empty(settings.history), {}),
        FileGraph.empty(),
        Sketches.of_matrix(paths, matrix, ()),
        FileUniverse.build(paths, is_test_path),
        settings.files,
    )

if case.startswith("trace"):
    from knowing_pr.task.traces import parse_frames
    text = {"trace-go-40k": lambda: go_trace(40000), "trace-go-120k": lambda: go_trace(120000),
            "trace-error-1mib": error_file}[case]()
    call = lambda: len(parse_frames(text))
else:
    from knowing_pr.history import filesignals
    added, view, graph, sketches, universe, params = similarity_inputs(case.endswith("identical"))
    if case.startswith("similarity-all"):
        call = lambda: len(filesignals.change_signals(added, view, graph, sketches, universe, params).paths)
    else:
        found = {}
        call = lambda: filesignals._content_signals(
            sorted(added), set(added), sketches, params, lambda p: found.setdefault(p, {})
        ) or len(found)

before = rss_kb("VmRSS")
try:
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # reset VmHWM to the current resident set
except OSError:
    pass
start = time.perf_counter()
result = call()
seconds = time.perf_counter() - start
peak = max(rss_kb("VmHWM") - before, 0)
print(json.dumps({"seconds": seconds, "peak_mb": peak / 1024, "result": str(result)[:200]}))
"""

CASES = (
    ("trace-go-40k", "Go trace, a 40,000-character function line"),
    ("trace-go-120k", "Go trace, a 120,000-character function line"),
    ("trace-error-1mib", "1 MiB error file of 1,990-character Go function lines"),
    ("similarity-content-distinct", "content similarity, 20,000 added files (distinct)"),
    ("similarity-content-identical", "content similarity, 20,000 added copies of one file"),
    ("similarity-all-distinct", "every file-list signal, 20,000 added files (distinct)"),
)


def run_case(tree: Path, case: str, timeout: float) -> dict[str, object] | None:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, case],
            cwd=tempfile.gettempdir(),
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return None
    except subprocess.CalledProcessError as exc:
        raise SystemExit(f"{case} failed in {tree}:\n{exc.stderr}") from None
    data: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return data


def shown_time(result: dict[str, object] | None, timeout: float) -> str:
    return f"> {timeout:.0f} s (stopped)" if result is None else f"{float(result['seconds']):.3f} s"  # type: ignore[arg-type]


def shown_memory(result: dict[str, object] | None) -> str:
    return "—" if result is None else f"{float(result['peak_mb']):.1f} MB"  # type: ignore[arg-type]


def ratio(before: dict[str, object] | None, after: dict[str, object] | None, timeout: float) -> str:
    if after is None:
        return "—"
    now = max(float(after["seconds"]), 1e-4)  # type: ignore[arg-type]
    if before is None:
        return f"> {timeout / now:,.0f}×"
    return f"{float(before['seconds']) / now:,.0f}×"  # type: ignore[arg-type]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="99a3a56", help="the earlier commit (default 99a3a56)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a case may run")
    parser.add_argument("--only", default="", help="comma-separated case names")
    args = parser.parse_args()
    wanted = {c for c in args.only.split(",") if c}
    cases = [(name, label) for name, label in CASES if not wanted or name in wanted]
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    with tempfile.TemporaryDirectory(prefix="hostile-sizes-") as scratch:
        old_tree = Path(scratch) / "before"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(old_tree), args.before],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        try:
            rows = []
            for name, label in cases:
                started = time.perf_counter()
                before = run_case(old_tree, name, args.timeout)
                after = run_case(ROOT, name, args.timeout)
                rows.append(
                    f"| {label} | {shown_time(before, args.timeout)} | {shown_memory(before)} "
                    f"| {shown_time(after, args.timeout)} | {shown_memory(after)} "
                    f"| {ratio(before, after, args.timeout)} |"
                )
                print(f"{name}: done in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old_tree)], cwd=ROOT, check=False)
    print(f"| case | {args.before}: time | memory | {head.stdout.strip()}: time | memory | ratio |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
