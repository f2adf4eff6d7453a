"""Adjacency + a node subset → HITS authority and hub scores on the induced subgraph.

HITS (Kleinberg, "Authoritative Sources in a Hyperlinked Environment", JACM 46(5), 1999)
runs on the top RWR nodes only (seed 003: the top 200, 10 iterations), so it separates the
structural centres of the neighbourhood the walk explored from merely nearby symbols.

Graph: the directed edges ``source -> target`` whose both ends lie in the subset, each
weighted by its kind (``edge_weights``; 0.3 for a missing kind; zero-weight kinds and
self-loops left out). With ``M`` that weighted matrix and ``h_0 = 1``, each iteration is::

    a = M^T h,  a = a / ||a||_2      (authority: weighted hub mass pointing in)
    h = M a,    h = h / ||h||_2      (hub: weighted authority mass pointed to)

Stopping rule: a fixed number of iterations (no tolerance), so the result is reproducible.
Output scale: each vector is finally divided by its maximum, so the strongest authority
and the strongest hub score exactly 1.0 (all zeros when the subgraph has no edges). The
seed thresholds (authority > 0.05, hub > 0.1) are read on that scale.

After enough iterations this converges to ``networkx.hits`` up to scaling (networkx
normalises to sum 1); the tests compare both after dividing by the maximum.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.model import EdgeKind
from knowing_pr.rank.matrix import kind_weight_table
from knowing_pr.rank.sparse import CsrMatrix

__all__ = ["hits", "hits_vectors", "subgraph_matrix"]


def subgraph_matrix(
    adj: Adjacency, node_indices: Sequence[int], edge_weights: Mapping[EdgeKind, float]
) -> CsrMatrix:
    """Weighted directed matrix of the subgraph induced by ``node_indices`` (in that order)."""
    k = len(node_indices)
    if len(set(node_indices)) != k:
        raise ValueError("HITS node indices must be unique")
    local = np.full(adj.node_count, -1, dtype=np.int64)
    local[np.asarray(node_indices, dtype=np.int64)] = np.arange(k)
    if not k:
        return CsrMatrix.from_triplets([], [], [], (0, 0))
    table = kind_weight_table(edge_weights)
    # every edge out of the chosen nodes, row by row in CSR order (one gather, not a loop)
    nodes = np.asarray(node_indices, dtype=np.int64)
    starts = adj.indptr[nodes].astype(np.int64)
    counts = adj.indptr[nodes + 1].astype(np.int64) - starts
    row_of = np.repeat(np.arange(k, dtype=np.int64), counts)
    first = np.repeat(starts - (np.cumsum(counts) - counts), counts)
    positions = first + np.arange(int(counts.sum()), dtype=np.int64)
    targets = local[adj.indices[positions]]
    weights = table[adj.kinds[positions]]
    keep = (targets >= 0) & (targets != row_of) & (weights > 0)
    return CsrMatrix.from_triplets(row_of[keep], targets[keep], weights[keep], (k, k))


def _unit(vector: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def _max_scaled(vector: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    top = float(vector.max()) if vector.size else 0.0
    return vector / top if top > 0 else np.zeros_like(vector)


def hits_vectors(
    matrix: CsrMatrix, iterations: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(authority, hub) of a weighted directed matrix, each scaled to a maximum of 1.0."""
    k = matrix.shape[0]
    hub = np.ones(k, dtype=np.float64)
    authority = np.zeros(k, dtype=np.float64)
    for _ in range(iterations):
        authority = _unit(matrix.rmatvec(hub))
        hub = _unit(matrix @ authority)
    return _max_scaled(authority), _max_scaled(hub)


def hits(
    adj: Adjacency,
    node_indices: Sequence[int],
    edge_weights: Mapping[EdgeKind, float],
    iterations: int,
) -> tuple[dict[int, float], dict[int, float]]:
    """(authority, hub) by node index for every node of ``node_indices``; maxima are 1.0."""
    matrix = subgraph_matrix(adj, node_indices, edge_weights)
    authority, hub = hits_vectors(matrix, iterations)
    return (
        {int(node): float(authority[i]) for i, node in enumerate(node_indices)},
        {int(node): float(hub[i]) for i, node in enumerate(node_indices)},
    )
