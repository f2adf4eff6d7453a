"""Load figure L2 of the reliability test list: hook latency on normal commits of 1, 20 and 200
files in L3's generated monorepo → one markdown table (or ``--json``).

Usage::

    python bench/reliability/hook_load.py [--files 100000] [--rounds 5] [--sizes 1,20,200]

The monorepo of ``bench/reliability/load.py`` (``--files`` modules in four languages) is
written into a real work tree, indexed cold (``knowing-pr index --full``, as a fresh process)
and given the hooks (``knowing-pr hook install``). Then, for each size and round:

1. **without the hook**: edit N modules, ``git add``, time ``git -c core.hooksPath=<empty>
   commit``; then an untimed ``knowing-pr index`` catches the store up;
2. **with the hook**: edit N other modules, ``git add``, time ``git commit`` (the hook hands
   the work to its background worker and returns), then poll the store until it records the
   new HEAD: the time from the start of ``git commit`` to that moment is "commit → store at
   HEAD".

Reported per size: ``git commit`` p50/p95 without and with the hook (the difference is what
the hook adds to the user's command), commit → store at HEAD p50/p95, and the index runs
the hook's worker logged.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))

import load  # noqa: E402  (the L3 generator and helpers)


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "KNOWING_PR_"))}
    env.update(
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@example.com",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@example.com",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        PYTHONPATH=str(load.ROOT),
    )
    return env


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, env=git_env(), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args[:3])} failed: {done.stderr[-2000:]}")
    return done.stdout


def knowing_pr(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "knowing_pr", *args],
        cwd=repo,
        env=git_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"knowing-pr {' '.join(args)} failed: {done.stderr[-2000:]}")
    return done


def indexed_commit(db: Path) -> str | None:
    """The store's commit as the hook reads it (None also while the store is being created)."""
    from knowing_pr.hooks import read_indexed_commit

    try:
        return read_indexed_commit(str(db))
    except sqlite3.Error:
        return None


def wait_for_head(db: Path, head: str, timeout_s: float = 600) -> None:
    """Until the store records ``head``."""
    deadline = time.perf_counter() + timeout_s
    while indexed_commit(db) != head:
        if time.perf_counter() > deadline:
            raise SystemExit(f"the store did not reach {head[:12]} within {timeout_s:.0f} s")
        time.sleep(0.02)


def worker_idle(db: Path, timeout_s: float = 600) -> None:
    """Wait for the hook's worker to release its lock."""
    from knowing_pr.hooks.files import LOCK_NAME, lock_is_held

    deadline = time.monotonic() + timeout_s
    while lock_is_held(str(db.parent / LOCK_NAME)):
        if time.monotonic() > deadline:
            raise SystemExit("the hook worker did not finish")
        time.sleep(0.05)


def edit(repo: Path, modules: list[load.Module], round_no: int) -> None:
    for module in modules:
        (repo / module.path).write_text(load.edited_source(module, round_no), encoding="utf-8")
    git(repo, "add", "--", *[m.path for m in modules])


def timed_commit(repo: Path, message: str, *, hooks: bool, empty_hooks: Path) -> float:
    args = (
        ["git"] + ([] if hooks else ["-c", f"core.hooksPath={empty_hooks}"]) + ["commit", "-q", "-m", message]
    )
    started = time.perf_counter()
    done = subprocess.run(args, cwd=repo, env=git_env(), capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"git commit failed: {done.stderr[-2000:]}")
    return elapsed


def index_runs(db: Path) -> int:
    log = db.parent / "hook.log"
    return (
        sum(1 for line in log.read_text(encoding="utf-8").splitlines() if " indexed " in line)
        if log.exists()
        else 0
    )


