"""ForPR latency on an indexed repository: in-process phases and the whole command.

Usage:
    python bench/pr_latency.py --repo PATH [--runs 20] [--seed 1]

The store must be warm (the script indexes first if needed). For --runs random changed-file
sets (1–3 source files each) it reports, median and p95 in ms:
  - in process: load (adjacency blob + the history signals), rank (``rank_candidates``: matrix,
    walk, HITS, score, reasons, fusion), pack (knapsack on the rendered costs, the PackRoot and
    the rendered markdown), and their total;
  - fresh process: ``python -m knowing_pr pr --files ...`` wall time (start-up and imports
    included), plus the bare interpreter start-up for comparison.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repo", required=True)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--db", default=None)
    args = parser.parse_args()

    from knowing_pr.graph import is_test_path
    from knowing_pr.index import index_commit
    from knowing_pr.pack import PackSpec, build_pack
    from knowing_pr.pipeline import open_workspace
    from knowing_pr.rank import RankQuery, load_adjacency, rank_candidates, read_history_signals
    from knowing_pr.rank.seeds import ChangedFile, change_seeds
    from knowing_pr.store.opening import open_store

    ws = open_workspace(args.repo, db=args.db)
    index_commit(ws.repo, ws.settings, db_path=ws.db_path)
    store, _ = open_store(ws.db_path)
    paths = sorted(p for p in store.indexed_paths() if not is_test_path(p))
    rng = random.Random(args.seed)
    phases: dict[str, list[float]] = {k: [] for k in ("load", "rank", "pack (knapsack + render)", "total")}
    settings = ws.settings
    for _ in range(args.runs):
        changed = sorted(rng.sample(paths, rng.randint(1, 3)))
        t0 = time.perf_counter()
        adjacency = load_adjacency(store)
        history = read_history_signals(store, settings, changed, with_recency=True, with_cochange=True)
        t1 = time.perf_counter()
        nodes_by_path: dict[str, list] = {}
        for node in store.nodes_in_paths(changed):
            nodes_by_path.setdefault(node.path, []).append(node)
        seeds = change_seeds([ChangedFile(p) for p in changed], nodes_by_path, (), settings.rank)
        query = RankQuery(mode="pr", seeds=seeds, changed_paths=tuple(changed))
        ranking = rank_candidates(store, adjacency, settings, query, history)
        t2 = time.perf_counter()
        spec = PackSpec(
            mode="pr",
            identity_inputs={"files": changed},
            inputs={"files": changed, "base": None, "head": None},
            fmt="markdown",
            commit=None,
            graph_root=store.graph_root or "",
            test_share=settings.pack.test_share,
            cochange=history.evidence,
        )
        build_pack(ranking, spec, settings)
        t3 = time.perf_counter()
        for key, value in (
            ("load", t1 - t0),
            ("rank", t2 - t1),
            ("pack (knapsack + render)", t3 - t2),
            ("total", t3 - t0),
        ):
            phases[key].append(value * 1000)
    store.close()

    fresh: list[float] = []
    startup: list[float] = []
    for _ in range(max(3, args.runs // 4)):
        changed = rng.sample(paths, 1)
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "knowing_pr", "pr", "--repo", args.repo, "--files", *changed],
            capture_output=True,
            check=True,
        )
        fresh.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        startup.append((time.perf_counter() - t0) * 1000)

    print(f"repository {Path(args.repo).name}: {len(paths)} source files, {args.runs} packs")
    print("| phase | p50 ms | p95 ms |")
    print("|---|---|---|")
    for key, values in phases.items():
        print(f"| {key} | {statistics.median(values):.1f} | {pct(values, 0.95):.1f} |")
    print(
        f"| fresh process `knowing-pr pr --files` | {statistics.median(fresh):.0f} | {pct(fresh, 0.95):.0f} |"
    )
    print(f"| bare `python -c pass` | {statistics.median(startup):.0f} | {pct(startup, 0.95):.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
