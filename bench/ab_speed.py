"""Two checkouts of knowing-pr (this one and a baseline) × one repository → the same commands timed
alternately in one run, and their ratios: a full index, a 1-file incremental index and a `pr`,
each as a fresh process.

Usage::

    git worktree add ../kpr-base <commit>          # the baseline, e.g. the previous commit
    python bench/ab_speed.py --baseline ../kpr-base --repo <clone> [--rounds 5]
    python bench/ab_speed.py --baseline ../kpr-base --django-sdist Django-5.1.4.tar.gz

The machines these run on are shared and noisy, so absolute times from different runs are not
comparable; what this reports is the ratio of medians measured side by side: each round runs
the baseline and this checkout back to back (the order alternates every round), on the same
repository copy, each with its own store. Both checkouts run with this interpreter and its
installed dependencies (``PYTHONPATH`` points at the checkout).

Per round and checkout:

- ``full``: ``python -m knowing_pr index --full`` into an empty store (wall, and CPU of the
  process and its parse workers);
- ``incremental``: a commit that appends a function to one source file, then
  ``python -m knowing_pr index`` (the store catches up by one commit);
- ``pr``: ``python -m knowing_pr pr --files <a source file> --format json`` on the warm store.

The repository's copy gets one commit per round; the checkouts index the same commits.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from index_perf import edit_and_commit, repo_copy, repo_from_sdist  # noqa: E402

Measure = dict[str, list[tuple[float, float]]]  # step → [(wall s, cpu s)]


def timed(command: list[str], checkout: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children) of one command."""
    env = {"PYTHONPATH": str(checkout), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def a_source_file(repo: Path) -> str:
    listed = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "--name-only", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    )
    paths = sorted(
        p for p in listed.stdout.splitlines() if p.endswith((".py", ".go", ".ts", ".js", ".rs", ".java"))
    )
    candidates = [p for p in paths if "test" not in p.lower()] or paths
    return candidates[len(candidates) // 2]


def round_of(checkout: Path, repo: Path, db: Path, changed: str, results: Measure) -> None:
    python = [sys.executable, "-m", "knowing_pr"]
    db.unlink(missing_ok=True)
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    results.setdefault("full", []).append(
        timed([*python, "index", "--full", "--quiet", "--repo", str(repo), "--db", str(db)], checkout)
    )
    results.setdefault("pr", []).append(
        timed(
            [*python, "pr", "--repo", str(repo), "--db", str(db), "--files", changed, "--format", "json"],
            checkout,
        )
    )


def incremental_round(
    checkouts: dict[str, Path], repo: Path, dbs: dict[str, Path], round_no: int, results: dict[str, Measure]
) -> None:
    edit_and_commit(repo, 1, round_no)
    for name, checkout in checkouts.items():
        results[name].setdefault("incremental", []).append(
            timed(
                [
                    sys.executable,
                    "-m",
                    "knowing_pr",
                    "index",
                    "--quiet",
                    "--repo",
                    str(repo),
                    "--db",
                    str(dbs[name]),
                ],
                checkout,
            )
        )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", type=Path, required=True, help="a checkout of the baseline commit")
    parser.add_argument("--repo", type=Path, default=None)
    parser.add_argument("--django-sdist", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    checkouts = {"baseline": args.baseline.resolve(), "this": HERE.parent}
    results: dict[str, Measure] = {name: {} for name in checkouts}
    with tempfile.TemporaryDirectory(prefix="kpr-ab-") as tmp:
        work = Path(tmp)
        if args.django_sdist:
            repo = repo_from_sdist(args.django_sdist, work)
            label = args.django_sdist.name
        elif args.repo:
            repo = repo_copy(args.repo, None, work)
            label = args.repo.parent.name if args.repo.name in ("repo", ".git") else args.repo.name
        else:
            parser.error("give --repo or --django-sdist")
        changed = a_source_file(repo)
        dbs = {name: work / f"{name}.sqlite" for name in checkouts}
        for round_no in range(args.rounds):
            order = list(checkouts) if round_no % 2 == 0 else list(reversed(checkouts))
            for name in order:
                round_of(checkouts[name], repo, dbs[name], changed, results[name])
            incremental_round({n: checkouts[n] for n in order}, repo, dbs, 5000 + round_no, results)
            print(f"round {round_no + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    print(f"{label}: {args.rounds} rounds, baseline {args.baseline.name}, changed file {changed}")
    print(
        "| step | baseline wall s | this wall s | ratio (wall) | baseline CPU s | this CPU s | ratio (CPU) |"
    )
    print("|---|---|---|---|---|---|---|")
    for step in ("full", "incremental", "pr"):
        base = results["baseline"][step]
        this = results["this"][step]
        bw, tw = statistics.median(w for w, _ in base), statistics.median(w for w, _ in this)
        bc, tc = statistics.median(c for _, c in base), statistics.median(c for _, c in this)
        print(f"| {step} | {bw:.3f} | {tw:.3f} | {tw / bw:.2f} | {bc:.3f} | {tc:.3f} | {tc / bc:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
