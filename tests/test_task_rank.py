"""A task's final order (``rank/task_rank.py``) on hand-made graphs, and the word keys it compares
names with."""

from __future__ import annotations

import dataclasses

from knowing_pr.config import TaskParams
from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.graph.paths import module_name
from knowing_pr.model import Edge, EdgeKind, Node, ScoredSymbol, SymbolKind, node_id
from knowing_pr.rank.task_rank import TaskOrderInput, name_words, task_rank, word_key

#: every factor neutral: the order is the RRF of the walk and the seed order alone
NEUTRAL = TaskParams(
    rank_type_factor=1.0,
    rank_minor_factor=1.0,
    rank_place_factor=1.0,
    rank_consensus=0.0,
    rank_owner_lift=0.0,
    rank_member_share=0.0,
    rank_abstraction_lift=0.0,
    rank_cochange=0.0,
    rank_name_match=0.0,
    rank_path_match=0.0,
    diversity_window=0,
)


def node(
    nid: str, name: str, kind: str = SymbolKind.FUNCTION, path: str = "src/mod.py", owner: str = ""
) -> Node:
    qualified = f"src.mod.{owner + '.' if owner else ''}{name}"
    return Node(nid, path, name, qualified, kind, "python", 1, 2, "", "", "h")


def ids(n: int) -> list[str]:
    return [f"{i:032x}" for i in range(n)]


def order_of(
    nodes: list[Node], seeds: list[str], edges: list[Edge], params: TaskParams, **extra: object
) -> list[str]:
    adjacency = Adjacency.from_edges(sorted(n.id for n in nodes), edges)
    candidates = [ScoredSymbol(node=n, score=1.0 - i / 100) for i, n in enumerate(nodes)]
    given = TaskOrderInput(candidates, seeds, adjacency, lambda path: path.startswith("tests/"), **extra)  # type: ignore[arg-type]
    return [nid for nid, _ in task_rank(given, params)]


def test_the_prior_fuses_the_walk_and_the_seed_order():
    a, b, c = ids(3)
    nodes = [node(a, "hub"), node(b, "match"), node(c, "other")]
    # the walk puts a hub first; the text match is second in the walk but first in the seed order
    assert order_of(nodes, [b, c, a, "absent"], [], NEUTRAL) == [b, a, c]
    # equal priors keep the walk's order
    assert order_of(nodes, [], [], NEUTRAL) == [a, b, c]
    given = TaskOrderInput(
        [ScoredSymbol(node=n, score=1.0) for n in nodes],
        [b, c, a],
        Adjacency.from_edges(sorted([a, b, c]), []),
        bool,
    )
    scores = dict(task_rank(given, NEUTRAL))
    assert scores[b] == 1.0 and all(0 < s <= 1.0 for s in scores.values())


def test_kind_and_place_factors():
    a, b, c = ids(3)
    nodes = [
        node(a, "helper"),
        node(b, "Model", SymbolKind.CLASS),
        node(c, "test_it", path="tests/test_mod.py"),
    ]
    params = dataclasses.replace(NEUTRAL, rank_type_factor=1.2, rank_place_factor=0.1)
    # the type overtakes the function ahead of it; the test falls behind both
    assert order_of([nodes[2], nodes[0], nodes[1]], [], [], params) == [b, a, c]


def test_consensus_lifts_what_the_best_candidates_link_to():
    a, b, c, d = ids(4)
    nodes = [node(a, "one"), node(b, "two"), node(c, "three"), node(d, "shared")]
    edges = [
        Edge(a, d, EdgeKind.CALLS, 1.0),
        Edge(b, d, EdgeKind.CALLS, 1.0),
        Edge(c, d, EdgeKind.REFERENCES, 1.0),
    ]
    assert order_of(nodes, [], edges, NEUTRAL)[0] == a
    assert order_of(nodes, [], edges, dataclasses.replace(NEUTRAL, rank_consensus=0.5))[0] == d


def test_an_owner_type_leads_its_best_member_and_members_follow_their_owner():
    a, b, c, d = ids(4)
    method = node(a, "load", SymbolKind.METHOD, owner="Store")
    other = node(b, "unrelated")
    owner = node(c, "Store", SymbolKind.CLASS)
    sibling = node(d, "save", SymbolKind.METHOD, owner="Store")
    edges = [Edge(a, c, EdgeKind.MEMBER_OF, 1.0), Edge(d, c, EdgeKind.MEMBER_OF, 1.0)]
    nodes = [method, other, owner, sibling]
    assert order_of(nodes, [], edges, NEUTRAL) == [a, b, c, d]
    lifted = order_of(nodes, [], edges, dataclasses.replace(NEUTRAL, rank_owner_lift=1.05))
    assert lifted[:2] == [c, a]
    shared = order_of(
        nodes, [], edges, dataclasses.replace(NEUTRAL, rank_owner_lift=1.05, rank_member_share=0.99)
    )
    assert shared == [c, a, d, b]


