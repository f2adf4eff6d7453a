"""Mined git history ↔ the store ↔ the ranking: co-change edges, recency, PR evidence.

Index time (``update_history``, called inside the indexer's one transaction):

1. load the ``HistoryState`` persisted by the previous run (tables ``hist_files`` and
   ``hist_pairs`` plus ``history_*`` meta keys) and mine only the commits it has not seen
   (``knowing_pr.history.mine_history``); ``--full`` mines from scratch. In a shallow clone
   what is there is mined, ``history_shallow`` says so, and a cached state that holds more
   commits than a fresh mine of the truncated history is kept;
2. replace the ``co_changed_with`` edges (origin ``<history>``) between module nodes: for
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
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from knowing_pr.config import HistoryParams, Settings
from knowing_pr.git import GitRepo
from knowing_pr.graph import module_name
from knowing_pr.history import HistoryState, cochange_neighbours, mine_history
from knowing_pr.model import Edge, EdgeKind, SymbolKind, node_id
from knowing_pr.store import Store

if TYPE_CHECKING:  # numpy/scipy load lazily: the index (hook) path never walks
    import scipy.sparse as sp

    from knowing_pr.adjacency import Adjacency

__all__ = [
    "HISTORY_ORIGIN",
    "HistoryUpdate",
    "changed_file_weight",
    "cochange_edges",
    "cochange_evidence",
    "cochange_share",
    "load_history",
    "predictiveness",
    "recency_by_node",
    "recency_of",
    "update_history",
    "walk_matrix",
]

#: ``edges.origin`` of the co-change edges (no file path can look like this)
HISTORY_ORIGIN = "<history>"
META_PREFIX = "history_"
SECONDS_PER_DAY = 86_400


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
    meta, files, pairs = state.to_rows()
    store.replace_history(files, pairs)
    for key, value in meta:
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
    edges = cochange_edges(state, _module_ids(store, state), params)
    store.delete_edges_from([HISTORY_ORIGIN])
    store.insert_edges((edge, HISTORY_ORIGIN) for edge in edges)
    window = _commit_window(repo, store, target, params.predictiveness_window)
    score = predictiveness(state, window, params)
    store.set_meta(META_PREFIX + "predictiveness", "" if score is None else repr(round(score, 6)))
    return HistoryUpdate(
        mined_head=state.mined_head,
        mined_commits=state.mined_commits,
        new_commits=max(state.mined_commits - before, 0),
        shallow=repo.is_shallow,
        kept_cached=kept,
        cochange_edges=len(edges),
        predictiveness=score,
    )


def _module_ids(store: Store, state: HistoryState) -> dict[str, str]:
    """Module node id of every file with history that has one in the store."""
    wanted = {path: node_id(path, module_name(path), SymbolKind.MODULE) for path in state.files}
    present = store.nodes_by_ids(wanted.values())
    return {path: nid for path, nid in wanted.items() if nid in present}


def cochange_edges(state: HistoryState, module_ids: Mapping[str, str], params: HistoryParams) -> list[Edge]:
    """Directed ``co_changed_with`` edges file → partner, confidence = together / commits(file).

    Per file, its ``cochange_max_partners`` best partners (confidence, then together, then
    path) among the files that have a module node, with ``together >= min_support``.
    """
    edges: list[Edge] = []
    for path in sorted(module_ids):
        stats = state.files.get(path)
        if stats is None or stats.commits == 0:
            continue
        ranked: list[tuple[float, int, str]] = []
        for partner in state.partners(path):
            pair = state.pair(path, partner)
            if partner not in module_ids or pair is None or pair.count < params.min_support:
                continue
            ranked.append((pair.count / stats.commits, pair.count, partner))
        ranked.sort(key=lambda item: (-item[0], -item[1], item[2]))
        for confidence, _, partner in ranked[: params.cochange_max_partners]:
            edges.append(
                Edge(
                    module_ids[path],
                    module_ids[partner],
                    EdgeKind.CO_CHANGED_WITH,
                    round(min(confidence, 1.0), 4),
                )
            )
    return edges


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


def predictiveness(
    state: HistoryState, window: Sequence[tuple[str, Sequence[str]]], params: HistoryParams
) -> float | None:
    """Mean recall of the top-k co-change partners on the window's commits, leave-one-out.

    For a commit that changed the files F (2 <= |F| <= ``max_files_per_commit``, files with
    history only) and each f in F: rank f's partners by together/commits(f) with the commit's
    own contribution taken out, keep ``together >= min_support``, and count how many of
    F - {f} are among the first ``predictiveness_top_k`` (out of min(|F| - 1, k)).
    ``None`` when the window has no such commit.
    """
    total = 0.0
    trials = 0
    top_k = params.predictiveness_top_k
    for _, paths in window:
        files = sorted({p for p in paths if p in state.files})
        if not 2 <= len(files) <= params.max_files_per_commit or len(paths) > params.max_files_per_commit:
            continue
        members = set(files)
        for source in files:
            out_of = state.files[source].commits - 1
            if out_of <= 0:
                trials += 1
                continue
            scored: list[tuple[float, int, str]] = []
            for partner in state.partners(source):
                pair = state.pair(source, partner)
                if pair is None:
                    continue
                together = pair.count - (1 if partner in members else 0)
                if together >= params.min_support:
                    scored.append((together / out_of, together, partner))
            scored.sort(key=lambda item: (-item[0], -item[1], item[2]))
            found = sum(1 for _, _, partner in scored[:top_k] if partner in members)
            total += found / min(len(files) - 1, top_k)
            trials += 1
    return total / trials if trials else None


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


def recency_of(
    last_time: int, churn: float, max_churn: float, reference_time: int, params: HistoryParams
) -> float:
    """Seed 003's age steps (relative to ``reference_time``) blended with relative churn."""
    age_days = max(reference_time - last_time, 0) / SECONDS_PER_DAY
    if age_days < 1:
        step = params.recency_within_1d
    elif age_days < 7:
        step = params.recency_within_7d
    elif age_days < 30:
        step = params.recency_within_30d
    else:
        step = params.recency_older
    relative_churn = churn / max_churn if max_churn > 0 else 0.0
    return round((1.0 - params.churn_share) * step + params.churn_share * relative_churn, 6)


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
        rows: Iterable[tuple[str, str]] = ((r[0], r[1]) for r in store.symbol_rows())
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
