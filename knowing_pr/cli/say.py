"""One line on stderr: the only way the command line speaks to a person besides its output."""

from __future__ import annotations

import sys

__all__ = ["say"]


def say(line: str) -> None:
    """One line on stderr; bytes of a path or argument that are not UTF-8 shown escaped (``\\udcff``)
    whatever stderr's own error handler is."""
    sys.stderr.write(line.encode("utf-8", "backslashreplace").decode("utf-8") + "\n")
