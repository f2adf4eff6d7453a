"""Adjacency + edge-type weights (+ the co-change share) → the walk's row-stochastic transition
matrix. The one place the walk's matrix is built.

Every edge ``u -> v`` of kind ``k`` gets the weight ``edge_weights[k]`` (0.3 for a kind missing
from the map; kinds weighted 0 are not walked, self-loops are dropped). The walk goes both ways,
``W = A_w + A_w^T``, so a change reaches its callers (its blast radius) as well as its callees;
``P = D^-1 W`` is ``W`` row-normalised (dead-end rows stay all zero).

``walk_matrix`` mixes in the history: at a node with ``co_changed_with`` edges the walk follows
them with probability ``share`` (the repository's measured predictiveness, ``rank/signals.py``)
and the structural edges with ``1 - share``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.model import EdgeKind

__all__ = [
    "DEFAULT_KIND_WEIGHT",
    "kind_weight_matrix",
    "kind_weight_table",
    "transition_matrix",
    "walk_matrix",
]

#: weight of an edge kind missing from ``RankParams.edge_weights`` (seeds 002/003: "unknown 0.3")
DEFAULT_KIND_WEIGHT = 0.3


def kind_weight_table(edge_weights: Mapping[EdgeKind, float]) -> npt.NDArray[np.float64]:
    """A 256-entry lookup: weight of each ``EdgeKind`` value (missing kinds get 0.3)."""
    table = np.full(256, DEFAULT_KIND_WEIGHT, dtype=np.float64)
    for kind, weight in edge_weights.items():
        table[int(kind)] = float(weight)
    return table


def kind_weight_matrix(adj: Adjacency, edge_weights: Mapping[EdgeKind, float]) -> sp.csr_matrix:
    """Directed ``A_w``: entry ``(u, v)`` sums the kind weights of the edges ``u -> v``.

    Zero-weight kinds and self-loops are left out; the result stores no explicit zeros.
    """
    n = adj.node_count
    weights = kind_weight_table(edge_weights)[adj.kinds]
    weights[adj.sources() == adj.indices] = 0.0
    # copies: sum_duplicates and eliminate_zeros work in place, and the adjacency's arrays
    # may be read-only views of the blob
    matrix = sp.csr_matrix((weights, adj.indices.copy(), adj.indptr.copy()), shape=(n, n))
    matrix.sum_duplicates()
    matrix.eliminate_zeros()
    return matrix


def transition_matrix(adj: Adjacency, edge_weights: Mapping[EdgeKind, float]) -> sp.csr_matrix:
    """Row-stochastic ``P`` of the two-way weighted graph (every kind at its weight, co-change
    edges included); dead-end rows are all zero. Build it once per adjacency and weights."""
    return _two_way_stochastic(kind_weight_matrix(adj, edge_weights))


def _two_way_stochastic(directed: sp.csr_matrix) -> sp.csr_matrix:
    stochastic = _row_normalise((directed + directed.T).tocsr())
    stochastic.sort_indices()
    return stochastic


def _row_normalise(matrix: sp.csr_matrix) -> sp.csr_matrix:
    sums = np.asarray(matrix.sum(axis=1)).ravel()
    inverse = np.divide(1.0, sums, out=np.zeros_like(sums), where=sums > 0)
    return sp.csr_matrix(sp.diags(inverse) @ matrix)


def walk_matrix(adj: Adjacency, edge_weights: Mapping[EdgeKind, float], share: float) -> sp.csr_matrix:
    """Row-stochastic transitions: the structural two-way walk (``transition_matrix`` without the
    co-change edges), mixed with the co-change edges at the nodes that have them.

    At a node with history edges the walk follows them with probability ``share`` (split by
    edge confidence, both directions) and the structural edges with ``1 - share``; a node with
    only history edges follows those. ``share`` 0 gives the structural matrix alone.
    """
    weights = dict(edge_weights)
    weights[EdgeKind.CO_CHANGED_WITH] = 0.0
    structural = _two_way_stochastic(kind_weight_matrix(adj, weights))
    n = adj.node_count
    mask = adj.kinds == int(EdgeKind.CO_CHANGED_WITH)
    if share <= 0 or not bool(mask.any()):
        return structural
    sources = adj.sources()[mask]
    targets = adj.indices[mask].astype(np.int64)
    confidence = adj.confidence[mask].astype(np.float64)
    history = sp.csr_matrix((confidence, (sources, targets)), shape=(n, n))
    history = _row_normalise((history + history.T).tocsr())
    has_history = np.asarray(history.sum(axis=1)).ravel() > 0
    has_structure = np.asarray(structural.sum(axis=1)).ravel() > 0
    keep_structural = np.where(has_history, 1.0 - share, 1.0)
    take_history = np.where(has_structure, share, 1.0) * has_history
    mixed = sp.diags(keep_structural) @ structural + sp.diags(take_history) @ history
    result = sp.csr_matrix(mixed)
    result.eliminate_zeros()
    result.sort_indices()
    return result
