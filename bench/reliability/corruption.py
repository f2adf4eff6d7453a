"""F5 long run: ``--variants`` damaged copies of a good store (byte flips in the header,
b-tree pages, FTS5 shadow tables and the adjacency blob; truncations; zero length; not SQLite;
a future schema) → one ``knowing-pr index --json`` and one ``knowing-pr pr`` per variant
through the real CLI → a markdown table of verdicts.

Usage::

    python bench/reliability/corruption.py [--variants 100] [--files 60] [--seed 7]

Verdicts: ``rebuilt`` (moved aside to ``*.corrupt-*``, rebuilt, reported in the run report),
``harmless`` (the flip hit bytes nothing reads: the final store equals a clean index),
``content-only`` (a flip inside a record's payload that SQLite cannot see — no checksums —
so the final store differs from a clean index), ``failed`` (an exit code other than 0, a
traceback, or a structurally damaged final store).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path[:0] = [str(HERE.parents[2]), str(HERE.parents[2] / "tests" / "reliability")]

from corruption_support import moved_aside, plant, variants  # noqa: E402
from crash_support import build_history  # noqa: E402
from reliability_support import Oracle, run_cli  # noqa: E402

from knowing_pr.config import Settings  # noqa: E402
from knowing_pr.git import GitRepo  # noqa: E402
from knowing_pr.index import index_commit  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--variants", type=int, default=100)
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    verdicts: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = {}
    detect_s: list[float] = []
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="knowing-pr-corrupt-") as tmp:
        root = Path(tmp)
        repo = root / "repo"
        c1, c2 = build_history(repo, args.files)
        template = root / "template.sqlite"
        index_commit(GitRepo.open(str(repo)), Settings(), rev=c1, db_path=template)
        oracle = Oracle(repo, root / "clean")
        db = root / "index.sqlite"
        for name, content in variants(template, args.variants, seed=args.seed):
            kind = name.split("@")[0].split("-page")[0]
            plant(db, content)
            started = time.monotonic()
            index = run_cli("index", "--json", "--db", str(db), cwd=repo)
            elapsed = time.monotonic() - started
            pr = run_cli("pr", "--db", str(db), "--files", "pkg1/m1.py", "--format", "json", cwd=repo)
            problems = oracle.problems(db, (c2,))
            structural = [p for p in problems if "differs from a clean full index" not in p]
            if index.returncode or pr.returncode or "Traceback" in index.stderr + pr.stderr or structural:
                verdict = "failed"
                failures.append(f"{name}: {index.stderr[-200:]} {pr.stderr[-200:]} {structural}")
            elif moved_aside(db):
                verdict = "rebuilt"
                detect_s.append(elapsed)
                if not json.loads(index.stdout).get("recovered_from"):
                    verdict = "failed"
                    failures.append(f"{name}: rebuilt but not reported")
            elif problems:
                verdict = "content-only"
            else:
                verdict = "harmless"
            verdicts[verdict] += 1
            by_kind.setdefault(kind, Counter())[verdict] += 1
    print(f"{args.variants} variants of a {args.files}-file store (seed {args.seed})\n")
    print("| variant kind | rebuilt | harmless | content-only | failed |")
    print("|---|---|---|---|---|")
    for kind, c in sorted(by_kind.items()):
        print(f"| {kind} | {c['rebuilt']} | {c['harmless']} | {c['content-only']} | {c['failed']} |")
    print(
        f"| **all** | {verdicts['rebuilt']} | {verdicts['harmless']} | {verdicts['content-only']} |"
        f" {verdicts['failed']} |"
    )
    if detect_s:
        print(
            "\nindex run that detected and rebuilt (CLI wall, incl. start-up): median"
            f" {statistics.median(detect_s):.2f} s"
        )
    for line in failures:
        print("FAILED", line)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
