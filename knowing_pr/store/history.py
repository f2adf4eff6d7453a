"""Mined history (a ``HistoryState``) ↔ the store's tables ``hist_files`` (one row a file) and
``hist_pairs`` (one row a pair of files changed together) plus its ``history_*`` meta keys.

``save_history`` writes a state: ``replace_history`` after a full mine, ``update_history_rows``
after an incremental one (only the rows of the files it touched change); ``load_history`` reads
it back (``history_files`` and ``history_pairs``, both sorted). The caller owns the transaction.
What the numbers mean: ``knowing_pr.history``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

from knowing_pr.git import is_utf8
from knowing_pr.history import HistoryState
from knowing_pr.store.batches import chunks

if TYPE_CHECKING:
    from knowing_pr.store import Store

__all__ = [
    "HISTORY_ORIGIN",
    "META_PREFIX",
    "history_files",
    "history_pairs",
    "load_history",
    "partner_counts",
    "replace_history",
    "save_history",
    "update_history_rows",
]

#: ``edges.origin`` of the co-change edges (no file path can look like this)
HISTORY_ORIGIN = "<history>"
#: prefix of the meta keys the history keeps
META_PREFIX = "history_"


def replace_history(
    conn: sqlite3.Connection,
    files: Iterable[tuple[str, int, int, float]],
    pairs: Iterable[tuple[str, str, int, float, float]],
) -> None:
    """Make the ``hist_*`` tables exactly these rows (a full mine)."""
    conn.execute("DELETE FROM hist_files")
    conn.execute("DELETE FROM hist_pairs")
    conn.executemany("INSERT INTO hist_files(path, commits, last_time, churn) VALUES (?, ?, ?, ?)", files)
    conn.executemany("INSERT INTO hist_pairs(a, b, count, weight, sized) VALUES (?, ?, ?, ?, ?)", pairs)


def history_files(
    conn: sqlite3.Connection, paths: Collection[str] | None = None
) -> list[tuple[str, int, int, float]]:
    """(path, commits, newest commit time, recency-weighted churn) of every mined file (or of
    ``paths`` only), by path."""
    query = "SELECT path, commits, last_time, churn FROM hist_files"
    if paths is None:
        return list(conn.execute(query + " ORDER BY path"))
    return sorted(_rows_naming(conn, query, ("path",), paths))


def history_pairs(
    conn: sqlite3.Connection, paths: Collection[str] | None = None
) -> list[tuple[str, str, int, float, float]]:
    """(path a, path b, commits that changed both, their recency weight, the same weight with
    large commits counting less) of every pair (or of the pairs that involve one of ``paths``),
    by (a, b)."""
    query = "SELECT a, b, count, weight, sized FROM hist_pairs"
    if paths is None:
        return list(conn.execute(query + " ORDER BY a, b"))
    return sorted(_rows_naming(conn, query, ("a", "b"), paths))


def _rows_naming(
    conn: sqlite3.Connection, query: str, columns: Iterable[str], paths: Collection[str]
) -> set[Any]:
    """The distinct rows of ``query`` whose ``columns`` name one of ``paths`` (Python's string
    order is SQLite's BINARY order on UTF-8, so sorting them gives ``ORDER BY``'s order)."""
    found: set[Any] = set()
    storable = sorted(p for p in set(paths) if is_utf8(p))  # no other path can be in the tables
    for column in columns:
        for batch in chunks(storable):
            marks = ", ".join("?" * len(batch))
            found.update(conn.execute(f"{query} WHERE {column} IN ({marks})", batch))
    return found


def update_history_rows(
    conn: sqlite3.Connection,
    files: Iterable[tuple[str, int, int, float]],
    pairs: Iterable[tuple[str, str, int, float, float]],
    removed_files: Iterable[str],
    removed_pairs: Iterable[tuple[str, str]],
) -> None:
    """Upsert the given ``hist_*`` rows and delete the removed ones; the rest stay."""
    conn.executemany("DELETE FROM hist_files WHERE path = ?", [(p,) for p in removed_files])
    conn.executemany("DELETE FROM hist_pairs WHERE a = ? AND b = ?", list(removed_pairs))
    conn.executemany(
        "INSERT OR REPLACE INTO hist_files(path, commits, last_time, churn) VALUES (?, ?, ?, ?)", files
    )
    conn.executemany(
        "INSERT OR REPLACE INTO hist_pairs(a, b, count, weight, sized) VALUES (?, ?, ?, ?, ?)", pairs
    )


def load_history(
    store: Store, paths: Collection[str] | None = None, *, pairs_of: Collection[str] | None = None
) -> HistoryState | None:
    """The state the previous run persisted, or ``None`` when there is none (or it is unusable).

    With ``paths``, a state restricted to them: their own file rows and every pair that involves
    one of them, which is all a change's co-change lists read (``history.cochange``), at a
    fraction of the cost of reading every pair. With ``pairs_of`` (and no ``paths``): every file
    row, and only the pairs that involve one of ``pairs_of``."""
    from knowing_pr.errors import StoreError

    keys = (
        "format",
        "mined_head",
        "mined_commits",
        "reference_time",
        "half_life_days",
        "max_files_per_commit",
    )
    meta = [(key, store.get_meta(META_PREFIX + key)) for key in keys]
    if any(value is None for _, value in meta):
        return None
    try:
        return HistoryState.from_rows(
            [(k, v or "") for k, v in meta],
            store.history_files(paths),
            store.history_pairs(paths if pairs_of is None else pairs_of),
        )
    except StoreError:
        return None


def partner_counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Each file's number of partners (the pairs that name it), counted by SQLite."""
    rows = conn.execute(
        "SELECT path, SUM(n) FROM (SELECT a AS path, COUNT(*) AS n FROM hist_pairs GROUP BY a "
        "UNION ALL SELECT b, COUNT(*) FROM hist_pairs GROUP BY b) GROUP BY path"
    )
    return {str(path): int(n) for path, n in rows}


def save_history(store: Store, state: HistoryState, *, shallow: bool) -> None:
    """Persist ``state``: only the rows its ``delta`` names when it has one, else all of them."""
    delta = state.delta
    if delta is None:
        _, files, pairs = state.to_rows()
        store.replace_history(files, pairs)
    else:
        store.update_history_rows(
            [(p, s.commits, s.last_time, s.churn) for p in sorted(delta.files) for s in (state.files[p],)],
            [
                (a, b, s.count, s.weight, s.sized)
                for a, b in sorted(delta.pairs)
                for s in (state.pairs[(a, b)],)
            ],
            sorted(delta.removed_files),
            sorted(delta.removed_pairs),
        )
    for key, value in state.meta_rows():
        store.set_meta(META_PREFIX + key, value)
    store.set_meta(META_PREFIX + "shallow", "1" if shallow else "0")
