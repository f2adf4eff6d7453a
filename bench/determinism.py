"""A repository → whether full indexes of one commit give one store: the graph root, the edges
and the nodes (every column) of ``--runs`` fresh full indexes, compared.

Usage::

    python bench/determinism.py --repo PATH [--repo PATH ...] [--runs 3] [--python PYTHON]

Each run is ``python -m knowing_pr index --full`` as a fresh process (its parse workers each start
with their own hash seed, as a user's do) into a new store in a temporary directory; nothing is
written to the repository. ``--python`` picks the interpreter (and so the knowing-pr installed in
it, run without ``PYTHONPATH``; default: this one with this checkout on ``PYTHONPATH``). Prints,
per repository, each run's graph root and the edges and nodes that are not in every run; exits 1
when any repository's runs differ.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODES = (
    "SELECT id, path, name, qualified_name, kind, language, start_line, end_line, signature, doc,"
    " content_hash FROM nodes"
)
EDGES = (
    "SELECT s.id, t.id, e.kind, e.confidence, e.rule FROM edges e"
    " JOIN nodes s ON s.rowid = e.source JOIN nodes t ON t.rowid = e.target"
)


Rows = set[tuple[object, ...]]


def index_once(python: str, repo: Path, db: Path) -> tuple[str, Rows, Rows]:
    """(graph root, edges, nodes) of one fresh full index of ``repo``'s HEAD."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if python == sys.executable:
        env["PYTHONPATH"] = str(ROOT)
    subprocess.run(
        [python, "-m", "knowing_pr", "index", "--repo", str(repo), "--full", "--quiet", "--db", str(db)],
        check=True,
        env=env,
        cwd=db.parent,  # ``-m`` looks in the working directory first: not in a checkout's
    )
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        root = conn.execute("SELECT value FROM meta WHERE key = 'graph_root'").fetchone()[0]
        edges = set(conn.execute(EDGES))
        nodes = set(conn.execute(NODES))
    return str(root), edges, nodes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", action="append", required=True, type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    differing = 0
    for repo in args.repo:
        with tempfile.TemporaryDirectory(prefix="knowing-pr-determinism-") as work:
            results = []
            for run in range(args.runs):
                print(f"{repo.name}: full index {run + 1} of {args.runs}", file=sys.stderr)
                results.append(index_once(args.python, repo.resolve(), Path(work) / f"run{run}.sqlite"))
        roots = [root for root, _, _ in results]
        uncommon = _not_in_every([edges for _, edges, _ in results])
        odd_nodes = _not_in_every([nodes for _, _, nodes in results])
        same = len(set(roots)) == 1 and not uncommon and not odd_nodes
        differing += not same
        print(f"\n{repo.name}: {'the same store' if same else 'stores differ'} in {args.runs} full indexes")
        for run, (root, edges, nodes) in enumerate(results, 1):
            print(f"  run {run}: graph root {root[:16]}…, {len(nodes)} nodes, {len(edges)} edges")
        if odd_nodes:
            print(f"  {len(odd_nodes)} node rows not in every run, e.g. {odd_nodes[0][:5]}")
        if uncommon:
            print(f"  {len(uncommon)} edges not in every run, e.g.:")
            for source, target, kind, confidence, rule in uncommon[:5]:
                print(f"    {source} → {target} (kind {kind}, confidence {confidence}, rule {rule})")
    return 1 if differing else 0


def _not_in_every(runs: list[Rows]) -> list[tuple[object, ...]]:
    common = set.intersection(*runs)
    return sorted({row for rows in runs for row in rows} - common, key=str)


if __name__ == "__main__":
    raise SystemExit(main())
