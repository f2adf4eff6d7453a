"""Mined history (``HistoryState``) → what it predicts: co-change partners, co-change edges,
how predictive the history is, and recency. Pure functions, no I/O.

- ``cochange_neighbours``: "often changed together" for a change (confidence = together /
  commits of the source file);
- ``decayed_cochange_ranking``: the change's likely partners by decayed co-change share;
- ``cochange_edges``: each file's best partners as ``co_changed_with`` edges;
- ``predictiveness``: leave-one-out recall of the top-k partners on recent commits;
- ``recency_of``: seed 003's age steps blended with relative churn.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from knowing_pr.config import HistoryParams
from knowing_pr.history.state import HistoryState
from knowing_pr.model import Edge, EdgeKind

__all__ = [
    "cochange_edges",
    "cochange_neighbours",
    "decayed_cochange_ranking",
    "predictiveness",
    "recency_of",
]

SECONDS_PER_DAY = 86_400


def cochange_neighbours(
    state: HistoryState, paths: Collection[str], limit: int, *, min_together: int = 1
) -> list[tuple[str, int, int, float]]:
    """Files that often changed together with ``paths``: (path, together, out_of, confidence).

    For each other file the best source among ``paths`` counts: confidence = together /
    commits(source), ties broken by more commits together, then by path. Pass
    ``HistoryParams.min_support`` as ``min_together`` to drop one-off coincidences.
    """
    sources = set(paths)
    best: dict[str, tuple[float, int, int]] = {}
    for source in sorted(sources):
        stats = state.files.get(source)
        if stats is None or stats.commits == 0:
            continue
        for partner in state.partners(source):
            if partner in sources:
                continue
            pair = state.pair(source, partner)
            if pair is None or pair.count < min_together:
                continue
            candidate = (pair.count / stats.commits, pair.count, stats.commits)
            if partner not in best or candidate[:2] > best[partner][:2]:
                best[partner] = candidate
    ranked = sorted(best.items(), key=lambda item: (-item[1][0], -item[1][1], item[0]))
    return [(path, together, out_of, confidence) for path, (confidence, together, out_of) in ranked[:limit]]


def decayed_cochange_ranking(
    state: HistoryState, paths: Collection[str], limit: int, *, min_together: int = 1
) -> list[tuple[str, float]]:
    """Files likely to change with ``paths``: (path, score), best first, ties by path.

    score(p) = sum over the sources s in ``paths`` of weight(s, p) / churn(s): the decayed
    share of s's changes that also touched p (recent co-changes count more), summed so a file
    that goes with several of the changed files rises. Pairs seen fewer than ``min_together``
    times are ignored.
    """
    sources = set(paths)
    scores: dict[str, float] = {}
    for source in sorted(sources):
        stats = state.files.get(source)
        if stats is None or stats.churn <= 0:
            continue
        for partner in state.partners(source):
            if partner in sources:
                continue
            pair = state.pair(source, partner)
            if pair is None or pair.count < min_together:
                continue
            scores[partner] = scores.get(partner, 0.0) + pair.weight / stats.churn
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:limit]


def cochange_edges(
    state: HistoryState,
    module_ids: Mapping[str, str],
    params: HistoryParams,
    *,
    sources: Collection[str] | None = None,
) -> list[Edge]:
    """Directed ``co_changed_with`` edges file → partner, confidence = together / commits(file).

    Per file (of ``sources``, default all of ``module_ids``), its ``cochange_max_partners``
    best partners (confidence, then together, then path) among the files that have a module
    node, with ``together >= min_support``.
    """
    ranked = _ranked_partners(state, module_ids, params, sources)
    edges: list[Edge] = []
    for path in sorted(ranked):
        partners = ranked[path]
        partners.sort(key=lambda item: (-item[0], -item[1], item[2]))
        for confidence, _, partner in partners[: params.cochange_max_partners]:
            edges.append(
                Edge(
                    module_ids[path],
                    module_ids[partner],
                    EdgeKind.CO_CHANGED_WITH,
                    round(min(confidence, 1.0), 4),
                )
            )
    return edges


def _ranked_partners(
    state: HistoryState, module_ids: Mapping[str, str], params: HistoryParams, sources: Collection[str] | None
) -> dict[str, list[tuple[float, int, str]]]:
    """(confidence, together, partner) of every partner with a module node and enough support, per
    file with a module node and commits (of ``sources``; all: one pass over the pairs, no
    partner index), unsorted."""
    files, support = state.files, params.min_support
    ranked: dict[str, list[tuple[float, int, str]]] = {}
    if sources is None:
        for (first, second), pair in state.pairs.items():
            if pair.count < support or first not in module_ids or second not in module_ids:
                continue
            for path, partner in ((first, second), (second, first)):
                stats = files.get(path)
                if stats is not None and stats.commits:
                    ranked.setdefault(path, []).append((pair.count / stats.commits, pair.count, partner))
        return ranked
    for path in set(sources) & set(module_ids):
        stats = files.get(path)
        if stats is None or stats.commits == 0:
            continue
        found = ranked.setdefault(path, [])
        for partner in state.partners(path):
            stored = state.pair(path, partner)
            if partner in module_ids and stored is not None and stored.count >= support:
                found.append((stored.count / stats.commits, stored.count, partner))
    return ranked


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
