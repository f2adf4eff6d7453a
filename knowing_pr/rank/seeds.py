"""A change (files, changed line ranges, deleted symbols) + the nodes of changed files →
restart weights for the walk (seeds 002/003 ForPR; DESIGN.md "ForPR seeds").

- a symbol whose lines overlap a changed hunk weighs ``seed_weight_hunk`` (the change itself);
- the other symbols of a changed file weigh ``seed_weight_file``;
- a symbol the change deleted cannot be walked from, so its former callers weigh
  ``seed_weight_deleted_caller`` instead;
- with paths only (``--files``), every symbol of the files weighs ``seed_weight_hunk``.

A module node stands for its whole file: it gets the file weight, so file-level edges
(imports, tests, co-change) carry the change too.

A PR's walk also starts, a little, from where history says the change goes: the module node of
each co-changed file gets ``file_weight x share x together / out_of`` (``cochange_seeds``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from knowing_pr.config import RankParams
from knowing_pr.graph.paths import module_name
from knowing_pr.model import Node, SymbolKind, node_id

__all__ = [
    "ChangedFile",
    "change_seeds",
    "changed_file_weight",
    "changed_modules",
    "cochange_seeds",
    "overlaps",
]


@dataclass(frozen=True)
class ChangedFile:
    """One file of a change at the head revision; ``added is None`` means "whole file"."""

    path: str
    added: tuple[tuple[int, int], ...] | None = None
    deleted_names: tuple[str, ...] = field(default_factory=tuple)


def overlaps(node: Node, ranges: Iterable[tuple[int, int]]) -> bool:
    return any(start <= node.end_line and node.start_line <= end for start, end in ranges)


def change_seeds(
    changes: Sequence[ChangedFile],
    nodes_by_path: Mapping[str, Sequence[Node]],
    former_callers: Iterable[str],
    params: RankParams,
    own: Collection[str] | None = None,
) -> dict[str, float]:
    """Restart weight per node id (only positive weights; the walk normalises them). ``own``: the
    change's own symbols when known (``rank.changes``: the innermost definitions it touched, the
    module for module-level code); they alone weigh ``seed_weight_hunk``."""
    if own is not None:
        return _own_seeds(changes, nodes_by_path, former_callers, params, frozenset(own))
    seeds: dict[str, float] = {}

    def give(symbol: str, weight: float) -> None:
        if weight > seeds.get(symbol, 0.0):
            seeds[symbol] = weight

    for change in changes:
        module_id: str | None = None
        hit = False
        for node in nodes_by_path.get(change.path, ()):
            if node.kind == SymbolKind.MODULE:
                module_id = node.id
                give(node.id, params.seed_weight_file)
            elif change.added is None or overlaps(node, change.added):
                hit = True
                give(node.id, params.seed_weight_hunk)
            else:
                give(node.id, params.seed_weight_file)
        if module_id is not None and not hit:
            # the change touched module-level code only: the file itself is what changed
            give(module_id, params.seed_weight_hunk)
    for caller in former_callers:
        give(caller, params.seed_weight_deleted_caller)
    return seeds


def _own_seeds(
    changes: Sequence[ChangedFile],
    nodes_by_path: Mapping[str, Sequence[Node]],
    former_callers: Iterable[str],
    params: RankParams,
    own: frozenset[str],
) -> dict[str, float]:
    seeds: dict[str, float] = {}
    for change in changes:
        for node in nodes_by_path.get(change.path, ()):
            seeds[node.id] = params.seed_weight_hunk if node.id in own else params.seed_weight_file
    for caller in former_callers:
        seeds[caller] = max(seeds.get(caller, 0.0), params.seed_weight_deleted_caller)
    return seeds


def changed_modules(
    nodes_by_path: Mapping[str, Sequence[Node]], seeds: Mapping[str, float], params: RankParams
) -> frozenset[str]:
    """Module nodes seeded as the change itself (files changed only at module level): they
    are packed like any changed symbol; other module nodes only connect the graph."""
    return frozenset(
        node.id
        for nodes in nodes_by_path.values()
        for node in nodes
        if node.kind == SymbolKind.MODULE and seeds.get(node.id, 0.0) >= params.seed_weight_hunk
    )


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
