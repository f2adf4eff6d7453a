"""Merkle roots ↔ the ``dirs`` table (one row a directory: its root, its parent, its last
segment) and the ``root`` column of ``files``.

An incremental index re-hashes only the ancestor chain of what changed: it reads the roots of
one directory's files and subdirectories (``file_roots_in_dirs``, ``subdir_roots``) and writes
the changed roots back (``set_file_roots``, ``replace_dir_roots``). The caller owns the
transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from knowing_pr.store.batches import chunks

__all__ = [
    "dir_roots",
    "dir_roots_of",
    "dirs_named",
    "file_roots_in_dirs",
    "replace_dir_roots",
    "set_file_roots",
    "subdir_roots",
]


def file_roots_in_dirs(
    conn: sqlite3.Connection, directories: Iterable[str]
) -> dict[str, list[tuple[str, str]]]:
    """(path, root) of the indexed files with a root directly inside each directory."""
    out: dict[str, list[tuple[str, str]]] = {d: [] for d in directories}
    for d in out:
        out[d] = list(
            conn.execute(
                "SELECT path, root FROM files WHERE dir = ? AND status = 'indexed' AND root IS NOT NULL",
                (d,),
            )
        )
    return out


def set_file_roots(conn: sqlite3.Connection, roots: dict[str, str]) -> None:
    conn.executemany("UPDATE files SET root = ? WHERE path = ?", [(v, k) for k, v in roots.items()])


def dir_roots(conn: sqlite3.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT path, root FROM dirs"))


def dir_roots_of(conn: sqlite3.Connection, paths: Iterable[str]) -> dict[str, str]:
    """The stored roots of these directories (absent ones are left out)."""
    out: dict[str, str] = {}
    for chunk in chunks(sorted(set(paths))):
        marks = ",".join("?" * len(chunk))
        out.update(conn.execute(f"SELECT path, root FROM dirs WHERE path IN ({marks})", chunk))  # noqa: S608
    return out


def subdir_roots(conn: sqlite3.Connection, directory: str) -> dict[str, str]:
    """path → root of the stored directories directly inside ``directory``."""
    return dict(conn.execute("SELECT path, root FROM dirs WHERE parent = ?", (directory,)))


def dirs_named(conn: sqlite3.Connection, name: str) -> list[str]:
    """The stored directories whose last segment is ``name``."""
    return sorted(r[0] for r in conn.execute("SELECT path FROM dirs WHERE name = ?", (name,)))


def replace_dir_roots(conn: sqlite3.Connection, changed: dict[str, str], removed: Iterable[str]) -> None:
    conn.executemany("DELETE FROM dirs WHERE path = ?", [(p,) for p in removed])
    conn.executemany(
        "INSERT OR REPLACE INTO dirs(path, root, parent, name) VALUES (?, ?, ?, ?)",
        [
            (path, root, path.rpartition("/")[0] if path else None, path.rpartition("/")[2])
            for path, root in sorted(changed.items())
        ],
    )
