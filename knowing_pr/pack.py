"""Scored symbols + a token budget → the symbols that fit (density-ranked greedy knapsack).

Seed 003, "9. Budget Packing" (seed 002, "Density-Ranked Knapsack Packing"):

1. density = score / tokens * proximity ** proximity_exponent, where ``tokens`` is the cost
   of the symbol's *rendered* entry (``cost_of``, supplied by the renderer) and proximity is
   its RWR divided by the highest RWR among the candidates, floored at 1e-6;
2. order by (-density, -score, node id);
3. greedily take each symbol that still fits, skip one that does not and keep trying the
   smaller ones after it (the greedy 0/1 approximation of the fractional knapsack);
4. return the packed set ordered by (-score, node id).

Guarantee: ``sum(cost_of(s) for s in packed) + reserved_tokens <= budget_tokens``, always
(when ``reserved_tokens`` alone exceeds the budget, nothing is packed).

PR groups (``test_share > 0``): tests are half of what a change needs and score low, so
they get their own group. Tests are packed first, in density order, into at most
``floor(test_share * (budget_tokens - reserved_tokens))`` tokens; then the non-tests into
whatever remains; then any room still left is offered to the leftovers of both groups,
again in density order (so neither group wastes budget the other could use).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from knowing_pr.model import ScoredSymbol

__all__ = ["DROP_BUDGET", "density_order", "pack_symbols"]

#: reason recorded for a candidate that ranked but did not fit
DROP_BUDGET = "budget"

_MIN_PROXIMITY = 1e-6


def density_order(
    candidates: Sequence[ScoredSymbol], costs: Sequence[int], proximity_exponent: float
) -> list[int]:
    """Positions of ``candidates`` by (-density, -score, node id)."""
    top_rwr = max((c.rwr for c in candidates), default=0.0)

    def proximity(symbol: ScoredSymbol) -> float:
        if top_rwr <= 0:
            return 1.0
        return max(symbol.rwr / top_rwr, _MIN_PROXIMITY)

    densities = [
        c.score / max(cost, 1) * proximity(c) ** proximity_exponent
        for c, cost in zip(candidates, costs, strict=True)
    ]
    return sorted(
        range(len(candidates)),
        key=lambda i: (-densities[i], -candidates[i].score, candidates[i].node.id),
    )


def _fill(order: Sequence[int], costs: Sequence[int], room: int, taken: set[int]) -> int:
    """Take every not-yet-taken position of ``order`` that fits; return the tokens used."""
    used = 0
    for i in order:
        if i not in taken and costs[i] <= room - used:
            taken.add(i)
            used += costs[i]
    return used


def pack_symbols(
    candidates: Sequence[ScoredSymbol],
    *,
    budget_tokens: int,
    cost_of: Callable[[ScoredSymbol], int],
    proximity_exponent: float,
    reserved_tokens: int = 0,
    test_share: float = 0.0,
) -> tuple[list[ScoredSymbol], list[tuple[str, str]]]:
    """(packed symbols by (-score, id), dropped as (node id, "budget") in density order).

    ``reserved_tokens`` is what the rendered frame (headers, edges list) costs regardless
    of the symbols; ``test_share`` in [0, 1] turns on the PR groups described above.
    """
    if not 0.0 <= test_share <= 1.0:
        raise ValueError(f"test_share must be in [0, 1], got {test_share}")
    if reserved_tokens < 0:
        raise ValueError(f"reserved_tokens must be >= 0, got {reserved_tokens}")
    costs = [int(cost_of(c)) for c in candidates]
    if any(cost < 0 for cost in costs):
        raise ValueError("cost_of returned a negative token count")
    order = density_order(candidates, costs, proximity_exponent)
    room = budget_tokens - reserved_tokens
    taken: set[int] = set()
    if room < 0:
        pass  # the frame alone is over budget: not even a zero-cost symbol goes in
    elif test_share > 0:
        tests = [i for i in order if candidates[i].is_test]
        others = [i for i in order if not candidates[i].is_test]
        used = _fill(tests, costs, math.floor(room * test_share), taken)
        used += _fill(others, costs, room - used, taken)
        _fill(order, costs, room - used, taken)
    else:
        _fill(order, costs, room, taken)
    packed = sorted((candidates[i] for i in taken), key=lambda c: (-c.score, c.node.id))
    dropped = [(candidates[i].node.id, DROP_BUDGET) for i in order if i not in taken]
    return packed, dropped
