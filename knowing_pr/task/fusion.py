"""A walk's ranking + the task's seed order → one fused ranking (weighted reciprocal rank
fusion), so a structurally central node cannot bury the task's best textual match.

The walk (RWR + HITS + scoring) ranks by centrality around the seeds; the seed order ranks
by how well a symbol matches the task's words. A node at 1-based position ``r`` of a list
with weight ``w`` gains ``w / (k + r)``; the fused score is normalised by the best possible
(first in both lists), so it lies in (0, 1]. Only nodes of the walk's list are ranked (the
seed order reorders them, it adds nothing the walk did not keep); ties break by walk
position. Measured on bench/taskbench.py (docs/task.md).

Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from knowing_pr.model import ScoredSymbol

__all__ = ["fuse_orders", "fuse_symbols", "seed_order"]


def seed_order(seeds: Mapping[str, float], fused: Sequence[tuple[str, float]]) -> list[str]:
    """Seeds by restart weight (best first), then the other fused nodes in fused order.

    With explicit names (backticks, stack frames) only those keep a restart weight, so they
    lead this order too.
    """
    position = {nid: i for i, (nid, _) in enumerate(fused)}
    leading = sorted(
        (nid for nid, weight in seeds.items() if weight > 0),
        key=lambda nid: (-seeds[nid], position.get(nid, len(position)), nid),
    )
    chosen = set(leading)
    return [*leading, *(nid for nid, _ in fused if nid not in chosen)]


def fuse_orders(
    walk: Sequence[str], seeds: Sequence[str], *, seed_weight: float, walk_weight: float, k: int
) -> list[tuple[str, float]]:
    """(node id, fused score in (0, 1]) for every node of ``walk``, best first."""
    best = (seed_weight + walk_weight) / (k + 1)
    if best <= 0:
        return [(nid, 0.0) for nid in walk]
    seed_rank: dict[str, int] = {}
    for rank, nid in enumerate(seeds, 1):
        seed_rank.setdefault(nid, rank)
    scored: list[tuple[float, int, str]] = []
    for rank, nid in enumerate(walk, 1):
        score = walk_weight / (k + rank)
        if nid in seed_rank:
            score += seed_weight / (k + seed_rank[nid])
        scored.append((round(score / best, 6), rank, nid))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(nid, score) for score, _, nid in scored]


def fuse_symbols(
    symbols: Sequence[ScoredSymbol],
    walk: Sequence[str],
    seeds: Sequence[str],
    *,
    seed_weight: float,
    walk_weight: float,
    k: int,
) -> list[ScoredSymbol]:
    """Packed symbols re-scored and re-ordered by ``fuse_orders`` over every candidate of the
    walk (``walk``, best first; a packed symbol missing from it goes last); the walk's score
    and the seed rank stay in the components (``walk_score``, ``seed_rank``)."""
    by_id = {s.node.id: s for s in symbols}
    seed_rank: dict[str, int] = {}
    for rank, nid in enumerate(seeds, 1):
        seed_rank.setdefault(nid, rank)
    listed = set(walk)
    order = [*walk, *(s.node.id for s in symbols if s.node.id not in listed)]
    fused = fuse_orders(order, seeds, seed_weight=seed_weight, walk_weight=walk_weight, k=k)
    out: list[ScoredSymbol] = []
    for nid, score in fused:
        symbol = by_id.get(nid)
        if symbol is None:
            continue
        extra = (("walk_score", symbol.score), ("seed_rank", float(seed_rank.get(nid, 0))))
        out.append(replace(symbol, score=score, components=(*symbol.components, *extra)))
    return out
