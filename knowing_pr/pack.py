"""Ranked candidates + a token budget → the ``Pack``: the symbols that fit (density-ranked greedy
knapsack), the edges among them and the content-addressed PackRoot.

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

The change's own symbols (reason ``changed``) come first and are never dropped: each gets a
one-line entry, then full entries best first within ``changed_share`` of the room the frame
leaves; if even the one-line entries do not fit, the best that fit stay and the rest are named
(``path:line name``) in the summary's ``changed_left_out`` list, every one, and counted.
The other candidates share what is left as below; whatever room remains upgrades the one-line
changed entries to full ones, best first. A PR's summary (call sites, tests to run, removed
symbols) is cut to ``summary_share`` of the budget first and costed in the frame. Finally
``render.fit_pack`` checks the rendered text and cuts it further if an estimate was off, so
``tokens_used <= token_budget`` always holds.

PR groups (``test_share > 0``): tests are half of what a change needs and score low, so
they get their own group. Tests are packed first, in density order, into at most
``floor(test_share * (budget_tokens - reserved_tokens))`` tokens; then the non-tests into
whatever remains; then any room still left is offered to the leftovers of both groups,
again in density order (so neither group wastes budget the other could use).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from knowing_pr.config import Settings, pack_parameters
from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.graph.merkle import pack_root
from knowing_pr.model import ChangeSummary, EdgeKind, Pack, ScoredSymbol
from knowing_pr.rank.candidates import Ranking
from knowing_pr.rank.fusion import ordered_by_task

__all__ = [
    "DROP_BUDGET",
    "PackSpec",
    "build_pack",
    "density_order",
    "edges_among",
    "pack_params",
    "pack_symbols",
]

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


# -- the whole pack -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PackSpec:
    """Everything that shapes a pack besides its candidates: what it is for and how it is shown."""

    mode: str  # "pr" | "files" | "task"
    #: normalized inputs that enter the PackRoot (sorted paths, normalized task text)
    identity_inputs: Mapping[str, Any]
    #: everything recorded for display and replay (base/head shas, ranges, …)
    inputs: Mapping[str, Any]
    fmt: str
    commit: str | None
    graph_root: str
    penalise_tests: bool = False
    test_share: float = 0.0
    cochange: tuple[tuple[str, int, int], ...] = ()
    #: a PR's reviewer summary, before the budget cuts its lists
    summary: ChangeSummary | None = None


def pack_params(settings: Settings, spec: PackSpec) -> dict[str, object]:
    """The parameters that enter a pack's PackRoot: every setting that can change it, the format
    and the mode's options."""
    return {
        **pack_parameters(settings, spec.mode),
        "format": spec.fmt,
        "mode_options": {"penalise_tests": spec.penalise_tests, "test_share": spec.test_share},
    }


def _fitted_summary(spec: PackSpec, settings: Settings) -> ChangeSummary | None:
    """The summary's lists cut to ``summary_share`` of the budget in the pack's format (markdown
    shows only the first few call sites outside the change and tests: the rest are counted)."""
    from knowing_pr import render

    summary = spec.summary
    if summary is None:
        return None
    limits = render.RenderLimits()
    if spec.fmt == "markdown":
        shown = limits.summary_shown
        outside = [s for s in summary.call_sites if not s.in_change]
        summary = dataclasses.replace(summary, call_sites=outside[:shown], tests=summary.tests[:shown])
    pack = settings.pack
    room = int(pack.budget_tokens * pack.summary_share * pack.chars_per_token)
    return render.fit_summary(summary, spec.fmt, room, limits)


@dataclass
class _ChangedPick:
    """The change's own symbols as packed: entries (full or one-line), tokens, and those left out."""

    symbols: list[ScoredSymbol]
    tokens: int
    left_out: list[ScoredSymbol]
    named: list[str]
    named_tokens: int


def _pick_changed(
    changed: Sequence[ScoredSymbol],
    room: int,
    cost_of: Callable[[ScoredSymbol], int],
    share: float,
    fmt: str,
    chars_per_token: float,
) -> _ChangedPick:
    """One-line entries for all (or as many as fit, the rest named), then full entries best first
    within ``share`` of ``room``."""
    from knowing_pr import render

    brief = [dataclasses.replace(s, brief=True) for s in changed]
    brief_cost = [cost_of(s) for s in brief]
    if sum(brief_cost) > room:
        names = [render.left_out_item(s.node) for s in changed]
        name_chars = [render.left_out_chars(n, fmt) for n in names]
        keep = len(changed)
        while (
            keep > 0 and sum(brief_cost[:keep]) + math.ceil(sum(name_chars[keep:]) / chars_per_token) > room
        ):
            keep -= 1
        if keep == 0:  # not even every name fits: one-line entries take half the room
            while keep < len(changed) and sum(brief_cost[: keep + 1]) <= room / 2:
                keep += 1
            keep = max(keep, 1)  # the best one is always shown, in a line at least
        # every one left out is named, whatever the room (names are cheap; "Lists are whole in JSON")
        return _ChangedPick(
            brief[:keep],
            sum(brief_cost[:keep]),
            list(changed[keep:]),
            names[keep:],
            math.ceil(sum(name_chars[keep:]) / chars_per_token),
        )
    chosen = list(brief)
    used = sum(brief_cost)
    cap = room * share
    for i, sym in enumerate(changed):
        extra = cost_of(sym) - brief_cost[i]
        if used + extra <= cap:
            chosen[i] = sym
            used += extra
    return _ChangedPick(chosen, used, [], [], 0)


