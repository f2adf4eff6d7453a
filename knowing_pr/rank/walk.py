"""Adjacency + restart weights → Random Walk with Restart scores (and BFS hop distances).

Random Walk with Restart (Tong, Faloutsos & Pan, "Fast Random Walk with Restart and Its
Applications", ICDM 2006), a personalised PageRank whose teleport vector is the seed set.

Transitions: the row-stochastic ``P`` of ``rank/matrix.py`` (both directions, so a change
reaches its callers — its blast radius — as well as its callees).

Iteration, with ``s`` the seed weights normalised to sum 1 and ``c`` the restart
probability::

    r_0     = s
    r_{t+1} = (1 - c) P^T r_t  +  (1 - c) (sum of r_t over dead ends) s  +  c s

A dead end (a node without walkable edges) returns its mass to the seeds, so ``r`` keeps
summing to 1. Stopping rule: after at most ``max_iter`` updates, or as soon as
``||r_{t+1} - r_t||_1 < tol_l1`` (the update that met the rule is counted and kept).

This equals ``networkx.pagerank(G, alpha=1-c, personalization=s, dangling=s)`` on the
weighted digraph ``W``; the tests check that on random graphs.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

import numpy as np
import numpy.typing as npt

from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.model import EdgeKind
from knowing_pr.rank.sparse import CsrMatrix

__all__ = ["hop_array", "hop_distances", "restart_vector", "walk_hops", "walk_with_restart"]


def restart_vector(n: int, seeds: Mapping[int, float]) -> npt.NDArray[np.float64]:
    """The seed weights as a probability vector over ``n`` nodes."""
    s = np.zeros(n, dtype=np.float64)
    for index, weight in seeds.items():
        if not 0 <= index < n:
            raise ValueError(f"seed index {index} is outside the {n} nodes")
        if weight < 0 or not np.isfinite(weight):
            raise ValueError(f"seed {index} has weight {weight}; restart weights must be >= 0")
        s[index] += weight
    total = float(s.sum())
    if total <= 0:
        raise ValueError("the walk needs at least one seed with a positive restart weight")
    s /= total
    return s


def walk_with_restart(
    P: CsrMatrix,
    seeds: Mapping[int, float],
    *,
    restart_prob: float,
    max_iter: int,
    tol_l1: float,
) -> tuple[npt.NDArray[np.float64], int]:
    """RWR scores of every node (summing to 1) and the number of updates made.

    ``P`` comes from ``transition_matrix``; ``seeds`` maps node index to restart weight.
    """
    if not 0.0 < restart_prob <= 1.0:
        raise ValueError(f"restart_prob must be in (0, 1], got {restart_prob}")
    n = P.shape[0]
    s = restart_vector(n, seeds)
    dead_end = P.row_sums() <= 0.0
    stay = 1.0 - restart_prob
    r = s
    iterations = 0
    while iterations < max_iter:
        lost = float(r[dead_end].sum())
        nxt = stay * P.rmatvec(r) + (stay * lost + restart_prob) * s
        iterations += 1
        change = float(np.abs(nxt - r).sum())
        r = nxt
        if change < tol_l1:
            break
    return r, iterations


def hop_distances(
    adj: Adjacency,
    seed_indices: Iterable[int],
    max_hops: int = 4,
    *,
    skip_kinds: Collection[EdgeKind] = (),
) -> dict[int, int]:
    """Fewest undirected hops from any seed to each node within ``max_hops`` (seeds: 0).

    Edges of ``skip_kinds`` are not followed (pass the kinds the walk does not walk).
    """
    n = adj.node_count
    data = np.ones(adj.edge_count, dtype=np.float64)
    if skip_kinds:
        data[np.isin(adj.kinds, np.array([int(k) for k in skip_kinds], dtype=np.uint8))] = 0.0
    forward = CsrMatrix.from_csr(adj.indptr, adj.indices, data, (n, n))
    return walk_hops(forward + forward.T, seed_indices, max_hops)


def walk_hops(P: CsrMatrix, seed_indices: Iterable[int], max_hops: int = 4) -> dict[int, int]:
    """``hop_distances`` over the pattern of the (structurally symmetric) transition matrix.

    ``P`` from ``transition_matrix`` links exactly the pairs the walk can step between, so
    this equals ``hop_distances(adj, ..., skip_kinds=<zero-weight kinds>)`` without building
    another matrix.
    """
    hops = hop_array(P, seed_indices, max_hops)
    reached = np.flatnonzero(hops >= 0)
    return {int(i): int(hops[i]) for i in reached}


def hop_array(P: CsrMatrix, seed_indices: Iterable[int], max_hops: int) -> npt.NDArray[np.int64]:
    """``walk_hops`` as an array over all nodes, -1 where no seed is within ``max_hops``."""
    n = P.shape[0]
    hops = np.full(n, -1, dtype=np.int64)
    frontier = np.zeros(n, dtype=bool)
    for index in seed_indices:
        hops[index] = 0
        frontier[index] = True
    rows = P.rows()
    for hop in range(1, max_hops + 1):
        if not frontier.any():
            break
        # entries of P are > 0: a row with an entry in a frontier column neighbours the frontier
        # (what ``P @ frontier > 0`` marks, without the products)
        new = np.zeros(n, dtype=bool)
        new[rows[frontier[P.indices]]] = True
        new &= hops < 0
        hops[new] = hop
        frontier = new
    return hops
