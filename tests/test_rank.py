"""Rank stage: RWR and HITS against networkx, stopping rules, scoring by hand, determinism."""

from __future__ import annotations

import dataclasses

import networkx as nx
import numpy as np
import pytest

from knowing_pr.config import RankParams, default_edge_weights
from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.model import Edge, EdgeKind
from knowing_pr.pack import edges_among
from knowing_pr.rank import rank_nodes, transition_matrix
from knowing_pr.rank.hits import hits
from knowing_pr.rank.reasons import Reasons
from knowing_pr.rank.score import ScoreInput, incoming_confidence, score_candidate
from knowing_pr.rank.walk import hop_distances, walk_hops, walk_with_restart

C = 0.2  # restart probability used throughout


def make_ids(n: int) -> list[str]:
    return [f"{i:032x}" for i in range(n)]


def random_graph(seed: int, n: int, m: int) -> tuple[Adjacency, list[tuple[int, int, EdgeKind]]]:
    """A random typed graph with unique (source, target, kind) triples and a few isolated nodes."""
    rng = np.random.default_rng(seed)
    kinds = list(EdgeKind)
    triples: set[tuple[int, int, EdgeKind]] = set()
    while len(triples) < m:
        s, t = (int(x) for x in rng.integers(0, n - 3, 2))  # the last 3 nodes stay isolated
        triples.add((s, t, kinds[int(rng.integers(0, len(kinds)))]))
    ids = make_ids(n)
    edges = [Edge(ids[s], ids[t], k, float(rng.uniform(0.1, 1.0))) for s, t, k in sorted(triples)]
    return Adjacency.from_edges(ids, edges), sorted(triples)


def networkx_two_way(
    n: int, triples: list[tuple[int, int, EdgeKind]], weights: dict[EdgeKind, float]
) -> nx.DiGraph:
    """The walk's graph built independently: both directions, kind weights, no self-loops."""
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    for s, t, kind in triples:
        w = weights.get(kind, 0.3)
        if w <= 0 or s == t:
            continue
        for u, v in ((s, t), (t, s)):
            old = graph.get_edge_data(u, v, {"weight": 0.0})["weight"]
            graph.add_edge(u, v, weight=old + w)
    return graph


def weights_with_zero() -> dict[EdgeKind, float]:
    weights = default_edge_weights()
    weights[EdgeKind.CO_CHANGED_WITH] = 0.0  # not walked
    del weights[EdgeKind.INHERITS]  # falls back to 0.3
    return weights


# -- RWR ------------------------------------------------------------------------------------


@pytest.mark.parametrize("graph_seed", [1, 2, 3, 4])
def test_rwr_matches_networkx_pagerank(graph_seed: int) -> None:
    """Converged RWR = personalised PageRank with alpha = 1 - c and dangling mass to the seeds.

    Comparison: both run to a tolerance of 1e-13, then the L1 distance must be < 1e-9.
    """
    n = 60
    adj, triples = random_graph(graph_seed, n, 120)
    weights = weights_with_zero()
    seeds = {0: 1.0, 5: 0.3, n - 1: 0.5}  # n - 1 is isolated: a dead-end seed
    r, _ = walk_with_restart(
        transition_matrix(adj, weights), seeds, restart_prob=C, max_iter=2000, tol_l1=1e-13
    )
    expected = nx.pagerank(
        networkx_two_way(n, triples, weights),
        alpha=1 - C,
        personalization=seeds,
        dangling=seeds,
        tol=1e-13,
        max_iter=2000,
    )
    assert np.abs(r - np.array([expected[i] for i in range(n)])).sum() < 1e-9
    assert r.sum() == pytest.approx(1.0, abs=1e-12)


def test_rwr_with_default_stopping_is_within_its_error_bound() -> None:
    """With tol 1e-3 the walk is a 0.8-contraction in L1, so its error is < 4 * 1e-3."""
    n = 80
    adj, triples = random_graph(9, n, 200)
    weights = default_edge_weights()
    seeds = {3: 1.0, 7: 1.0}
    r, iterations = walk_with_restart(
        transition_matrix(adj, weights), seeds, restart_prob=C, max_iter=20, tol_l1=1e-3
    )
    expected = nx.pagerank(
        networkx_two_way(n, triples, weights), alpha=1 - C, personalization=seeds, dangling=seeds, tol=1e-13
    )
    assert iterations <= 20
    assert np.abs(r - np.array([expected[i] for i in range(n)])).sum() < 4e-3


