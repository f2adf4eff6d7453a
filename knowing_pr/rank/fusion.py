"""Ranked lists → one ranking (weighted Reciprocal Rank Fusion), and the late fusion a PR's ranking
ends with (its files in the fused order of the walk and its co-change history); a task's seed
order, and its candidates shown in the final order ``task_rank.py`` computes (whose prior is the
RRF of the walk's order and the seed order).

One RRF (Cormack, Clarke & Büttcher, SIGIR 2009, weighted): an item at 1-based position ``p`` of
a list of weight ``w`` with a per-item factor ``f`` (1 unless a list carries its own, such as an
equivalence class's weight) gains ``w x f / (k + p)``; lists of weight <= 0 are left out. Every
fusion of the tool — the task's seed channels, a PR's file lists, a task's final order — goes
through ``rrf_scores``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

from knowing_pr.config import FusionParams
from knowing_pr.model import Node, ScoredSymbol, SymbolKind
from knowing_pr.store import Store

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from knowing_pr.graph.adjacency import Adjacency

__all__ = [
    "fuse_pr_files",
    "lead_with_files",
    "ordered_by_task",
    "rrf_ranking",
    "rrf_scores",
    "seed_order",
]

T = TypeVar("T", bound=Hashable)


def rrf_scores(lists: Sequence[tuple[float, Sequence[tuple[T, float]]]], k: float) -> dict[T, float]:
    """Σ over the lists of ``weight x factor / (k + position)``: ``lists`` holds (weight, ranked
    (item, factor) pairs), positions are 1-based. Items keep the order they were first seen in."""
    fused: dict[T, float] = {}
    for weight, ranking in lists:
        if weight <= 0:
            continue
        for position, (item, factor) in enumerate(ranking, 1):
            fused[item] = fused.get(item, 0.0) + weight * factor / (k + position)
    return fused


def rrf_ranking(
    rankings: Sequence[Sequence[str]], weights: Sequence[float], k: int
) -> list[tuple[str, float]]:
    """Plain lists fused: (item, score), best first, ties by item."""
    lists = [
        (weight, [(item, 1.0) for item in ranking]) for ranking, weight in zip(rankings, weights, strict=True)
    ]
    return sorted(rrf_scores(lists, k).items(), key=lambda pair: (-pair[1], pair[0]))


# -- a task's final order -------------------------------------------------------------------------


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


def ordered_by_task(
    symbols: Sequence[ScoredSymbol], order: Sequence[tuple[str, float]], seed_ranks: Mapping[str, int]
) -> list[ScoredSymbol]:
    """``symbols`` in the task order, each re-scored by it; the walk's score and the seed rank stay
    in the components (``walk_score``, ``seed_rank``). A symbol missing from ``order`` goes last."""
    by_id = {s.node.id: s for s in symbols}
    listed = {nid for nid, _ in order}
    out: list[ScoredSymbol] = []
    for nid, score in [*order, *((s.node.id, 0.0) for s in symbols if s.node.id not in listed)]:
        symbol = by_id.get(nid)
        if symbol is None:
            continue
        known = dict(symbol.components)
        if "walk_score" in known:  # already in the task order (the packed subset of the candidates)
            out.append(replace(symbol, score=score))
            continue
        extra = (("walk_score", symbol.score), ("seed_rank", float(seed_ranks.get(nid, 0))))
        out.append(replace(symbol, score=score, components=(*symbol.components, *extra)))
    return out


# -- a PR's files ---------------------------------------------------------------------------------


def walk_file_order(
    store: Store,
    adj: Adjacency,
    rwr: npt.NDArray[np.float64],
    candidates: Sequence[ScoredSymbol],
    exclude: Collection[str],
    limit: int,
    batch: int,
) -> list[str]:
    """Files in order of their first non-seed candidate, then on past the score cutoff in RWR
    order (any node, a module standing for its file), up to ``limit`` files."""
    import numpy as np

    order: list[str] = []
    seen = set(exclude)
    for symbol in candidates:
        if len(order) >= limit:
            return order
        if not symbol.is_seed and symbol.node.path not in seen:
            seen.add(symbol.node.path)
            order.append(symbol.node.path)
    values = np.asarray(rwr, dtype=np.float64)
    reached = np.flatnonzero(values > 0)
    ranked = reached[np.lexsort((reached, -values[reached]))]
    for start in range(0, ranked.size, max(batch, 1)):
        ids = [adj.node_ids[int(i)] for i in ranked[start : start + batch]]
        nodes = store.nodes_by_ids(ids)
        for nid in ids:
            node = nodes.get(nid)
            if node is not None and node.path not in seen:
                seen.add(node.path)
                order.append(node.path)
                if len(order) >= limit:
                    return order
    return order


def lead_symbols(
    store: Store,
    adj: Adjacency,
    rwr: npt.NDArray[np.float64],
    paths: Collection[str],
    is_test: Callable[[str], bool],
) -> dict[str, ScoredSymbol]:
    """A lead symbol for each of ``paths``: its non-module node with the highest RWR, ties (and
    files the walk never reached) by in-degree, then id; the module node itself for a file
    that has nothing else (an ``__init__.py`` of imports, a script)."""
    import numpy as np

    if not paths:
        return {}
    in_degree = np.bincount(adj.indices.astype(np.int64), minlength=adj.node_count)
    best: dict[str, tuple[tuple[int, float, int, str], Node]] = {}
    for node in store.nodes_in_paths(sorted(paths)):
        index = adj.index_of(node.id)
        value = float(rwr[index]) if index is not None else 0.0
        degree = int(in_degree[index]) if index is not None else 0
        key = (int(node.kind == SymbolKind.MODULE), -value, -degree, node.id)
        if node.path not in best or key < best[node.path][0]:
            best[node.path] = (key, node)
    return {
        path: ScoredSymbol(node=node, score=0.0, rwr=-key[1], reason="cochange", is_test=is_test(node.path))
        for path, (key, node) in best.items()
    }


def files_in_fused_order(
    candidates: Sequence[ScoredSymbol],
    fused: Sequence[tuple[str, float]],
    leads: Mapping[str, ScoredSymbol],
    files: int,
) -> list[ScoredSymbol]:
    """Rescale the non-seed scores so files come in the fused order (first symbol of each file).

    The first ``files`` fused files lead with their best candidate (or ``leads[path]`` when the
    walk did not reach them) at ``top x fused(f) / fused(first)``, ``top`` the best score of
    any candidate, seeds included; the file's other symbols keep their proportion to that lead;
    every other non-seed symbol is scaled below the last lead, in its old order. Seeds keep their
    scores. Returns the candidates, best first.
    """
    others = [c for c in candidates if not c.is_seed]
    if not fused or files <= 0:
        return list(candidates)
    # the leads rank with the changed symbols, so a large change cannot crowd them out of the budget
    top_score = max((c.score for c in candidates), default=0.0) or 1.0
    chosen = fused[:files]
    first_value = chosen[0][1]
    lead_score = {path: top_score * value / first_value for path, value in chosen}
    by_file: dict[str, list[ScoredSymbol]] = {}
    for symbol in others:
        by_file.setdefault(symbol.node.path, []).append(symbol)
    for path, _ in chosen:
        if path not in by_file and path in leads:
            by_file[path] = [leads[path]]
    floor = min(lead_score.values()) * 0.99
    out = [c for c in candidates if c.is_seed]
    for path, symbols in by_file.items():
        head = max(s.score for s in symbols)
        if path in lead_score:
            scale = lead_score[path] / head if head > 0 else 0.0
            for s in symbols:
                score = lead_score[path] if head <= 0 or s.score >= head else s.score * scale
                out.append(replace(s, score=score, components=(*s.components, ("fusion", round(scale, 6)))))
        else:
            for s in symbols:
                out.append(replace(s, score=s.score * floor / top_score if top_score > 0 else 0.0))
    out.sort(key=lambda s: (-s.score, s.node.id))
    return out


def fuse_pr_files(
    store: Store,
    adj: Adjacency,
    rwr: npt.NDArray[np.float64],
    candidates: Sequence[ScoredSymbol],
    changed: Collection[str],
    history_order: Sequence[str],
    history_weight: float,
    params: FusionParams,
    is_test: Callable[[str], bool],
) -> tuple[list[ScoredSymbol], list[tuple[str, float]]]:
    """A PR's candidates with their files in the fused order of the walk's file order and the
    change's co-change order (weighted RRF, the walk's weight 1), the first ``params.files``
    files given a lead symbol; and the fused file order itself."""
    exclude = set(changed) | {c.node.path for c in candidates if c.is_seed}
    depth = params.files * max(params.depth_factor, 1)
    walk = walk_file_order(store, adj, rwr, candidates, exclude, depth, params.scan_batch)
    history = [path for path in history_order if path not in exclude] if history_weight > 0 else []
    fused = rrf_ranking([walk, history], [1.0, history_weight], params.rrf_k)
    present = {c.node.path for c in candidates}
    # files without a symbol (docs, data) cannot lead: look a little deeper to fill the places
    missing = [path for path, _ in fused[: 2 * params.files] if path not in present]
    leads = lead_symbols(store, adj, rwr, missing, is_test)
    usable = [(path, value) for path, value in fused if path in present or path in leads]
    return files_in_fused_order(candidates, usable, leads, params.files), fused


def lead_with_files(
    store: Store,
    adj: Adjacency,
    rwr: npt.NDArray[np.float64],
    candidates: Sequence[ScoredSymbol],
    order: Sequence[tuple[str, float]],
    files: int,
    k: float,
    is_test: Callable[[str], bool],
    min_share: float = 0.0,
) -> list[ScoredSymbol]:
    """A PR's candidates with their files in the ranked file list's order (``order``: path and
    score, best first): its first ``files`` files that have a symbol and score at least
    ``min_share`` of the best file's score lead the pack, each with its best candidate or a
    lead symbol (``files_in_fused_order``), valued ``1 / (k + rank)`` as a fused list's files
    are (a list's probabilities fall too steeply: the later leads would lose the knapsack to
    the change's own symbols)."""
    exclude = {c.node.path for c in candidates if c.is_seed}
    scored = [(path, score) for path, score in order if path not in exclude]
    best = scored[0][1] if scored else 0.0
    listed = [path for path, score in scored if score >= min_share * best]
    ranked = [(path, 1.0 / (k + rank)) for rank, path in enumerate(listed, 1)]
    present = {c.node.path for c in candidates}
    missing = [path for path, _ in ranked[: 2 * files] if path not in present]
    leads = lead_symbols(store, adj, rwr, missing, is_test)
    usable = [(path, score) for path, score in ranked if path in present or path in leads]
    return files_in_fused_order(candidates, usable, leads, files)
