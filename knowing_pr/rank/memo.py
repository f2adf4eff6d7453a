"""A key → a value built once per process: what a long-lived process (the MCP server, a test
run) reuses between rankings of the same graph. Keys always name the store state the value was
read from (the graph root, a Merkle root of the files' symbols and edges; and, for a value that
the mined history shapes too, such as the co-change edges, the commit and the index run that
wrote it) and every input of the value, so a hit returns exactly what a fresh build would.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

__all__ = ["Memo"]

V = TypeVar("V")


class Memo:
    """The ``capacity`` most recently used values, by key."""

    def __init__(self, capacity: int = 2) -> None:
        self.capacity = capacity
        self._values: OrderedDict[Hashable, object] = OrderedDict()

    def get(self, key: Hashable, build: Callable[[], V]) -> V:
        if key in self._values:
            self._values.move_to_end(key)
            return self._values[key]  # type: ignore[return-value]
        value = build()
        self._values[key] = value
        while len(self._values) > self.capacity:
            self._values.popitem(last=False)
        return value

    def clear(self) -> None:
        self._values.clear()
