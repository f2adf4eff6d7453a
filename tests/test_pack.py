"""Pack stage: the density knapsack never exceeds the budget and prefers dense, close symbols."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowing_pr.model import Node, ScoredSymbol
from knowing_pr.pack import density_order, pack_symbols


def symbol(name: str, score: float, tokens: int, *, rwr: float = 1.0, is_test: bool = False) -> ScoredSymbol:
    """A symbol whose rendered cost is carried in its end line (read back by ``cost``)."""
    node = Node(
        id=name,
        path="tests/x.py" if is_test else "x.py",
        name=name,
        qualified_name=name,
        kind="function",
        language="python",
        start_line=1,
        end_line=tokens,
        signature="",
        doc="",
        content_hash="0" * 64,
    )
    return ScoredSymbol(node=node, score=score, rwr=rwr, is_test=is_test)


def cost(s: ScoredSymbol) -> int:
    return s.node.end_line


def pack(
    candidates: list[ScoredSymbol], budget: int, **kwargs: object
) -> tuple[list[str], list[tuple[str, str]]]:
    packed, dropped = pack_symbols(
        candidates,
        budget_tokens=budget,
        cost_of=cost,
        proximity_exponent=0.3,
        **kwargs,  # type: ignore[arg-type]
    )
    return [s.node.id for s in packed], dropped


def test_prefers_small_dense_symbols_over_one_large_one() -> None:
    big = symbol("big", 0.9, 500)
    small = [symbol(f"s{i}", 0.8, 100) for i in range(5)]
    packed, dropped = pack([big, *small], 500)
    assert packed == ["s0", "s1", "s2", "s3", "s4"]
    assert dropped == [("big", "budget")]


def test_skips_what_does_not_fit_and_keeps_trying_smaller_ones() -> None:
    candidates = [symbol("a", 1.0, 60), symbol("b", 0.9, 60), symbol("c", 0.1, 30)]
    # densities: a 0.0167, b 0.015, c 0.0033; a fits, b does not (60 > 40), c does
    packed, dropped = pack(candidates, 100)
    assert packed == ["a", "c"]
    assert dropped == [("b", "budget")]


def test_proximity_breaks_equal_density() -> None:
    near = symbol("z-near", 0.5, 100, rwr=0.4)
    far = symbol("a-far", 0.5, 100, rwr=0.004)
    assert pack([far, near], 150)[0] == ["z-near"]


def test_density_formula_by_hand() -> None:
    # densities: p 0.6/100 * 1.0 = 0.006; q 0.9/100 * 0.1**0.3 = 0.004511; r 0.3/20 * 0.5**0.3 = 0.012184
    candidates = [
        symbol("p", 0.6, 100, rwr=0.2),
        symbol("q", 0.9, 100, rwr=0.02),
        symbol("r", 0.3, 20, rwr=0.1),
    ]
    assert density_order(candidates, [100, 100, 20], 0.3) == [2, 0, 1]
    # with exponent 0 proximity is ignored: q 0.009 > p 0.006 (r stays first, 0.015)
    assert density_order(candidates, [100, 100, 20], 0.0) == [2, 1, 0]


def test_zero_rwr_is_floored_not_zero() -> None:
    candidates = [symbol("x", 0.5, 10, rwr=0.0), symbol("y", 0.5, 10, rwr=1.0)]
    assert density_order(candidates, [10, 10], 0.3) == [1, 0]
    assert pack(candidates, 20)[0] == ["x", "y"]  # the floor keeps x packable


def test_ties_and_output_order_are_deterministic() -> None:
    candidates = [symbol(name, 0.5, 10) for name in ("d", "b", "c", "a")]
    packed, dropped = pack(candidates, 25)
    assert packed == ["a", "b"]
    assert dropped == [("c", "budget"), ("d", "budget")]
    output = pack([symbol("lo", 0.2, 1), symbol("hi", 0.9, 50)], 100)[0]
    assert output == ["hi", "lo"]  # packed set re-sorted by score


def test_reserved_tokens_come_off_the_budget() -> None:
    candidates = [symbol("a", 0.5, 300), symbol("b", 0.5, 300)]
    assert pack(candidates, 700, reserved_tokens=100)[0] == ["a", "b"]
    assert pack(candidates, 700, reserved_tokens=101)[0] == ["a"]
    assert pack(candidates, 700, reserved_tokens=800) == ([], [("a", "budget"), ("b", "budget")])


def test_test_group_honours_its_share() -> None:
    tests = [symbol(f"t{i}", 0.9, 100, is_test=True) for i in range(5)]
    code = [symbol(f"c{i}", 0.5, 100) for i in range(10)]
    without_groups = pack([*tests, *code], 1000)[0]
    assert sum(n.startswith("t") for n in without_groups) == 5  # denser tests would take half
    packed, _ = pack([*tests, *code], 1000, test_share=0.25)
    assert [n for n in packed if n.startswith("t")] == ["t0", "t1"]  # 250 tokens -> two tests
    assert len([n for n in packed if n.startswith("c")]) == 8


def test_leftover_budget_goes_to_either_group() -> None:
    tests = [symbol(f"t{i}", 0.9, 100, is_test=True) for i in range(5)]
    code = [symbol("c0", 0.5, 100)]
    packed, dropped = pack([*tests, *code], 1000, test_share=0.25)
    assert packed == ["t0", "t1", "t2", "t3", "t4", "c0"]  # code did not need its 750
    assert dropped == []
    packed, _ = pack([symbol("t", 0.9, 400, is_test=True), symbol("c", 0.5, 400)], 1000, test_share=0.25)
    assert packed == ["t", "c"]  # the test did not fit its 250 but fits the leftover


def test_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="test_share"):
        pack([symbol("a", 1.0, 1)], 100, test_share=1.5)
    with pytest.raises(ValueError, match="reserved_tokens"):
        pack([symbol("a", 1.0, 1)], 100, reserved_tokens=-5)
    with pytest.raises(ValueError, match="negative"):
        pack_symbols([symbol("a", 1.0, 1)], budget_tokens=100, cost_of=lambda s: -1, proximity_exponent=0.3)


candidate_lists = st.lists(
    st.tuples(
        st.floats(min_value=-0.2, max_value=1.5, allow_nan=False),
        st.integers(min_value=0, max_value=4000),
        st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
        st.booleans(),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(
    raw=candidate_lists,
    budget=st.integers(min_value=500, max_value=50_000),
    reserved=st.integers(min_value=0, max_value=1000),
    test_share=st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]),
)
def test_never_exceeds_the_budget(
    raw: list[tuple[float, int, float, bool]], budget: int, reserved: int, test_share: float
) -> None:
    candidates = [
        symbol(f"{i:04d}", score, tokens, rwr=rwr, is_test=is_test)
        for i, (score, tokens, rwr, is_test) in enumerate(raw)
    ]
    packed, dropped = pack_symbols(
        candidates,
        budget_tokens=budget,
        cost_of=cost,
        proximity_exponent=0.3,
        reserved_tokens=reserved,
        test_share=test_share,
    )
    used = sum(cost(s) for s in packed)
    if reserved <= budget:
        assert used + reserved <= budget
    else:  # the frame alone is over budget: nothing can be packed
        assert packed == []
    packed_ids = [s.node.id for s in packed]
    dropped_ids = [nid for nid, _ in dropped]
    assert sorted(packed_ids + dropped_ids) == sorted(s.node.id for s in candidates)
    assert packed == sorted(packed, key=lambda s: (-s.score, s.node.id))
    # greedy is maximal: nothing dropped would still fit in what is left
    by_id = {s.node.id: s for s in candidates}
    if reserved <= budget:
        room = budget - reserved - used
        assert all(cost(by_id[nid]) > room for nid in dropped_ids)
