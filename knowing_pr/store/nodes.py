"""Symbols (``Node``) ↔ the ``nodes`` table and its ``nodes_fts`` rows: one file's nodes
replaced, a file's nodes deleted, and the queries over them (by path, id, name or pattern; the
resolver's symbol rows).

A node's rowid is what edges point at: ``replace_nodes`` keeps the rowid of a node that keeps
its id, so the edges of other files that point at it stay valid, and numbers new nodes after
the largest rowid. Every write to a node row writes its FTS row in the same step (``fts``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from knowing_pr.model import Node
from knowing_pr.store.batches import chunks
from knowing_pr.store.fts import fts_delete, fts_insert

__all__ = [
    "NODE_COLS",
    "all_nodes",
    "delete_nodes_of",
    "first_symbol_rows_named",
    "node_ids",
    "node_paths",
    "node_rowids",
    "node_values",
    "nodes_by_ids",
    "paths_of_nodes",
    "nodes_in_paths",
    "nodes_named",
    "nodes_where_name_like",
    "nodes_where_path_like",
    "nodes_where_qualified_like",
    "replace_nodes",
    "symbol_rows",
    "symbol_rows_in",
    "symbol_rows_named",
    "symbol_rows_with_ids",
]

#: the columns of a ``Node``, in its field order
NODE_COLS = (
    "id, path, name, qualified_name, kind, language, start_line, end_line, signature, doc, content_hash"
)


def node_values(n: Node) -> tuple[Any, ...]:
    """A node's column values after its id, in the order of ``NODE_COLS``."""
    return (
        n.path,
        n.name,
        n.qualified_name,
        n.kind,
        n.language,
        n.start_line,
        n.end_line,
        n.signature,
        n.doc,
        n.content_hash,
    )


def delete_nodes_of(conn: sqlite3.Connection, paths: Sequence[str]) -> None:
    """Delete the nodes of these files and their FTS rows."""
    for chunk in chunks(list(paths)):
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            f"SELECT rowid, name, path, qualified_name, doc, signature FROM nodes WHERE path IN ({marks})",  # noqa: S608
            chunk,
        ).fetchall()
        fts_delete(conn, rows)
        conn.execute(f"DELETE FROM nodes WHERE path IN ({marks})", chunk)  # noqa: S608


def replace_nodes(conn: sqlite3.Connection, path: str, nodes: Sequence[Node]) -> None:
    """Make ``path``'s nodes exactly ``nodes``; a node that keeps its id keeps its rowid,
    so edges of other files that point at it stay valid."""
    old = {
        r[1]: r
        for r in conn.execute(
            "SELECT rowid, id, name, path, qualified_name, doc, signature, start_line, end_line, kind,"
            " language, content_hash FROM nodes WHERE path = ?",
            (path,),
        )
    }
    new_ids = {n.id for n in nodes}
    vanished = [r for i, r in old.items() if i not in new_ids]
    if vanished:
        fts_delete(conn, ((r[0], r[2], r[3], r[4], r[5], r[6]) for r in vanished))
        conn.executemany("DELETE FROM nodes WHERE rowid = ?", [(r[0],) for r in vanished])
    fresh: list[Node] = []
    for n in nodes:
        before = old.get(n.id)
        if before is None:
            fresh.append(n)
            continue
        values = node_values(n)
        unchanged = (
            before[3],
            before[2],
            before[4],
            before[9],
            before[10],
            before[7],
            before[8],
            before[6],
            before[5],
            before[11],
        ) == values
        if unchanged:
            continue
        fts_delete(conn, [(before[0], before[2], before[3], before[4], before[5], before[6])])
        conn.execute(
            "UPDATE nodes SET path = ?, name = ?, qualified_name = ?, kind = ?, language = ?,"
            " start_line = ?, end_line = ?, signature = ?, doc = ?, content_hash = ? WHERE rowid = ?",
            (*values, before[0]),
        )
        fts_insert(conn, [(int(before[0]), n)])
    if fresh:
        first = int(conn.execute("SELECT coalesce(max(rowid), 0) + 1 FROM nodes").fetchone()[0])
        numbered = list(enumerate(fresh, first))
        conn.executemany(
            "INSERT INTO nodes(rowid, id, path, name, qualified_name, kind, language, start_line, end_line,"
            " signature, doc, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(rowid, n.id, *node_values(n)) for rowid, n in numbered],
        )
        fts_insert(conn, numbered)


def nodes_in_paths(conn: sqlite3.Connection, paths: Iterable[str]) -> list[Node]:
    out: list[Node] = []
    for chunk in chunks(list(paths)):
        marks = ",".join("?" * len(chunk))
        out.extend(
            Node(*r)
            for r in conn.execute(f"SELECT {NODE_COLS} FROM nodes WHERE path IN ({marks})", chunk)  # noqa: S608
        )
    return out


def nodes_by_ids(conn: sqlite3.Connection, ids: Iterable[str]) -> dict[str, Node]:
    out: dict[str, Node] = {}
    for chunk in chunks(list(ids)):
        marks = ",".join("?" * len(chunk))
        for r in conn.execute(f"SELECT {NODE_COLS} FROM nodes WHERE id IN ({marks})", chunk):  # noqa: S608
            out[r[0]] = Node(*r)
    return out


def paths_of_nodes(conn: sqlite3.Connection, ids: Iterable[str]) -> dict[str, str]:
    """Node id → its file's path, for the ``ids`` the store has."""
    out: dict[str, str] = {}
    for chunk in chunks(list(ids)):
        marks = ",".join("?" * len(chunk))
        out.update(conn.execute(f"SELECT id, path FROM nodes WHERE id IN ({marks})", chunk))  # noqa: S608
    return out


