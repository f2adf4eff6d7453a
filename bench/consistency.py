"""Incremental == full on a real history: walk N commits forward one at a time, then compare.

Usage:
    python bench/consistency.py --repo PATH [--commits 200] [--start REV]

Indexes the first-parent commit N steps before HEAD (or --start) in full, then every later
first-parent commit incrementally into the same store, checking the store's integrity
after each step; finally a full index of the last commit into a second store must give the
same nodes, edges, files, directory roots, graph root and adjacency bytes. Prints timings
(median / p95 per incremental step) and the number of inconsistencies (target: 0).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from knowing_pr.config import Settings  # noqa: E402
from knowing_pr.git import GitRepo  # noqa: E402
from knowing_pr.index import index_commit  # noqa: E402
from knowing_pr.store import Store  # noqa: E402


def snapshot(db: Path) -> dict[str, object]:
    conn = sqlite3.connect(db)
    try:
        return {
            "nodes": conn.execute(
                "SELECT id, path, name, qualified_name, kind, start_line, end_line, signature, doc, content_hash"
                " FROM nodes ORDER BY id"
            ).fetchall(),
            "edges": sorted(
                conn.execute(
                    "SELECT s.id, t.id, e.kind, e.confidence, coalesce(f.path, e.origin) FROM edges e"
                    " JOIN nodes s ON s.rowid = e.source JOIN nodes t ON t.rowid = e.target"
                    " LEFT JOIN files f ON f.fid = e.origin"
                ).fetchall()
            ),
            "files": conn.execute(
                "SELECT path, blob_id, status, reason, root FROM files ORDER BY path"
            ).fetchall(),
            "dirs": conn.execute("SELECT path, root FROM dirs ORDER BY path").fetchall(),
            "graph_root": conn.execute("SELECT value FROM meta WHERE key = 'graph_root'").fetchone(),
            "adjacency": conn.execute("SELECT tag, data FROM blobs WHERE name = 'adjacency'").fetchone(),
        }
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repo", required=True, type=Path)
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--start", default=None)
    args = parser.parse_args()
    head = subprocess.run(
        ["git", "-C", str(args.repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    chain = subprocess.run(
        [
            "git",
            "-C",
            str(args.repo),
            "rev-list",
            "--first-parent",
            "--reverse",
            f"--max-count={args.commits + 1}",
            args.start or head,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    repo = GitRepo.open(str(args.repo))
    settings = Settings()
    problems: list[str] = []
    steps_ms: list[float] = []
    with tempfile.TemporaryDirectory(prefix="knowing-pr-consistency-") as tmp:
        inc_db, full_db = Path(tmp) / "inc.sqlite", Path(tmp) / "full.sqlite"
        index_commit(repo, settings, rev=chain[0], db_path=inc_db, full=True)
        for sha in chain[1:]:
            t0 = time.perf_counter()
            report = index_commit(repo, settings, rev=sha, db_path=inc_db)
            steps_ms.append((time.perf_counter() - t0) * 1000)
            with Store.open(inc_db) as store:
                found = store.integrity_problems()
            if found:
                problems.append(f"{sha[:12]}: {found}")
            if report.adjacency != "patched":
                problems.append(f"{sha[:12]}: adjacency {report.adjacency}")
        index_commit(repo, settings, rev=chain[-1], db_path=full_db, full=True)
        a, b = snapshot(inc_db), snapshot(full_db)
        for key in a:
            if a[key] != b[key]:
                problems.append(f"final {key} differs from a full index")
                if isinstance(a[key], list) and isinstance(b[key], list):
                    only_inc = sorted(set(a[key]) - set(b[key]))[:5]  # type: ignore[arg-type]
                    only_full = sorted(set(b[key]) - set(a[key]))[:5]  # type: ignore[arg-type]
                    problems.append(f"  only incremental: {only_inc}")
                    problems.append(f"  only full: {only_full}")
    steps_ms.sort()
    p95 = steps_ms[int(0.95 * (len(steps_ms) - 1))] if steps_ms else 0.0
    print(f"repository {args.repo.name}: {len(chain) - 1} incremental steps")
    print(f"incremental step: median {statistics.median(steps_ms):.0f} ms, p95 {p95:.0f} ms")
    print(f"inconsistencies: {len(problems)}")
    for line in problems[:20]:
        print("  " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
