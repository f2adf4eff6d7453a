"""Whether a glob written in the repository (a test runner's ``include``, a CODEOWNERS pattern)
may be turned into a regular expression: only shapes whose match cannot backtrack for long.

Python's ``re`` backtracks: ``*a*a*a…b`` against a long name tries every way of splitting it
(polynomial in the name's length, of the degree the stars give), ``+(+(a))b`` or ``+(a|aa)b``
every way of repeating (exponential). Repository text chooses both the patterns and the paths,
so a pattern is read only when

- it is at most ``MAX_GLOB_CHARS`` characters;
- each ``/``-separated segment holds at most ``MAX_STARS_PER_SEGMENT`` single stars (stars in
  different segments are separated by a ``/`` the expression must meet, so they do not multiply);
- it holds at most ``MAX_DOUBLE_STARS`` ``**``, each a whole segment (``a/**/b``; a ``**`` inside
  a name, ``x**a``, crosses ``/`` where the stars around it do not, and multiplies with them);
- no group (``(``, ``{``) opens inside another;
- a repeated extglob (``+(…)``, ``*(…)``) holds literal alternatives only, none the start of
  another (``+(spec|test)``: one way to read any repetition).

A glob outside these reads as one the caller does not follow (it binds, or owns, nothing).
"""

from __future__ import annotations

__all__ = ["MAX_DOUBLE_STARS", "MAX_GLOB_CHARS", "MAX_STARS_PER_SEGMENT", "bounded_glob"]

MAX_GLOB_CHARS = 256
MAX_STARS_PER_SEGMENT = 2
MAX_DOUBLE_STARS = 2

#: characters that make a repeated extglob's alternative more than a literal
_NOT_LITERAL = frozenset("*?[](){}@+!|,")


def bounded_glob(glob: str) -> bool:
    """Whether ``glob`` has one of the shapes the module docstring allows."""
    if len(glob) > MAX_GLOB_CHARS or glob.count("**") > MAX_DOUBLE_STARS:
        return False
    for segment in glob.split("/"):
        if "**" in segment and segment != "**":
            return False
        if segment != "**" and segment.count("*") > MAX_STARS_PER_SEGMENT:
            return False
    return _groups_bounded(glob)


def _groups_bounded(glob: str) -> bool:
    depth = 0
    index = 0
    while index < len(glob):
        char = glob[index]
        opens_extglob = char in "?*+@!" and glob[index + 1 : index + 2] == "("
        if opens_extglob or char == "{":
            if depth > 0:
                return False  # a group inside a group
            start = index + (2 if opens_extglob else 1)
            end = glob.find(")" if opens_extglob else "}", start)
            if end < 0:
                return False
            if opens_extglob and char in "+*" and not _repeatable(glob[start:end]):
                return False
            depth += 1
            index = start
            continue
        if char in ")}":
            depth = max(depth - 1, 0)
        index += 1
    return True


def _repeatable(body: str) -> bool:
    """A repeated group's body: literal alternatives, none a prefix of another."""
    alternatives = body.split("|")
    if any(not a or _NOT_LITERAL & set(a) for a in alternatives):
        return False
    return not any(a != b and b.startswith(a) for a in alternatives for b in alternatives)
