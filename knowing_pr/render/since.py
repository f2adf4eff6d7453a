"""``PackComparison`` → the comment's opening section ("Since the previous push (abc1234): …"),
``knowing-pr diff`` in markdown or JSON, and the hidden line that names the pack a comment was
compared with.

Every name and path comes from a repository: each is written through ``safety.inline_code``
(markdown) or ``visible.json_visible`` (JSON). The comment's section fits in ``max_bytes``:
each list is shortened (to a count with no names, last) until it does. The hidden *since line*
(``since_line`` / ``read_since_lines``) carries the compared pack's request record in the
form of the request line (``render.comment.request_line``), so a re-run of the same push
compares with the same pack, and ``knowing-pr diff A B --pr N`` finds both packs' requests in
the comment.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from knowing_pr.diffing import PackComparison
from knowing_pr.diffing.packs import CallSiteKey, ListedTest, SymbolKey
from knowing_pr.render.comment import REQUEST_LINE_PREFIX, read_request_lines, request_line
from knowing_pr.render.markdown import plural
from knowing_pr.render.safety import inline_code, truncate_bytes
from knowing_pr.visible import json_visible

__all__ = [
    "SINCE_LINE_PREFIX",
    "comparison_json",
    "comparison_markdown",
    "read_since_lines",
    "since_line",
    "since_section",
    "since_unavailable",
    "with_since",
]

#: ``<!-- knowing-pr:since {…} -->``: the request record of the pack the comment compares with
SINCE_LINE_PREFIX = "<!-- knowing-pr:since "
#: names listed per kind before "and N more" (the comment shortens further to fit)
MAX_LISTED = 10
_NAME_BYTES = 160


def short_commit(sha: str | None) -> str:
    return (sha or "")[:7] or "unknown"


def since_section(comparison: PackComparison, previous_head: str | None, max_bytes: int) -> str:
    """The comment's opening section: one line when nothing moved, else a headline and a list
    per kind that moved, in at most ``max_bytes`` UTF-8 bytes."""
    opening = f"**Since the previous push ({inline_code(short_commit(previous_head))}):**"
    if comparison.nothing_moved:
        return truncate_bytes(f"{opening} {_NOTHING_MOVED}", max_bytes)
    for listed in (MAX_LISTED, 5, 2, 1, 0):
        text = "\n".join([f"{opening} {_headline(comparison)}", "", *_bullets(comparison, listed)])
        if len(text.encode("utf-8")) <= max_bytes:
            return text
    return truncate_bytes(f"{opening} {_headline(comparison)}", max_bytes)


def since_unavailable(previous_head: str | None, reason: str) -> str:
    """The one honest line when the previous push's pack cannot be compared (``reason`` is ours,
    not a repository's: it is written as is)."""
    return f"**Since the previous push:** {inline_code(short_commit(previous_head))} {reason}"


def comparison_markdown(comparison: PackComparison) -> str:
    """``knowing-pr diff`` in markdown: one line when nothing moved, else a list per kind."""
    before = f"{inline_code(comparison.before_root[:12])} (commit {inline_code(short_commit(comparison.before_commit))})"
    after = f"{inline_code(comparison.after_root[:12])} (commit {inline_code(short_commit(comparison.after_commit))})"
    if comparison.nothing_moved:
        return f"From pack {before} to pack {after}: {_NOTHING_MOVED}\n"
    lines = [f"From pack {before} to pack {after}: {_headline(comparison)}", ""]
    return "\n".join([*lines, *_bullets(comparison, None)]) + "\n"


def comparison_json(comparison: PackComparison) -> str:
    """``knowing-pr diff --format json``: the exact names, invisible characters as ``\\u`` escapes."""
    return json_visible(json.dumps(comparison.as_dict(), ensure_ascii=False, indent=2, sort_keys=True)) + "\n"


_NOTHING_MOVED = (
    "nothing moved: the same symbols changed, the same call sites not updated, "
    "the same tests to run and the same co-changed files."
)


