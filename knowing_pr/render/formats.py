"""Pack | frame values + format name → text and its token costs, for each of ``FORMATS``.

The one place that picks a renderer by format name: ``render_pack`` for a whole pack,
``entry_text``/``entry_cost`` for one symbol's entry, ``frame_cost`` for everything else
at its worst case (see the package docstring for the invariant that ties them together).

``fit_pack`` makes the budget hold on the rendered text: when a rendering is over
``token_budget`` it drops the lowest-ranked symbols that are not the change's own, then cuts the
summary's call sites (markdown: also its tests and removed symbols), then shows the changed
symbols as one line each (the lowest-ranked first), then leaves the lowest-ranked ones out
(named in the summary, and counted; the best stays, in a line at least). The name lists JSON
and XML keep whole ("Lists are whole in JSON": every test to run, removed symbol, call site's
place, changed symbol left out and ranked file) are never cut: when they alone pass the budget,
so does ``tokens_used``, which is always the token count of the very text it is part of.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

from knowing_pr.errors import UsageError
from knowing_pr.model import ChangeSummary, Pack, RankedFile, ScoredSymbol
from knowing_pr.render.frame import (
    Frame,
    RenderLimits,
    frame_of,
    limits_or_default,
    ordered_symbols,
    worst_frame,
)
from knowing_pr.render.markdown import markdown_entry, render_markdown
from knowing_pr.render.structured import json_entry, render_json, render_xml, xml_entry
from knowing_pr.render.summary import left_out_item

__all__ = ["FORMATS", "entry_cost", "entry_text", "fit_pack", "frame_cost", "render_pack", "tokens_of"]

FORMATS = ("markdown", "json", "xml")
#: rounds of the fixed point ``tokens_used`` = tokens of the text that shows it
_FIXED_POINT_ROUNDS = 4


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", hint="use one of: " + ", ".join(FORMATS))


def entry_text(sym: ScoredSymbol, fmt: str, *, limits: RenderLimits | None = None) -> str:
    """The exact text of ``sym``'s entry in ``fmt`` (JSON: with its ``",\\n"`` separator)."""
    _check_format(fmt)
    chosen = limits_or_default(limits)
    if fmt == "markdown":
        return markdown_entry(sym, chosen)
    if fmt == "json":
        return json_entry(sym, chosen)
    return xml_entry(sym, chosen)


def entry_cost(
    sym: ScoredSymbol, fmt: str, chars_per_token: float = 4.0, *, limits: RenderLimits | None = None
) -> int:
    """Tokens of ``entry_text``: ceil(characters / chars_per_token)."""
    return math.ceil(len(entry_text(sym, fmt, limits=limits)) / chars_per_token)


def _render(
    frame: Frame,
    fmt: str,
    symbols: Sequence[ScoredSymbol],
    edges: Sequence[tuple[str, str, str]],
    *,
    worst: bool = False,
) -> str:
    if fmt == "markdown":
        return render_markdown(frame, symbols, edges, worst=worst)
    if fmt == "json":
        return render_json(frame, symbols, edges, worst=worst)
    return render_xml(frame, symbols, edges, worst=worst)


def tokens_of(text: str, chars_per_token: float) -> int:
    return math.ceil(len(text) / chars_per_token)


def _render_counted(
    frame: Frame, fmt: str, symbols: Sequence[ScoredSymbol], edges: Sequence[tuple[str, str, str]]
) -> tuple[str, int]:
    """The text whose ``tokens_used`` is its own token count: a fixed point that a few rounds
    settle; if the count keeps moving (a digit more, a digit less) the larger one is kept, so
    the text never claims fewer tokens than it takes."""
    chars = frame.limits.chars_per_token
    used = frame.tokens_used
    for attempt in range(_FIXED_POINT_ROUNDS):
        text = _render(dataclasses.replace(frame, tokens_used=used), fmt, symbols, edges)
        counted = tokens_of(text, chars)
        if counted == used or (attempt > 0 and counted < used):
            return text, used
        used = counted if attempt == 0 else max(counted, used)
    text = _render(dataclasses.replace(frame, tokens_used=used), fmt, symbols, edges)
    return text, max(used, tokens_of(text, chars))


