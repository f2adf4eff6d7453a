"""A revision from outside (a workflow input, an event payload, an MCP argument, the command line)
→ the reason it is not one, or None.

A revision is a commit id, a ref name or an expression on them (``HEAD~2``, ``main^``,
``origin/main``, ``@{u}``). Whatever the source, it never starts with ``-`` (git would read it
as an option: a base of ``--upload-pack=CMD`` runs CMD on ``git fetch``), never holds
whitespace or control characters, and is short. Callers raise their own error with the reason,
and still pass ``--end-of-options`` to every git command line that takes one.
"""

from __future__ import annotations

__all__ = ["MAX_REVISION_CHARS", "revision_problem"]

#: longer than any ref name or commit id a person or an event names
MAX_REVISION_CHARS = 256


def revision_problem(value: object) -> str | None:
    """Why ``value`` is not a revision (a short phrase), or None when it may be one."""
    if not isinstance(value, str):
        return f"a revision is text, not {type(value).__name__}"
    if not value:
        return "the revision is empty"
    if len(value) > MAX_REVISION_CHARS:
        return f"a revision is at most {MAX_REVISION_CHARS} characters"
    if value.startswith("-"):
        return "a revision never starts with '-' (it would be read as an option)"
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in value):
        return "a revision holds no whitespace or control characters"
    return None