def _upgrade(
    picked: list[ScoredSymbol],
    originals: Sequence[ScoredSymbol],
    room: int,
    cost_of: Callable[[ScoredSymbol], int],
) -> list[ScoredSymbol]:
    """One-line entries made full, best first, while ``room`` tokens last."""
    out = list(picked)
    for i, sym in enumerate(out):
        if sym.brief:
            extra = cost_of(originals[i]) - cost_of(sym)
            if extra <= room:
                out[i] = originals[i]
                room -= extra
    return out


def build_pack(ranking: Ranking, spec: PackSpec, settings: Settings) -> Pack:
    """Candidates + budget → the ``Pack``: the change's own symbols first (never dropped), the rest
    by the knapsack costed on the rendered text of each entry, the edges among the packed
    symbols, the PackRoot, and the tokens the rendered pack takes (module docstring)."""
    from knowing_pr import render

    budget = settings.pack.budget_tokens
    chars = settings.pack.chars_per_token
    params = pack_params(settings, spec)
    summary = _fitted_summary(spec, settings)

    # the frame: everything but the symbols' entries, at its worst case, with the ranked file list
    # whole, whatever the budget ("Lists are whole in JSON"): its tokens come out of the room first
    frame = render.frame_cost(
        spec.fmt,
        mode=spec.mode,
        token_budget=budget,
        inputs=spec.inputs,
        graph_root=spec.graph_root,
        commit=spec.commit,
        params=params,
        cochange=spec.cochange,
        chars_per_token=chars,
        summary=summary,
        files=ranking.files,
    )

    def cost_of(symbol: ScoredSymbol) -> int:
        return render.entry_cost(symbol, spec.fmt, chars)

    changed = [c for c in ranking.candidates if c.reason == "changed"]
    others = [c for c in ranking.candidates if c.reason != "changed"]
    pick = _pick_changed(changed, budget - frame, cost_of, settings.pack.changed_share, spec.fmt, chars)
    packed_others, dropped = pack_symbols(
        others,
        budget_tokens=budget,
        cost_of=cost_of,
        proximity_exponent=settings.pack.proximity_exponent,
        reserved_tokens=max(frame, 0) + pick.tokens + pick.named_tokens,
        test_share=spec.test_share,
    )
    left = budget - frame - pick.tokens - pick.named_tokens - sum(cost_of(s) for s in packed_others)
    kept_changed = _upgrade(pick.symbols, changed[: len(pick.symbols)], left, cost_of)
    if summary is not None and pick.left_out:
        summary = dataclasses.replace(
            summary, changed_left_out=pick.named, changed_left_out_count=len(pick.left_out)
        )
    dropped = [(s.node.id, DROP_BUDGET) for s in pick.left_out] + dropped
    packed = sorted([*kept_changed, *packed_others], key=lambda c: (-c.score, c.node.id))
    pack = Pack(
        pack_root="0" * 64,
        mode=spec.mode,
        token_budget=budget,
        tokens_used=0,
        graph_root=spec.graph_root,
        commit=spec.commit,
        inputs=dict(spec.inputs),
        symbols=_shown_order(ranking, packed),
        edges=edges_among(
            ranking.trace.adjacency, [s.node.id for s in packed], settings.rank.min_shown_confidence
        ),
        params=params,
        dropped=dropped,
        cochange=list(spec.cochange),
        summary=summary,
        files=list(ranking.files),
    )
    # what the reader actually gets: the tokens of the rendered text, cut further if an estimate
    # was off (the frame estimate is an upper bound, so this is a safety net)
    fitted = render.fit_pack(pack, spec.fmt)
    fitted.pack_root = pack_root(
        spec.mode, spec.identity_inputs, params, [(s.node.id, s.node.content_hash) for s in fitted.symbols]
    )
    return fitted


def _shown_order(ranking: Ranking, packed: Sequence[ScoredSymbol]) -> list[ScoredSymbol]:
    """The packed symbols in the order a pack shows them: by score, or a task's fused order."""
    if not ranking.display_order:
        return list(packed)
    return ordered_by_task(packed, ranking.display_order, ranking.seed_ranks)


def edges_among(adjacency: Adjacency, ids: Sequence[str], floor: float = 0.0) -> list[tuple[str, str, str]]:
    """The edges whose both ends are in ``ids`` (source, target, kind label), sorted; structural
    ones below ``floor`` (``RankParams.min_shown_confidence``) are not shown (co-change edges
    carry their own, history-based confidence)."""
    positions = {p: node_id for node_id in ids if (p := adjacency.index_of(node_id)) is not None}
    out: set[tuple[str, str, str]] = set()
    history = int(EdgeKind.CO_CHANGED_WITH)
    for p, node_id in positions.items():
        start, end = int(adjacency.indptr[p]), int(adjacency.indptr[p + 1])
        for target, kind, confidence in zip(
            adjacency.indices[start:end].tolist(),
            adjacency.kinds[start:end].tolist(),
            adjacency.confidence[start:end].tolist(),
            strict=True,
        ):
            if target in positions and target != p and (confidence >= floor or kind == history):
                out.add((node_id, positions[target], EdgeKind(kind).label))
    return sorted(out)