def measure(work: Path, files: int, rounds: int, sizes: list[int], seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    modules = load.plan_modules(files - len(load.support_files()), rng)
    sources = {**load.support_files(), **{m.path: load.module_source(m) for m in modules}}
    repo = work / "repo"
    started = time.perf_counter()
    load.write_repository(repo, sources)
    git(repo, "reset", "-q", "--hard")  # a work tree, as a developer has
    log(f"L2: {len(sources):,} files generated and checked out in {time.perf_counter() - started:.0f} s")
    db = repo / ".git" / "knowing-pr" / "index.sqlite"
    started = time.perf_counter()
    knowing_pr(repo, "index", "--full", "--quiet")
    cold_s = time.perf_counter() - started
    log(f"L2: cold index {cold_s:.0f} s")
    knowing_pr(repo, "hook", "install")
    empty_hooks = work / "no-hooks"
    empty_hooks.mkdir()
    editable = [m for m in modules if m.language != "java"]  # every language but Java's nested dirs
    rng.shuffle(editable)
    cursor = 0
    results: dict[str, Any] = {"files": len(sources), "cold_index_s": round(cold_s, 1), "sizes": {}}
    for size in sizes:
        without: list[float] = []
        with_hook: list[float] = []
        to_store: list[float] = []
        runs_before = index_runs(db)
        for round_no in range(1, rounds + 1):
            chosen, cursor = editable[cursor : cursor + size], cursor + size
            edit(repo, chosen, round_no)
            without.append(
                timed_commit(repo, f"no hook {size}/{round_no}", hooks=False, empty_hooks=empty_hooks)
            )
            knowing_pr(repo, "index", "--quiet")
            chosen, cursor = editable[cursor : cursor + size], cursor + size
            edit(repo, chosen, round_no)
            started = time.perf_counter()
            with_hook.append(
                timed_commit(repo, f"hook {size}/{round_no}", hooks=True, empty_hooks=empty_hooks)
            )
            head = git(repo, "rev-parse", "HEAD").strip()
            wait_for_head(db, head)
            to_store.append(time.perf_counter() - started)
            worker_idle(db)
            log(
                f"L2: {size} files, round {round_no}: commit {without[-1] * 1000:.0f} ms without the hook, "
                f"{with_hook[-1] * 1000:.0f} ms with it; store at HEAD after {to_store[-1]:.2f} s"
            )
        results["sizes"][str(size)] = {
            "commit_without_hook_ms": [round(v * 1000) for v in without],
            "commit_with_hook_ms": [round(v * 1000) for v in with_hook],
            "commit_to_store_s": [round(v, 2) for v in to_store],
            "index_runs": index_runs(db) - runs_before,
        }
    return results


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def summary_rows(results: dict[str, Any]) -> list[str]:
    rows = []
    for size, r in results["sizes"].items():
        without = [float(v) for v in r["commit_without_hook_ms"]]
        hooked = [float(v) for v in r["commit_with_hook_ms"]]
        store = [float(v) for v in r["commit_to_store_s"]]
        added = statistics.median(hooked) - statistics.median(without)
        rows.append(
            f"| {size} | {statistics.median(without):.0f} / {load.percentile(without, 0.95):.0f} ms "
            f"| {statistics.median(hooked):.0f} / {load.percentile(hooked, 0.95):.0f} ms | {added:+.0f} ms "
            f"| {statistics.median(store):.2f} / {load.percentile(store, 0.95):.2f} s | {r['index_runs']} of {len(store)} |"
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="1,20,200")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sizes = [int(part) for part in args.sizes.split(",") if part.strip()]
    if not sizes or min(sizes) < 1:
        parser.error("--sizes must list positive numbers of files, e.g. 1,20,200")
    with tempfile.TemporaryDirectory(prefix="knowing-pr-l2-") as tmp:
        results = {
            "environment": load.environment(),
            **measure(Path(tmp), args.files, args.rounds, sizes, args.seed),
        }
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"machine: {results['environment']}")
    print(f"repository: {results['files']:,} files; cold index {results['cold_index_s']} s\n")
    print(
        "| files changed | `git commit` without hook p50 / p95 | with hook p50 / p95 | added (p50) "
        "| commit → store at HEAD p50 / p95 | index runs |"
    )
    print("|---|---|---|---|---|---|")
    for row in summary_rows(results):
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