def test_early_stop_honours_tolerance() -> None:
    adj, _ = random_graph(5, 50, 150)
    P = transition_matrix(adj, default_edge_weights())
    seeds = {1: 1.0}
    tol = 1e-3
    _, used = walk_with_restart(P, seeds, restart_prob=C, max_iter=100, tol_l1=tol)
    assert 1 < used < 100

    def after(k: int) -> np.ndarray:
        return walk_with_restart(P, seeds, restart_prob=C, max_iter=k, tol_l1=0.0)[0]

    assert np.abs(after(used) - after(used - 1)).sum() < tol  # the last update met the rule
    assert np.abs(after(used - 1) - after(used - 2)).sum() >= tol  # the one before did not
    r_tol, _ = walk_with_restart(P, seeds, restart_prob=C, max_iter=100, tol_l1=tol)
    assert np.array_equal(r_tol, after(used))


def test_max_iter_caps_the_walk() -> None:
    adj, _ = random_graph(5, 50, 150)
    P = transition_matrix(adj, default_edge_weights())
    _, used = walk_with_restart(P, {1: 1.0}, restart_prob=C, max_iter=7, tol_l1=0.0)
    assert used == 7


def chain_adjacency(n: int, kind: EdgeKind = EdgeKind.CALLS) -> Adjacency:
    ids = make_ids(n)
    return Adjacency.from_edges(ids, [Edge(ids[i], ids[i + 1], kind, 1.0) for i in range(n - 1)])


def test_dead_end_mass_returns_to_the_seeds() -> None:
    """Seeds: isolated node 0 and node 1 of the pair 1 - 2 (by hand: r = 1/6, 25/54, 10/27)."""
    ids = make_ids(3)
    adj = Adjacency.from_edges(ids, [Edge(ids[1], ids[2], EdgeKind.CALLS, 1.0)])
    r, _ = walk_with_restart(
        transition_matrix(adj, default_edge_weights()),
        {0: 1.0, 1: 1.0},
        restart_prob=C,
        max_iter=500,
        tol_l1=1e-14,
    )
    # r0 = (0.8 r0 + 0.2) / 2  ->  r0 = 1/6;  r1 = 0.8 r2 + 1/6, r2 = 0.8 r1  ->  r1 = 25/54
    assert r.tolist() == pytest.approx([1 / 6, 25 / 54, 10 / 27], abs=1e-12)
    assert r.sum() == pytest.approx(1.0, abs=1e-12)


def test_sum_stays_one_at_every_iteration() -> None:
    adj, _ = random_graph(11, 40, 60)
    P = transition_matrix(adj, weights_with_zero())
    for k in range(1, 8):
        r, _ = walk_with_restart(P, {0: 2.0, 39: 1.0}, restart_prob=C, max_iter=k, tol_l1=0.0)
        assert r.sum() == pytest.approx(1.0, abs=1e-12)


def test_zero_weight_kinds_are_not_walked_and_missing_kinds_weigh_0_3() -> None:
    ids = make_ids(4)
    edges = [
        Edge(ids[0], ids[1], EdgeKind.CALLS, 1.0),
        Edge(ids[0], ids[2], EdgeKind.CO_CHANGED_WITH, 1.0),
        Edge(ids[0], ids[3], EdgeKind.INHERITS, 1.0),
    ]
    adj = Adjacency.from_edges(ids, edges)
    P = transition_matrix(adj, weights_with_zero()).toarray()
    assert P[0].tolist() == pytest.approx([0.0, 1 / 1.3, 0.0, 0.3 / 1.3])
    assert P[2].tolist() == [0.0, 0.0, 0.0, 0.0]  # only a zero-weight edge: a dead end
    r, _ = walk_with_restart(
        transition_matrix(adj, weights_with_zero()), {0: 1.0}, restart_prob=C, max_iter=20, tol_l1=1e-6
    )
    assert r[2] == 0.0 and r[1] > 0 and r[3] > 0
    walked = default_edge_weights()  # co-change weighted 0.5: now reached
    r, _ = walk_with_restart(
        transition_matrix(adj, walked), {0: 1.0}, restart_prob=C, max_iter=20, tol_l1=1e-6
    )
    assert r[2] > 0