def test_an_interface_follows_its_implementation():
    a, b, c = ids(3)
    impl = node(a, "ServiceDiscoveryProvider", SymbolKind.CLASS)
    other = node(b, "Unrelated", SymbolKind.CLASS)
    interface = node(c, "IServiceDiscoveryProvider", SymbolKind.INTERFACE)
    edges = [Edge(a, c, EdgeKind.IMPLEMENTS, 1.0)]
    assert order_of([impl, other, interface], [], edges, NEUTRAL) == [a, b, c]
    params = dataclasses.replace(NEUTRAL, rank_abstraction_lift=0.99)
    assert order_of([impl, other, interface], [], edges, params) == [a, c, b]


def test_cochange_lifts_the_files_that_change_with_the_best_ones():
    a, b, c = ids(3)
    nodes = [
        node(a, "one", path="src/one.py"),
        node(b, "two", path="src/two.py"),
        node(c, "three", path="src/three.py"),
    ]
    modules = {
        p: node_id(p, module_name(p), SymbolKind.MODULE) for p in ("src/one.py", "src/two.py", "src/three.py")
    }
    edges = [Edge(modules["src/one.py"], modules["src/three.py"], EdgeKind.CO_CHANGED_WITH, 0.8)]
    adjacency = Adjacency.from_edges(sorted([a, b, c, *modules.values()]), edges)
    candidates = [ScoredSymbol(node=n, score=1.0) for n in nodes]
    given = TaskOrderInput(candidates, [], adjacency, bool)
    assert [nid for nid, _ in task_rank(given, NEUTRAL)] == [a, b, c]
    lifted = task_rank(given, dataclasses.replace(NEUTRAL, rank_cochange=0.5))
    assert [nid for nid, _ in lifted] == [a, c, b]


def test_name_match_prefers_the_symbol_the_task_words_make_up():
    a, b = ids(2)
    nodes = [node(a, "ServiceEventSource", SymbolKind.CLASS), node(b, "RateLimitOptions", SymbolKind.CLASS)]
    words = frozenset(word_key(w) for w in ("rate", "limiting", "options"))
    params = dataclasses.replace(NEUTRAL, rank_name_match=2.0)
    assert order_of(nodes, [], [], params, task_words=words) == [b, a]


def test_diversity_caps_one_file_and_one_word_in_the_window():
    nodes = [node(f"{i:032x}", f"flag_{i}", path="src/flags.py") for i in range(6)]
    nodes += [node(f"{i:032x}", f"other_{i}", path=f"src/m{i}.py") for i in range(6, 10)]
    params = dataclasses.replace(NEUTRAL, diversity_window=5, diversity_per_file=2, diversity_per_word=9)
    order = order_of(nodes, [], [], params)
    assert [n[-1] for n in order[:5]] == ["0", "1", "6", "7", "8"]
    assert len(order) == 10  # nothing is lost, the rest waits
    by_word = dataclasses.replace(NEUTRAL, diversity_window=5, diversity_per_file=9, diversity_per_word=3)
    assert [n[-1] for n in order_of(nodes, [], [], by_word)[:5]] == ["0", "1", "2", "6", "7"]


def test_named_symbols_lead_whatever_the_rest_scores():
    a, b, c = ids(3)
    nodes = [node(a, "Big", SymbolKind.CLASS), node(b, "named"), node(c, "other")]
    edges = [Edge(b, a, EdgeKind.CALLS, 1.0), Edge(c, a, EdgeKind.CALLS, 1.0)]
    params = dataclasses.replace(NEUTRAL, rank_consensus=2.0, rank_type_factor=2.0)
    adjacency = Adjacency.from_edges(sorted([a, b, c]), edges)
    given = TaskOrderInput(
        [ScoredSymbol(node=n, score=1.0) for n in nodes], [b], adjacency, bool, pinned=frozenset({b})
    )
    ranked = task_rank(given, params)
    assert ranked[0] == (b, 1.0) and [nid for nid, _ in ranked[1:]] == [a, c]


def test_word_keys_and_name_words():
    assert word_key("placeholders") == word_key("placeholder") == "placehold"
    assert word_key("creation") == word_key("creator") == "creat"
    assert word_key("Routes") == word_key("route") == "rout"
    assert word_key("api") == "api"
    method = node("0" * 32, "set_country", SymbolKind.METHOD, owner="CheckoutInfo")
    assert name_words(method) == {"checkout", "info", "set", "country"}
