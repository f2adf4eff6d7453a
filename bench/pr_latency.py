"""ForPR latency on an indexed repository: in-process phases and the whole command.

Usage:
    python bench/pr_latency.py --repo PATH [--runs 20] [--seed 1]

The store must be warm (the script indexes first if needed). For --runs random changed-file
sets (1–3 source files each) it reports, median and p95 in ms:
  - in process: load (adjacency blob + transition matrix), walk (RWR), hits+score, pack
    (knapsack incl. the rendered-cost estimates), render (markdown), and their total;
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

    from knowing_pr import render
    from knowing_pr.cochange import cochange_evidence, cochange_share, recency_by_node, walk_matrix
    from knowing_pr.engine import PackRequest, build_pack, load_adjacency
    from knowing_pr.graph import is_test_path
    from knowing_pr.indexer import index_commit, open_store
    from knowing_pr.pack import pack_symbols
    from knowing_pr.pipeline import open_workspace
    from knowing_pr.rank import rank_nodes, scored_symbol
    from knowing_pr.rank.seeds import ChangedFile, change_seeds

    ws = open_workspace(args.repo, db=args.db)
    index_commit(ws.repo, ws.settings, db_path=ws.db_path)
    store, _ = open_store(ws.db_path)
    paths = sorted(p for p in store.indexed_paths() if not is_test_path(p))
    rng = random.Random(args.seed)
    phases: dict[str, list[float]] = {
        k: []
        for k in (
            "load",
            "walk+hits+score",
            "pack",
            "render",
            "total",
            "engine.build_pack (all, with history)",
        )
    }
    settings = ws.settings
    for _ in range(args.runs):
        changed = rng.sample(paths, rng.randint(1, 3))
        t0 = time.perf_counter()
        adjacency = load_adjacency(store)
        matrix = walk_matrix(adjacency, settings, cochange_share(store, settings))
        t1 = time.perf_counter()
        nodes_by_path: dict[str, list] = {}
        for node in store.nodes_in_paths(changed):
            nodes_by_path.setdefault(node.path, []).append(node)
        seeds = change_seeds([ChangedFile(p) for p in changed], nodes_by_path, (), settings.rank)
        ranked = rank_nodes(adjacency, matrix, seeds, settings.rank)
        t2 = time.perf_counter()
        nodes = store.nodes_by_ids([r.node_id for r in ranked[:3000]])
        candidates = [
            scored_symbol(r, nodes[r.node_id], is_test=is_test_path(nodes[r.node_id].path))
            for r in ranked[:3000]
            if r.node_id in nodes and nodes[r.node_id].kind != "module"
        ]
        frame = render.frame_cost(
            "markdown",
            mode="pr",
            token_budget=settings.pack.budget_tokens,
            inputs={"files": changed, "base": None, "head": None},
        )
        packed, dropped = pack_symbols(
            candidates,
            budget_tokens=settings.pack.budget_tokens,
            cost_of=lambda s: render.entry_cost(s, "markdown"),
            proximity_exponent=settings.pack.proximity_exponent,
            reserved_tokens=frame,
            test_share=settings.pack.test_share,
        )
        t3 = time.perf_counter()
        from knowing_pr.model import Pack

        pack = Pack(
            "0" * 64,
            "pr",
            settings.pack.budget_tokens,
            0,
            store.graph_root or "",
            None,
            {"files": changed, "base": None, "head": None},
            packed,
            [],
            {},
            dropped,
            [],
        )
        render.render_pack(pack, "markdown")
        t4 = time.perf_counter()
        request = PackRequest(
            mode="pr",
            seeds=seeds,
            identity_inputs={"files": changed},
            inputs={"files": changed, "base": None, "head": None},
            fmt="markdown",
            commit=None,
            test_share=settings.pack.test_share,
            recency=recency_by_node(store, settings.history),
            cochange=cochange_evidence(store, changed, settings.history),
        )
        build_pack(store, settings, request)
        t5 = time.perf_counter()
        for key, value in (
            ("load", t1 - t0),
            ("walk+hits+score", t2 - t1),
            ("pack", t3 - t2),
            ("render", t4 - t3),
            ("total", t4 - t0),
            ("engine.build_pack (all, with history)", t5 - t4),
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