def test_building_matrices_leaves_the_adjacency_untouched() -> None:
    adj, _ = random_graph(12, 30, 90)
    before = adj.to_bytes()
    loaded = Adjacency.from_bytes(before)  # read-only views of the blob
    for graph in (adj, loaded):
        transition_matrix(graph, weights_with_zero())
        hop_distances(graph, [0, 1], skip_kinds=[EdgeKind.CO_CHANGED_WITH])
        hits(graph, list(range(10)), weights_with_zero(), 10)
        assert graph.to_bytes() == before


def test_walk_goes_both_ways_and_drops_self_loops() -> None:
    ids = make_ids(3)
    edges = [Edge(ids[0], ids[1], EdgeKind.CALLS, 1.0), Edge(ids[1], ids[1], EdgeKind.CALLS, 1.0)]
    P = transition_matrix(Adjacency.from_edges(ids, edges), default_edge_weights()).toarray()
    assert P.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]


def test_walk_rejects_bad_seeds() -> None:
    P = transition_matrix(chain_adjacency(3), default_edge_weights())
    with pytest.raises(ValueError, match="outside"):
        walk_with_restart(P, {3: 1.0}, restart_prob=C, max_iter=5, tol_l1=1e-3)
    with pytest.raises(ValueError, match="positive"):
        walk_with_restart(P, {}, restart_prob=C, max_iter=5, tol_l1=1e-3)


def test_hop_distances() -> None:
    ids = make_ids(8)
    edges = [Edge(ids[i], ids[i + 1], EdgeKind.CALLS, 1.0) for i in range(5)]  # 0-1-2-3-4-5
    edges.append(Edge(ids[6], ids[2], EdgeKind.CALLS, 1.0))  # 6 calls 2: reached backwards
    edges.append(Edge(ids[0], ids[7], EdgeKind.CO_CHANGED_WITH, 1.0))
    adj = Adjacency.from_edges(ids, edges)
    assert hop_distances(adj, [1], max_hops=4) == {0: 1, 1: 0, 2: 1, 3: 2, 4: 3, 5: 4, 6: 2, 7: 2}
    assert hop_distances(adj, [1], max_hops=2, skip_kinds=[EdgeKind.CO_CHANGED_WITH]) == {
        0: 1,
        1: 0,
        2: 1,
        3: 2,
        6: 2,
    }
    assert hop_distances(adj, [0, 5], max_hops=1) == {0: 0, 1: 1, 4: 1, 5: 0, 7: 1}
    weights = {**default_edge_weights(), EdgeKind.CO_CHANGED_WITH: 0.0}
    P = transition_matrix(adj, weights)
    for max_hops in (1, 2, 4):
        assert walk_hops(P, [1], max_hops) == hop_distances(
            adj, [1], max_hops, skip_kinds=[EdgeKind.CO_CHANGED_WITH]
        )


def test_hop_distances_match_networkx_bfs() -> None:
    n = 200
    adj, triples = random_graph(13, n, 260)
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((s, t) for s, t, kind in triples if kind != EdgeKind.CO_CHANGED_WITH)
    expected = nx.multi_source_dijkstra_path_length(graph, {0, 50}, cutoff=3)
    assert hop_distances(adj, [0, 50], 3, skip_kinds=[EdgeKind.CO_CHANGED_WITH]) == expected


# -- HITS -----------------------------------------------------------------------------------


def max_scaled(values: dict[int, float]) -> dict[int, float]:
    top = max(values.values())
    return {k: v / top for k, v in values.items()}