def _limits_of(pack: Pack, limits: RenderLimits | None) -> RenderLimits:
    """The render limits with the characters per token the pack was costed with."""
    chosen = limits_or_default(limits)
    recorded = pack.params.get("pack")
    value = recorded.get("chars_per_token") if isinstance(recorded, Mapping) else None
    if isinstance(value, (int, float)) and value > 0 and value != chosen.chars_per_token:
        return dataclasses.replace(chosen, chars_per_token=float(value))
    return chosen


def render_pack(
    pack: Pack, fmt: str, *, replay_command: str | None = None, limits: RenderLimits | None = None
) -> str:
    """The whole pack as ``fmt`` (one of ``FORMATS``), fitted to its budget (``fit_pack``);
    ``UsageError`` for any other format."""
    _check_format(fmt)
    chosen = _limits_of(pack, limits)
    fitted = fit_pack(pack, fmt, replay_command=replay_command, limits=chosen)
    frame = frame_of(fitted, replay_command, chosen)
    text, _ = _render_counted(frame, fmt, ordered_symbols(fitted.symbols), fitted.edges)
    return text


def _measure(pack: Pack, fmt: str, replay_command: str | None, limits: RenderLimits) -> int:
    frame = frame_of(pack, replay_command, limits)
    _, used = _render_counted(frame, fmt, ordered_symbols(pack.symbols), pack.edges)
    return used


def fit_pack(
    pack: Pack, fmt: str, *, replay_command: str | None = None, limits: RenderLimits | None = None
) -> Pack:
    """``pack`` itself when its rendering in ``fmt`` fits ``token_budget``; otherwise a copy cut
    to fit (module docstring), with ``tokens_used`` of that rendering."""
    chosen = _limits_of(pack, limits)
    used = _measure(pack, fmt, replay_command, chosen)
    if used <= pack.token_budget:
        return dataclasses.replace(pack, tokens_used=used)
    fitted = dataclasses.replace(pack, symbols=list(pack.symbols), dropped=list(pack.dropped))
    if fitted.summary is not None:
        fitted.summary = dataclasses.replace(fitted.summary)
    for step in (_drop_others, _cut_summary, _brief_changed, _leave_out_changed):
        while used > fitted.token_budget and step(fitted, used - fitted.token_budget, fmt, chosen):
            used = _measure(fitted, fmt, replay_command, chosen)
    fitted.tokens_used = used
    return fitted


def _excess_entries(symbols: Sequence[ScoredSymbol], excess: int, fmt: str, limits: RenderLimits) -> int:
    """How many entries from the end of ``symbols`` cover ``excess`` tokens (at least one)."""
    covered, count = 0, 0
    for sym in reversed(symbols):
        covered += math.ceil(len(entry_text(sym, fmt, limits=limits)) / limits.chars_per_token)
        count += 1
        if covered >= excess:
            break
    return max(count, 1)


def _drop_others(pack: Pack, excess: int, fmt: str, limits: RenderLimits) -> bool:
    ordered = ordered_symbols(pack.symbols)
    others = [s for s in ordered if s.reason != "changed"]
    if not others:
        return False
    cut = set(id(s) for s in others[-_excess_entries(others, excess, fmt, limits) :])
    pack.symbols = [s for s in ordered if id(s) not in cut]
    pack.dropped += [(s.node.id, "budget") for s in others if id(s) in cut]
    kept = {s.node.id for s in pack.symbols}
    pack.edges = [e for e in pack.edges if e[0] in kept and e[1] in kept]
    return True


