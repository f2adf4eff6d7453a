"""What a ranking knew, for ``why`` and the benchmarks: every candidate's signals (``RankedNode``),
the raw arrays behind them (``RankTrace``) and one node's view of them (``NodeTrace``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from knowing_pr.graph.adjacency import Adjacency

__all__ = ["NodeTrace", "RankTrace", "RankedNode"]


@dataclass(frozen=True)
class RankedNode:
    """One candidate with its score and every signal behind it."""

    node_id: str
    score: float
    rwr: float
    authority: float
    hub: float
    distance: int
    is_seed: bool
    components: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class NodeTrace:
    """What the rank stage knew about one node id (for ``why``)."""

    node_id: str
    in_graph: bool
    is_seed: bool
    restart_weight: float
    rwr: float
    rwr_normalised: float
    reached: bool
    above_cutoff: bool
    in_hits: bool
    hops: int | None


@dataclass(eq=False)
class RankTrace:
    """The raw arrays behind a ranking: RWR of every node, the seeds, the cutoff."""

    adjacency: Adjacency
    rwr: npt.NDArray[np.float64]
    restart: dict[int, float]
    cutoff: float
    iterations: int
    hits_nodes: frozenset[int] = field(default_factory=frozenset)
    #: hops from the nearest seed per node, -1 beyond ``RankParams.max_hops`` (``None`` when no walk ran)
    hops: npt.NDArray[np.int64] | None = None
    #: a task's final order: (node id, fused score), best first (empty for other modes)
    task_order: tuple[tuple[str, float], ...] = ()
    #: a task's seed order (node ids, best first)
    seed_order: tuple[str, ...] = ()
    #: a PR's fused file order: (path, fused score), best first
    file_order: tuple[tuple[str, float], ...] = ()

    @property
    def max_rwr(self) -> float:
        return float(self.rwr.max()) if self.rwr.size else 0.0

    def node(self, node_id: str) -> NodeTrace:
        """Seed? reached by the walk (RWR > 0)? above the cutoff? in the HITS subgraph?"""
        index = self.adjacency.index_of(node_id)
        if index is None:
            return NodeTrace(node_id, False, False, 0.0, 0.0, 0.0, False, False, False, None)
        rwr = float(self.rwr[index])
        top = self.max_rwr
        normalised = rwr / top if top > 0 else 0.0
        return NodeTrace(
            node_id=node_id,
            in_graph=True,
            is_seed=index in self.restart,
            restart_weight=self.restart.get(index, 0.0),
            rwr=rwr,
            rwr_normalised=normalised,
            reached=rwr > 0,
            above_cutoff=rwr > 0 and normalised >= self.cutoff,
            in_hits=index in self.hits_nodes,
            hops=None if self.hops is None or self.hops[index] < 0 else int(self.hops[index]),
        )