@pytest.mark.parametrize("graph_seed", [21, 22, 23])
def test_hits_matches_networkx(graph_seed: int) -> None:
    """Converged HITS = networkx.hits on the weighted induced subgraph, both scaled to max 1."""
    n = 50
    adj, triples = random_graph(graph_seed, n, 250)
    weights = weights_with_zero()
    subset = list(range(0, n, 2)) + [1, 3]  # an induced subgraph, in no particular order
    authority, hub = hits(adj, subset, weights, iterations=500)
    inside = set(subset)
    graph = nx.DiGraph()
    graph.add_nodes_from(subset)
    for s, t, kind in triples:
        w = weights.get(kind, 0.3)
        if s in inside and t in inside and s != t and w > 0:
            old = graph.get_edge_data(s, t, {"weight": 0.0})["weight"]
            graph.add_edge(s, t, weight=old + w)
    nx_hub, nx_authority = nx.hits(graph, max_iter=10000, tol=1e-14)
    assert max(authority.values()) == 1.0 and max(hub.values()) == 1.0
    for node in subset:
        assert authority[node] == pytest.approx(max_scaled(nx_authority)[node], abs=1e-6)
        assert hub[node] == pytest.approx(max_scaled(nx_hub)[node], abs=1e-6)


def test_hits_on_a_star() -> None:
    ids = make_ids(5)
    edges = [Edge(ids[0], ids[i], EdgeKind.CALLS, 1.0) for i in (1, 2, 3)]
    edges.append(Edge(ids[4], ids[0], EdgeKind.CALLS, 1.0))  # 4 is outside the subgraph
    authority, hub = hits(Adjacency.from_edges(ids, edges), [0, 1, 2, 3], default_edge_weights(), 10)
    assert authority == {0: 0.0, 1: 1.0, 2: 1.0, 3: 1.0}
    assert hub == {0: 1.0, 1: 0.0, 2: 0.0, 3: 0.0}


def test_hits_without_edges_is_all_zero() -> None:
    authority, hub = hits(chain_adjacency(4), [0, 2], default_edge_weights(), 10)
    assert authority == {0: 0.0, 2: 0.0} and hub == {0: 0.0, 2: 0.0}


# -- scoring --------------------------------------------------------------------------------


def test_score_candidate_by_hand() -> None:
    params = RankParams()
    seed = ScoreInput(0.4, 0.5, 0.0, 0.3, 0, authority=0.6, hub=0.5, is_seed=True, penalised=False)
    score, components = score_candidate(seed, params)
    # 0.35*0.8 + 0.20*1 + 0.15*0.3 + 0.15*1 + 0.25*0.6 + 0.10*0.5
    assert score == 0.875
    assert dict(components) == {
        "blast": 0.8,
        "confidence": 1.0,
        "recency": 0.3,
        "distance": 1.0,
        "authority_adj": 0.15,
        "hub_adj": 0.05,
        "test_penalty": 1.0,
    }
    other = ScoreInput(0.1, 0.5, 0.7, 0.9, 2, authority=0.5, hub=0.9, is_seed=False, penalised=False)
    # 0.35*0.2 + 0.20*0.7 + 0.15*0.9 + 0.15/3 - 0.15*0.5  (a non-seed hub earns nothing)
    assert score_candidate(other, params)[0] == 0.32
    assert score_candidate(dataclasses.replace(other, penalised=True), params)[0] == 0.096


def test_score_thresholds_are_strict() -> None:
    params = RankParams()
    at_threshold = ScoreInput(1.0, 1.0, 1.0, 0.0, 0, authority=0.05, hub=0.1, is_seed=True, penalised=False)
    assert dict(score_candidate(at_threshold, params)[1])["authority_adj"] == 0.0
    assert dict(score_candidate(at_threshold, params)[1])["hub_adj"] == 0.0
    non_seed = ScoreInput(1.0, 1.0, 1.0, 0.0, 1, authority=0.2, hub=1.0, is_seed=False, penalised=False)
    assert dict(score_candidate(non_seed, params)[1])["authority_adj"] == 0.0


def test_incoming_confidence() -> None:
    ids = make_ids(3)
    edges = [
        Edge(ids[0], ids[1], EdgeKind.CALLS, 0.5),
        Edge(ids[2], ids[1], EdgeKind.IMPORTS, 0.75),
        Edge(ids[1], ids[0], EdgeKind.CALLS, 0.25),
    ]
    assert incoming_confidence(Adjacency.from_edges(ids, edges), [0, 1, 2]) == {0: 0.25, 1: 0.75, 2: 0.0}


def exact_params(**changes: object) -> RankParams:
    """Run the walk to its fixed point so hand-computed RWR values hold exactly."""
    return dataclasses.replace(RankParams(max_iter=2000, tol_l1=1e-14), **changes)  # type: ignore[arg-type]


