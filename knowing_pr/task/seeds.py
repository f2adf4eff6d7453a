"""Task text → restart weights: the normalised text that enters a PackRoot, and a PR's own text
(its title and body) as a weaker extra seed channel."""

from __future__ import annotations

from knowing_pr.config import Settings, TaskParams
from knowing_pr.store import Store
from knowing_pr.task.analysis import analyse_task
from knowing_pr.task.fusion import restart_weights

__all__ = ["normalise_task", "task_seeds"]


def normalise_task(text: str) -> str:
    """Lowercased, whitespace collapsed: the task text that enters the PackRoot."""
    return " ".join(text.lower().split())


def task_seeds(
    store: Store,
    settings: Settings,
    text: str,
    *,
    scale: float = 0.25,
    max_seeds: int | None = None,
    params: TaskParams | None = None,
) -> dict[str, float]:
    """Restart weights for extra task text (a PR title + body), scaled to stay weaker than a change.

    The task channels' best seeds get ``scale * (1.0 → 0.4)`` by fused rank (at most
    ``max_seeds``, default ``settings.rank.max_seeds``); path supplements are left out.
    Merge into change seeds with ``max`` so changed symbols keep their own weight.
    """
    if not text.strip():
        return {}
    analysis = analyse_task(store, settings, text, params=params)
    limit = settings.rank.max_seeds if max_seeds is None else max_seeds
    weights = restart_weights(analysis.fused, limit, params or settings.task)
    return {nid: round(w * scale, 6) for nid, w in weights.items()}
