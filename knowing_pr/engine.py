"""Store + seeds → a ranked, packed, content-addressed ``Pack`` (seed 002's context engine).

The engine is shared by every mode (``pr``, ``files``, ``task``): it loads the adjacency
blob, walks, scores, packs against the rendered cost of each entry, computes the PackRoot
and records the manifest in the store so ``replay`` can show or verify it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from knowing_pr.config import Settings
from knowing_pr.graph import is_test_path
from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.graph.merkle import pack_root
from knowing_pr.model import EdgeKind, Node, Pack, ScoredSymbol, SymbolKind
from knowing_pr.store import Store

__all__ = ["MAX_CANDIDATES", "PackRequest", "build_pack", "load_adjacency"]

ADJACENCY_BLOB = "adjacency"
#: candidates handed to the packer (the rest cannot fit any sane budget)
MAX_CANDIDATES = 3000


@dataclass(frozen=True)
class PackRequest:
    """Everything that determines a pack besides the code itself."""

    mode: str  # "pr" | "files" | "task"
    seeds: Mapping[str, float]
    #: normalized inputs that enter the PackRoot (sorted paths, normalized task text)
    identity_inputs: Mapping[str, Any]
    #: everything recorded for display and replay (base/head shas, ranges, …)
    inputs: Mapping[str, Any]
    fmt: str
    commit: str | None
    penalise_tests: bool = False
    test_share: float = 0.0
    #: keep only candidates for which this returns True (ForFiles: seeds + callers)
    keep: Callable[[ScoredSymbol], bool] | None = None
    #: module nodes that stand for a change of module-level code (packed like symbols)
    keep_modules: frozenset[str] = frozenset()
    #: the symbols the change itself touched; other seeds (the rest of a changed file) are
    #: reported by how they relate to those. ``None``: every seed counts as changed
    changed: frozenset[str] | None = None
    #: symbols that called what the change deleted (reported as callers)
    former_callers: frozenset[str] = frozenset()
    recency: Mapping[str, float] | None = None
    cochange: tuple[tuple[str, int, int], ...] = ()


def load_adjacency(store: Store) -> Adjacency:
    """The adjacency blob, rebuilt from the edge rows when missing or stale."""
    graph_root = store.graph_root or ""
    found = store.get_blob(ADJACENCY_BLOB)
    if found is not None and found[0] == graph_root:
        return Adjacency.from_bytes(found[1])
    return Adjacency.from_edges(store.node_ids(), store.all_edges())


def edges_among(adjacency: Adjacency, ids: Sequence[str]) -> list[tuple[str, str, str]]:
    """The edges whose both ends are in ``ids`` (source, target, kind label), sorted."""
    from knowing_pr.model import EdgeKind

    positions = {p: node_id for node_id in ids if (p := adjacency.index_of(node_id)) is not None}
    out: set[tuple[str, str, str]] = set()
    for p, node_id in positions.items():
        start, end = int(adjacency.indptr[p]), int(adjacency.indptr[p + 1])
        for target, kind in zip(
            adjacency.indices[start:end].tolist(), adjacency.kinds[start:end].tolist(), strict=True
        ):
            if target in positions and target != p:
                out.add((node_id, positions[target], EdgeKind(kind).label))
    return sorted(out)


_STRUCTURAL_LINKS = frozenset(
    {
        EdgeKind.CALLS,
        EdgeKind.REFERENCES,
        EdgeKind.EXTENDS,
        EdgeKind.IMPLEMENTS,
        EdgeKind.INHERITS,
        EdgeKind.IMPORTS,
    }
)


class _Relations:
    """How a symbol relates to the change's own symbols: it uses one ("caller"), one uses it
    ("callee"), or neither. Containment (contains/member_of) is not a use, and seeds added only
    as context (the rest of a changed file, co-changed files) are not the change."""

    def __init__(self, adjacency: Adjacency, changed: frozenset[str]) -> None:
        self.adjacency = adjacency
        self.changed_positions = {p for i in changed if (p := adjacency.index_of(i)) is not None}
        self.callees: set[int] = set()
        for position in self.changed_positions:
            for target, kind in self._row(position):
                if kind in _STRUCTURAL_LINKS:
                    self.callees.add(target)

    def _row(self, position: int) -> list[tuple[int, int]]:
        start, end = int(self.adjacency.indptr[position]), int(self.adjacency.indptr[position + 1])
        targets = self.adjacency.indices[start:end].tolist()
        kinds = self.adjacency.kinds[start:end].tolist()
        return list(zip(targets, kinds, strict=True))

    def of(self, node_id: str) -> str:
        position = self.adjacency.index_of(node_id)
        if position is None:
            return "related"
        if any(k in _STRUCTURAL_LINKS and t in self.changed_positions for t, k in self._row(position)):
            return "caller"
        return "callee" if position in self.callees else "related"


def _node_lookup(store: Store) -> Callable[[str], Node | None]:
    cache: dict[str, Node | None] = {}

    def lookup(node_id: str) -> Node | None:
        if node_id not in cache:
            cache[node_id] = store.nodes_by_ids([node_id]).get(node_id)
        return cache[node_id]

    return lookup


def build_pack(store: Store, settings: Settings, request: PackRequest) -> Pack:
    """Rank from the request's seeds, pack under the budget, address and record the pack."""
    from knowing_pr import render
    from knowing_pr.pack import pack_symbols
    from knowing_pr.rank import rank_with_trace, scored_symbol

    adjacency = load_adjacency(store)
    # -- history: co-change edges walked with the repository's measured share (knowing_pr/cochange.py)
    from knowing_pr.cochange import changed_file_weight, cochange_seeds, cochange_share, walk_matrix

    share = cochange_share(store, settings)
    matrix = walk_matrix(adjacency, settings, share)
    file_weight = changed_file_weight(request.seeds, len(request.identity_inputs.get("files") or ()))
    seeds = {**cochange_seeds(request.cochange, share, file_weight), **request.seeds}
    # -- end history
    node_of = _node_lookup(store)

    def is_test(node_id: str) -> bool:
        node = node_of(node_id)
        return node is not None and is_test_path(node.path)

    ranked, trace = rank_with_trace(  # history: the fusion below reads the walk's RWR
        adjacency,
        matrix,
        seeds,
        settings.rank,
        recency=request.recency,
        # only a test penalty needs to know tests while scoring; otherwise the "test" reason is
        # set below from the nodes loaded anyway (one query instead of one per candidate)
        is_test=is_test if request.penalise_tests else None,
        penalise_tests=request.penalise_tests,
    )
    relations = _Relations(adjacency, request.changed) if request.changed is not None else None
    ids = [r.node_id for r in ranked[: MAX_CANDIDATES * 2]]
    nodes = store.nodes_by_ids(ids)
    candidates: list[ScoredSymbol] = []
    for r in ranked:
        node = nodes.get(r.node_id)
        if node is None or (node.kind == SymbolKind.MODULE and node.id not in request.keep_modules):
            continue
        symbol = scored_symbol(r, node, is_test=is_test_path(node.path))
        if symbol.is_test and not symbol.is_seed and symbol.reason != "test":
            symbol = dataclasses.replace(symbol, reason="test")
        elif relations is not None and symbol.reason != "test" and node.id not in (request.changed or ()):
            if node.id in request.former_callers:
                reason = "caller"
            else:
                reason = relations.of(node.id)
                if reason == "related" and symbol.reason == "cochange":
                    reason = "cochange"
            symbol = dataclasses.replace(symbol, reason=reason)
        if request.keep is None or request.keep(symbol):
            candidates.append(symbol)
        if len(candidates) >= MAX_CANDIDATES:
            break
    # -- history: late fusion of the walk's file order with the co-change list (knowing_pr/cochange.py)
    if request.mode == "pr":
        from knowing_pr.cochange import fuse_pr_candidates

        changed = request.identity_inputs.get("files") or ()
        candidates = fuse_pr_candidates(
            store, settings, adjacency, trace.rwr, candidates, changed, settings.fusion
        )
    # -- end history
    budget = settings.pack.budget_tokens
    params: dict[str, object] = {
        "rank": settings.rank.canonical(),
        "pack": settings.pack.canonical(),
        "format": request.fmt,
        "mode_options": {"penalise_tests": request.penalise_tests, "test_share": request.test_share},
    }
    frame = render.frame_cost(
        request.fmt,
        mode=request.mode,
        token_budget=budget,
        inputs=request.inputs,
        graph_root=store.graph_root,
        commit=request.commit,
        params=params,
        cochange=request.cochange,
        chars_per_token=settings.pack.chars_per_token,
    )
    packed, dropped = pack_symbols(
        candidates,
        budget_tokens=budget,
        cost_of=lambda s: render.entry_cost(s, request.fmt, settings.pack.chars_per_token),
        proximity_exponent=settings.pack.proximity_exponent,
        reserved_tokens=frame,
        test_share=request.test_share,
    )
    edges = edges_among(adjacency, [s.node.id for s in packed])
    root = pack_root(
        request.mode,
        request.identity_inputs,
        params,
        [(s.node.id, s.node.content_hash) for s in packed],
    )
    pack = Pack(
        pack_root=root,
        mode=request.mode,
        token_budget=budget,
        tokens_used=0,
        graph_root=store.graph_root or "",
        commit=request.commit,
        inputs=dict(request.inputs),
        symbols=packed,
        edges=edges,
        params=params,
        dropped=dropped,
        cochange=list(request.cochange),
    )
    # what the reader actually gets: the tokens of the rendered text (the frame estimate is an
    # upper bound used only for packing)
    rendered = render.render_pack(pack, request.fmt)
    pack.tokens_used = math.ceil(len(rendered) / settings.pack.chars_per_token)
    return pack
