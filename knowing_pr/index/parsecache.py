"""Parse results kept by file version, so a store that moves back to a commit it was at (an old
commit and HEAD, a branch and main) does not parse the same files again.

An incremental index run keeps each file it parsed under its path and git blob id (blob
``parsed:<blob id>:<path>``, the ``ParsedFile`` in the parse workers' JSON form, compressed),
tagged with the settings key (tool version, grammar versions, index settings: a parse of another
setting is never taken) and the order it was kept in; the newest ``KEPT_PARSES`` are kept. A
later run takes a kept result instead of parsing that version again: the same record a parse
gives (the workers' results come through the same JSON). A full index keeps none (it would
double the store for versions that may never come back).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from knowing_pr.model import ParsedFile
from knowing_pr.store import Store

__all__ = ["KEPT_PARSES", "ParseCache"]

PREFIX = "parsed:"
#: at most this many parse results are kept (a few MB; the oldest go first)
KEPT_PARSES = 4000


@dataclass
class ParseCache:
    """The kept parse results of one index run's files: ``take`` before the parse, ``collect``
    each new result, ``keep`` them inside the run's transaction."""

    store: Store
    #: path → git blob id of each file the run may parse
    blobs: Mapping[str, str]
    #: the settings key the results are valid for
    key: str
    new: dict[str, bytes] = field(default_factory=dict)
    #: how many results ``take`` found
    taken: int = 0

    def take(self, items: list[tuple[str, str, bytes]]) -> dict[str, ParsedFile]:
        """The kept results of ``items`` (path, language, bytes), by path."""
        from knowing_pr.parse.worker import decode_parsed

        found: dict[str, ParsedFile] = {}
        for path, language, _ in items:
            row = self.store.get_blob(self._name(path)) if path in self.blobs else None
            if row is None or row[0].rpartition("|")[0] != self.key:
                continue
            try:
                found[path] = decode_parsed(path, language, json.loads(zlib.decompress(row[1])))
            except (ValueError, TypeError, KeyError, zlib.error):
                continue  # a damaged entry is parsed again
        self.taken = len(found)
        return found

    def collect(self, path: str, parsed: ParsedFile) -> None:
        from knowing_pr.parse.worker import encode_parsed

        if path in self.blobs:
            text = json.dumps(encode_parsed(parsed), separators=(",", ":"))
            self.new[path] = zlib.compress(text.encode("utf-8", "surrogateescape"))

    def keep(self) -> None:
        """Write the collected results and drop the oldest beyond ``KEPT_PARSES`` (the caller's
        transaction)."""
        if not self.new:
            return
        kept = self._kept()
        order = max(kept.values(), default=0) + 1
        for path in sorted(self.new):
            self.store.put_blob(self._name(path), f"{self.key}|{order}", self.new[path])
            kept[self._name(path)] = order
        excess = len(kept) - KEPT_PARSES
        if excess > 0:
            oldest = sorted(kept, key=lambda name: (kept[name], name))[:excess]
            self.store.conn.executemany("DELETE FROM blobs WHERE name = ?", [(n,) for n in oldest])
        self.new.clear()

    def _name(self, path: str) -> str:
        return f"{PREFIX}{self.blobs[path]}:{path}"

    def _kept(self) -> dict[str, int]:
        rows = self.store.conn.execute(
            "SELECT name, tag FROM blobs WHERE name >= ? AND name < ?", (PREFIX, PREFIX[:-1] + ";")
        )
        kept: dict[str, int] = {}
        for name, tag in rows:
            order = str(tag).rpartition("|")[2]
            kept[str(name)] = int(order) if order.isdigit() else 0
        return kept
