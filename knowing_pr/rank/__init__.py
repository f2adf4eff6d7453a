"""Seeds + adjacency + history signals → ranked candidates (and the trace behind them).

The recipe is ``candidates.py`` (seeds → matrix → walk → HITS → score → reasons → fusion); its
steps live in ``seeds`` (restart weights of a change), ``matrix`` (the walk's transitions),
``walk`` (RWR; Tong, Faloutsos & Pan 2006), ``hits`` (Kleinberg 1999), ``score`` (seed 003's
formula), ``reasons`` (why a symbol is in a pack), ``fusion`` (one RRF and the late fusions) and
``signals`` (the history a ranking reads, in one read); ``trace`` keeps what each step knew.
``tiers`` ranks whole files for the repository map. ``sparse`` is the numpy-only CSR matrix the
walk and HITS use (scipy.sparse's results to the bit, without its import); ``memo`` keeps a
graph root's adjacency, walk matrix and recency for the next ranking in the same process, and
``keptwalk`` the walk matrix in the store for the next process.
"""

from __future__ import annotations

from knowing_pr.rank.candidates import (
    MAX_CANDIDATES,
    Ranking,
    RankQuery,
    keep_walk_matrix_of,
    load_adjacency,
    prepare_ranking,
    rank_candidates,
    rank_nodes,
    scored_symbol,
)
from knowing_pr.rank.matrix import transition_matrix, walk_matrix
from knowing_pr.rank.signals import HistorySignals, read_history_signals
from knowing_pr.rank.trace import NodeTrace, RankedNode, RankTrace

__all__ = [
    "MAX_CANDIDATES",
    "HistorySignals",
    "NodeTrace",
    "RankQuery",
    "RankTrace",
    "RankedNode",
    "Ranking",
    "keep_walk_matrix_of",
    "load_adjacency",
    "prepare_ranking",
    "rank_candidates",
    "rank_nodes",
    "read_history_signals",
    "scored_symbol",
    "transition_matrix",
    "walk_matrix",
]
