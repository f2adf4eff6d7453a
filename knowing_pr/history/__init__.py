"""Git history → per-file and per-pair change signals → what they predict (pure over git).

- ``state.py``: ``HistoryState``, the mined counts and decayed weights as plain data;
- ``mine.py``: commits → ``HistoryState`` (counts, weights, renames), incrementally;
- ``cochange.py``: ``HistoryState`` → co-change partners and edges, predictiveness, recency.

Nothing here touches the store: ``store/history.py`` keeps the state, ``index/history.py``
mines at index time, ``rank/signals.py`` reads the signals at rank time.
"""

from __future__ import annotations

from knowing_pr.history.cochange import (
    cochange_edges,
    cochange_neighbours,
    decayed_cochange_ranking,
    predictiveness,
    recency_of,
)
from knowing_pr.history.mine import landing_order, mine_history
from knowing_pr.history.state import FileStats, HistoryDelta, HistoryState, PairStats

__all__ = [
    "FileStats",
    "HistoryDelta",
    "HistoryState",
    "PairStats",
    "cochange_edges",
    "cochange_neighbours",
    "decayed_cochange_ranking",
    "landing_order",
    "mine_history",
    "predictiveness",
    "recency_of",
]
