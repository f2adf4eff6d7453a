"""A source tree (a directory or a ``.tar.gz`` such as Django's sdist) → the wall time of ``knowing-pr
task`` as a fresh process, against the bare interpreter's start-up.

Usage::

    python bench/task_latency.py --source Django-5.1.4.tar.gz [--runs 5] [--work DIR] [--code DIR]

Django's sdist, as the issue asks: ``pip download --no-deps --no-binary :all: django==5.1.4``. The
tree is unpacked (or copied) into a temporary git repository with one commit, indexed once with
``python -m knowing_pr index`` (not timed), then, for each task text below, ``--runs`` times:
``python -m knowing_pr task TEXT --repo REPO --db STORE --format json`` (the store already at
HEAD, so no indexing happens in the timed runs). ``python -c pass`` is timed the same way. The
report gives, per task and over all, the median and the worst wall time in seconds and the
median's ratio to ``python -c pass`` (start-up varies with the machine's load; the ratio less so).
It also times ``python -c "import knowing_pr.pipeline"`` (the imports the command line preloads)
and, for this checkout, ``pipeline.task.pack_task`` inside the bench's own process (analysis,
walk, final order, knapsack: the task's own work, without start-up).
``--code DIR`` times another checkout of knowing-pr (e.g. the commit before a change) on the same
repository and store location (each checkout indexes into its own store under ``--work``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: tasks of the kind knowing's corpus holds, written for a web framework
TASKS = (
    "Add a custom validation to a model field that checks the format of an email address",
    "Fix the queryset filter that ignores related lookups across a many-to-many relation",
    "Trace how a request passes through the middleware chain to the view and back",
    "Configure session caching with a custom cache backend",
    "Implement a management command that exports migrations as SQL",
)


def run(args: Sequence[str], code: Path = ROOT) -> float:
    env = {**os.environ, "PYTHONPATH": str(code)}
    started = time.perf_counter()
    done = subprocess.run(list(args), capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[:4])} failed: {done.stderr.strip()[-400:]}")
    return elapsed


def unpack(source: Path, into: Path) -> Path:
    """``source`` (a directory or a tarball with one top directory) as a git repository."""
    if source.is_dir():
        shutil.copytree(source, into / "repo")
        repo = into / "repo"
    else:
        with tarfile.open(source) as archive:
            archive.extractall(into / "src", filter="data")
        tops = list((into / "src").iterdir())
        repo = tops[0] if len(tops) == 1 else into / "src"
    git = ["git", "-C", str(repo), "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "sdist"]):
        subprocess.run([*git, *command], check=True, capture_output=True)
    return repo


def in_process(repo: Path, store: Path, runs: int) -> None:
    """``pack_task`` (analysis, walk, final order, knapsack) timed inside this process."""
    sys.path.insert(0, str(ROOT))
    from knowing_pr.pipeline.task import TaskRequest, pack_task
    from knowing_pr.pipeline.workspace import open_workspace
    from knowing_pr.store import Store

    ws = open_workspace(repo, db=str(store))
    opened = Store.open(store, readonly=True)
    try:
        head = opened.indexed_commit or ""
        pack_task(ws, opened, head, TaskRequest("warm the caches", fmt="json"))
        times = []
        for text in TASKS:
            for _ in range(runs):
                started = time.perf_counter()
                pack_task(ws, opened, head, TaskRequest(text, fmt="json"))
                times.append(time.perf_counter() - started)
    finally:
        opened.close()
    print(f"in process, pack_task: median {statistics.median(times):.3f} s, worst {max(times):.3f} s")


def summary(times: Sequence[float], baseline: float) -> str:
    median = statistics.median(times)
    return f"median {median:.3f} s, worst {max(times):.3f} s, {median / baseline:.1f}x python -c pass"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--source", required=True, help="a source directory or a .tar.gz (e.g. Django's sdist)"
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--work", default=None, help="keep the repository and store here (default: a temp dir)"
    )
    parser.add_argument(
        "--code", default=str(ROOT), help="the knowing-pr checkout to time (default: this one)"
    )
    args = parser.parse_args(argv)
    code = Path(args.code).resolve()

    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="task-latency-"))
    work.mkdir(parents=True, exist_ok=True)
    repo = next((p for p in work.glob("src/*") if (p / ".git").exists()), None) or unpack(
        Path(args.source), work
    )
    store = work / ("store.sqlite" if code == ROOT else f"store-{code.name}.sqlite")
    index = [sys.executable, "-m", "knowing_pr", "index", "--repo", str(repo), "--db", str(store), "--quiet"]
    indexed = run(index, code)
    files = subprocess.run(["git", "-C", str(repo), "ls-files"], capture_output=True, text=True).stdout.count(
        "\n"
    )
    print(f"{repo.name}: {files} files, indexed in {indexed:.1f} s (not timed below)")

    bare = [run([sys.executable, "-c", "pass"]) for _ in range(args.runs)]
    baseline = statistics.median(bare)
    print(f"python -c pass: median {baseline:.3f} s")
    every: list[float] = []
    for text in TASKS:
        command = [sys.executable, "-m", "knowing_pr", "task", text, "--repo", str(repo), "--db", str(store)]
        times = [run([*command, "--format", "json"], code) for _ in range(args.runs)]
        every.extend(times)
        print(f"task {text[:60]!r}: {summary(times, baseline)}")
    print(f"all tasks: {summary(every, baseline)}")
    imports = [run([sys.executable, "-c", "import knowing_pr.pipeline"], code) for _ in range(args.runs)]
    print(
        f"python -c 'import knowing_pr.pipeline' (what the command line preloads): {summary(imports, baseline)}"
    )
    if code == ROOT:
        in_process(repo, store, args.runs)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
