"""One commit on a long history → the incremental ``knowing-pr index`` after it, for this tree and
an older one in the same run (issue 29: a history past ``history.max_commits`` was mined again
from scratch on every commit).

The repository is cloned into a scratch directory (it is only read). Each tree indexes the
clone's HEAD from scratch into a store of its own; then commits are added one at a time (one
line appended to the first tracked file with the extension ``--suffix``) and each tree indexes
each new commit in turn, a fresh process per run: wall, CPU of the process, its history stage,
and whether that run mined the history from scratch (the head is among the store's kept states,
``index/historykeep.py``) or extended it. With ``--switch``, a topic branch is then made at the
clone's first HEAD with one commit of its own and each tree indexes it: the store's rows (the
main line's) do not reach it, the state kept at the first index does (a branch switch).

Usage::

    nice -n 10 python bench/history_increment.py --code OLD_TREE REPO [--commits 3] [--switch] [--json out.json]

``OLD_TREE`` is a source tree of knowing-pr (e.g. an older commit's ``git archive``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from big_repos import tree_problem

HERE = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", help="a work tree (cloned, never changed)")
    parser.add_argument("--code", required=True, help="the older source tree of knowing-pr")
    parser.add_argument("--commits", type=int, default=3)
    parser.add_argument("--suffix", default=".py")
    parser.add_argument("--switch", action="store_true", help="then index a topic branch off the first HEAD")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    problem = tree_problem([Path(args.code).resolve()])
    if problem:  # a directory without its own knowing_pr would time the installed one
        print(f"error: {problem}", file=sys.stderr)
        return 2
    trees = {"before": Path(args.code).resolve(), "this tree": HERE}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="history-increment-") as scratch:
        clone = Path(scratch) / "clone"
        _git(Path(scratch), "clone", "-q", str(Path(args.repo).resolve()), str(clone))
        stores = {name: Path(scratch) / f"{n}.sqlite" for n, name in enumerate(trees)}
        for name, tree in trees.items():
            rows.append(_index(name, tree, clone, stores[name], "full"))
        target = _first_tracked(clone, args.suffix)
        start = _git(clone, "rev-parse", "HEAD").strip()
        for step in range(args.commits):
            head = _commit(clone, target, step)
            for name, tree in trees.items():
                rows.append(_index(name, tree, clone, stores[name], f"commit {step + 1}", head))
        if args.switch:
            _git(clone, "checkout", "-q", "-b", "history-increment-topic", start)
            topic = _commit(clone, target, args.commits)
            for name, tree in trees.items():
                rows.append(_index(name, tree, clone, stores[name], "topic branch", topic))
    _print(rows, args.repo)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


def _index(name: str, tree: Path, clone: Path, db: Path, what: str, rev: str | None = None) -> dict[str, Any]:
    command = [sys.executable, "-m", "knowing_pr", "index", "--repo", str(clone), "--db", str(db), "--json"]
    if rev is not None:
        command += ["--rev", rev]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # run from the tree: ``python -m`` puts the working directory first on the path
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{name}: index failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    report = json.loads(done.stdout)
    with sqlite3.connect(db) as conn:
        found = conn.execute("SELECT value FROM meta WHERE key = 'history_kept_heads'").fetchone()
        mined = conn.execute("SELECT value FROM meta WHERE key = 'history_mined_commits'").fetchone()
    kept = (found[0] if found else "").split()
    return {
        "tree": name,
        "run": what,
        "mode": report["mode"],
        "wall_s": round(wall, 2),
        "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2),
        "history_s": round(report["timings_ms"].get("history", 0.0) / 1000, 2),
        "timings_ms": report["timings_ms"],
        "mined_commits": int(mined[0]) if mined else 0,
        "history": "from scratch" if report["commit"] in kept else "extended",
    }


def _first_tracked(clone: Path, suffix: str) -> str:
    names = sorted(n for n in _git(clone, "ls-files", "-z").split("\0") if n.endswith(suffix))
    if not names:
        raise SystemExit(f"no tracked file ends with {suffix!r}")
    return names[0]


def _commit(clone: Path, path: str, step: int) -> str:
    with (clone / path).open("a", encoding="utf-8") as handle:
        handle.write(f"\n# history_increment {step}\n")
    when = int(_git(clone, "log", "-1", "--format=%ct").strip()) + 60
    _git(clone, "add", "--", path)
    _git(clone, "commit", "-q", "--no-verify", "-m", f"history_increment {step}", date=when)
    return _git(clone, "rev-parse", "HEAD").strip()


def _git(cwd: Path, *args: str, date: int | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.invalid")
    env.update(GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.invalid")
    if date is not None:
        env.update(GIT_AUTHOR_DATE=f"@{date} +0000", GIT_COMMITTER_DATE=f"@{date} +0000")
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def _print(rows: list[dict[str, Any]], repo: str) -> None:
    print(f"{Path(repo).name}: incremental index after one commit (a fresh process per run)\n")
    print(
        "| tree | run | mode | wall s | CPU s | history s | other stages over 0.3 s | mined commits | history |"
    )
    print("|---|---|---|---:|---:|---:|---|---:|---|")
    for row in rows:
        others = ", ".join(
            f"{stage} {ms / 1000:.1f}"
            for stage, ms in row["timings_ms"].items()
            if stage not in ("history", "history_mine", "total") and ms >= 300
        )
        print(
            f"| {row['tree']} | {row['run']} | {row['mode']} | {row['wall_s']:.2f} | {row['cpu_s']:.2f} "
            f"| {row['history_s']:.2f} | {others} | {row['mined_commits']:,} | {row['history']} |"
        )


if __name__ == "__main__":
    raise SystemExit(main())
