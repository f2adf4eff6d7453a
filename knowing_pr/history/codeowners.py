"""A CODEOWNERS file's text → its rules → the owners of a path (pure: the caller reads the file
from the base commit, never from the work tree or the pull request's version).

GitHub's rules, as documented for CODEOWNERS: one rule per line, a gitignore-style pattern then
owners (``@user``, ``@org/team`` or an e-mail address); ``#`` starts a comment; the LAST rule
whose pattern matches a path decides its owners, and a matching rule without owners leaves the
path unowned. Patterns: a leading ``/`` anchors at the root, as does a ``/`` inside the pattern;
a pattern without one matches at any depth; a trailing ``/`` matches everything below a
directory; ``*`` is any run inside one path segment, ``**`` any run across segments, ``?`` one
character; a pattern whose last segment has no wildcard also matches everything below it
(``docs`` and ``/docs`` own ``docs/a/b.md``; ``docs/*`` owns ``docs/a.md`` but not
``docs/a/b.md``). Teams are kept as their names (nothing asks GitHub who is in them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from knowing_pr.globs import bounded_glob

__all__ = ["CODEOWNERS_PATHS", "CodeOwners", "OwnerRule", "parse_codeowners"]

#: the directories GitHub looks in, in this order ("" is the root); the first file found is used
CODEOWNERS_DIRECTORIES = (".github", "", "docs")
CODEOWNERS_PATHS = tuple(f"{d}/CODEOWNERS" if d else "CODEOWNERS" for d in CODEOWNERS_DIRECTORIES)
#: rules read at most (GitHub refuses files over 3 MB; a rule is a line)
MAX_RULES = 10_000
MAX_OWNERS_PER_RULE = 50
_OWNER = re.compile(r"^@[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9._-]+)?$|^[^@\s]+@[^@\s]+$")


@dataclass(frozen=True, slots=True)
class OwnerRule:
    """One line of the file: its pattern (as written), the compiled pattern, its owners."""

    pattern: str
    regex: re.Pattern[str]
    owners: tuple[str, ...]
    line: int


@dataclass(frozen=True)
class CodeOwners:
    """The rules of one CODEOWNERS file, in file order."""

    path: str
    rules: tuple[OwnerRule, ...]

    def owners_of(self, path: str) -> tuple[str, ...]:
        """The owners the last matching rule names (``()``: unowned)."""
        for rule in reversed(self.rules):
            if rule.regex.fullmatch(path):
                return rule.owners
        return ()


def parse_codeowners(text: str, path: str = "CODEOWNERS") -> CodeOwners:
    """The rules of a CODEOWNERS text; a line whose pattern cannot be read is skipped (GitHub
    skips it too and shows an error on the file), so is an owner that is not a user, a team or an
    e-mail address."""
    rules: list[OwnerRule] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        words = _words(raw)
        if not words:
            continue
        regex = _pattern_regex(words[0])
        if regex is None:
            continue
        owners = tuple(w for w in words[1:] if _OWNER.match(w))[:MAX_OWNERS_PER_RULE]
        rules.append(OwnerRule(words[0], regex, owners, number))
        if len(rules) >= MAX_RULES:
            break
    return CodeOwners(path, tuple(rules))


def _words(line: str) -> list[str]:
    """A line's words up to its comment (``\\#`` is a literal ``#``, ``\\ `` a literal space)."""
    words: list[str] = []
    current: list[str] = []
    escaped = False
    for char in line:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "#":
            break
        elif char.isspace():
            if current:
                words.append("".join(current))
                current = []
        else:
            current.append(char)
    if current:
        words.append("".join(current))
    return words


def _pattern_regex(pattern: str) -> re.Pattern[str] | None:
    if pattern.startswith("!") or "[" in pattern:
        return None  # negation and character ranges are not supported by GitHub
    if not bounded_glob(pattern):
        return None  # hostile text: its regular expression could backtrack for ages
    directory = pattern.endswith("/")
    body = pattern.strip("/")
    if not body:
        return None if not pattern else re.compile(".*")  # "/" owns everything
    anchored = pattern.startswith("/") or "/" in body
    segments = [
        s for i, s in enumerate(body.split("/")) if not (s == "**" and body.split("/")[i - 1 : i] == ["**"])
    ]
    regex = "" if anchored else "(?:[^/]*/)*"
    regex += _segments_regex(segments)
    if directory or not any(c in segments[-1] for c in "*?"):
        regex += "(?:/.*)?" if not directory else "/.*"
    try:
        return re.compile(regex, re.DOTALL)
    except re.error:
        return None


def _segments_regex(segments: Sequence[str]) -> str:
    parts: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":  # any directories: each step ends at a "/", one way to read a path
            parts.append(".*" if last else "(?:[^/]*/)*")
            continue
        text = "".join(
            "[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char) for char in segment
        )
        parts.append(text if last else text + "/")
    return "".join(parts)
