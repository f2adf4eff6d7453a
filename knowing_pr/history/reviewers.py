"""Who changed a change's code before (touches) + CODEOWNERS → at most a few suggested reviewers,
each with the reason in a few words (pure: ``pipeline/reviewers.py`` gathers the touches).

A **touch** is one commit of one person on one subject: the lines of a changed symbol it last
changed at the base (git blame: kind ``lines``), a changed file it changed (the mined history:
``file``), a file calling the change it changed (``caller``). A person's score is the sum over
their distinct touches of ``weight[kind] · 2^(-age / half_life)``, the age measured back from the
newest touch (never from the wall clock: the same inputs give the same score), plus
``weight_owner`` times the share of the changed files CODEOWNERS gives them. The best
``max_reviewers`` by score (then by key) are suggested.

People are identified by their e-mail address, lowercased (after the repository's mailmap), and
shown by the newest name they wrote. Left out: the change's own authors (the PR's author, the
commits of the change), bots (a name ending in ``[bot]`` or ``-bot``, a GitHub bot's noreply
address), and the touches of mass edits (commits in ``.git-blame-ignore-revs``, commits that
changed more than ``max_files_per_commit`` files: the caller drops those).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from knowing_pr.config import ReviewerParams
from knowing_pr.history.codeowners import CodeOwners
from knowing_pr.model import Reviewer

__all__ = [
    "Touch",
    "github_login",
    "ignored_revisions",
    "is_bot",
    "person_key",
    "suggest_reviewers",
]

SECONDS_PER_DAY = 86_400
#: a name, and a subject in a reason, longer than this is cut (with "…"): commit authors and
#: paths are the repository's text, and a pack's budget counts them
MAX_TEXT_CHARS = 200
#: a touch's kind → the words its reason uses
_KINDS = ("lines", "file", "caller")
_NOREPLY = re.compile(r"^(?:\d+\+)?([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)@users\.noreply\.github\.com$")
_BOT_NAME = re.compile(r"(\[bot\]|[-_ ]bot)$")
_HEX40 = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True, slots=True)
class Touch:
    """One commit of one person on one subject (a symbol's name, or a path)."""

    key: str
    name: str
    sha: str
    time: int
    kind: str
    subject: str
    #: for ``lines``: the path of the symbol
    path: str = ""


def person_key(name: str, email: str) -> str:
    """The stable key of a person: the e-mail address lowercased (the name when there is none)."""
    email = email.strip().lower()
    return email if email else "name:" + " ".join(name.split()).lower()


def github_login(email: str) -> str | None:
    """The GitHub login a noreply address names (``123+login@users.noreply.github.com``)."""
    match = _NOREPLY.match(email.strip().lower())
    return match.group(1) if match else None


def is_bot(name: str, email: str) -> bool:
    """A bot's commit: the name ends in ``[bot]`` or ``-bot``, or a GitHub bot's noreply address."""
    lowered_name = name.strip().lower()
    lowered_email = email.strip().lower()
    if _BOT_NAME.search(lowered_name):
        return True
    local, _, domain = lowered_email.partition("@")
    if "[bot]" in local or local.endswith("-bot"):
        return True
    return local.endswith("bot") and "noreply" in domain


def ignored_revisions(text: str | None) -> frozenset[str]:
    """The full commit ids a ``.git-blame-ignore-revs`` text lists (comments and others skipped)."""
    if not text:
        return frozenset()
    found = set()
    for line in text.splitlines():
        word = line.split("#", 1)[0].strip().lower()
        if _HEX40.match(word):
            found.add(word)
    return frozenset(found)


def suggest_reviewers(
    touches: Iterable[Touch],
    params: ReviewerParams,
    *,
    changed_paths: Sequence[str] = (),
    owners: CodeOwners | None = None,
    excluded: Collection[str] = (),
) -> list[Reviewer]:
    """The best ``params.max_reviewers`` people to review, best first (see the module docstring).
    ``excluded``: keys, names or GitHub logins of people who cannot review (lowercased here)."""
    skip = {word.strip().lower().removeprefix("@") for word in excluded if word.strip()}
    distinct = {(t.key, t.sha, t.kind, t.subject): t for t in touches if not _skipped(t.key, t.name, skip)}
    people: dict[str, list[Touch]] = {}
    for touch in sorted(distinct.values(), key=lambda t: (t.key, -t.time, t.sha, t.kind, t.subject)):
        people.setdefault(touch.key, []).append(touch)
    newest = max((t.time for t in distinct.values()), default=0)
    scores = {key: _history_score(found, newest, params) for key, found in people.items()}
    names = {key: found[0].name for key, found in people.items()}  # the newest name
    owned = _owned(owners, changed_paths, skip, names)
    for key, (share, _, _) in owned.items():
        scores[key] = scores.get(key, 0.0) + params.weight_owner * share
        names.setdefault(key, _owner_name(key))
    ranked = sorted(scores, key=lambda key: (-round(scores[key], 9), key))
    return [
        _reviewer(key, names[key], scores[key], people.get(key, []), owned.get(key))
        for key in ranked[: params.max_reviewers]
        if scores[key] > 0
    ]


def _skipped(key: str, name: str, skip: Collection[str]) -> bool:
    if is_bot(name, key):
        return True
    login = github_login(key)
    return key in skip or " ".join(name.split()).lower() in skip or (login is not None and login in skip)


def _history_score(touches: Sequence[Touch], newest: int, params: ReviewerParams) -> float:
    half_life_s = params.half_life_days * SECONDS_PER_DAY
    weights = {"lines": params.weight_lines, "file": params.weight_file, "caller": params.weight_caller}
    return math.fsum(
        weights.get(t.kind, 0.0) * math.pow(2.0, -max(newest - t.time, 0) / half_life_s) for t in touches
    )


def _owned(
    owners: CodeOwners | None, changed_paths: Sequence[str], skip: Collection[str], names: Mapping[str, str]
) -> dict[str, tuple[float, str, int]]:
    """Person key → (share of the changed files owned, the first one owned, how many)."""
    if owners is None or not changed_paths:
        return {}
    logins = {login: key for key in names if (login := github_login(key)) is not None}
    found: dict[str, tuple[float, str, int]] = {}
    for path in sorted(changed_paths):
        for owner in owners.owners_of(path):
            lowered = owner.lower()
            if lowered.removeprefix("@") in skip or is_bot(owner, ""):
                continue
            key = logins.get(lowered.removeprefix("@"), lowered)
            _, first, count = found.get(key, (0.0, path, 0))
            found[key] = (0.0, first, count + 1)
    total = len(changed_paths)
    return {key: (count / total, first, count) for key, (_, first, count) in found.items()}


def _owner_name(key: str) -> str:
    """An owner known only from CODEOWNERS: its handle without the ``@`` (or its e-mail address)."""
    return key.removeprefix("@")


def _reviewer(
    key: str, name: str, score: float, touches: Sequence[Touch], owned: tuple[float, str, int] | None
) -> Reviewer:
    evidence = _evidence(touches)
    if owned is not None:
        _, first, count = owned
        more = f" and {count - 1} more changed file{'s' if count > 2 else ''}" if count > 1 else ""
        evidence.append(f"code owner of {_capped(first)}{more}")
    handle = key if key.startswith("@") else github_login(key)
    return Reviewer(
        name=_capped(name),
        key=key,
        reason=evidence[0] if evidence else "",
        score=round(score, 6),
        evidence=tuple(evidence),
        login=handle.removeprefix("@") if handle else None,
    )


def _evidence(touches: Sequence[Touch]) -> list[str]:
    """One sentence per subject, the subject with the most distinct commits first (a symbol
    before a file, a changed file before a caller at a tie, then the newest): "changed charge 4
    times, last in 2026-03"."""
    by_subject: dict[str, list[Touch]] = {}
    for touch in touches:
        by_subject.setdefault(touch.subject, []).append(touch)

    def best_kind(found: Sequence[Touch]) -> int:
        return min(_KINDS.index(t.kind) if t.kind in _KINDS else len(_KINDS) for t in found)

    order = sorted(
        by_subject.items(),
        key=lambda item: (
            -len({t.sha for t in item[1]}),
            best_kind(item[1]),
            -max(t.time for t in item[1]),
            item[0],
        ),
    )
    out = []
    for subject, found in order[:3]:
        commits = len({t.sha for t in found})
        month = time.strftime("%Y-%m", time.gmtime(max(t.time for t in found)))
        times = "once" if commits == 1 else f"{commits} times"
        where = " (calls the change)" if all(t.kind == "caller" for t in found) else ""
        out.append(f"changed {_capped(subject)}{where} {times}, last in {month}")
    return out


def _capped(text: str) -> str:
    return text if len(text) <= MAX_TEXT_CHARS else text[: MAX_TEXT_CHARS - 1] + "…"
