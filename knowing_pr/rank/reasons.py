"""Adjacency + the change's own symbols (the anchors) → why each candidate is in a pack.

The one definition of every reason, checked in this order:

1. ``changed`` — an anchor: a symbol the change itself touched (a task's anchors are its seeds,
   reported as ``match``; with ``--files`` every symbol of the files is an anchor);
2. ``test`` — a symbol of a test file;
3. ``caller`` — it used a symbol the change deleted, or it has a structural link into an anchor
   (it depends on the change);
4. ``callee`` — an anchor has a structural link to it (the change relies on it);
5. ``cochange`` — linked to an anchor only by ``co_changed_with``;
6. ``related`` — reached by the walk, nothing more direct.

Structural links: ``calls``, ``references``, ``extends``, ``implements``, ``inherits``,
``imports``, at least as confident as ``RankParams.min_shown_confidence`` (a guess below the
floor still feeds the walk but makes no caller or callee). Containment (``contains``/
``member_of``) is not a use, and ``tests`` edges are the test rule's business.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import numpy.typing as npt

from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.model import EdgeKind

__all__ = ["REASONS", "STRUCTURAL_LINKS", "Reasons"]

REASONS = ("changed", "match", "test", "caller", "callee", "cochange", "related")

STRUCTURAL_LINKS = frozenset(
    {
        EdgeKind.CALLS,
        EdgeKind.REFERENCES,
        EdgeKind.EXTENDS,
        EdgeKind.IMPLEMENTS,
        EdgeKind.INHERITS,
        EdgeKind.IMPORTS,
    }
)


class Reasons:
    """The reason of any node, from its links to the anchors (computed once over all edges)."""

    def __init__(
        self,
        adjacency: Adjacency,
        anchors: Collection[str],
        *,
        former_callers: Collection[str] = (),
        anchor_reason: str = "changed",
        floor: float = 0.0,
    ) -> None:
        self.adjacency = adjacency
        self.anchors = frozenset(anchors)
        self.former_callers = frozenset(former_callers)
        self.anchor_reason = anchor_reason
        is_anchor = np.zeros(adjacency.node_count, dtype=bool)
        positions = [p for a in self.anchors if (p := adjacency.index_of(a)) is not None]
        is_anchor[positions] = True
        sources = adjacency.sources()
        targets = adjacency.indices.astype(np.int64)
        structural = adjacency.of_kinds(STRUCTURAL_LINKS) & (adjacency.confidence >= floor)
        cochange = adjacency.kinds == int(EdgeKind.CO_CHANGED_WITH)
        self._callers = _members(sources[structural & is_anchor[targets]])
        self._callees = _members(targets[structural & is_anchor[sources]])
        self._cochanged = _members(sources[cochange & is_anchor[targets]]) | _members(
            targets[cochange & is_anchor[sources]]
        )

    @property
    def caller_positions(self) -> frozenset[int]:
        """The adjacency positions of the nodes with a structural link into an anchor (``caller``)."""
        return self._callers

    def of(self, node_id: str, *, is_test: bool) -> str:
        """The reason of one node (see the module docstring for the order)."""
        if node_id in self.anchors:
            return self.anchor_reason
        if is_test:
            return "test"
        if node_id in self.former_callers:
            return "caller"
        position = self.adjacency.index_of(node_id)
        if position is None:
            return "related"
        if position in self._callers:
            return "caller"
        if position in self._callees:
            return "callee"
        if position in self._cochanged:
            return "cochange"
        return "related"


def _members(positions: npt.NDArray[np.int64]) -> frozenset[int]:
    return frozenset(positions.tolist())  # not np.unique: on first use it imports numpy.ma (~30 ms)
