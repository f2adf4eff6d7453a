"""Adjacency + transition matrix + seeds → ranked nodes (and a trace for ``why``).

One entry point composes the stage (pure functions over numpy/scipy arrays, no I/O):

1. ``walk_with_restart`` from the seeds (``walk.py``; Tong, Faloutsos & Pan 2006);
2. candidates: every node whose RWR score divided by the highest one is at least
   ``params.score_cutoff`` (and above 0), plus every seed;
3. ``hits`` on the ``params.hits_top_n`` nodes with the highest RWR (``hits.py``;
   Kleinberg 1999); nodes outside that set have authority = hub = 0;
4. ``score_candidate`` for each candidate (``score.py``, seed 003's formula), with hop
   distances from an undirected BFS over the walked edge kinds (up to ``max_hops`` = 4;
   a candidate further away counts as ``max_hops + 1`` hops);
5. order by (-score, node id), so ties always break the same way.

Reasons: ``changed`` (a seed), ``test`` (``is_test`` says so), ``caller`` (has a
structural edge into a seed: it depends on the change), ``callee`` (a seed has a structural
edge to it: the change relies on it), ``cochange`` (linked to a seed only by
``co_changed_with``), else ``related``. Structural = any walked kind except co-change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from knowing_pr.config import RankParams
from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.model import EdgeKind, Node, ScoredSymbol
from knowing_pr.rank.hits import hits
from knowing_pr.rank.score import ScoreInput, incoming_confidence, score_candidate
from knowing_pr.rank.walk import (
    hop_array,
    kind_weight_table,
    restart_vector,
    transition_matrix,
    walk_with_restart,
)

__all__ = [
    "NodeTrace",
    "RankTrace",
    "RankedNode",
    "rank_nodes",
    "rank_with_trace",
    "scored_symbol",
    "transition_matrix",
]


@dataclass(frozen=True)
class RankedNode:
    """One candidate with its score and every signal behind it."""

    node_id: str
    score: float
    rwr: float
    authority: float
    hub: float
    distance: int
    is_seed: bool
    reason: str
    components: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class NodeTrace:
    """What the rank stage knew about one node id (for ``why``)."""

    node_id: str
    in_graph: bool
    is_seed: bool
    restart_weight: float
    rwr: float
    rwr_normalised: float
    reached: bool
    above_cutoff: bool
    in_hits: bool
    hops: int | None


@dataclass(eq=False)
class RankTrace:
    """The raw arrays behind a ranking: RWR of every node, the seeds, the cutoff."""

    adjacency: Adjacency
    rwr: npt.NDArray[np.float64]
    restart: dict[int, float]
    cutoff: float
    iterations: int
    hits_nodes: frozenset[int] = field(default_factory=frozenset)
    #: hops from the nearest seed per node, -1 beyond ``RankParams.max_hops`` (``None`` when no walk ran)
    hops: npt.NDArray[np.int64] | None = None

    @property
    def max_rwr(self) -> float:
        return float(self.rwr.max()) if self.rwr.size else 0.0

    def node(self, node_id: str) -> NodeTrace:
        """Seed? reached by the walk (RWR > 0)? above the cutoff? in the HITS subgraph?"""
        index = self.adjacency.index_of(node_id)
        if index is None:
            return NodeTrace(node_id, False, False, 0.0, 0.0, 0.0, False, False, False, None)
        rwr = float(self.rwr[index])
        top = self.max_rwr
        normalised = rwr / top if top > 0 else 0.0
        return NodeTrace(
            node_id=node_id,
            in_graph=True,
            is_seed=index in self.restart,
            restart_weight=self.restart.get(index, 0.0),
            rwr=rwr,
            rwr_normalised=normalised,
            reached=rwr > 0,
            above_cutoff=rwr > 0 and normalised >= self.cutoff,
            in_hits=index in self.hits_nodes,
            hops=None if self.hops is None or self.hops[index] < 0 else int(self.hops[index]),
        )


def _seed_indices(adj: Adjacency, seeds: Mapping[str, float]) -> dict[int, float]:
    indexed: dict[int, float] = {}
    for nid, weight in sorted(seeds.items()):
        index = adj.index_of(nid)
        if index is not None and weight > 0:
            indexed[index] = indexed.get(index, 0.0) + weight
    return indexed


def _top_by_rwr(rwr: npt.NDArray[np.float64], count: int) -> npt.NDArray[np.int64]:
    reached = np.flatnonzero(rwr > 0)
    if reached.size > count > 0:
        # keep everything tied with the count-th best, then order that short list exactly
        threshold = np.partition(rwr[reached], reached.size - count)[reached.size - count]
        reached = reached[rwr[reached] >= threshold]
    order = np.lexsort((reached, -rwr[reached]))
    return reached[order[:count]]


def _seed_neighbours(
    adj: Adjacency, is_seed: npt.NDArray[np.bool_], params: RankParams
) -> tuple[set[int], set[int], set[int]]:
    """(callers, callees, co-changed) of the seed set."""
    sources = adj.sources()
    targets = adj.indices.astype(np.int64)
    walked = kind_weight_table(params.edge_weights)[adj.kinds] > 0
    cochange = walked & (adj.kinds == int(EdgeKind.CO_CHANGED_WITH))
    structural = walked & ~cochange
    callers = set(sources[structural & is_seed[targets]].tolist())
    callees = set(targets[structural & is_seed[sources]].tolist())
    linked = set(sources[cochange & is_seed[targets]].tolist()) | set(
        targets[cochange & is_seed[sources]].tolist()
    )
    return callers, callees, linked


def _reason(
    index: int,
    node_id: str,
    is_seed: bool,
    is_test: Callable[[str], bool] | None,
    neighbours: tuple[set[int], set[int], set[int]],
) -> str:
    callers, callees, cochanged = neighbours
    if is_seed:
        return "changed"
    if is_test is not None and is_test(node_id):
        return "test"
    if index in callers:
        return "caller"
    if index in callees:
        return "callee"
    if index in cochanged:
        return "cochange"
    return "related"


def rank_with_trace(
    adj: Adjacency,
    P: sp.csr_matrix,
    seeds: Mapping[str, float],
    params: RankParams,
    *,
    recency: Mapping[str, float] | None = None,
    is_test: Callable[[str], bool] | None = None,
    penalise_tests: bool = False,
) -> tuple[list[RankedNode], RankTrace]:
    """``rank_nodes`` plus the ``RankTrace`` it was computed from.

    Seeds not in the graph, or with a weight <= 0, are ignored; without any seed left the
    ranking is empty (and the trace's RWR is all zeros).
    """
    if P.shape != (adj.node_count, adj.node_count):
        raise ValueError(f"transition matrix {P.shape} does not match {adj.node_count} nodes")
    seed_weights = _seed_indices(adj, seeds)
    if not seed_weights:
        empty = RankTrace(adj, np.zeros(adj.node_count), {}, params.score_cutoff, 0)
        return [], empty
    rwr, iterations = walk_with_restart(
        P,
        seed_weights,
        restart_prob=params.restart_prob,
        max_iter=params.max_iter,
        tol_l1=params.tol_l1,
    )
    s = restart_vector(adj.node_count, seed_weights)
    restart = {i: float(s[i]) for i in seed_weights}
    top = float(rwr.max())
    above = np.flatnonzero((rwr > 0) & (rwr >= params.score_cutoff * top))
    candidates = sorted(set(above.tolist()) | set(seed_weights))
    hits_nodes = [int(i) for i in _top_by_rwr(rwr, params.hits_top_n)]
    authority, hub = hits(adj, hits_nodes, params.edge_weights, params.hits_iter)
    hops = hop_array(P, seed_weights, params.max_hops)
    trace = RankTrace(adj, rwr, restart, params.score_cutoff, iterations, frozenset(hits_nodes), hops)

    is_seed = np.zeros(adj.node_count, dtype=bool)
    is_seed[list(seed_weights)] = True
    neighbours = _seed_neighbours(adj, is_seed, params)
    confidence = incoming_confidence(adj, candidates)
    max_rwr = max(float(rwr[i]) for i in candidates)
    ranked: list[RankedNode] = []
    for index in candidates:
        node_id = adj.node_ids[index]
        seed = bool(is_seed[index])
        test = is_test is not None and is_test(node_id)
        item = ScoreInput(
            rwr=float(rwr[index]),
            max_rwr=max_rwr,
            confidence=confidence[index],
            recency=(recency or {}).get(node_id, params.unknown_recency),
            hops=int(hops[index]) if hops[index] >= 0 else params.max_hops + 1,
            authority=authority.get(index, 0.0),
            hub=hub.get(index, 0.0),
            is_seed=seed,
            penalised=penalise_tests and test,
        )
        score, components = score_candidate(item, params)
        ranked.append(
            RankedNode(
                node_id=node_id,
                score=score,
                rwr=item.rwr,
                authority=round(item.authority, 6),
                hub=round(item.hub, 6),
                distance=item.hops,
                is_seed=seed,
                reason=_reason(index, node_id, seed, is_test, neighbours),
                components=components,
            )
        )
    ranked.sort(key=lambda r: (-r.score, r.node_id))
    return ranked, trace


def rank_nodes(
    adj: Adjacency,
    P: sp.csr_matrix,
    seeds: Mapping[str, float],
    params: RankParams,
    *,
    recency: Mapping[str, float] | None = None,
    is_test: Callable[[str], bool] | None = None,
    penalise_tests: bool = False,
) -> list[RankedNode]:
    """Score every candidate the walk from ``seeds`` reaches; best first, ties by node id.

    ``P`` is ``transition_matrix(adj, params.edge_weights)`` (build once, reuse). Test
    symbols are multiplied by ``params.test_penalty`` only when ``penalise_tests`` (task
    mode); a PR pack keeps them at full score.
    """
    ranked, _ = rank_with_trace(
        adj, P, seeds, params, recency=recency, is_test=is_test, penalise_tests=penalise_tests
    )
    return ranked


def scored_symbol(ranked: RankedNode, node: Node, *, is_test: bool) -> ScoredSymbol:
    """The model record the pack and render stages take, for a ranked node and its ``Node``."""
    return ScoredSymbol(
        node=node,
        score=ranked.score,
        rwr=ranked.rwr,
        authority=ranked.authority,
        hub=ranked.hub,
        distance=ranked.distance,
        reason=ranked.reason,
        is_seed=ranked.is_seed,
        is_test=is_test,
        components=ranked.components,
    )
