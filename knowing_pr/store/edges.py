"""Edges ↔ the ``edges`` table (source and target node rowids, kind, confidence in basis points,
the rule that made the edge as its number in ``graph.rules.RULES``, and the origin: the id of
the file whose resolution produced the edge, or a special negative origin such as
``<history>``), and the numpy arrays the ranking walks (``edge_arrays``).

The indexer deletes the edges of the files it resolves again by origin (``delete_edges_from``),
an incremental co-change update only the history edges leaving some nodes
(``delete_edges_from_sources``); both endpoints of an inserted edge must be stored nodes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from knowing_pr.errors import StoreCorrupt, StoreError
from knowing_pr.graph.rules import default_rule, rule_id, rule_name
from knowing_pr.model import Edge, EdgeKind
from knowing_pr.store.batches import chunks
from knowing_pr.store.files import file_ids
from knowing_pr.store.nodes import node_rowids

__all__ = [
    "SPECIAL_ORIGINS",
    "all_edges",
    "delete_edges_from",
    "delete_edges_from_sources",
    "edge_arrays",
    "edges_touching",
    "insert_edges",
    "origin_ids",
]

#: origins of edges that no file produced (co-change edges from history)
SPECIAL_ORIGINS = {"<history>": -1}


def origin_ids(conn: sqlite3.Connection, origins: Iterable[str]) -> dict[str, int]:
    """origin (a path or a special origin) → its id in ``edges.origin`` (unknown paths left out)."""
    wanted = set(origins)
    ids = {o: SPECIAL_ORIGINS[o] for o in wanted if o in SPECIAL_ORIGINS}
    ids.update(file_ids(conn, (o for o in wanted if o not in SPECIAL_ORIGINS)))
    return ids


def insert_edges(conn: sqlite3.Connection, edges: Iterable[tuple[Edge, str]]) -> None:
    """Edges with the path (or special origin) whose resolution produced them; both
    endpoints must already be stored nodes."""
    pairs = list(edges)
    if not pairs:
        return
    rowids = node_rowids(conn, {e.source for e, _ in pairs} | {e.target for e, _ in pairs})
    origins = origin_ids(conn, {o for _, o in pairs})
    try:
        rows = [
            (
                rowids[e.source],
                rowids[e.target],
                int(e.kind),
                round(e.confidence * 10000),
                rule_id(e.rule or default_rule(e.kind)),
                origins[o],
            )
            for e, o in pairs
        ]
    except KeyError as exc:
        raise StoreError(f"an edge points at an unknown node or origin: {exc}") from None
    conn.executemany(
        "INSERT INTO edges(source, target, kind, confidence, rule, origin) VALUES (?, ?, ?, ?, ?, ?)", rows
    )


def delete_edges_from(conn: sqlite3.Connection, origins: Sequence[str]) -> None:
    ids = list(origin_ids(conn, origins).values())
    for chunk in chunks(ids):
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM edges WHERE origin IN ({marks})", chunk)  # noqa: S608


def edge_arrays(
    conn: sqlite3.Connection, origins: Sequence[int] | None = None
) -> tuple[list[str], Any, Any, Any, Any, Any]:
    """(node ids, source index, target index, kind, confidence, origin id) as numpy arrays.

    Without ``origins``: every node (sorted ids) and every edge. With ``origins``: only the
    edges those origins produced, and only the node ids they touch (sorted).
    """
    import numpy as np

    if origins is None:
        # in slices straight into arrays: a list of 250K row tuples would double the peak
        cursor = conn.execute("SELECT source, target, kind, confidence, origin FROM edges")
        blocks = []
        while rows := cursor.fetchmany(32768):
            blocks.append(np.array(rows, dtype=np.int64))
        raw: Any = np.concatenate(blocks) if blocks else []
        ids_rowids = conn.execute("SELECT id, rowid FROM nodes ORDER BY id").fetchall()
    else:
        raw = []
        for chunk in chunks(list(origins)):
            marks = ",".join("?" * len(chunk))
            raw.extend(
                conn.execute(
                    f"SELECT source, target, kind, confidence, origin FROM edges WHERE origin IN ({marks})",  # noqa: S608
                    chunk,
                )
            )
        rowids = sorted({r[0] for r in raw} | {r[1] for r in raw})
        ids_rowids = []
        for chunk in chunks(rowids):
            marks = ",".join("?" * len(chunk))
            query = f"SELECT id, rowid FROM nodes WHERE rowid IN ({marks})"  # noqa: S608
            ids_rowids.extend(conn.execute(query, chunk))
        ids_rowids.sort()
    node_ids = [r[0] for r in ids_rowids]
    data = np.array(raw, dtype=np.int64).reshape(-1, 5) if len(raw) else np.zeros((0, 5), dtype=np.int64)
    rowid_array = np.array([r[1] for r in ids_rowids], dtype=np.int64)
    order = np.argsort(rowid_array, kind="stable")
    sorted_rowids = rowid_array[order]

    def index_of(values: Any) -> Any:
        if not len(values):
            return np.zeros(0, dtype=np.int64)
        pos = np.clip(np.searchsorted(sorted_rowids, values), 0, max(len(sorted_rowids) - 1, 0))
        if not len(sorted_rowids) or not np.array_equal(sorted_rowids[pos], values):
            raise StoreCorrupt("the store has edges whose endpoints are missing")
        return order[pos]

    return (
        node_ids,
        index_of(data[:, 0]),
        index_of(data[:, 1]),
        data[:, 2].astype(np.uint8),
        (data[:, 3] / 10000.0).astype(np.float32),
        data[:, 4].astype(np.int32),
    )


def all_edges(conn: sqlite3.Connection) -> list[Edge]:
    return [
        Edge(s, t, EdgeKind(k), c / 10000, rule_name(r))
        for s, t, k, c, r in conn.execute(
            "SELECT s.id, t.id, e.kind, e.confidence, e.rule FROM edges e"
            " JOIN nodes s ON s.rowid = e.source JOIN nodes t ON t.rowid = e.target"
        )
    ]


def edges_touching(conn: sqlite3.Connection, ids: Iterable[str]) -> list[Edge]:
    rowids = node_rowids(conn, ids)
    out: list[Edge] = []
    values = list(rowids.values())
    for chunk in chunks(values):
        marks = ",".join("?" * len(chunk))
        out.extend(
            Edge(s, t, EdgeKind(k), c / 10000, rule_name(r))
            for s, t, k, c, r in conn.execute(
                "SELECT s.id, t.id, e.kind, e.confidence, e.rule FROM edges e"  # noqa: S608
                " JOIN nodes s ON s.rowid = e.source JOIN nodes t ON t.rowid = e.target"
                f" WHERE e.source IN ({marks}) OR e.target IN ({marks})",
                chunk + chunk,
            )
        )
    return out


def delete_edges_from_sources(conn: sqlite3.Connection, origin: str, sources: Iterable[str]) -> None:
    """Delete the edges ``origin`` produced that leave the given node ids."""
    origin_id = origin_ids(conn, [origin]).get(origin)
    rowids = node_rowids(conn, set(sources))
    if origin_id is None or not rowids:
        return
    ordered = sorted(rowids.values())
    for start in range(0, len(ordered), 500):  # one pass over the origin's edges per chunk
        chunk = ordered[start : start + 500]
        marks = ",".join("?" * len(chunk))
        conn.execute(
            f"DELETE FROM edges WHERE origin = ? AND source IN ({marks})",  # noqa: S608
            [origin_id, *chunk],
        )
