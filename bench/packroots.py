"""Public repositories at pinned commits → the PackRoots of a fixed set of packs, recorded or compared.

Usage::

    python bench/packroots.py --repo PATH [--repo PATH ...] --out before.json
    python bench/packroots.py --repo PATH [--repo PATH ...] --out after.json --compare before.json

A refactoring that must not change any answer is checked with this script: record the PackRoots
before it, then compare after it. Only the command line is used (``python -m knowing_pr``), so the
script runs unchanged across internal reorganisations.

For each repository (a clone or a bare mirror) the script makes a shared clone in a temporary
directory with ``HEAD`` detached at the pinned commit (``--rev``, default: the repository's
``HEAD`` when recorded, the recorded commit when comparing), indexes it with a fresh store, and
builds, in this order:

- ``pr`` packs for the last ``--commits`` first-parent non-merge commits that change a file
  (``--base C~1 --head C``);
- ``files`` packs for the source files of the first two of those commits;
- ``task`` packs whose text is each of those commits' subject line (first ``--tasks``);
- a ``pr --files`` pack for the first commit's files.

Every pack is rendered in each of ``--formats`` (default JSON and markdown: the format enters the
PackRoot, and a JSON entry costs more tokens than a markdown one, so the two select differently)
and its PackRoot recorded with the command that built it.
``--compare`` prints each difference and exits 1 when there is any.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


#: a markdown pack names its PackRoot in the replay command it prints
MARKDOWN_ROOT = re.compile(r"replay[ `]+([0-9a-f]{64})")


def knowing_pr(clone: Path, db: Path, fmt: str, *args: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
    command = [
        sys.executable,
        "-m",
        "knowing_pr",
        *args,
        "--repo",
        str(clone),
        "--db",
        str(db),
        "--format",
        fmt,
    ]
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        return {"error": result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "failed"}
    if fmt == "json":
        return dict(json.loads(result.stdout))
    found = MARKDOWN_ROOT.search(result.stdout)
    return {"pack_root": found.group(1) if found else None}


def recent_commits(clone: Path, count: int) -> list[tuple[str, str, list[str]]]:
    """(sha, subject, changed paths) of the last ``count`` first-parent non-merge commits."""
    out = git(
        "log",
        "--first-parent",
        "--no-merges",
        "--format=%x00%H%x01%s",
        "--name-only",
        "-n",
        str(count * 3),
        cwd=clone,
    )
    commits = []
    for block in out.split("\x00")[1:]:
        head, _, rest = block.partition("\n")
        sha, _, subject = head.partition("\x01")
        paths = [line for line in rest.splitlines() if line.strip()]
        if paths and git("rev-list", "--parents", "-n", "1", sha, cwd=clone).count(" ") == 1:
            commits.append((sha, subject, paths))
        if len(commits) == count:
            break
    return commits


def packs_of_repository(
    repo: Path, rev: str | None, commits: int, tasks: int, formats: list[str]
) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="packroots-") as tmp:
        clone = Path(tmp) / "clone"
        db = Path(tmp) / "index.sqlite"
        git("clone", "-q", "--no-checkout", "--shared", str(repo), str(clone))
        pinned = rev or git("rev-parse", "HEAD", cwd=Path(repo)).strip()
        git("update-ref", "--no-deref", "HEAD", pinned, cwd=clone)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        subprocess.run(
            [sys.executable, "-m", "knowing_pr", "index", "--quiet", "--repo", str(clone), "--db", str(db)],
            check=True,
            env=env,
        )
        chosen = recent_commits(clone, commits)
        results: list[dict[str, object]] = []

        def record(kind: str, args: list[str]) -> None:
            for fmt in formats:
                pack = knowing_pr(clone, db, fmt, *args)
                results.append(
                    {
                        "kind": kind,
                        "args": [*args, "--format", fmt],
                        "pack_root": pack.get("pack_root"),
                        "error": pack.get("error"),
                    }
                )

        for sha, _, _ in chosen:
            record("pr", ["pr", "--base", f"{sha}~1", "--head", sha])
        for _, _, paths in chosen[:2]:
            record("files", ["files", *paths[:4]])
        for _, subject, _ in chosen[:tasks]:
            record("task", ["task", subject])
        if chosen:
            record("pr --files", ["pr", "--files", *chosen[0][2][:4]])
        return {"repo": str(repo), "commit": pinned, "packs": results}


def compare(before: dict[str, object], after: dict[str, object]) -> int:
    differences = 0
    total = 0
    for name, old in before.items():
        new = after.get(name)
        if not isinstance(old, dict) or not isinstance(new, dict):
            print(f"{name}: missing in one run")
            differences += 1
            continue
        for a, b in zip(old["packs"], new["packs"], strict=False):  # type: ignore[call-overload]
            total += 1
            if a["args"] != b["args"]:
                print(f"{name}: different request {a['args']} vs {b['args']}")
                differences += 1
            elif a["pack_root"] != b["pack_root"] or a["error"] != b["error"]:
                print(
                    f"{name}: {' '.join(a['args'])}: {a['pack_root'] or a['error']} -> {b['pack_root'] or b['error']}"
                )
                differences += 1
    print(f"{total} packs compared, {differences} differences")
    return 1 if differences else 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repo", action="append", default=[], type=Path, help="a clone or bare mirror")
    parser.add_argument("--rev", default=None, help="pin every repository at this revision")
    parser.add_argument("--commits", type=int, default=5, help="pr packs per repository")
    parser.add_argument("--tasks", type=int, default=3, help="task packs per repository")
    parser.add_argument("--formats", default="json,markdown", help="formats each pack is built in")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--compare", type=Path, default=None, help="an earlier --out file")
    args = parser.parse_args()

    before = json.loads(args.compare.read_text()) if args.compare else {}
    runs: dict[str, object] = {}
    for repo in args.repo:
        name = repo.resolve().name if repo.name != "repo" else repo.resolve().parent.name
        pinned = args.rev or (before.get(name) or {}).get("commit")  # type: ignore[union-attr]
        print(f"{name}: indexing and packing", file=sys.stderr)
        runs[name] = packs_of_repository(repo, pinned, args.commits, args.tasks, args.formats.split(","))
        errors = [p for p in runs[name]["packs"] if p["error"]]  # type: ignore[index]
        print(f"{name}: {len(runs[name]['packs'])} packs, {len(errors)} errors", file=sys.stderr)  # type: ignore[index]
    args.out.write_text(json.dumps(runs, indent=1, sort_keys=True) + "\n")
    total = sum(len(r["packs"]) for r in runs.values())  # type: ignore[index]
    print(f"{total} packs written to {args.out}")
    return compare(before, runs) if args.compare else 0


if __name__ == "__main__":
    raise SystemExit(main())
