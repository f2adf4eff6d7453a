"""Suggested reviewers → one markdown line, JSON objects, XML elements, the Action's output text.

A reviewer's name and reason are the repository's text (commit authors, CODEOWNERS, symbol and
file names): markdown shows them through ``safety.plain`` (a name that reads as a mention, an
e-mail address or a link is put in a code span, so it notifies nobody), the Action's output and
the log through ``visible``. An @-mention is written only where the repository's settings opt in
(``reviewers.mention``) and the GitHub login is known; a login is checked against GitHub's
characters first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from knowing_pr.model import Reviewer
from knowing_pr.render.safety import plain
from knowing_pr.visible import visible

__all__ = [
    "markdown_reviewers",
    "mentions_allowed",
    "reviewer_json",
    "reviewers_output",
]

NAME_BYTES = 80
REASON_BYTES = 160
_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:/[A-Za-z0-9._-]{1,100})?$")


def mentions_allowed(params: Mapping[str, object]) -> bool:
    """Whether the pack's settings (``reviewers.mention``) opt in to @-mentions."""
    section = params.get("reviewers")
    return isinstance(section, Mapping) and section.get("mention") is True


def _who(reviewer: Reviewer, mention: bool) -> str:
    if mention and reviewer.login and _LOGIN.match(reviewer.login):
        return "@" + reviewer.login
    return plain(reviewer.name, NAME_BYTES) or plain(reviewer.key, NAME_BYTES)


def markdown_reviewers(reviewers: Sequence[Reviewer], mention: bool) -> str:
    """``**Suggested reviewers**: Ann (changed charge 4 times, last in 2026-03); …`` (one line),
    or ``""`` when there is nobody to suggest."""
    if not reviewers:
        return ""
    parts = [
        _who(r, mention) + (f" ({plain(r.reason, REASON_BYTES)})" if r.reason else "") for r in reviewers
    ]
    return "**Suggested reviewers**: " + "; ".join(parts) + "\n"


def reviewer_json(reviewer: Reviewer) -> dict[str, Any]:
    """The JSON contract's object: name, key, reason, score, evidence."""
    return {
        "name": reviewer.name,
        "key": reviewer.key,
        "reason": reviewer.reason,
        "score": reviewer.score,
        "evidence": list(reviewer.evidence),
    }


def reviewers_output(reviewers: Sequence[Reviewer]) -> str:
    """The Action's ``reviewers`` output: one ``name <key>: reason`` line per reviewer, every
    invisible or control character shown as an escape."""
    return "\n".join(
        visible(f"{r.name} <{r.key}>: {r.reason}" if r.reason else f"{r.name} <{r.key}>") for r in reviewers
    )
