"""A key → a value built once per process: what a long-lived process (the MCP server, a test
run) reuses between rankings of the same graph. Keys always name the store state the value was
read from (``store_state``: the graph root alone misses a run that rewrote the mined history)
and every other input of the value, so a hit returns exactly what a fresh build would.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

from knowing_pr.store import Store

__all__ = ["Memo", "store_state"]

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


def store_state(store: Store) -> tuple[str | None, str | None, str | None]:
    """What a key names of the store: its graph root, its commit, and the index run that wrote it
    last (its report, timings included, is new for every run that writes): a run that rewrites
    the mined history or the co-change edges may keep the graph root and even the commit."""
    return (store.graph_root, store.indexed_commit, store.get_meta("last_run"))