def tiny_graph() -> tuple[Adjacency, str, str, str]:
    """C calls A (confidence 0.9), A calls B (confidence 0.7); A is the change."""
    a, b, c = make_ids(3)
    edges = [Edge(c, a, EdgeKind.CALLS, 0.9), Edge(a, b, EdgeKind.CALLS, 0.7)]
    return Adjacency.from_edges([a, b, c], edges), a, b, c


def test_rank_nodes_on_a_hand_made_graph() -> None:
    """By hand. RWR fixed point (path C - A - B, seed A): rA = 5/9, rB = rC = 2/9, so blast
    B = C = 0.4. HITS on {A, B, C} with edges C->A, A->B: authority A = B = 1, C = 0; hub
    A = C = 1, B = 0. Confidence into B 0.7, into C none. Recency A 1.0, C 0.5, B unknown 0.3.

    A: 0.35 + 0.20 + 0.15 + 0.15 + 0.25*1 (seed authority) + 0.10*1 (seed hub)  = 1.2
    C: 0.35*0.4 + 0 + 0.15*0.5 + 0.15*0.5                                      = 0.29
    B: 0.35*0.4 + 0.20*0.7 + 0.15*0.3 + 0.15*0.5 - 0.15*1 (non-seed authority) = 0.25
    """
    adj, a, b, c = tiny_graph()
    params = exact_params()
    ranked, _ = rank_nodes(
        adj,
        transition_matrix(adj, params.edge_weights),
        {a: 1.0},
        params,
        recency=lambda ids: {a: 1.0, c: 0.5},
    )
    assert [(r.node_id, r.score, r.distance, r.is_seed) for r in ranked] == [
        (a, 1.2, 0, True),
        (c, 0.29, 1, False),
        (b, 0.25, 1, False),
    ]
    reasons = Reasons(adj, {a})
    assert [reasons.of(r.node_id, is_test=False) for r in ranked] == ["changed", "caller", "callee"]
    assert ranked[0].rwr == pytest.approx(5 / 9, abs=1e-12)
    assert (ranked[1].authority, ranked[1].hub) == (0.0, 1.0)
    assert dict(ranked[2].components) == {
        "blast": 0.4,
        "confidence": 0.7,
        "recency": 0.3,
        "distance": 0.5,
        "authority_adj": -0.15,
        "hub_adj": 0.0,
        "test_penalty": 1.0,
    }


def test_tests_are_penalised_only_in_task_mode() -> None:
    adj, a, b, c = tiny_graph()
    params = exact_params()
    P = transition_matrix(adj, params.edge_weights)

    def recency(ids):
        return {a: 1.0, c: 0.5}

    pr_mode, _ = rank_nodes(adj, P, {a: 1.0}, params, recency=recency, is_test=lambda nid: nid == c)
    assert [(r.node_id, r.score) for r in pr_mode][1] == (c, 0.29)
    assert Reasons(adj, {a}).of(c, is_test=True) == "test"
    task_mode, _ = rank_nodes(
        adj, P, {a: 1.0}, params, recency=recency, is_test=lambda nid: nid == c, penalise_tests=True
    )
    assert [(r.node_id, r.score) for r in task_mode][1:] == [(b, 0.25), (c, 0.087)]


def test_confidence_floor_hides_a_guess_from_callers_and_pack_edges_not_from_the_walk() -> None:
    """tiny_graph with the floor between its two edges (0.8): A -> B (0.7) is no longer a callee
    relation nor a pack edge, C -> A (0.9) still is; the walk is the same either way."""
    adj, a, b, c = tiny_graph()
    params = exact_params()
    walk = transition_matrix(adj, params.edge_weights)
    assert Reasons(adj, {a}).of(b, is_test=False) == "callee"
    assert Reasons(adj, {a}, floor=0.8).of(b, is_test=False) == "related"
    assert Reasons(adj, {a}, floor=0.8).of(c, is_test=False) == "caller"
    assert edges_among(adj, [a, b, c]) == sorted([(c, a, "calls"), (a, b, "calls")])
    assert edges_among(adj, [a, b, c], 0.8) == [(c, a, "calls")]
    shown, _ = rank_nodes(adj, walk, {a: 1.0}, exact_params(min_shown_confidence=0.8))
    hidden, _ = rank_nodes(adj, walk, {a: 1.0}, exact_params(min_shown_confidence=0.0))
    assert [(r.node_id, r.rwr) for r in shown] == [(r.node_id, r.rwr) for r in hidden]
    assert any(r.node_id == b and r.rwr > 0 for r in shown)


