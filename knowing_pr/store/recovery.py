"""A store file (or an exception raised while using it) → whether it is damaged, and the file
moved aside so that the caller can rebuild it.

``looks_like_sqlite`` and ``file_state`` look at the file before SQLite opens it (a damaged
header; what the file was when this tool last wrote it), ``check_quick`` and
``integrity_problems`` ask SQLite, ``is_damage`` tells damage from a full disk, a lock, a
read-only file or a bug, and ``move_aside`` renames the file and its ``-wal``/``-shm``
(``opening.py`` opens a store and replaces a damaged one with it).
"""

from __future__ import annotations

import os
import sqlite3
import time
import zlib
from pathlib import Path

from knowing_pr.errors import StoreCorrupt

__all__ = [
    "check_quick",
    "file_state",
    "integrity_problems",
    "is_damage",
    "looks_like_sqlite",
    "move_aside",
]


def move_aside(db_path: Path) -> Path:
    """Move a corrupt store (and its -wal/-shm) out of the way; returns the new name."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    target = db_path.with_name(f"{db_path.name}.corrupt-{stamp}-{os.getpid()}")
    for suffix in ("", "-wal", "-shm"):
        src = Path(str(db_path) + suffix)
        if src.exists():
            src.replace(Path(str(target) + suffix))
    return target


def is_damage(exc: BaseException) -> bool:
    """Whether an exception means the store file is damaged (as opposed to full, locked,
    read-only or a bug): the caller then moves the file aside and rebuilds."""
    if isinstance(exc, StoreCorrupt):
        return True
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc)
        return any(sign in text for sign in ("malformed", "corrupt", "Could not decode", "not a database"))
    # a flipped byte inside a compressed reference blob surfaces as zlib.error
    return isinstance(exc, (sqlite3.DatabaseError, zlib.error))


def file_state(db_path: Path) -> str:
    """Size, mtime and inode of the database file and its WAL ("-" when absent)."""
    parts = []
    for suffix in ("", "-wal"):
        try:
            info = os.stat(str(db_path) + suffix)
        except OSError:
            parts.append("-")
            continue
        parts.append(f"{info.st_size}:{info.st_mtime_ns}:{info.st_ino}")
    return " ".join(parts)


def looks_like_sqlite(path: Path) -> bool:
    """The magic string, and file format versions SQLite can write (1 rollback, 2 WAL): a
    damaged version byte would otherwise only show as "readonly database" at the first write."""
    try:
        with path.open("rb") as fh:
            header = fh.read(20)
    except OSError:
        return False
    if len(header) < 20 or header[:16] != b"SQLite format 3\x00":
        return False
    return header[18] in (1, 2) and header[19] in (1, 2)


def check_quick(conn: sqlite3.Connection, name: str) -> None:
    """``PRAGMA quick_check`` and FTS5's own integrity check (a truncation that took only FTS
    pages passes quick_check); ``StoreCorrupt`` (naming the file ``name``) when one fails."""
    row = conn.execute("PRAGMA quick_check").fetchone()
    if row is None or row[0] != "ok":
        raise StoreCorrupt(f"the store {name} failed its integrity check: {row and row[0]}")
    try:
        conn.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES('integrity-check', 1)")
    except sqlite3.DatabaseError as exc:
        raise StoreCorrupt(f"the store {name} failed its integrity check: search index: {exc}") from None


def integrity_problems(conn: sqlite3.Connection) -> list[str]:
    """The consistency oracle's cheap part: SQLite, FTS5 and edge endpoints."""
    problems: list[str] = []
    row = conn.execute("PRAGMA quick_check").fetchone()
    if row is None or row[0] != "ok":
        problems.append(f"quick_check: {row and row[0]}")
    try:
        conn.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES('integrity-check', 1)")
    except sqlite3.DatabaseError as exc:
        problems.append(f"fts: {exc}")
    dangling = conn.execute(
        "SELECT count(*) FROM edges WHERE source NOT IN (SELECT rowid FROM nodes)"
        " OR target NOT IN (SELECT rowid FROM nodes)"
    ).fetchone()[0]
    if dangling:
        problems.append(f"{dangling} edges with a missing endpoint")
    return problems
