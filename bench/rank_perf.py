"""Random graph sizes → wall/CPU milliseconds of the adjacency load, the walk, HITS and ranking.

Usage: ``python bench/rank_perf.py [--nodes 46000 --edges 150000] [--repeat 5]``.
Prints the median over ``--repeat`` runs of each stage on a random typed graph (a Django-sized
graph by default: ~46K nodes, ~150K edges).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from knowing_pr.config import RankParams
from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.model import EdgeKind
from knowing_pr.rank import rank_nodes, transition_matrix
from knowing_pr.rank.hits import hits
from knowing_pr.rank.walk import hop_distances, walk_with_restart


def random_adjacency(nodes: int, edges: int, seed: int) -> Adjacency:
    rng = np.random.default_rng(seed)
    ids = sorted({rng.bytes(16).hex() for _ in range(nodes)})
    n = len(ids)
    kinds = np.array([int(k) for k in EdgeKind], dtype=np.uint8)
    return Adjacency.from_arrays(
        ids,
        rng.integers(0, n, edges),
        rng.integers(0, n, edges),
        kinds[rng.integers(0, kinds.size, edges)],
        rng.uniform(0.3, 1.0, edges),
    )


def measure(label: str, action: Callable[[], object], repeat: int) -> None:
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        action()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    wall_ms, cpu_ms = statistics.median(wall) * 1000, statistics.median(cpu) * 1000
    print(f"{label:<38} wall {wall_ms:9.2f} ms   cpu {cpu_ms:9.2f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=46_000)
    parser.add_argument("--edges", type=int, default=150_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()

    adj = random_adjacency(args.nodes, args.edges, seed=1)
    blob = adj.to_bytes()
    params = RankParams()
    print(f"graph: {adj.node_count} nodes, {adj.edge_count} edges, blob {len(blob) / 1e6:.1f} MB")
    rng = np.random.default_rng(2)
    seed_indices = {int(i): 1.0 for i in rng.choice(adj.node_count, args.seeds, replace=False)}
    seeds = {adj.node_ids[i]: w for i, w in seed_indices.items()}

    measure("Adjacency.from_bytes", lambda: Adjacency.from_bytes(blob), args.repeat)
    measure("Adjacency.to_bytes", adj.to_bytes, args.repeat)
    measure("transition_matrix", lambda: transition_matrix(adj, params.edge_weights), args.repeat)
    P = transition_matrix(adj, params.edge_weights)

    def walk(tol: float) -> Callable[[], object]:
        return lambda: walk_with_restart(P, seed_indices, restart_prob=0.2, max_iter=20, tol_l1=tol)

    measure("walk_with_restart (20 iterations)", walk(0.0), args.repeat)
    r, used = walk_with_restart(P, seed_indices, restart_prob=0.2, max_iter=20, tol_l1=params.tol_l1)
    measure(f"walk_with_restart (tol 1e-3: {used} it)", walk(params.tol_l1), args.repeat)
    top = [int(i) for i in np.argsort(-r, kind="stable")[: params.hits_top_n]]
    measure("hits (top 200, 10 iterations)", lambda: hits(adj, top, params.edge_weights, 10), args.repeat)
    measure("hop_distances (4 hops)", lambda: hop_distances(adj, seed_indices, 4), args.repeat)
    measure("rank_nodes (walk, HITS, score)", lambda: rank_nodes(adj, P, seeds, params), args.repeat)
    ranked, _ = rank_nodes(adj, P, seeds, params)
    print(f"candidates ranked: {len(ranked)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