def test_cutoff_and_trace() -> None:
    ids = make_ids(12)
    edges = [Edge(ids[i], ids[i + 1], EdgeKind.CALLS, 1.0) for i in range(9)]  # 0..9 chain; 10, 11 apart
    edges.append(Edge(ids[10], ids[11], EdgeKind.CO_CHANGED_WITH, 1.0))
    edges.append(Edge(ids[0], ids[10], EdgeKind.CO_CHANGED_WITH, 1.0))
    adj = Adjacency.from_edges(ids, edges)
    params = exact_params(score_cutoff=0.05)
    ranked, trace = rank_nodes(adj, transition_matrix(adj, params.edge_weights), {ids[0]: 1.0}, params)
    kept = {r.node_id for r in ranked}
    for i, nid in enumerate(ids):
        node = trace.node(nid)
        assert node.in_graph and node.is_seed == (i == 0)
        assert node.above_cutoff == (nid in kept)
        assert node.rwr == pytest.approx(float(trace.rwr[i]))
    far = trace.node(ids[9])
    assert far.reached and not far.above_cutoff and far.rwr_normalised < 0.05
    assert trace.node(ids[10]).above_cutoff  # co-change edge: walked with weight 0.5
    assert Reasons(adj, {ids[0]}).of(ids[10], is_test=False) == "cochange"
    missing = trace.node("f" * 32)
    assert not missing.in_graph and not missing.reached
    assert trace.node(ids[0]).restart_weight == 1.0 and trace.iterations > 20

    no_cochange = exact_params(edge_weights={**default_edge_weights(), EdgeKind.CO_CHANGED_WITH: 0.0})
    ranked, trace = rank_nodes(
        adj, transition_matrix(adj, no_cochange.edge_weights), {ids[0]: 1.0}, no_cochange
    )
    assert not trace.node(ids[10]).reached and trace.node(ids[10]).hops is None


def test_ties_break_by_node_id_whatever_the_input_order() -> None:
    ids = make_ids(4)
    seed = ids[3]
    edges = [Edge(seed, ids[i], EdgeKind.CALLS, 1.0) for i in (2, 0, 1)]
    params = RankParams()
    first = Adjacency.from_edges(ids, edges)
    second = Adjacency.from_edges(reversed(ids), list(reversed(edges)))
    runs = [
        rank_nodes(adj, transition_matrix(adj, params.edge_weights), {seed: 1.0}, params)[0]
        for adj in (first, second, first)
    ]
    assert runs[0] == runs[1] == runs[2]
    assert [r.node_id for r in runs[0]] == [seed, ids[0], ids[1], ids[2]]
    assert runs[0][1].score == runs[0][2].score == runs[0][3].score


def test_unknown_or_zero_seeds_give_an_empty_ranking() -> None:
    adj, a, _, _ = tiny_graph()
    params = RankParams()
    P = transition_matrix(adj, params.edge_weights)
    assert rank_nodes(adj, P, {"f" * 32: 1.0, a: 0.0}, params)[0] == []
    ranked, trace = rank_nodes(adj, P, {}, params)
    assert ranked == [] and not trace.node(a).reached


def test_rank_is_reproducible_on_a_random_graph() -> None:
    adj, _ = random_graph(31, 400, 1500)
    params = RankParams()
    P = transition_matrix(adj, params.edge_weights)
    seeds = {adj.node_ids[i]: w for i, w in ((3, 1.0), (40, 0.3), (77, 0.6))}
    one, _ = rank_nodes(adj, P, seeds, params)
    two, _ = rank_nodes(Adjacency.from_bytes(adj.to_bytes()), P, seeds, params)
    assert one == two and len(one) > 3
    assert [(-r.score, r.node_id) for r in one] == sorted((-r.score, r.node_id) for r in one)
    assert all(round(r.score, 6) == r.score for r in one)


