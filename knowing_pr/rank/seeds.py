"""A change (files, changed line ranges, deleted symbols) + the nodes of changed files →
restart weights for the walk (seeds 002/003 ForPR; DESIGN.md "ForPR seeds").

- a symbol whose lines overlap a changed hunk weighs ``seed_weight_hunk`` (the change itself);
- the other symbols of a changed file weigh ``seed_weight_file``;
- a symbol the change deleted cannot be walked from, so its former callers weigh
  ``seed_weight_deleted_caller`` instead;
- with paths only (``--files``), every symbol of the files weighs ``seed_weight_hunk``.

A module node stands for its whole file: it gets the file weight, so file-level edges
(imports, tests, co-change) carry the change too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from knowing_pr.config import RankParams
from knowing_pr.model import Node, SymbolKind

__all__ = ["ChangedFile", "change_seeds", "changed_modules", "overlaps"]


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
) -> dict[str, float]:
    """Restart weight per node id (only positive weights; the walk normalises them)."""
    seeds: dict[str, float] = {}

    def give(node_id: str, weight: float) -> None:
        if weight > seeds.get(node_id, 0.0):
            seeds[node_id] = weight

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
    for node_id in former_callers:
        give(node_id, params.seed_weight_deleted_caller)
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
