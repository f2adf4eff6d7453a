"""A sequence of values → lists of at most ``size`` of them, so that a statement's
``IN (?, ?, …)`` list stays within SQLite's limit on bound parameters.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

__all__ = ["chunks"]

_T = TypeVar("_T")


def chunks(items: Sequence[_T], size: int = 500) -> Iterator[list[_T]]:
    listed = list(items)
    for i in range(0, len(listed), size):
        yield listed[i : i + size]