def test_reasons_one_definition_containment_is_not_a_use() -> None:
    """A class whose method changed is not its caller; a caller of the method is; a test is a
    test first; a task's anchors are its matches."""
    cls, method, user, test, partner = make_ids(5)
    edges = [
        Edge(cls, method, EdgeKind.CONTAINS, 1.0),
        Edge(method, cls, EdgeKind.MEMBER_OF, 1.0),
        Edge(user, method, EdgeKind.CALLS, 0.9),
        Edge(test, method, EdgeKind.CALLS, 0.9),
        Edge(method, partner, EdgeKind.CO_CHANGED_WITH, 0.5),
    ]
    adj = Adjacency.from_edges([cls, method, user, test, partner], edges)
    reasons = Reasons(adj, {method})
    assert reasons.of(method, is_test=False) == "changed"
    assert reasons.of(cls, is_test=False) == "related"
    assert reasons.of(user, is_test=False) == "caller"
    assert reasons.of(test, is_test=True) == "test"
    assert reasons.of(partner, is_test=False) == "cochange"
    assert Reasons(adj, {method}, former_callers={cls}).of(cls, is_test=False) == "caller"
    assert Reasons(adj, {method}, anchor_reason="match").of(method, is_test=True) == "match"


@pytest.mark.parametrize("seed", range(6))
def test_the_hits_subgraph_weighs_each_edge_between_chosen_nodes_once_per_kind(seed: int) -> None:
    from knowing_pr.rank.hits import subgraph_matrix
    from knowing_pr.rank.matrix import kind_weight_table

    rng = np.random.default_rng(seed)
    kinds = [EdgeKind.CALLS, EdgeKind.IMPORTS, EdgeKind.CO_CHANGED_WITH, EdgeKind.TESTS]
    ids = [f"{i:032x}" for i in range(30)]
    edges = [
        Edge(ids[int(a)], ids[int(b)], kinds[int(k)], 1.0)
        for a, b, k in zip(
            rng.integers(0, 30, 120), rng.integers(0, 30, 120), rng.integers(0, 4, 120), strict=True
        )
    ]
    adj = Adjacency.from_edges(ids, edges)
    chosen = [int(i) for i in rng.permutation(30)[:12]]
    weights = {**default_edge_weights(), EdgeKind.TESTS: 0.0}
    table = kind_weight_table(weights)
    expected = np.zeros((12, 12))
    local = {node: row for row, node in enumerate(chosen)}
    for source, node in enumerate(adj.node_ids):
        position = adj.index_of(node)
        assert position == source
        for at in range(int(adj.indptr[source]), int(adj.indptr[source + 1])):
            target = int(adj.indices[at])
            if source in local and target in local and source != target and table[adj.kinds[at]] > 0:
                expected[local[source], local[target]] += table[adj.kinds[at]]
    assert np.array_equal(subgraph_matrix(adj, chosen, weights).toarray(), expected)


def test_a_nodes_recency_is_its_files_recency(repo) -> None:
    from knowing_pr.config import Settings
    from knowing_pr.pipeline import update_index
    from knowing_pr.rank.candidates import _node_recency
    from knowing_pr.rank.signals import read_history_signals, recency_by_file
    from knowing_pr.store import Store

    repo.write("src/old.py", "def old():\n    return 1\n")
    repo.write("src/new.py", "def new():\n    return 2\n")
    repo.commit("both")
    for n in range(3):
        repo.write("src/new.py", f"def new():\n    return {n + 3}\n")
        repo.commit(f"new {n}")
    update_index(repo.path)
    settings = Settings()
    store = Store.open(repo.path / ".git" / "knowing-pr" / "index.sqlite")
    try:
        by_file = recency_by_file(store, settings)
        assert by_file["src/new.py"] != by_file["src/old.py"]  # the files differ, so the check can fail
        history = read_history_signals(store, settings, ["src/new.py"], with_recency=True)
        assert history.recency_by_file == by_file
        every = dict(store.node_paths())
        asked = sorted(every)[:3]
        assert _node_recency(store, by_file)(asked) == {
            i: by_file[every[i]] for i in asked if every[i] in by_file
        }
        assert _node_recency(store, {}) is None  # no history: every node keeps the default
    finally:
        store.close()