def _cut_summary(pack: Pack, excess: int, fmt: str, limits: RenderLimits) -> bool:
    """Fewer call sites (JSON and XML: only the call sites' own entries; every test, removed
    symbol and call site's place stays named, ``fit_summary``), markdown also fewer tests and
    removed symbols, the longest list first."""
    summary = pack.summary
    whole_lists = fmt != "markdown"
    if summary is None:
        return False
    drop = max(1, math.ceil(excess * limits.chars_per_token / 80))
    sites, tests, removed = list(summary.call_sites), list(summary.tests), list(summary.removed)
    while drop > 0:
        sizes = (len(sites), 0 if whole_lists else len(tests), 0 if whole_lists else len(removed))
        if not any(sizes):
            break
        if sizes[0] == max(sizes):
            sites.pop()
        elif sizes[1] == max(sizes):
            tests.pop()
        else:
            removed.pop()
        drop -= 1
    if (len(summary.call_sites), len(summary.tests), len(summary.removed)) == (
        len(sites),
        len(tests),
        len(removed),
    ):
        return False
    pack.summary = dataclasses.replace(summary, call_sites=sites, tests=tests, removed=removed)
    return True


def _brief_changed(pack: Pack, excess: int, fmt: str, limits: RenderLimits) -> bool:
    ordered = ordered_symbols(pack.symbols)
    full = [s for s in ordered if s.reason == "changed" and not s.brief]
    if not full:
        return False
    count = _excess_entries(full, excess, fmt, limits)
    briefed = {id(s) for s in full[-count:]}
    pack.symbols = [dataclasses.replace(s, brief=True) if id(s) in briefed else s for s in ordered]
    return True


def _leave_out_changed(pack: Pack, excess: int, fmt: str, limits: RenderLimits) -> bool:
    ordered = ordered_symbols(pack.symbols)
    changed = [s for s in ordered if s.reason == "changed"]
    if len(changed) <= 1:
        return False  # the best of the change's own symbols stays, in a line at least
    count = min(_excess_entries(changed, excess, fmt, limits), len(changed) - 1)
    out = changed[-count:]
    gone = {id(s) for s in out}
    pack.symbols = [s for s in ordered if id(s) not in gone]
    summary = pack.summary if pack.summary is not None else ChangeSummary()
    named = [left_out_item(s.node) for s in out]
    pack.summary = dataclasses.replace(
        summary,
        changed_left_out=[*named, *summary.changed_left_out],
        changed_left_out_count=summary.changed_left_out_count + len(out),
    )
    kept = {s.node.id for s in pack.symbols}
    pack.edges = [e for e in pack.edges if e[0] in kept and e[1] in kept]
    return True


def frame_cost(
    fmt: str,
    *,
    mode: str,
    token_budget: int,
    inputs: Mapping[str, object],
    graph_root: str | None = None,
    commit: str | None = None,
    params: Mapping[str, object] | None = None,
    cochange: Sequence[tuple[str, int, int]] = (),
    replay_command: str | None = None,
    chars_per_token: float = 4.0,
    limits: RenderLimits | None = None,
    summary: ChangeSummary | None = None,
    files: Sequence[RankedFile] = (),
) -> int:
    """Tokens of everything in ``fmt``'s output that is not a symbol entry, at most.

    Pass the values the pack will carry; ``graph_root``/``commit`` left as ``None`` are
    assumed 64 characters long. Counts not known yet are assumed 19 digits long.
    """
    _check_format(fmt)
    chosen = limits_or_default(limits)
    if chosen.chars_per_token != chars_per_token:  # the edge reserve is counted in these characters
        chosen = dataclasses.replace(chosen, chars_per_token=chars_per_token)
    frame = worst_frame(
        mode=mode,
        token_budget=token_budget,
        inputs=inputs,
        graph_root=graph_root,
        commit=commit,
        params=params,
        cochange=cochange,
        replay_command=replay_command,
        limits=chosen,
        summary=summary,
        files=files,
    )
    return math.ceil(len(_render(frame, fmt, [], [], worst=True)) / chars_per_token)
