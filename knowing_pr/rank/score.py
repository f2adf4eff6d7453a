"""Per-candidate signals (RWR, confidence, recency, hops, HITS) → a reproducible score.

The HITS-enhanced scoring formula of seed 003 ("6. Scoring Formula"; weights from
``RankParams``)::

    score = ( weight_blast      * blast          RWR / max RWR over the candidates
            + weight_confidence * confidence     max confidence of the edges into the node
            + weight_recency    * recency        per-node value in [0, 1]; RankParams.unknown_recency (0.3) when unknown
            + weight_distance   * distance       1 / (1 + hops from the nearest seed)
            + authority_adj                      +0.25 a (seed, a > 0.05); -0.15 a (non-seed, a > 0.2)
            + hub_adj )                          +0.10 h (seed, h > 0.1)
            * test_penalty                       params.test_penalty for a test in task mode, else 1

Seeds get confidence 1.0 (the change is certain). Every component is rounded to 6
decimals before the sum, and the sum is rounded to 6 decimals too, so the score is the
same bit for bit on every run and machine (the components are in ``components``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from knowing_pr.config import RankParams
from knowing_pr.graph.adjacency import Adjacency

__all__ = [
    "COMPONENT_NAMES",
    "ScoreInput",
    "incoming_confidence",
    "score_candidate",
]


COMPONENT_NAMES = ("blast", "confidence", "recency", "distance", "authority_adj", "hub_adj", "test_penalty")

_DIGITS = 6


@dataclass(frozen=True)
class ScoreInput:
    """Everything the formula reads about one candidate."""

    rwr: float
    max_rwr: float
    confidence: float
    recency: float
    hops: int
    authority: float
    hub: float
    is_seed: bool
    penalised: bool


def incoming_confidence(adj: Adjacency, node_indices: npt.ArrayLike) -> dict[int, float]:
    """Highest confidence among the edges pointing to each node (0.0 when none does)."""
    wanted = np.asarray(node_indices, dtype=np.int64)
    is_wanted = np.zeros(adj.node_count, dtype=bool)
    is_wanted[wanted] = True
    edge_mask = is_wanted[adj.indices]
    best = np.zeros(adj.node_count, dtype=np.float64)
    np.maximum.at(best, adj.indices[edge_mask], adj.confidence[edge_mask].astype(np.float64))
    return {int(i): float(best[i]) for i in wanted}


def _authority_adjustment(item: ScoreInput, params: RankParams) -> float:
    if item.is_seed and item.authority > params.authority_seed_threshold:
        return params.authority_seed_bonus * item.authority
    if not item.is_seed and item.authority > params.authority_nonseed_threshold:
        return -params.authority_nonseed_penalty * item.authority
    return 0.0


def _hub_adjustment(item: ScoreInput, params: RankParams) -> float:
    if item.is_seed and item.hub > params.hub_seed_threshold:
        return params.hub_seed_bonus * item.hub
    return 0.0


def score_candidate(item: ScoreInput, params: RankParams) -> tuple[float, tuple[tuple[str, float], ...]]:
    """The final score and its named components (raw signals and adjustments), all rounded."""
    blast = round(item.rwr / item.max_rwr, _DIGITS) if item.max_rwr > 0 else 0.0
    confidence = round(1.0 if item.is_seed else min(max(item.confidence, 0.0), 1.0), _DIGITS)
    recency = round(min(max(item.recency, 0.0), 1.0), _DIGITS)
    distance = round(1.0 / (1.0 + max(item.hops, 0)), _DIGITS)
    authority_adj = round(_authority_adjustment(item, params), _DIGITS)
    hub_adj = round(_hub_adjustment(item, params), _DIGITS)
    test_penalty = round(params.test_penalty if item.penalised else 1.0, _DIGITS)
    total = (
        params.weight_blast * blast
        + params.weight_confidence * confidence
        + params.weight_recency * recency
        + params.weight_distance * distance
        + authority_adj
        + hub_adj
    ) * test_penalty
    components = (blast, confidence, recency, distance, authority_adj, hub_adj, test_penalty)
    return round(total, _DIGITS), tuple(zip(COMPONENT_NAMES, components, strict=True))
