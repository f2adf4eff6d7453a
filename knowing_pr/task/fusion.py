"""Seed channels (``channels.py``) → one fused seed list (weighted RRF through
``rank.fusion.rrf_scores``) with each node's contributions, and the restart weights of its best
nodes (seeds 002/003, "Seed Retrieval: 5-Channel RRF Fusion").

Fusion: a node at 1-based position ``p`` of a channel with weight ``w`` gains ``w * h / (k + p)``
(``h`` a per-hit factor, e.g. an equivalence class weight); the best ``max_seeds`` nodes get
restart weights falling linearly from ``restart_max`` to ``restart_min`` by fused rank.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from knowing_pr.config import TaskParams
from knowing_pr.rank.fusion import rrf_scores
from knowing_pr.task.channels import Channel

__all__ = ["Contribution", "extra_seeds", "fuse_channels", "restart_weights"]


@dataclass(frozen=True)
class Contribution:
    """What one channel gave one node in the fusion."""

    channel: str
    rank: int  # 1-based position in the channel
    tier: str
    via: str
    score: float


def fuse_channels(
    channels: Sequence[Channel], rrf_k: int
) -> tuple[list[tuple[str, float]], dict[str, list[Contribution]]]:
    """Weighted RRF (``rank.fusion.rrf_scores``): (node id, fused score) best first (ties by id),
    and each node's parts."""
    lists = [(c.weight, [(hit.node_id, hit.factor) for hit in c.hits]) for c in channels]
    scores = rrf_scores(lists, rrf_k)
    parts: dict[str, list[Contribution]] = {}
    for channel in channels:
        if channel.weight <= 0:
            continue
        for rank, hit in enumerate(channel.hits, 1):
            gain = channel.weight * hit.factor / (rrf_k + rank)
            parts.setdefault(hit.node_id, []).append(
                Contribution(channel.name, rank, hit.tier, hit.via, round(gain, 6))
            )
    fused = sorted(((nid, round(s, 9)) for nid, s in scores.items()), key=lambda x: (-x[1], x[0]))
    return fused, parts


def restart_weights(
    fused: Sequence[tuple[str, float]], max_seeds: int, params: TaskParams
) -> dict[str, float]:
    """The best ``max_seeds`` fused nodes, weighted ``restart_max`` → ``restart_min`` by rank."""
    top = [nid for nid, _ in fused[: max(max_seeds, 0)]]
    if not top:
        return {}
    span = params.restart_max - params.restart_min
    last = max(len(top) - 1, 1)
    return {nid: round(params.restart_max - span * i / last, 6) for i, nid in enumerate(top)}


def extra_seeds(
    fused: Sequence[tuple[str, float]], seeds: Mapping[str, float], params: TaskParams
) -> dict[str, float]:
    """The next ``extra_seed_count`` fused nodes outside ``seeds``, at ``extra_seed_weight``."""
    extra = [nid for nid, _ in fused if nid not in seeds][: max(params.extra_seed_count, 0)]
    return {nid: params.extra_seed_weight for nid in extra} if params.extra_seed_weight > 0 else {}
