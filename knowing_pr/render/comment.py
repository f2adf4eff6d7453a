"""Pack → the sticky PR comment: the markdown pack as a comment, in at most ``max_bytes`` UTF-8 bytes.

The comment is the markdown pack with its hidden lines first (``hidden_lines``: the one place for
machine-readable metadata a comment carries), "this PR" wording and the comment's shorter lists
(related symbols capped, those of the changed files counted, not listed). When the body is too
big, the diagram goes first, then the lowest-ranked entries that are not the change's own, whole,
with a note saying so.

The pack's request rides along in one hidden line (``request_line`` / ``read_request_lines``,
the last section of this module), so ``knowing-pr replay PACKROOT --pr N`` can rebuild the
pack in any clone.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from typing import Any

from knowing_pr.errors import UsageError
from knowing_pr.model import Pack
from knowing_pr.render.frame import RenderLimits, frame_of, limits_or_default, ordered_symbols
from knowing_pr.render.markdown import markdown_entry, plural, render_markdown

__all__ = [
    "COMMENT_MARKER",
    "MAX_REQUEST_LINE_BYTES",
    "hidden_lines",
    "read_request_lines",
    "render_comment",
    "request_line",
    "with_request_line",
]

COMMENT_MARKER = "<!-- knowing-pr -->"
_HEX = re.compile(r"[^0-9a-f]")


def hidden_lines(pack: Pack) -> list[str]:
    """The comment's hidden lines, in order: the marker that finds the comment again, the
    PackRoot in full. Add any other machine-readable line here (an HTML comment, one line)."""
    return [COMMENT_MARKER, f"<!-- knowing-pr:pack-root={_HEX.sub('', pack.pack_root)} -->"]


def _cut_note(cut: int, diagram_dropped: bool) -> str:
    parts = []
    if diagram_dropped:
        parts.append("The diagram was left out")
    if cut:
        parts.append(f"{plural(cut, 'lower-ranked symbol')} {'was' if cut == 1 else 'were'} cut")
    if not parts:
        return ""
    return (
        " and ".join(parts)
        + " to fit GitHub's comment limit; the full pack is in the job summary / artifact."
    )


def render_comment(
    pack: Pack,
    *,
    max_bytes: int = 65536,
    replay_command: str | None = None,
    limits: RenderLimits | None = None,
) -> str:
    """The sticky PR comment: hidden lines, the markdown pack in ≤ ``max_bytes`` bytes."""
    chosen = limits_or_default(limits)
    frame = dataclasses.replace(frame_of(pack, replay_command, chosen), comment=True)
    ordered = ordered_symbols(pack.symbols)
    # the change's own symbols are never cut: they come first, the rest by rank
    symbols = [s for s in ordered if s.reason == "changed"] + [s for s in ordered if s.reason != "changed"]
    protected = sum(s.reason == "changed" for s in symbols)
    entries = [markdown_entry(sym, chosen) for sym in symbols]
    entry_bytes = [len(entry.encode("utf-8")) for entry in entries]
    hidden = hidden_lines(pack)

    def attempt(keep: int, with_diagram: bool) -> str:
        note = _cut_note(len(symbols) - keep, diagram_dropped=not with_diagram)
        return render_markdown(
            frame,
            symbols[:keep],
            pack.edges,
            with_diagram=with_diagram,
            cut_note=note,
            entries=entries[:keep],
            hidden_lines=hidden,
        )

    if sum(entry_bytes) <= max_bytes:
        body = attempt(len(symbols), True)
        if len(body.encode("utf-8")) <= max_bytes:
            return body
    keep = len(symbols)
    excess = sum(entry_bytes) - max_bytes  # the entries alone must fit: a first cut
    while True:
        while keep > protected and excess > 0:
            keep -= 1
            excess -= entry_bytes[keep]
        body = attempt(keep, False)
        excess = len(body.encode("utf-8")) - max_bytes
        if excess <= 0:
            return body
        if keep <= protected:
            if keep == 0:
                raise UsageError(
                    f"a comment cannot fit in {max_bytes} bytes",
                    hint="allow at least a few kilobytes for the comment",
                )
            protected = 0  # the change alone is over the limit: its lowest-ranked symbols go too


# -- the hidden request line ---------------------------------------------------------------------

#: ``<!-- knowing-pr:request {…} -->``: the pack's request as one line of compact JSON
REQUEST_LINE_PREFIX = "<!-- knowing-pr:request "
REQUEST_LINE_SUFFIX = " -->"
#: a request line never grows past this; the caller drops long values to their digests first
MAX_REQUEST_LINE_BYTES = 2048
_REQUEST_LINE = re.compile(
    re.escape(REQUEST_LINE_PREFIX)
    + rf"(\{{[^\n]{{0,{MAX_REQUEST_LINE_BYTES}}}?\}})"
    + re.escape(REQUEST_LINE_SUFFIX)
)
#: escaped so that nothing in a value can close the HTML comment or open a tag (JSON reads them back)
_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def request_line(record: Mapping[str, Any]) -> str:
    """A pack's request → the hidden comment line: ASCII JSON on one line, ``<``, ``>`` and ``&``
    escaped, at most ``MAX_REQUEST_LINE_BYTES`` bytes (``ValueError`` beyond)."""
    text = json.dumps(dict(record), ensure_ascii=True, separators=(",", ":"), sort_keys=True)
    for raw, escaped in _ESCAPES.items():
        text = text.replace(raw, escaped)
    line = REQUEST_LINE_PREFIX + text + REQUEST_LINE_SUFFIX
    if len(line) > MAX_REQUEST_LINE_BYTES:
        raise ValueError(f"the request line is {len(line)} bytes, over {MAX_REQUEST_LINE_BYTES}")
    return line


def with_request_line(body: str, record: Mapping[str, Any]) -> str:
    """The comment body with the request line after it (``MAX_REQUEST_LINE_BYTES`` + 3 bytes more:
    render the body for that much less)."""
    return body.rstrip("\n") + "\n\n" + request_line(record) + "\n"


def read_request_lines(body: str) -> list[dict[str, Any]]:
    """Every well-formed request line of a comment body, as JSON objects (not yet validated: a
    comment is anyone's text)."""
    found: list[dict[str, Any]] = []
    for match in _REQUEST_LINE.finditer(body):
        if len(match.group(0)) > MAX_REQUEST_LINE_BYTES:
            continue
        try:
            data = json.loads(match.group(1))
        except ValueError:
            continue
        if isinstance(data, dict):
            found.append(data)
    return found
