"""Mined history rows ↔ the store's tables ``hist_files`` (one row a file) and ``hist_pairs``
(one row a pair of files changed together).

``knowing_pr.cochange`` persists its ``HistoryState`` here: ``replace_history`` after a full
mine, ``update_history_rows`` after an incremental one (only the rows of the files it touched
change), and reads it back with ``history_files`` and ``history_pairs`` (both sorted). The
caller owns the transaction. What the numbers mean: ``knowing_pr.history``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

__all__ = ["history_files", "history_pairs", "replace_history", "update_history_rows"]


def replace_history(
    conn: sqlite3.Connection,
    files: Iterable[tuple[str, int, int, float]],
    pairs: Iterable[tuple[str, str, int, float]],
) -> None:
    """Make the ``hist_*`` tables exactly these rows (a full mine)."""
    conn.execute("DELETE FROM hist_files")
    conn.execute("DELETE FROM hist_pairs")
    conn.executemany("INSERT INTO hist_files(path, commits, last_time, churn) VALUES (?, ?, ?, ?)", files)
    conn.executemany("INSERT INTO hist_pairs(a, b, count, weight) VALUES (?, ?, ?, ?)", pairs)


def history_files(conn: sqlite3.Connection) -> list[tuple[str, int, int, float]]:
    """(path, commits, newest commit time, recency-weighted churn) of every mined file, by path."""
    return list(conn.execute("SELECT path, commits, last_time, churn FROM hist_files ORDER BY path"))


def history_pairs(conn: sqlite3.Connection) -> list[tuple[str, str, int, float]]:
    """(path a, path b, commits that changed both, their recency weight) of every pair, by (a, b)."""
    return list(conn.execute("SELECT a, b, count, weight FROM hist_pairs ORDER BY a, b"))


def update_history_rows(
    conn: sqlite3.Connection,
    files: Iterable[tuple[str, int, int, float]],
    pairs: Iterable[tuple[str, str, int, float]],
    removed_files: Iterable[str],
    removed_pairs: Iterable[tuple[str, str]],
) -> None:
    """Upsert the given ``hist_*`` rows and delete the removed ones; the rest stay."""
    conn.executemany("DELETE FROM hist_files WHERE path = ?", [(p,) for p in removed_files])
    conn.executemany("DELETE FROM hist_pairs WHERE a = ? AND b = ?", list(removed_pairs))
    conn.executemany(
        "INSERT OR REPLACE INTO hist_files(path, commits, last_time, churn) VALUES (?, ?, ?, ?)", files
    )
    conn.executemany("INSERT OR REPLACE INTO hist_pairs(a, b, count, weight) VALUES (?, ?, ?, ?)", pairs)
