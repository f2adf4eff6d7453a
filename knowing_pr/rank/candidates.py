"""Seeds + the graph + the history signals → ranked candidates and the trace behind them: THE recipe.

How every pack (``pr``, ``files``, ``task``) is ranked, in order:

1. **Seeds.** The query's restart weights (a change's symbols, or a task's matches), plus, for a
   PR, the module node of each file history says changes with it (``seeds.cochange_seeds``).
2. **Matrix.** The two-way walk over the typed, weighted edges, mixed with the co-change edges
   by the repository's measured share (``matrix.walk_matrix``).
3. **Walk.** Random Walk with Restart from the seeds (``walk.walk_with_restart``; Tong, Faloutsos
   & Pan 2006). Candidates: every node whose RWR is at least ``score_cutoff`` of the highest,
   plus every seed.
4. **HITS** on the ``hits_top_n`` nodes with the highest RWR (``hits.hits``; Kleinberg 1999);
   nodes outside that set have authority = hub = 0.
5. **Score.** Seed 003's formula per candidate (``score.score_candidate``), with hop distances
   from the seeds (a candidate further than ``max_hops`` counts as ``max_hops + 1``); ties
   break by node id.
6. **Reasons.** Each candidate's node is loaded (module nodes stay out of a pack unless a change
   touched only module-level code) and given its one reason (``reasons.Reasons``).
7. **Files.** A PR's ranked file list (``files.rank_files``: every signal of a candidate file,
   scored by the model fitted on the repository's own history), and its first files lead the
   pack with their key symbols (``fusion.lead_with_files``); with ``files.enabled`` off, the
   fused order of the walk's files and the change's co-change list does
   (``fusion.fuse_pr_files``). A task's candidates get the final order of
   ``task_rank.task_rank`` (the walk's order and the task's seed order fused, then kind, place,
   the candidates' consensus, owners and diversity) and its scores, so the pack takes and shows
   them in that order.
8. **A task's files.** Once the task's ranked file list is made (``task/files.py``, which reads
   the order of step 7), the order follows it: each symbol × ``1 + rank_file_prior`` × its
   file's score in the list (``follow_task_files``, ``task_rank.follow_file_list``).

Steps 3–5 are pure (``rank_nodes``); the recipe adds the store's nodes and the history. The
``RankTrace`` keeps what each step knew, so ``why`` reads it instead of ranking again.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from knowing_pr.config import RankParams, Settings
from knowing_pr.graph.adjacency import ADJACENCY_BLOB, Adjacency
from knowing_pr.graph.paths import is_test_path
from knowing_pr.model import Node, RankedFile, ScoredSymbol, SymbolKind
from knowing_pr.rank.files import prepare_file_ranking, rank_files
from knowing_pr.rank.fusion import fuse_pr_files, lead_with_files, ordered_by_task
from knowing_pr.rank.hits import hits
from knowing_pr.rank.keptwalk import WALK_BLOB, keep_walk_matrix, stored_walk_matrix, walk_tag
from knowing_pr.rank.matrix import walk_matrix
from knowing_pr.rank.memo import Memo, store_state
from knowing_pr.rank.reasons import Reasons
from knowing_pr.rank.score import ScoreInput, incoming_confidence, score_candidate
from knowing_pr.rank.seeds import changed_file_weight, cochange_seeds
from knowing_pr.rank.signals import HistorySignals, read_history_signals
from knowing_pr.rank.sparse import CsrMatrix
from knowing_pr.rank.task_rank import TaskOrderInput, follow_file_list, task_rank
from knowing_pr.rank.trace import RankedNode, RankTrace
from knowing_pr.rank.walk import hop_array, restart_vector, walk_with_restart
from knowing_pr.store import Store

__all__ = [
    "MAX_CANDIDATES",
    "RankQuery",
    "Ranking",
    "load_adjacency",
    "follow_task_files",
    "order_task_candidates",
    "prepare_ranking",
    "rank_candidates",
    "rank_nodes",
    "scored_symbol",
]

#: candidates handed to the packer (the rest cannot fit any sane budget)
MAX_CANDIDATES = 3000


@dataclass(frozen=True)
class RankQuery:
    """What one ranking starts from, besides the graph and the history."""

    mode: str  # "pr" | "files" | "task"
    #: restart weight per node id
    seeds: Mapping[str, float]
    #: the symbols the change itself touched (the reasons' anchors); ``None``: every seed
    changed: frozenset[str] | None = None
    #: symbols that used what the change deleted (reported as callers)
    former_callers: frozenset[str] = frozenset()
    #: module nodes that stand for a change of module-level code (packed like symbols)
    keep_modules: frozenset[str] = frozenset()
    #: the changed paths (a PR's files are fused against them)
    changed_paths: tuple[str, ...] = ()
    #: multiply test symbols by ``RankParams.test_penalty`` (a task not about tests)
    penalise_tests: bool = False
    #: ForFiles: keep only the seeds and their callers
    seeds_and_callers_only: bool = False
    #: a task's seed order (best first), fused with the walk's order in step 7
    seed_order: tuple[str, ...] = ()
    #: a task: path segments (lowercase directory names) of code the task is not about
    demoted_segments: frozenset[str] = frozenset()
    #: a task: the symbols it names outright, first in the final order (in seed order)
    pinned: frozenset[str] = frozenset()
    #: a task: its words (``task_rank.word_key``), matched against names and paths in step 7
    task_words: frozenset[str] = frozenset()


@dataclass
class Ranking:
    """The candidates, best first (scores decide the packing), and the trace behind them."""

    candidates: list[ScoredSymbol]
    trace: RankTrace
    #: the order a pack shows its symbols in, when it is not the score order (a task's)
    display_order: tuple[tuple[str, float], ...] = ()
    seed_ranks: dict[str, int] = field(default_factory=dict)
    #: a PR's ranked file list (step 7), best first
    files: tuple[RankedFile, ...] = ()
    #: the bounds on hostile input the ranking reached (``history.filesignals.SignalRows``)
    limits_hit: tuple[str, ...] = ()


#: per process: the adjacency of a store state (its graph root and the index run that wrote it:
#: a run that rewrites the co-change edges may keep the graph root), and the walk matrices built
#: on each adjacency
_ADJACENCY = Memo(capacity=2)
_WALK_MATRICES: weakref.WeakKeyDictionary[Adjacency, dict[tuple[Any, ...], CsrMatrix]] = (
    weakref.WeakKeyDictionary()
)


def load_adjacency(store: Store) -> Adjacency:
    """The adjacency blob, rebuilt from the edge rows when missing or stale (once per store state
    in a process)."""
    graph_root = store.graph_root or ""
    if not graph_root:
        return _read_adjacency(store, graph_root)
    return _ADJACENCY.get(store_state(store), lambda: _read_adjacency(store, graph_root))


def _read_adjacency(store: Store, graph_root: str) -> Adjacency:
    found = store.get_blob(ADJACENCY_BLOB)
    if found is not None and found[0] == graph_root:
        return Adjacency.from_bytes(found[1])
    return Adjacency.from_edges(store.node_ids(), store.all_edges())


def _walk_matrix(store: Store, adjacency: Adjacency, params: RankParams, share: float) -> CsrMatrix:
    """``matrix.walk_matrix`` of ``adjacency``, once per edge weights and share in a process; from
    the store's copy when it has one built from the same arrays (``keptwalk``), else built and
    the copy written."""
    weights = tuple(sorted((int(kind), float(w)) for kind, w in params.edge_weights.items()))
    built_on = _WALK_MATRICES.setdefault(adjacency, {})
    if (weights, share) not in built_on:
        built_on[(weights, share)] = _kept_or_built(store, adjacency, params, share)
    return built_on[(weights, share)]


def _kept_or_built(store: Store, adjacency: Adjacency, params: RankParams, share: float) -> CsrMatrix:
    tag = walk_tag(adjacency, params.edge_weights, share)
    found = stored_walk_matrix(store, tag, adjacency.node_count)
    if found is not None:
        return found
    built = walk_matrix(adjacency, params.edge_weights, share)
    keep_walk_matrix(store, tag, built)
    return built


def keep_walk_matrix_of(store: Store, settings: Settings) -> None:
    """The walk matrix a ranking of the store's state reads, built and kept now unless it is kept
    already (the index command and the hook's idle worker call it, so a fresh ``pr`` reads it)."""
    if not store.graph_root:
        return
    share = read_history_signals(store, settings).walk_share
    adjacency = load_adjacency(store)
    matrix = _walk_matrix(store, adjacency, settings.rank, share)  # kept when built here
    tag = walk_tag(adjacency, settings.rank.edge_weights, share)
    if store.blob_tag(WALK_BLOB) != tag:  # this process had it already: keep it for the next
        keep_walk_matrix(store, tag, matrix)


def prepare_ranking(store: Store, adjacency: Adjacency, settings: Settings, history: HistorySignals) -> None:
    """Read now what a ``pr`` ranking with ``history`` will read of this graph root whatever the
    change (the walk matrix, the file ranking's inputs): a caller waiting for other work (a fork
    parsing the base's files) gets it done meanwhile; a warm process has it already."""
    _walk_matrix(store, adjacency, settings.rank, history.walk_share)
    if settings.files.enabled:
        prepare_file_ranking(store, adjacency, settings)


def rank_candidates(
    store: Store, adjacency: Adjacency, settings: Settings, query: RankQuery, history: HistorySignals
) -> Ranking:
    """The recipe (module docstring): seeds → matrix → walk → HITS → score → reasons → files."""
    params = settings.rank
    # 1. seeds
    seeds = dict(query.seeds)
    if query.mode == "pr" and history.evidence:
        file_weight = changed_file_weight(query.seeds, len(query.changed_paths))
        seeds = {**cochange_seeds(history.evidence, history.walk_share, file_weight), **query.seeds}
    # 2. matrix
    matrix = _walk_matrix(store, adjacency, params, history.walk_share)
    # ForFiles promises the files' direct callers: every node with a structural link into a seed
    # (the ``caller`` reason) is scored, however little of the walk reaches it (a file of many
    # symbols spreads the restart thin: a caller fell under ``score_cutoff``)
    reasons = _reasons(adjacency, query, params.min_shown_confidence)
    # 3.–5. walk, HITS, score
    tests = _TestPaths(store)
    ranked, trace = rank_nodes(
        adjacency,
        matrix,
        seeds,
        params,
        recency=_node_recency(store, history.recency_by_file),
        is_test=tests.of_node if query.penalise_tests else None,
        penalise_tests=query.penalise_tests,
        keep=reasons.caller_positions if query.seeds_and_callers_only else (),
    )
    # 6. reasons
    candidates = _labelled_candidates(store, ranked, query, reasons)
    # 7. files
    if query.mode == "pr" and settings.files.enabled:
        ranked_files = rank_files(store, adjacency, settings, query.changed_paths)
        if not query.seeds:  # no code changed: the list stands alone, no symbol leads an empty pack
            trace.file_order = ranked_files.order
            return Ranking(
                candidates, trace, files=ranked_files.files, limits_hit=ranked_files.rows.limits_hit
            )
        candidates = lead_with_files(
            store,
            adjacency,
            trace.rwr,
            candidates,
            ranked_files.order,
            settings.fusion.files,
            settings.fusion.rrf_k,
            is_test_path,
            settings.files.lead_min_share,
        )
        trace.file_order = ranked_files.order
        return Ranking(candidates, trace, files=ranked_files.files, limits_hit=ranked_files.rows.limits_hit)
    if query.mode == "pr":
        candidates, files = fuse_pr_files(
            store,
            adjacency,
            trace.rwr,
            candidates,
            query.changed_paths,
            history.file_order,
            history.fusion_weight,
            settings.fusion,
            is_test_path,
        )
        trace.file_order = tuple(files)
        return Ranking(candidates, trace)
    if query.mode == "task":
        return order_task_candidates(candidates, trace, adjacency, settings, query)
    return Ranking(candidates, trace)


def order_task_candidates(
    candidates: list[ScoredSymbol],
    trace: RankTrace,
    adjacency: Adjacency,
    settings: Settings,
    query: RankQuery,
) -> Ranking:
    """Step 7 for a task: the final order (``task_rank``); the candidates take its scores, so the
    knapsack packs in that order, and keep the walk's score as the ``walk_score`` component."""

    def demote(path: str) -> bool:
        if query.penalise_tests and is_test_path(path):
            return True
        return any(segment in query.demoted_segments for segment in path.lower().split("/")[:-1])

    given = TaskOrderInput(candidates, query.seed_order, adjacency, demote, query.pinned, query.task_words)
    order = task_rank(given, settings.task)
    trace.task_order, trace.seed_order = tuple(order), query.seed_order
    seed_ranks: dict[str, int] = {}
    for rank, nid in enumerate(query.seed_order, 1):
        seed_ranks.setdefault(nid, rank)
    return Ranking(ordered_by_task(candidates, order, seed_ranks), trace, tuple(order), seed_ranks)


def follow_task_files(
    ranking: Ranking, files: Sequence[RankedFile], settings: Settings, query: RankQuery
) -> Ranking:
    """Step 8: a task's ranking with its ranked file list, its order following the list (module
    docstring); the symbols the task names stay first."""
    nodes = {c.node.id: c.node for c in ranking.candidates}
    scores = {f.path: f.score for f in files}
    order = follow_file_list(ranking.display_order, nodes, scores, query.pinned, settings.task)
    ranking.trace.task_order = tuple(order)
    return Ranking(
        ordered_by_task(ranking.candidates, order, ranking.seed_ranks),
        ranking.trace,
        tuple(order),
        ranking.seed_ranks,
        files=tuple(files),
        limits_hit=ranking.limits_hit,
    )


def _reasons(adjacency: Adjacency, query: RankQuery, floor: float) -> Reasons:
    """Why each node would be in the pack (``rank/reasons.py``): its links to the change's own
    symbols (a task's seeds, every seed without a change); an edge below ``floor``
    (``RankParams.min_shown_confidence``) makes no caller or callee."""
    return Reasons(
        adjacency,
        _anchors(query),
        former_callers=query.former_callers,
        anchor_reason="match" if query.mode == "task" else "changed",
        floor=floor,
    )


def _anchors(query: RankQuery) -> Collection[str]:
    return query.changed if query.changed is not None else [n for n, w in query.seeds.items() if w > 0]


def _labelled_candidates(
    store: Store, ranked: Sequence[RankedNode], query: RankQuery, reasons: Reasons
) -> list[ScoredSymbol]:
    """Step 6: the ranked nodes as packable symbols with their ``reasons``, best first, at most
    ``MAX_CANDIDATES`` (module nodes left out unless they stand for the change)."""
    anchor_set = reasons.anchors
    wanted = [r.node_id for r in ranked[: MAX_CANDIDATES * 2]]
    wanted += [r.node_id for r in ranked[MAX_CANDIDATES * 2 :] if r.node_id in anchor_set]
    nodes = store.nodes_by_ids(wanted)
    candidates: list[ScoredSymbol] = []
    for r in ranked:
        full = len(candidates) >= MAX_CANDIDATES
        if full and r.node_id not in anchor_set:
            continue  # past the cap only the change's own symbols still come in: they are never dropped
        node = nodes.get(r.node_id)
        if node is None or (node.kind == SymbolKind.MODULE and node.id not in query.keep_modules):
            continue
        test = is_test_path(node.path)
        symbol = scored_symbol(r, node, is_test=test, reason=reasons.of(node.id, is_test=test))
        if not query.seeds_and_callers_only or symbol.is_seed or symbol.reason == "caller":
            candidates.append(symbol)
    return candidates


def _node_recency(
    store: Store, by_file: Mapping[str, float]
) -> Callable[[Sequence[str]], dict[str, float]] | None:
    """Node ids → their file's recency (the files with history; None when no file has any): only
    the paths of the nodes a ranking scores are looked up, not every node's."""
    if not by_file:
        return None

    def of(node_ids: Sequence[str]) -> dict[str, float]:
        paths = store.paths_of_nodes(node_ids)
        return {node_id: by_file[path] for node_id, path in paths.items() if path in by_file}

    return of


def rank_nodes(
    adj: Adjacency,
    P: CsrMatrix,
    seeds: Mapping[str, float],
    params: RankParams,
    *,
    recency: Callable[[Sequence[str]], Mapping[str, float]] | None = None,
    is_test: Callable[[str], bool] | None = None,
    penalise_tests: bool = False,
    keep: Collection[int] = (),
) -> tuple[list[RankedNode], RankTrace]:
    """Steps 3–5: walk, HITS, score every candidate; best first, ties by node id; and the trace.

    ``P`` is ``matrix.walk_matrix`` (or ``matrix.transition_matrix``). Seeds not in the graph,
    or with a weight <= 0, are ignored; without any seed left the ranking is empty (and the
    trace's RWR all zeros). Test symbols (``is_test``) are multiplied by ``params.test_penalty``
    only when ``penalise_tests``. ``recency`` gives the recency of the candidates' node ids it is
    asked for (``params.unknown_recency`` for the others). ``keep``: positions scored as candidates
    even below the cutoff.
    """
    if P.shape != (adj.node_count, adj.node_count):
        raise ValueError(f"transition matrix {P.shape} does not match {adj.node_count} nodes")
    seed_weights = _seed_indices(adj, seeds)
    if not seed_weights:
        return [], RankTrace(adj, np.zeros(adj.node_count), {}, params.score_cutoff, 0)
    # 3. walk: RWR from the seeds; candidates above the cutoff, plus every seed and ``keep``
    rwr, iterations = walk_with_restart(
        P, seed_weights, restart_prob=params.restart_prob, max_iter=params.max_iter, tol_l1=params.tol_l1
    )
    s = restart_vector(adj.node_count, seed_weights)
    top = float(rwr.max())
    above = np.flatnonzero((rwr > 0) & (rwr >= params.score_cutoff * top))
    candidates = sorted(set(above.tolist()) | set(seed_weights) | set(keep))
    # 4. HITS on the nodes with the highest RWR
    hits_nodes = [int(i) for i in _top_by_rwr(rwr, params.hits_top_n)]
    authority, hub = hits(adj, hits_nodes, params.edge_weights, params.hits_iter)
    # 5. score
    hops = hop_array(P, seed_weights, params.max_hops)
    restart = {i: float(s[i]) for i in seed_weights}
    trace = RankTrace(adj, rwr, restart, params.score_cutoff, iterations, frozenset(hits_nodes), hops)
    confidence = incoming_confidence(adj, candidates)
    max_rwr = max(float(rwr[i]) for i in candidates)
    recency_of = recency([adj.node_ids[i] for i in candidates]) if recency is not None else {}
    ranked: list[RankedNode] = []
    for index in candidates:
        node_id = adj.node_ids[index]
        item = ScoreInput(
            rwr=float(rwr[index]),
            max_rwr=max_rwr,
            confidence=confidence[index],
            recency=recency_of.get(node_id, params.unknown_recency),
            hops=int(hops[index]) if hops[index] >= 0 else params.max_hops + 1,
            authority=authority.get(index, 0.0),
            hub=hub.get(index, 0.0),
            is_seed=index in seed_weights,
            penalised=penalise_tests and is_test is not None and is_test(node_id),
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
                is_seed=item.is_seed,
                components=components,
            )
        )
    ranked.sort(key=lambda r: (-r.score, r.node_id))
    return ranked, trace


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


class _TestPaths:
    """Whether a node id lies in a test file (one store read per node, remembered)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.known: dict[str, Node | None] = {}

    def of_node(self, node_id: str) -> bool:
        if node_id not in self.known:
            self.known[node_id] = self.store.nodes_by_ids([node_id]).get(node_id)
        node = self.known[node_id]
        return node is not None and is_test_path(node.path)


def scored_symbol(ranked: RankedNode, node: Node, *, is_test: bool, reason: str) -> ScoredSymbol:
    """The record the pack and render stages take, for a ranked node and its ``Node``."""
    return ScoredSymbol(
        node=node,
        score=ranked.score,
        rwr=ranked.rwr,
        authority=ranked.authority,
        hub=ranked.hub,
        distance=ranked.distance,
        reason=reason,
        is_seed=ranked.is_seed,
        is_test=is_test,
        components=ranked.components,
    )
