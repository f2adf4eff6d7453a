"""One line on stderr: the only way the command line speaks to a person besides its output."""

from __future__ import annotations

import sys

from knowing_pr.visible import visible

__all__ = ["say"]


def say(line: str) -> None:
    """One line on stderr. Whatever a path, an argument or a config value holds, no control
    character reaches the terminal: escape sequences, newlines, bidi and zero-width characters
    and bytes that are not UTF-8 are shown as escapes (``\\x1b``, ``\\n``, ``\\u202e``,
    ``\\udcff``), whatever stderr's own error handler is."""
    sys.stderr.write(visible(line).encode("utf-8", "backslashreplace").decode("utf-8") + "\n")
