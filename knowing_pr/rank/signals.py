"""Store (mined history, its measured predictiveness) + the changed paths → the history signals a
ranking reads, in one read: the walk's co-change share, recency per node, the change's
"often changed together" evidence, its decayed co-change file order and that order's weight in
the late fusion.

- ``walk_share``: the share of the walk that leaves a file node along ``co_changed_with`` edges,
  ``edge_weights[co_changed_with] x history.cochange_gain x predictiveness`` capped at
  ``history.cochange_max_share`` — a repository whose history predicts its own commits well leans
  on it, one whose history is noise barely does;
- ``recency_by_file``: path → seed 003's age step of the file's last change (relative to the
  newest mined commit, never the wall clock) blended with its decayed churn (a node's recency is
  its file's: ``rank.candidates`` looks up the paths of the nodes it scores);
- ``evidence``: (path, together, out_of) of the change's best co-change partners;
- ``file_order`` / ``fusion_weight``: the change's likely partners by decayed co-change share,
  and the weight that list gets against the walk's file order (``fusion.cochange_gain x
  predictiveness`` within its bounds; 0 when history is off, unmeasured or not walked).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from knowing_pr.config import Settings
from knowing_pr.history import HistoryState, cochange_neighbours, decayed_cochange_ranking, recency_of
from knowing_pr.model import EdgeKind
from knowing_pr.rank.memo import Memo, store_state
from knowing_pr.store import Store
from knowing_pr.store.history import META_PREFIX, load_history

__all__ = ["HistorySignals", "read_history_signals"]


@dataclass(frozen=True)
class HistorySignals:
    """What history tells one ranking (all empty or zero when there is no history)."""

    walk_share: float = 0.0
    recency_by_file: dict[str, float] = field(default_factory=dict)
    evidence: tuple[tuple[str, int, int], ...] = ()
    file_order: tuple[str, ...] = ()
    fusion_weight: float = 0.0
    #: the changed path each ``evidence`` row pairs with (its ``out_of`` counts that file's commits)
    evidence_with: dict[str, str] = field(default_factory=dict)


def read_history_signals(
    store: Store,
    settings: Settings,
    changed_paths: Collection[str] = (),
    *,
    with_recency: bool = False,
    with_cochange: bool = False,
) -> HistorySignals:
    """The signals a ranking needs: always the walk share; recency per file and the change's
    co-change evidence and file order only when asked (a PR ranking)."""
    predictiveness = _predictiveness(store)
    share = walk_share(settings, predictiveness)
    if not with_recency and not with_cochange:
        return HistorySignals(walk_share=share)
    # the changed files' rows and pairs only: all that their co-change lists read
    state = load_history(store, changed_paths) if with_cochange and settings.history.enabled else None
    weight = fusion_weight(settings, predictiveness)
    evidence = _evidence(state, changed_paths, settings)
    return HistorySignals(
        walk_share=share,
        recency_by_file=kept_recency_by_file(store, settings) if with_recency else {},
        evidence=evidence,
        file_order=_file_order(state, changed_paths, settings) if weight > 0 else (),
        fusion_weight=weight,
        evidence_with=_evidence_sources(state, changed_paths, evidence),
    )


def _evidence_sources(
    state: HistoryState | None, paths: Collection[str], evidence: Iterable[tuple[str, int, int]]
) -> dict[str, str]:
    """For each evidence row, the changed file whose history it counts (``together`` commits with
    the partner out of its ``out_of`` commits; the first such path)."""
    if state is None:
        return {}
    found: dict[str, str] = {}
    for partner, together, out_of in evidence:
        for source in sorted(paths):
            stats, pair = state.files.get(source), state.pair(source, partner)
            if stats is not None and pair is not None and (stats.commits, pair.count) == (out_of, together):
                found[partner] = source
                break
    return found


def _predictiveness(store: Store) -> float | None:
    raw = store.get_meta(META_PREFIX + "predictiveness")
    return float(raw) if raw else None


def walk_share(settings: Settings, predictiveness: float | None) -> float:
    """The share of the walk that follows history edges out of a file node."""
    base = settings.rank.edge_weights.get(EdgeKind.CO_CHANGED_WITH, 0.0)
    if base <= 0 or not predictiveness or not settings.history.enabled:
        return 0.0
    share = base * settings.history.cochange_gain * predictiveness
    return float(min(max(share, 0.0), settings.history.cochange_max_share))


def fusion_weight(settings: Settings, predictiveness: float | None) -> float:
    """Weight of the co-change file order against the walk's (whose weight is 1)."""
    walked = settings.rank.edge_weights.get(EdgeKind.CO_CHANGED_WITH, 0.0) > 0
    if predictiveness is None or not settings.history.enabled or not walked:
        return 0.0
    fusion = settings.fusion
    weight = fusion.cochange_gain * predictiveness
    return float(min(max(weight, fusion.cochange_min_weight), fusion.cochange_max_weight))


def recency_by_file(store: Store, settings: Settings) -> dict[str, float]:
    """Recency of every file with history (files without any keep the scorer's default)."""
    reference = store.get_meta(META_PREFIX + "reference_time")
    rows = store.history_files()
    if not reference or not rows:
        return {}
    max_churn = max(churn for _, _, _, churn in rows)
    params = settings.history
    return {path: recency_of(last, churn, max_churn, int(reference), params) for path, _, last, churn in rows}


#: per process: every file's recency, by graph root and mined history
_RECENCY = Memo(capacity=2)


def kept_recency_by_file(store: Store, settings: Settings) -> dict[str, float]:
    """``recency_by_file``, once per store state (``memo.store_state``) and history settings in a
    process."""
    if not store.graph_root:
        return recency_by_file(store, settings)
    return _RECENCY.get((store_state(store), settings.history), lambda: recency_by_file(store, settings))


def _evidence(
    state: HistoryState | None, paths: Collection[str], settings: Settings
) -> tuple[tuple[str, int, int], ...]:
    """ "Often changed together" for a change: (path, together, out_of), best confidence first."""
    if state is None:
        return ()
    params = settings.history
    rows = cochange_neighbours(state, paths, params.cochange_list_limit, min_together=params.min_support)
    return tuple((path, together, out_of) for path, together, out_of, _ in rows)


def _file_order(state: HistoryState | None, paths: Collection[str], settings: Settings) -> tuple[str, ...]:
    """The change's likely partners by decayed co-change share summed over its files, as deep as
    the late fusion reads."""
    if state is None:
        return ()
    fusion = settings.fusion
    depth = fusion.files * max(fusion.depth_factor, 1)
    ranked = decayed_cochange_ranking(state, paths, depth, min_together=fusion.min_together)
    return tuple(path for path, _ in ranked)
