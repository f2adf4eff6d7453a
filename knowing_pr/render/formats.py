"""Pack | frame values + format name → text and its token costs, for each of ``FORMATS``.

The one place that picks a renderer by format name: ``render_pack`` for a whole pack,
``entry_text``/``entry_cost`` for one symbol's entry, ``frame_cost`` for everything else
at its worst case (see the package docstring for the invariant that ties them together).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from knowing_pr.errors import UsageError
from knowing_pr.model import Pack, RankedFile, ScoredSymbol
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

FORMATS = ("markdown", "json", "xml")


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


def render_pack(
    pack: Pack, fmt: str, *, replay_command: str | None = None, limits: RenderLimits | None = None
) -> str:
    """The whole pack as ``fmt`` (one of ``FORMATS``); ``UsageError`` for any other format."""
    _check_format(fmt)
    frame = frame_of(pack, replay_command, limits_or_default(limits))
    return _render(frame, fmt, ordered_symbols(pack.symbols), pack.edges)


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
    files: Sequence[RankedFile] = (),
) -> int:
    """Tokens of everything in ``fmt``'s output that is not a symbol entry, at most.

    Pass the values the pack will carry; ``graph_root``/``commit`` left as ``None`` are
    assumed 64 characters long. Counts not known yet are assumed 19 digits long.
    """
    _check_format(fmt)
    frame = worst_frame(
        mode=mode,
        token_budget=token_budget,
        inputs=inputs,
        graph_root=graph_root,
        commit=commit,
        params=params,
        cochange=cochange,
        replay_command=replay_command,
        limits=limits_or_default(limits),
        files=files,
    )
    return math.ceil(len(_render(frame, fmt, [], [], worst=True)) / chars_per_token)