def _headline(c: PackComparison) -> str:
    counts = [
        (len(c.changed.added), "symbol", "newly changed"),
        (len(c.changed.removed), "symbol", "no longer changed"),
        (len(c.changed_again), "symbol", "changed again"),
        (len(c.not_updated.added), "call site", "newly not updated"),
        (len(c.not_updated.removed), "call site", "now updated"),
        (len(c.tests.added), "test", "added to the tests to run"),
        (len(c.tests.removed), "test", "dropped from the tests to run"),
        (len(c.coupled.added), "file", "newly co-changed"),
        (len(c.coupled.removed), "file", "no longer co-changed"),
    ]
    return ", ".join(f"{plural(n, word)} {what}" for n, word, what in counts if n) + "."


def _bullets(c: PackComparison, listed: int | None) -> list[str]:
    kinds: list[tuple[str, Sequence[str]]] = [
        ("Newly changed", [_symbol(k) for k in c.changed.added]),
        ("No longer changed", [_symbol(k) for k in c.changed.removed]),
        ("Changed again", [_symbol(k) for k in c.changed_again]),
        ("Call sites newly not updated", [_site(k) for k in c.not_updated.added]),
        ("Call sites now updated", [_site(k) for k in c.not_updated.removed]),
        ("Tests added", [_test(k) for k in c.tests.added]),
        ("Tests dropped", [_test(k) for k in c.tests.removed]),
        ("Files newly co-changed", [_code(p) for p in c.coupled.added]),
        ("Files no longer co-changed", [_code(p) for p in c.coupled.removed]),
    ]
    return [_bullet(title, items, listed) for title, items in kinds if items]


def _bullet(title: str, items: Sequence[str], listed: int | None) -> str:
    """``- Title (N):`` and one nested item per name (a run of names on one line reads as a wall
    of code spans), then ``and N more``; only ``- Title (N)`` when no name fits."""
    shown = list(items if listed is None else items[:listed])
    if not shown:
        return f"- {title} ({len(items):,})"
    more = len(items) - len(shown)
    nested = [f"  - {name}" for name in shown] + ([f"  - and {more:,} more"] if more else [])
    return "\n".join([f"- {title} ({len(items):,}):", *nested])


def _code(text: str) -> str:
    return inline_code(text, _NAME_BYTES)


def _symbol(key: SymbolKey) -> str:
    if key.name == key.path:  # a module's own code is named by its path (``render.display_name``)
        return f"{_code(key.path)} (module-level code)"
    return f"{_code(key.name)} in {_code(key.path)}"


def _site(key: CallSiteKey) -> str:
    caller = _code(key.caller) if key.caller else "module level"
    return f"{_code(key.path)} ({caller} → {_code(key.callee)})"


def _test(key: ListedTest) -> str:
    return f"{_code(key.name)} in {_code(key.path)}"


# -- the hidden since line -----------------------------------------------------------------------


def since_line(record: Mapping[str, Any]) -> str:
    """The compared pack's request record as a hidden line (``ValueError`` when it is over
    ``MAX_REQUEST_LINE_BYTES``, as ``request_line``)."""
    return SINCE_LINE_PREFIX + request_line(record)[len(REQUEST_LINE_PREFIX) :]


def read_since_lines(body: str) -> list[dict[str, Any]]:
    """The records of a comment's since lines (not yet validated: a comment is anyone's text)."""
    found: list[dict[str, Any]] = []
    for line in body.splitlines():
        if line.startswith(SINCE_LINE_PREFIX):
            found += read_request_lines(REQUEST_LINE_PREFIX + line[len(SINCE_LINE_PREFIX) :])
    return found


def with_since(body: str, section: str, record: Mapping[str, Any]) -> str:
    """The comment body opening with ``section`` (after its hidden first lines, before the
    heading) and carrying ``record`` in a since line at its end."""
    lines = body.split("\n")
    top = 0
    while top < len(lines) and lines[top].startswith("<!--") and lines[top].endswith("-->"):
        top += 1
    opened = "\n".join([*lines[:top], section, "", *lines[top:]])
    try:
        hidden = since_line(record)
    except ValueError:  # a record read from a comment fits its request line, and this one is shorter
        return opened
    return opened.rstrip("\n") + "\n\n" + hidden + "\n"