def all_nodes(conn: sqlite3.Connection) -> list[Node]:
    return [Node(*r) for r in conn.execute(f"SELECT {NODE_COLS} FROM nodes")]  # noqa: S608


def symbol_rows(conn: sqlite3.Connection) -> list[tuple[str, str, str, str, str]]:
    """(id, path, name, qualified_name, kind) of every node: the resolver's symbol table."""
    return list(conn.execute("SELECT id, path, name, qualified_name, kind FROM nodes"))


def _is_utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def node_paths(conn: sqlite3.Connection, paths: Iterable[str] | None = None) -> list[tuple[str, str]]:
    """(id, path) of every node, or of the nodes of ``paths`` (through the path index). A path
    that is not UTF-8 (a lone surrogate from its bytes) has no node: the index skips its file."""
    if paths is None:
        return list(conn.execute("SELECT id, path FROM nodes"))
    out: list[tuple[str, str]] = []
    for chunk in chunks(sorted({p for p in paths if _is_utf8(p)})):
        marks = ",".join("?" * len(chunk))
        out.extend(conn.execute(f"SELECT id, path FROM nodes WHERE path IN ({marks})", chunk))  # noqa: S608
    return out


def symbol_rows_named(conn: sqlite3.Connection, names: Iterable[str]) -> list[tuple[str, str, str, str, str]]:
    out: list[tuple[str, str, str, str, str]] = []
    for chunk in chunks(sorted(set(names))):
        marks = ",".join("?" * len(chunk))
        out.extend(
            conn.execute(
                f"SELECT id, path, name, qualified_name, kind FROM nodes WHERE name IN ({marks})",  # noqa: S608
                chunk,
            )
        )
    return out


def first_symbol_rows_named(
    conn: sqlite3.Connection, name: str, kinds: Sequence[str], count: int, skipped_paths: AbstractSet[str]
) -> list[tuple[str, str, str, str, str]]:
    """Up to ``count`` symbols called ``name`` of one of ``kinds`` outside ``skipped_paths``
    (which ones is unspecified); stops reading at the last one wanted."""
    marks = ",".join("?" * len(kinds))
    cursor = conn.execute(
        f"SELECT id, path, name, qualified_name, kind FROM nodes WHERE name = ? AND kind IN ({marks})",  # noqa: S608
        (name, *kinds),
    )
    out: list[tuple[str, str, str, str, str]] = []
    try:
        while len(out) < count and (rows := cursor.fetchmany(max(count, 16))):
            out.extend(r for r in rows if r[1] not in skipped_paths)
    finally:
        cursor.close()  # resets the statement: no read left open
    return out[:count]


def symbol_rows_with_ids(
    conn: sqlite3.Connection, ids: Iterable[str]
) -> list[tuple[str, str, str, str, str]]:
    out: list[tuple[str, str, str, str, str]] = []
    for chunk in chunks(sorted(set(ids))):
        marks = ",".join("?" * len(chunk))
        out.extend(
            conn.execute(
                f"SELECT id, path, name, qualified_name, kind FROM nodes WHERE id IN ({marks})",  # noqa: S608
                chunk,
            )
        )
    return out


def symbol_rows_in(conn: sqlite3.Connection, paths: Iterable[str]) -> list[tuple[str, str, str, str, str]]:
    out: list[tuple[str, str, str, str, str]] = []
    for chunk in chunks(sorted(set(paths))):
        marks = ",".join("?" * len(chunk))
        out.extend(
            conn.execute(
                f"SELECT id, path, name, qualified_name, kind FROM nodes WHERE path IN ({marks})",  # noqa: S608
                chunk,
            )
        )
    return out


def node_ids(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT id FROM nodes ORDER BY id")]


def nodes_named(conn: sqlite3.Connection, name: str, *, limit: int = 200) -> list[Node]:
    return [
        Node(*r)
        for r in conn.execute(
            f"SELECT {NODE_COLS} FROM nodes WHERE name = ? COLLATE NOCASE ORDER BY id LIMIT ?",  # noqa: S608
            (name, limit),
        )
    ]


def nodes_where_name_like(conn: sqlite3.Connection, pattern: str, *, limit: int = 200) -> list[Node]:
    return [
        Node(*r)
        for r in conn.execute(
            f"SELECT {NODE_COLS} FROM nodes WHERE name LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?",  # noqa: S608
            (pattern, limit),
        )
    ]


def nodes_where_qualified_like(conn: sqlite3.Connection, pattern: str, *, limit: int = 200) -> list[Node]:
    return [
        Node(*r)
        for r in conn.execute(
            f"SELECT {NODE_COLS} FROM nodes WHERE qualified_name LIKE ? ESCAPE '\\'"  # noqa: S608
            " ORDER BY id LIMIT ?",
            (pattern, limit),
        )
    ]


def nodes_where_path_like(conn: sqlite3.Connection, pattern: str, *, limit: int = 200) -> list[Node]:
    return [
        Node(*r)
        for r in conn.execute(
            f"SELECT {NODE_COLS} FROM nodes WHERE path LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?",  # noqa: S608
            (pattern, limit),
        )
    ]


def node_rowids(conn: sqlite3.Connection, ids: Iterable[str]) -> dict[str, int]:
    """node id → rowid, for those of ``ids`` that are stored (the rowid is what edges hold)."""
    out: dict[str, int] = {}
    for chunk in chunks(sorted(set(ids))):
        marks = ",".join("?" * len(chunk))
        out.update(conn.execute(f"SELECT id, rowid FROM nodes WHERE id IN ({marks})", chunk))  # noqa: S608
    return out
