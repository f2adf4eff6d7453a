"""Mined git history ↔ the store ↔ the ranking: co-change edges, recency, PR evidence.

Index time (``update_history``, called inside the indexer's one transaction):

1. load the ``HistoryState`` persisted by the previous run (tables ``hist_files`` and
   ``hist_pairs`` plus ``history_*`` meta keys) and mine only the commits it has not seen
   (``knowing_pr.history.mine_history``); ``--full`` mines from scratch. In a shallow clone
   what is there is mined, ``history_shallow`` says so, and a cached state that holds more
   commits than a fresh mine of the truncated history is kept;
2. rewrite the ``co_changed_with`` edges (origin ``<history>``) between module nodes: for
   each file, its ``cochange_max_partners`` partners with the highest confidence
   ``together / commits(file)``, kept when ``together >= min_support``; the edge's
   ``confidence`` is that ratio. They are built from counts only (no decay), so an
   incremental run and a full run write the same rows, and the adjacency blob stays a pure
   function of (tree, history);
3. measure how *predictive* the history is: replay the last ``predictiveness_window``
   first-parent commits, leave-one-out against the counts, and record the mean recall of
   the top ``predictiveness_top_k`` co-change partners (meta ``history_predictiveness``).
   The file lists of those commits are memoised in meta, so a run that adds one commit
   diffs one commit.

Rank time (``walk_matrix``): the share of the walk that leaves a file node along history
edges is ``edge_weights[co_changed_with] x cochange_gain x predictiveness`` (capped at
``cochange_max_share``) — a repository whose history predicts its own commits well leans on
it, one whose history is noise barely does. ``recency_by_node`` turns each file's last
change (seed 003's steps, relative to the newest mined commit, never the wall clock) and
its decayed churn into the score's recency component; ``cochange_evidence`` is the PR
pack's "often changed together" list.

Pack time (``fuse_pr_candidates``, PR mode): the walk's file order and the change's decayed
co-change list are fused by weighted reciprocal rank (the list's weight grows with the
predictiveness), and the first ``FusionParams.files`` fused files lead the pack, each with
one symbol (docs/history.md).

An incremental mine rewrites only the ``hist_*`` rows and the co-change edges of the files it
touched (``HistoryState.delta``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from knowing_pr.config import FusionParams, HistoryParams, Settings
from knowing_pr.git import GitRepo
from knowing_pr.graph import is_test_path, module_name
from knowing_pr.history import (
    HistoryState,
    cochange_edges,
    cochange_neighbours,
    decayed_cochange_ranking,
    mine_history,
    predictiveness,
    recency_of,
)
from knowing_pr.model import EdgeKind, Node, ScoredSymbol, SymbolKind, node_id
from knowing_pr.store import Store

if TYPE_CHECKING:  # numpy/scipy load lazily: the index (hook) path never walks
    import numpy as np
    import numpy.typing as npt
    import scipy.sparse as sp

    from knowing_pr.graph.adjacency import Adjacency

__all__ = [
    "HISTORY_ORIGIN",
    "FusionParams",
    "HistoryUpdate",
    "changed_file_weight",
    "cochange_file_order",
    "cochange_edges",
    "cochange_evidence",
    "cochange_share",
    "fuse_candidates",
    "fuse_pr_candidates",
    "fusion_weight",
    "lead_symbols",
    "load_history",
    "predictiveness",
    "recency_by_node",
    "recency_of",
    "rrf_fuse",
    "update_history",
    "walk_file_order",
    "walk_matrix",
]

#: ``edges.origin`` of the co-change edges (no file path can look like this)
HISTORY_ORIGIN = "<history>"
META_PREFIX = "history_"


@dataclass(frozen=True)
class HistoryUpdate:
    """What one index run did to the history."""

    mined_head: str | None
    mined_commits: int
    new_commits: int
    shallow: bool
    kept_cached: bool
    cochange_edges: int
    predictiveness: float | None


# -- persistence --------------------------------------------------------------------------------


def load_history(store: Store) -> HistoryState | None:
    """The state the previous run persisted, or ``None`` when there is none (or it is unusable)."""
    from knowing_pr.errors import StoreError

    keys = (
        "format",
        "mined_head",
        "mined_commits",
        "reference_time",
        "half_life_days",
        "max_files_per_commit",
    )
    meta = [(key, store.get_meta(META_PREFIX + key)) for key in keys]
    if any(value is None for _, value in meta):
        return None
    try:
        return HistoryState.from_rows(
            [(k, v or "") for k, v in meta], store.history_files(), store.history_pairs()
        )
    except StoreError:
        return None


def _save_history(store: Store, state: HistoryState, *, shallow: bool) -> None:
    """Persist ``state``: only the rows its ``delta`` names when it has one, else all of them."""
    delta = state.delta
    if delta is None:
        _, files, pairs = state.to_rows()
        store.replace_history(files, pairs)
    else:
        store.update_history_rows(
            [(p, s.commits, s.last_time, s.churn) for p in sorted(delta.files) for s in (state.files[p],)],
            [(a, b, s.count, s.weight) for a, b in sorted(delta.pairs) for s in (state.pairs[(a, b)],)],
            sorted(delta.removed_files),
            sorted(delta.removed_pairs),
        )
    for key, value in state.meta_rows():
        store.set_meta(META_PREFIX + key, value)
    store.set_meta(META_PREFIX + "shallow", "1" if shallow else "0")


# -- index time ---------------------------------------------------------------------------------


def update_history(
    repo: GitRepo, store: Store, settings: Settings, target: str | None, *, full: bool
) -> HistoryUpdate:
    """Mine what is new up to ``target``, persist it, rewrite the co-change edges (one transaction
    is the caller's)."""
    params = settings.history
    if not params.enabled or target is None:
        store.delete_edges_from([HISTORY_ORIGIN])
        store.set_meta(META_PREFIX + "edges_head", "")
        return HistoryUpdate(None, 0, 0, repo.is_shallow, False, 0, None)
    cached = load_history(store)
    state = mine_history(repo, target, params, None if full else cached)
    kept = False
    if repo.is_shallow and cached is not None and cached.mined_commits > state.mined_commits:
        # a shallow checkout saw less than the restored cache did: the cache is the better guess
        state, kept = cached, True
    before = cached.mined_commits if cached is not None and not full else 0
    changed = cached is None or full or state.mined_head != cached.mined_head or kept
    if changed:
        _save_history(store, state, shallow=repo.is_shallow)
    previous_head = cached.mined_head if cached is not None and not full else None
    rewritten = _write_edges(store, state, params, extended=previous_head, force=full or kept)
    window = _commit_window(repo, store, target, params.predictiveness_window)
    score = predictiveness(state, window, params)
    store.set_meta(META_PREFIX + "predictiveness", "" if score is None else repr(round(score, 6)))
    return HistoryUpdate(
        mined_head=state.mined_head,
        mined_commits=state.mined_commits,
        new_commits=max(state.mined_commits - before, 0),
        shallow=repo.is_shallow,
        kept_cached=kept,
        cochange_edges=rewritten,
        predictiveness=score,
    )


def _write_edges(
    store: Store, state: HistoryState, params: HistoryParams, *, extended: str | None, force: bool
) -> int:
    """Bring the co-change edges up to ``state``; the number of edges written.

    Nothing when they were last written for ``state.mined_head`` (meta ``history_edges_head``).
    After an incremental mine that extended the head the edges were written for (``extended``)
    and deleted no file, only the edges leaving the files whose stats or pairs changed are
    rewritten; otherwise (``force``, a full mine, a rescale, a deleted or renamed file, whose
    module node is gone) all of them.
    """
    written_for = store.get_meta(META_PREFIX + "edges_head")
    if not force and written_for and written_for == state.mined_head:
        return 0
    delta = state.delta
    if not force and delta is not None and not delta.removed_files and written_for == extended:
        sources = delta.touched_paths()
        reach = set(sources)
        for path in sources:
            reach.update(state.partners(path))
        edges = cochange_edges(state, _module_ids(store, reach), params, sources=sources)
        store.delete_edges_from_sources(
            HISTORY_ORIGIN, [node_id(p, module_name(p), SymbolKind.MODULE) for p in sorted(sources)]
        )
    else:
        edges = cochange_edges(state, _module_ids(store, state.files), params)
        store.delete_edges_from([HISTORY_ORIGIN])
    store.insert_edges((edge, HISTORY_ORIGIN) for edge in edges)
    store.set_meta(META_PREFIX + "edges_head", state.mined_head or "")
    return len(edges)


def _module_ids(store: Store, paths: Iterable[str]) -> dict[str, str]:
    """Module node id of each of ``paths`` that has one in the store."""
    wanted = {path: node_id(path, module_name(path), SymbolKind.MODULE) for path in paths}
    present = store.nodes_by_ids(wanted.values())
    return {path: nid for path, nid in wanted.items() if nid in present}


# -- predictiveness ------------------------------------------------------------------------------


def _commit_window(repo: GitRepo, store: Store, head: str, size: int) -> list[tuple[str, list[str]]]:
    """The last ``size`` first-parent commits of ``head`` with the paths each changed
    (merges have none); memoised in meta so only commits not seen before are diffed."""
    raw = store.get_meta(META_PREFIX + "window")
    cached: dict[str, list[str]] = {}
    order: list[str] = []
    if raw:
        try:
            for sha, stored in json.loads(raw):
                cached[str(sha)] = [str(p) for p in stored]
                order.append(str(sha))
        except (ValueError, TypeError):
            cached, order = {}, []
    window: list[tuple[str, list[str]]] = []
    current: str | None = head
    while current is not None and len(window) < size:
        if current in cached:
            start = order.index(current)
            for sha in order[start:]:
                if len(window) >= size:
                    break
                window.append((sha, cached[sha]))
            break
        parents = repo.parents(current)
        paths: list[str] = []
        if len(parents) <= 1:
            changes = repo.diff_trees(parents[0] if parents else None, current)
            paths = sorted({p for c in changes for p in (c.new_path or c.old_path,) if p})
        window.append((current, paths))
        current = parents[0] if parents else None
    store.set_meta(META_PREFIX + "window", json.dumps(window, separators=(",", ":")))
    return window


def cochange_share(store: Store, settings: Settings) -> float:
    """The share of the walk that follows history edges out of a file node (see the docstring)."""
    base = settings.rank.edge_weights.get(EdgeKind.CO_CHANGED_WITH, 0.0)
    raw = store.get_meta(META_PREFIX + "predictiveness")
    if base <= 0 or not raw or not settings.history.enabled:
        return 0.0
    share = base * settings.history.cochange_gain * float(raw)
    return float(min(max(share, 0.0), settings.history.cochange_max_share))


# -- rank time -----------------------------------------------------------------------------------


def _row_normalise(matrix: sp.csr_matrix) -> sp.csr_matrix:
    import numpy as np
    import scipy.sparse as sp

    sums = np.asarray(matrix.sum(axis=1)).ravel()
    inverse = np.divide(1.0, sums, out=np.zeros_like(sums), where=sums > 0)
    return sp.csr_matrix(sp.diags(inverse) @ matrix)


def walk_matrix(adj: Adjacency, settings: Settings, share: float) -> sp.csr_matrix:
    """Row-stochastic transitions: the structural two-way walk (``rank.walk``), mixed with the
    co-change edges at the nodes that have them.

    At a node with history edges the walk follows them with probability ``share`` (split by
    edge confidence, both directions) and the structural edges with ``1 - share``; a node with
    only history edges follows those. ``share`` 0 gives exactly ``rank.transition_matrix``.
    """
    import numpy as np
    import scipy.sparse as sp

    from knowing_pr.rank.walk import kind_weight_matrix

    weights = dict(settings.rank.edge_weights)
    weights[EdgeKind.CO_CHANGED_WITH] = 0.0
    directed = kind_weight_matrix(adj, weights)
    structural = _row_normalise((directed + directed.T).tocsr())
    n = adj.node_count
    mask = adj.kinds == int(EdgeKind.CO_CHANGED_WITH)
    if share <= 0 or not bool(mask.any()):
        structural.sort_indices()
        return structural
    sources = adj.sources()[mask]
    targets = adj.indices[mask].astype(np.int64)
    confidence = adj.confidence[mask].astype(np.float64)
    history = sp.csr_matrix((confidence, (sources, targets)), shape=(n, n))
    history = _row_normalise((history + history.T).tocsr())
    has_history = np.asarray(history.sum(axis=1)).ravel() > 0
    has_structure = np.asarray(structural.sum(axis=1)).ravel() > 0
    keep_structural = np.where(has_history, 1.0 - share, 1.0)
    take_history = np.where(has_structure, share, 1.0) * has_history
    mixed = sp.diags(keep_structural) @ structural + sp.diags(take_history) @ history
    result = sp.csr_matrix(mixed)
    result.eliminate_zeros()
    result.sort_indices()
    return result


def recency_by_file(store: Store, params: HistoryParams) -> dict[str, float]:
    """Recency of every file with history (files without any keep the scorer's default)."""
    reference = store.get_meta(META_PREFIX + "reference_time")
    rows = store.history_files()
    if not reference or not rows:
        return {}
    max_churn = max(churn for _, _, _, churn in rows)
    return {path: recency_of(last, churn, max_churn, int(reference), params) for path, _, last, churn in rows}


def recency_by_node(
    store: Store, params: HistoryParams, paths: Collection[str] | None = None
) -> dict[str, float]:
    """Node id → recency of its file (all files, or only ``paths``)."""
    by_file = recency_by_file(store, params)
    if not by_file:
        return {}
    if paths is None:
        rows: Iterable[tuple[str, str]] = store.node_paths()
    else:
        rows = ((n.id, n.path) for n in store.nodes_in_paths(paths))
    return {nid: by_file[path] for nid, path in rows if path in by_file}


def cochange_evidence(
    store: Store, paths: Collection[str], params: HistoryParams
) -> tuple[tuple[str, int, int], ...]:
    """ "Often changed together" for a change: (path, together, out_of), best confidence first."""
    state = load_history(store)
    if state is None or not params.enabled:
        return ()
    rows = cochange_neighbours(state, paths, params.cochange_list_limit, min_together=params.min_support)
    return tuple((path, together, out_of) for path, together, out_of, _ in rows)


def cochange_seeds(
    evidence: Sequence[tuple[str, int, int]], share: float, file_weight: float
) -> dict[str, float]:
    """Restart weight for the module node of each co-changed file: ``file_weight x share x
    together / out_of``, where ``file_weight`` is the restart weight one changed file carries
    (the walk then starts partly from where history says the change goes)."""
    seeds: dict[str, float] = {}
    for path, together, out_of in evidence:
        weight = file_weight * share * together / max(out_of, 1)
        if weight > 0:
            seeds[node_id(path, module_name(path), SymbolKind.MODULE)] = round(weight, 6)
    return seeds


def changed_file_weight(seeds: Mapping[str, float], changed_files: int) -> float:
    """The restart weight one changed file carries on average."""
    return sum(seeds.values()) / max(changed_files, 1)


# -- late fusion (file level) ---------------------------------------------------------------------


def rrf_fuse(rankings: Sequence[Sequence[str]], weights: Sequence[float], k: int) -> list[tuple[str, float]]:
    """Weighted reciprocal-rank fusion: (item, sum of weight / (k + position)), best first, ties
    by item."""
    fused: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        if weight <= 0:
            continue
        for position, item in enumerate(ranking, 1):
            fused[item] = fused.get(item, 0.0) + weight / (k + position)
    return sorted(fused.items(), key=lambda pair: (-pair[1], pair[0]))


def fusion_weight(store: Store, settings: Settings, fusion: FusionParams) -> float:
    """Weight of the co-change list: the repository's measured predictiveness x gain, bounded
    (0 when history is off or unmeasured, or co-change edges are weighted 0)."""
    raw = store.get_meta(META_PREFIX + "predictiveness")
    walked = settings.rank.edge_weights.get(EdgeKind.CO_CHANGED_WITH, 0.0) > 0
    if not raw or not settings.history.enabled or not walked:
        return 0.0
    weight = fusion.cochange_gain * float(raw)
    return float(min(max(weight, fusion.cochange_min_weight), fusion.cochange_max_weight))


def cochange_file_order(store: Store, paths: Collection[str], limit: int, min_together: int) -> list[str]:
    """The change's likely partners by decayed co-change share summed over its files
    (``history.decayed_cochange_ranking``)."""
    state = load_history(store)
    if state is None:
        return []
    return [path for path, _ in decayed_cochange_ranking(state, paths, limit, min_together=min_together)]


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


def fuse_candidates(
    candidates: Sequence[ScoredSymbol],
    fused: Sequence[tuple[str, float]],
    leads: Mapping[str, ScoredSymbol],
    files: int,
) -> list[ScoredSymbol]:
    """Rescale the non-seed scores so files come in the fused order (first symbol of each file).

    The first ``files`` fused files lead with their best candidate (or ``leads[path]`` when the
    walk did not reach them) at ``top x fused(f) / fused(first)``, ``top`` the best score of
    any candidate, seeds included; the file's other symbols keep
    their proportion to that lead; every other non-seed symbol is scaled below the last lead, in
    its old order. Seeds keep their scores. Returns the candidates, best first.
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


def fuse_pr_candidates(
    store: Store,
    settings: Settings,
    adj: Adjacency,
    rwr: npt.NDArray[np.float64],
    candidates: Sequence[ScoredSymbol],
    changed: Collection[str],
    fusion: FusionParams,
) -> list[ScoredSymbol]:
    """A PR pack's candidates with their files in the fused order: the walk's file order
    (``walk_file_order``) and the change's co-change list (``cochange_file_order``) by weighted
    reciprocal rank (``fusion_weight``), the first ``fusion.files`` files given a lead symbol."""
    exclude = set(changed) | {c.node.path for c in candidates if c.is_seed}
    depth = fusion.files * max(fusion.depth_factor, 1)
    walk = walk_file_order(store, adj, rwr, candidates, exclude, depth, fusion.scan_batch)
    weight = fusion_weight(store, settings, fusion)
    history = cochange_file_order(store, changed, depth, fusion.min_together) if weight > 0 else []
    history = [path for path in history if path not in exclude]
    fused = rrf_fuse([walk, history], [1.0, weight], fusion.rrf_k)
    present = {c.node.path for c in candidates}
    # files without a symbol (docs, data) cannot lead: look a little deeper to fill the places
    missing = [path for path, _ in fused[: 2 * fusion.files] if path not in present]
    leads = lead_symbols(store, adj, rwr, missing, is_test_path)
    usable = [(path, value) for path, value in fused if path in present or path in leads]
    return fuse_candidates(candidates, usable, leads, fusion.files)
