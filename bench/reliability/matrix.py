"""Platform matrix of the reliability test list: git builds × hook tests, Python versions ×
the test suite and the PackRoot → one markdown table (or ``--json``).

Usage::

    python bench/reliability/matrix.py [--git PATH/TO/git ...] [--python PATH/TO/python ...]
                                       [--suite hooks|all] [--json]

Every ``--git`` is a git binary; the git on PATH is always included. For each one, the hook
tests run with that git first on PATH: ``tests/reliability/test_git_semantics.py`` (G1: 16
everyday commands × plain hooks, pre-commit and, on git ≥ 2.54, configuration-based hooks),
``tests/reliability/test_pre_commit.py`` (G5) and ``tests/test_hooks.py`` (G2, G4, G6–G8).

Every ``--python`` is an interpreter that already has this project installed with its test
extras (``pythonX.Y -m venv V && V/bin/pip install -e ".[test]"``); the interpreter running
this script is always included. For each one:

* the PackRoot of the same PR on a generated repository (``knowing-pr pr --format json`` with
  a fresh store), under ``PYTHONHASHSEED`` 0 and 1, so the table shows whether every
  interpreter gives one root;
* ``--suite hooks`` (default): the hook tests above; ``--suite all``: the whole test suite.

Counts come from pytest's own summary line (passed / failed / skipped / errors).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pygit2

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]
HOOK_TESTS = (
    "tests/reliability/test_git_semantics.py",
    "tests/reliability/test_pre_commit.py",
    "tests/test_hooks.py",
)
SUMMARY_COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)")


def version_of(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    return (done.stdout or done.stderr).strip().splitlines()[0] if done.returncode == 0 else "unavailable"


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "KNOWING_PR_", "PYTHONHASHSEED"))}
    env.update(extra)
    return env


def run_pytest(python: str, tests: list[str], env: dict[str, str]) -> dict[str, Any]:
    started = time.monotonic()
    done = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-300:]
    counts = {
        kind.rstrip("s") if kind.startswith("error") else kind: int(n)
        for n, kind in SUMMARY_COUNT.findall(tail)
    }
    failures = [line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    return {
        "exit": done.returncode,
        "seconds": round(time.monotonic() - started, 1),
        "counts": counts,
        "failures": failures[:10],
        "summary": tail,
    }


# -- git builds ------------------------------------------------------------------------------------


def git_row(git: str) -> dict[str, Any]:
    bin_dir = str(Path(git).resolve().parent)
    env = clean_env(PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    version = subprocess.run([git, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    return {"git": version, "path_dir": bin_dir, **run_pytest(sys.executable, list(HOOK_TESTS), env)}


# -- Python versions -------------------------------------------------------------------------------


def fixed_repository(path: Path) -> tuple[str, str]:
    """A small repository with fixed authors and dates: base commit B and head commit H."""
    repo = pygit2.init_repository(str(path), initial_head="main")
    sig = pygit2.Signature("matrix", "matrix@example.com", 1_700_000_000, 0)
    sources = {
        f"pkg/mod{n}.py": (
            f"from pkg.mod{(n + 1) % 12} import step{(n + 1) % 12}\n\n\n"
            f"class Worker{n}:\n    def run(self, value: int) -> int:\n        return step{n}(value)\n\n\n"
            f"def step{n}(value: int) -> int:\n    return value + {n}\n\n\n"
            f"def chain{n}(value: int) -> int:\n    return step{(n + 1) % 12}(value) * {n}\n"
        )
        for n in range(12)
    }
    sources["tests/test_mod0.py"] = (
        "from pkg.mod0 import step0\n\n\ndef test_step0():\n    assert step0(1) == 1\n"
    )

    def commit(files: dict[str, str], parents: list[str], message: str) -> str:
        builder = repo.TreeBuilder()
        trees: dict[str, dict[str, str]] = {}
        for name, text in files.items():
            folder, _, leaf = name.rpartition("/")
            trees.setdefault(folder, {})[leaf] = text
        for folder, leaves in sorted(trees.items()):
            sub = repo.TreeBuilder()
            for leaf, text in sorted(leaves.items()):
                sub.insert(leaf, repo.create_blob(text.encode()), pygit2.GIT_FILEMODE_BLOB)
            builder.insert(folder, sub.write(), pygit2.GIT_FILEMODE_TREE)
        return str(repo.create_commit("refs/heads/main", sig, sig, message, builder.write(), parents))

    base = commit(sources, [], "base")
    changed = dict(sources)
    changed["pkg/mod3.py"] = sources["pkg/mod3.py"].replace("return value + 3", "return value + 30")
    changed["pkg/mod7.py"] = (
        sources["pkg/mod7.py"] + "\n\ndef extra7(value: int) -> int:\n    return step7(value)\n"
    )
    head = commit(changed, [base], "head")
    return base, head


def pack_root(python: str, repo: Path, base: str, head: str, seed: str, scratch: Path) -> str:
    """The PackRoot one interpreter gives with a fresh store of its own."""
    db = Path(tempfile.mkdtemp(dir=scratch, prefix="store-")) / "index.sqlite"
    env = clean_env(PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT), KNOWING_PR_DB=str(db))
    done = subprocess.run(
        [
            python,
            "-m",
            "knowing_pr",
            "pr",
            "--repo",
            str(repo),
            "--base",
            base,
            "--head",
            head,
            "--format",
            "json",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return f"error: {done.stderr.strip()[-200:]}"
    return str(json.loads(done.stdout)["pack_root"])


def python_row(python: str, suite: str, repo: Path, base: str, head: str, scratch: Path) -> dict[str, Any]:
    version = version_of([python, "--version"])
    roots = sorted({pack_root(python, repo, base, head, seed, scratch) for seed in ("0", "1")})
    tests = list(HOOK_TESTS) if suite == "hooks" else ["tests"]
    return {"python": version, "pack_roots": roots, **run_pytest(python, tests, clean_env())}


# -- report ----------------------------------------------------------------------------------------


def counts_text(row: dict[str, Any]) -> str:
    counts = row["counts"]
    parts = [
        f"{counts.get(kind, 0)} {kind}"
        for kind in ("passed", "failed", "skipped", "error")
        if counts.get(kind)
    ]
    return f"{', '.join(parts) or row['summary']} in {row['seconds']} s (exit {row['exit']})"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--git", action="append", default=[], help="another git binary (repeatable)")
    parser.add_argument("--python", action="append", default=[], help="another interpreter (repeatable)")
    parser.add_argument("--suite", choices=("hooks", "all"), default="hooks")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    path_git = shutil.which("git")
    if path_git is None:
        parser.error("git is not on PATH")
    gits = [path_git, *args.git]
    pythons = [sys.executable, *args.python]
    for binary in [*gits, *pythons]:
        if not os.access(binary, os.X_OK):
            parser.error(f"not an executable: {binary}")

    with tempfile.TemporaryDirectory(prefix="knowing-pr-matrix-") as tmp:
        scratch = Path(tmp)
        base, head = fixed_repository(scratch / "repo")
        results: dict[str, Any] = {
            "machine": f"{platform.platform()}, {os.cpu_count()} CPUs; SQLite {sqlite3.sqlite_version}",
            "git": [git_row(git) for git in gits],
            "python": [
                python_row(python, args.suite, scratch / "repo", base, head, scratch) for python in pythons
            ],
        }
    roots = {root for row in results["python"] for root in row["pack_roots"]}
    results["one_pack_root"] = len(roots) == 1 and not any(root.startswith("error") for root in roots)

    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"Machine: {results['machine']}\n")
        print("| run | tests | result |\n|---|---|---|")
        for row in results["git"]:
            print(f"| {row['git']} | hook tests (G1, G2, G4–G9) | {counts_text(row)} |")
        for row in results["python"]:
            print(f"| {row['python']} | {args.suite} suite | {counts_text(row)} |")
        print("\n| interpreter | PackRoot (hash seeds 0 and 1) |\n|---|---|")
        for row in results["python"]:
            print(f"| {row['python']} | {', '.join(r[:16] for r in row['pack_roots'])} |")
        print(
            f"\nOne PackRoot across every interpreter and seed: {'yes' if results['one_pack_root'] else 'NO'}"
        )
        for row in [*results["git"], *results["python"]]:
            for line in row["failures"]:
                print(f"  {line}")
    failed = any(row["exit"] != 0 for row in [*results["git"], *results["python"]])
    return 1 if failed or not results["one_pack_root"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
