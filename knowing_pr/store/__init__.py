"""Graph records ↔ one SQLite file: files, nodes, edges, references, FTS5, Merkle roots,
the adjacency blob, history signals, packs and metadata.

Decisions (DESIGN.md, RELIABILITY.md 5): WAL with one writer; every "commit indexed" goes
in one ``BEGIN IMMEDIATE`` transaction, so a killed process leaves the previous commit; a
busy timeout instead of "database is locked"; ``trusted_schema=OFF`` so a planted trigger
or view never runs; a schema version with forward migrations; an unreadable or corrupt file
is reported as ``StoreCorrupt`` and the caller moves it aside and rebuilds.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from knowing_pr.errors import StoreCorrupt, StoreError
from knowing_pr.model import Edge, EdgeKind, Node
from knowing_pr.store import history
from knowing_pr.store.fts import fts_delete, fts_insert, fts_tokens, search_fts
from knowing_pr.store.recovery import (
    check_quick,
    file_state,
    integrity_problems,
    is_damage,
    looks_like_sqlite,
    move_aside,
)
from knowing_pr.store.schema import SCHEMA_VERSION, migrate

__all__ = ["SCHEMA_VERSION", "FileRow", "Store", "fts_tokens", "is_damage", "move_aside"]

BUSY_TIMEOUT_MS = 30_000

#: origins of edges that no file produced (co-change edges from history)
SPECIAL_ORIGINS = {"<history>": -1}


@dataclass(frozen=True, slots=True)
class FileRow:
    path: str
    blob_id: str
    language: str | None
    size: int
    status: str  # "indexed" | "skipped"
    reason: str | None
    root: str | None
    line_count: int


def _node_values(n: Node) -> tuple[Any, ...]:
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


class Store:
    """An open store; use ``Store.open`` and close it (or use it as a context manager)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self._marker = path.with_name(path.name + ".writing")
        self._stamp = path.with_name(path.name + ".stamp")
        self._wrote = False
        self._state_at_open = ""

    # -- lifecycle -------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike[str], *, readonly: bool = False) -> Store:
        """Open (creating if needed) and check the store; raises StoreCorrupt when unusable."""
        db_path = Path(path)
        if not readonly:
            db_path.parent.mkdir(parents=True, exist_ok=True)
        exists = db_path.exists()
        if exists and db_path.is_file() and db_path.stat().st_size and not looks_like_sqlite(db_path):
            raise StoreCorrupt(f"{db_path.name} is not an SQLite database")
        state_before_open = file_state(db_path)  # opening in WAL mode creates the -wal file
        try:
            uri = f"file:{db_path}?mode=ro" if readonly else str(db_path)
            conn = sqlite3.connect(uri, uri=readonly, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store {db_path}: {exc}") from None
        store = cls(conn, db_path)
        store._state_at_open = state_before_open
        try:
            store._configure(readonly=readonly)
            if exists and store._marker.exists():
                # a writer did not finish (killed or crashed): check before trusting the file
                check_quick(conn, db_path.name)
            if not readonly:
                migrate(conn, store.transaction)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreCorrupt(f"the store {db_path.name} is damaged: {exc}") from None
        except StoreError:
            conn.close()
            raise
        return store

    def close(self) -> None:
        self.conn.close()
        if self._wrote:
            # after close: the last connection's checkpoint has touched the file by now
            with suppress(OSError):
                self._stamp.write_text(file_state(self.path), encoding="ascii")

    def unchanged_since_own_write(self) -> bool:
        """Whether the file is exactly as this tool left it after its last write (size,
        mtime and inode of the database and its WAL): then a pre-write integrity check can
        be skipped. Anything else that touched it (a restored cache, a copy, a flipped byte,
        another process's checkpoint) makes this False."""
        try:
            recorded = self._stamp.read_text(encoding="ascii")
        except OSError:
            return False
        return recorded == self._state_at_open

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _configure(self, *, readonly: bool) -> None:
        c = self.conn
        c.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        c.execute("PRAGMA trusted_schema=OFF")
        if not readonly:
            mode = c.execute("PRAGMA journal_mode=WAL").fetchone()
            if mode is None or str(mode[0]).lower() != "wal":
                # e.g. a file system without shared memory: fall back to a rollback journal
                c.execute("PRAGMA journal_mode=DELETE")
        c.execute("PRAGMA synchronous=NORMAL")
        c.execute("PRAGMA temp_store=MEMORY")
        c.execute("PRAGMA cache_size=-16384")  # 16 MiB: bounded peak memory on big indexes

    def check_integrity(self) -> None:
        """``PRAGMA quick_check``; ``StoreCorrupt`` when the file is damaged."""
        check_quick(self.conn, self.path.name)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One ``BEGIN IMMEDIATE`` … ``COMMIT``; rolls back on any exception."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise StoreError(f"the store is busy or unwritable: {exc}") from None
        try:
            # inside the try: an interrupt right after the marker appears still removes it
            with suppress(OSError):
                self._marker.touch()
            yield
        except BaseException:
            # SQLITE_FULL / IOERR can already have rolled the transaction back
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            self._marker.unlink(missing_ok=True)
            raise
        try:
            self.conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise StoreError(
                f"could not commit to the store: {exc}", hint="the store is unchanged; free space and re-run"
            ) from None
        finally:
            self._marker.unlink(missing_ok=True)
        self._wrote = True

    # -- meta ------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    @property
    def indexed_commit(self) -> str | None:
        value = self.get_meta("indexed_commit")
        return value or None

    @property
    def graph_root(self) -> str | None:
        return self.get_meta("graph_root")

    # -- files -----------------------------------------------------------------------
    def files(self) -> dict[str, FileRow]:
        rows = self.conn.execute(
            "SELECT path, blob_id, language, size, status, reason, root, line_count FROM files"
        )
        return {r[0]: FileRow(*r) for r in rows}

    def file_ids(self, paths: Iterable[str] | None = None) -> dict[str, int]:
        if paths is None:
            return dict(self.conn.execute("SELECT path, fid FROM files"))
        out: dict[str, int] = {}
        for chunk in _chunks(list(paths)):
            marks = ",".join("?" * len(chunk))
            out.update(self.conn.execute(f"SELECT path, fid FROM files WHERE path IN ({marks})", chunk))  # noqa: S608
        return out

    def _origin_ids(self, origins: Iterable[str]) -> dict[str, int]:
        wanted = set(origins)
        ids = {o: SPECIAL_ORIGINS[o] for o in wanted if o in SPECIAL_ORIGINS}
        ids.update(self.file_ids(o for o in wanted if o not in SPECIAL_ORIGINS))
        return ids

    def upsert_files(self, rows: Iterable[FileRow]) -> None:
        """Insert or update file rows, keeping each path's file id stable."""
        self.conn.executemany(
            "INSERT INTO files(path, blob_id, language, size, status, reason, root, line_count, dir, stem,"
            " module_reversed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET"
            " blob_id = excluded.blob_id, language = excluded.language, size = excluded.size,"
            " status = excluded.status, reason = excluded.reason, root = excluded.root,"
            " line_count = excluded.line_count",
            [
                (
                    r.path,
                    r.blob_id,
                    r.language,
                    r.size,
                    r.status,
                    r.reason,
                    r.root,
                    r.line_count,
                    *_path_keys(r.path),
                )
                for r in rows
            ],
        )

    def file_paths(self) -> list[str]:
        """Every file row's path (indexed or skipped)."""
        return [r[0] for r in self.conn.execute("SELECT path FROM files")]

    def indexed_among(self, paths: Iterable[str]) -> set[str]:
        """Which of ``paths`` are indexed files."""
        out: set[str] = set()
        for chunk in _chunks(sorted(set(paths))):
            marks = ",".join("?" * len(chunk))
            query = f"SELECT path FROM files WHERE status = 'indexed' AND path IN ({marks})"  # noqa: S608
            out.update(r[0] for r in self.conn.execute(query, chunk))
        return out

    def skip_reasons(self, paths: Iterable[str]) -> dict[str, str]:
        """path → why it was not indexed, for those of ``paths`` the index skipped."""
        out: dict[str, str] = {}
        for chunk in _chunks(sorted(set(paths))):
            marks = ",".join("?" * len(chunk))
            query = f"SELECT path, reason FROM files WHERE status = 'skipped' AND path IN ({marks})"  # noqa: S608
            out.update((path, reason or "skipped") for path, reason in self.conn.execute(query, chunk))
        return out

    def indexed_paths_in_dir(self, directory: str) -> list[str]:
        """The indexed files directly inside ``directory`` (``""``: the repository root)."""
        return self._indexed_paths_where("dir", directory)

    def indexed_paths_with_stem(self, stem: str) -> list[str]:
        """The indexed files whose name up to its first dot is ``stem``."""
        return self._indexed_paths_where("stem", stem)

    def indexed_paths_with_module_suffix(self, dotted: str) -> list[str]:
        """The indexed files whose module name (``graph.paths.module_name``) is ``dotted`` or
        ends in ``.dotted``."""
        reversed_name = dotted[::-1]
        rows = self.conn.execute(
            "SELECT path, module_reversed FROM files WHERE module_reversed >= ? AND module_reversed < ?"
            " AND status = 'indexed'",
            (reversed_name, reversed_name + "/"),  # "/" is the character after "."
        )
        return sorted(p for p, r in rows if r == reversed_name or r.startswith(reversed_name + "."))

    def _indexed_paths_where(self, column: str, value: str) -> list[str]:
        query = f"SELECT path FROM files WHERE {column} = ? AND status = 'indexed'"  # noqa: S608
        return sorted(r[0] for r in self.conn.execute(query, (value,)))

    def file_roots_in_dirs(self, directories: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
        """(path, root) of the indexed files with a root directly inside each directory."""
        out: dict[str, list[tuple[str, str]]] = {d: [] for d in directories}
        for d in out:
            out[d] = list(
                self.conn.execute(
                    "SELECT path, root FROM files WHERE dir = ? AND status = 'indexed' AND root IS NOT NULL",
                    (d,),
                )
            )
        return out

    def set_file_roots(self, roots: dict[str, str]) -> None:
        self.conn.executemany("UPDATE files SET root = ? WHERE path = ?", [(v, k) for k, v in roots.items()])

    def delete_files(self, paths: Sequence[str]) -> None:
        """Remove these files and everything derived from them (nodes, FTS rows, references)."""
        fids = list(self.file_ids(paths).values())
        self._delete_nodes_of(paths)
        for chunk in _chunks(fids):
            marks = ",".join("?" * len(chunk))
            for table in ("refs", "ref_names", "files"):
                self.conn.execute(f"DELETE FROM {table} WHERE fid IN ({marks})", chunk)  # noqa: S608

    # -- nodes -----------------------------------------------------------------------
    def _delete_nodes_of(self, paths: Sequence[str]) -> None:
        for chunk in _chunks(list(paths)):
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(
                f"SELECT rowid, name, path, qualified_name, doc, signature FROM nodes WHERE path IN ({marks})",  # noqa: S608
                chunk,
            ).fetchall()
            fts_delete(self.conn, rows)
            self.conn.execute(f"DELETE FROM nodes WHERE path IN ({marks})", chunk)  # noqa: S608

    def replace_nodes(self, path: str, nodes: Sequence[Node]) -> None:
        """Make ``path``'s nodes exactly ``nodes``; a node that keeps its id keeps its rowid,
        so edges of other files that point at it stay valid."""
        old = {
            r[1]: r
            for r in self.conn.execute(
                "SELECT rowid, id, name, path, qualified_name, doc, signature, start_line, end_line, kind,"
                " language, content_hash FROM nodes WHERE path = ?",
                (path,),
            )
        }
        new_ids = {n.id for n in nodes}
        vanished = [r for i, r in old.items() if i not in new_ids]
        if vanished:
            fts_delete(self.conn, ((r[0], r[2], r[3], r[4], r[5], r[6]) for r in vanished))
            self.conn.executemany("DELETE FROM nodes WHERE rowid = ?", [(r[0],) for r in vanished])
        fresh: list[Node] = []
        for n in nodes:
            before = old.get(n.id)
            if before is None:
                fresh.append(n)
                continue
            values = _node_values(n)
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
            fts_delete(self.conn, [(before[0], before[2], before[3], before[4], before[5], before[6])])
            self.conn.execute(
                "UPDATE nodes SET path = ?, name = ?, qualified_name = ?, kind = ?, language = ?,"
                " start_line = ?, end_line = ?, signature = ?, doc = ?, content_hash = ? WHERE rowid = ?",
                (*values, before[0]),
            )
            fts_insert(self.conn, [(int(before[0]), n)])
        if fresh:
            first = int(self.conn.execute("SELECT coalesce(max(rowid), 0) + 1 FROM nodes").fetchone()[0])
            numbered = list(enumerate(fresh, first))
            self.conn.executemany(
                "INSERT INTO nodes(rowid, id, path, name, qualified_name, kind, language, start_line, end_line,"
                " signature, doc, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(rowid, n.id, *_node_values(n)) for rowid, n in numbered],
            )
            fts_insert(self.conn, numbered)

    def nodes_in_paths(self, paths: Iterable[str]) -> list[Node]:
        out: list[Node] = []
        for chunk in _chunks(list(paths)):
            marks = ",".join("?" * len(chunk))
            out.extend(
                Node(*r)
                for r in self.conn.execute(f"SELECT {_NODE_COLS} FROM nodes WHERE path IN ({marks})", chunk)  # noqa: S608
            )
        return out

    def nodes_by_ids(self, ids: Iterable[str]) -> dict[str, Node]:
        out: dict[str, Node] = {}
        for chunk in _chunks(list(ids)):
            marks = ",".join("?" * len(chunk))
            for r in self.conn.execute(f"SELECT {_NODE_COLS} FROM nodes WHERE id IN ({marks})", chunk):  # noqa: S608
                out[r[0]] = Node(*r)
        return out

    def all_nodes(self) -> list[Node]:
        return [Node(*r) for r in self.conn.execute(f"SELECT {_NODE_COLS} FROM nodes")]  # noqa: S608

    def indexed_file_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM files WHERE status = 'indexed'").fetchone()[0])

    def symbol_rows(self) -> list[tuple[str, str, str, str, str]]:
        """(id, path, name, qualified_name, kind) of every node: the resolver's symbol table."""
        return list(self.conn.execute("SELECT id, path, name, qualified_name, kind FROM nodes"))

    def node_paths(self) -> list[tuple[str, str]]:
        """(id, path) of every node."""
        return list(self.conn.execute("SELECT id, path FROM nodes"))

    def symbol_rows_named(self, names: Iterable[str]) -> list[tuple[str, str, str, str, str]]:
        out: list[tuple[str, str, str, str, str]] = []
        for chunk in _chunks(sorted(set(names))):
            marks = ",".join("?" * len(chunk))
            out.extend(
                self.conn.execute(
                    f"SELECT id, path, name, qualified_name, kind FROM nodes WHERE name IN ({marks})",  # noqa: S608
                    chunk,
                )
            )
        return out

    def first_symbol_rows_named(
        self, name: str, kinds: Sequence[str], count: int, skipped_paths: AbstractSet[str]
    ) -> list[tuple[str, str, str, str, str]]:
        """Up to ``count`` symbols called ``name`` of one of ``kinds`` outside ``skipped_paths``
        (which ones is unspecified); stops reading at the last one wanted."""
        marks = ",".join("?" * len(kinds))
        cursor = self.conn.execute(
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

    def symbol_rows_with_ids(self, ids: Iterable[str]) -> list[tuple[str, str, str, str, str]]:
        out: list[tuple[str, str, str, str, str]] = []
        for chunk in _chunks(sorted(set(ids))):
            marks = ",".join("?" * len(chunk))
            out.extend(
                self.conn.execute(
                    f"SELECT id, path, name, qualified_name, kind FROM nodes WHERE id IN ({marks})",  # noqa: S608
                    chunk,
                )
            )
        return out

    def indexed_paths(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT path FROM files WHERE status = 'indexed'")]

    def symbol_rows_in(self, paths: Iterable[str]) -> list[tuple[str, str, str, str, str]]:
        out: list[tuple[str, str, str, str, str]] = []
        for chunk in _chunks(sorted(set(paths))):
            marks = ",".join("?" * len(chunk))
            out.extend(
                self.conn.execute(
                    f"SELECT id, path, name, qualified_name, kind FROM nodes WHERE path IN ({marks})",  # noqa: S608
                    chunk,
                )
            )
        return out

    def node_ids(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT id FROM nodes ORDER BY id")]

    def nodes_named(self, name: str, *, limit: int = 200) -> list[Node]:
        return [
            Node(*r)
            for r in self.conn.execute(
                f"SELECT {_NODE_COLS} FROM nodes WHERE name = ? COLLATE NOCASE ORDER BY id LIMIT ?",  # noqa: S608
                (name, limit),
            )
        ]

    def nodes_where_name_like(self, pattern: str, *, limit: int = 200) -> list[Node]:
        return [
            Node(*r)
            for r in self.conn.execute(
                f"SELECT {_NODE_COLS} FROM nodes WHERE name LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?",  # noqa: S608
                (pattern, limit),
            )
        ]

    def nodes_where_qualified_like(self, pattern: str, *, limit: int = 200) -> list[Node]:
        return [
            Node(*r)
            for r in self.conn.execute(
                f"SELECT {_NODE_COLS} FROM nodes WHERE qualified_name LIKE ? ESCAPE '\\'"  # noqa: S608
                " ORDER BY id LIMIT ?",
                (pattern, limit),
            )
        ]

    def nodes_where_path_like(self, pattern: str, *, limit: int = 200) -> list[Node]:
        return [
            Node(*r)
            for r in self.conn.execute(
                f"SELECT {_NODE_COLS} FROM nodes WHERE path LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?",  # noqa: S608
                (pattern, limit),
            )
        ]

    # -- edges -----------------------------------------------------------------------
    def _rowids(self, ids: Iterable[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for chunk in _chunks(sorted(set(ids))):
            marks = ",".join("?" * len(chunk))
            out.update(self.conn.execute(f"SELECT id, rowid FROM nodes WHERE id IN ({marks})", chunk))  # noqa: S608
        return out

    def insert_edges(self, edges: Iterable[tuple[Edge, str]]) -> None:
        """Edges with the path (or special origin) whose resolution produced them; both
        endpoints must already be stored nodes."""
        pairs = list(edges)
        if not pairs:
            return
        rowids = self._rowids({e.source for e, _ in pairs} | {e.target for e, _ in pairs})
        origins = self._origin_ids({o for _, o in pairs})
        try:
            rows = [
                (rowids[e.source], rowids[e.target], int(e.kind), round(e.confidence * 10000), origins[o])
                for e, o in pairs
            ]
        except KeyError as exc:
            raise StoreError(f"an edge points at an unknown node or origin: {exc}") from None
        self.conn.executemany(
            "INSERT INTO edges(source, target, kind, confidence, origin) VALUES (?, ?, ?, ?, ?)", rows
        )

    def delete_edges_from(self, origins: Sequence[str]) -> None:
        ids = list(self._origin_ids(origins).values())
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            self.conn.execute(f"DELETE FROM edges WHERE origin IN ({marks})", chunk)  # noqa: S608

    def edge_arrays(self, origins: Sequence[int] | None = None) -> tuple[list[str], Any, Any, Any, Any, Any]:
        """(node ids, source index, target index, kind, confidence, origin id) as numpy arrays.

        Without ``origins``: every node (sorted ids) and every edge. With ``origins``: only the
        edges those origins produced, and only the node ids they touch (sorted).
        """
        import numpy as np

        if origins is None:
            # in slices straight into arrays: a list of 250K row tuples would double the peak
            cursor = self.conn.execute("SELECT source, target, kind, confidence, origin FROM edges")
            blocks = []
            while rows := cursor.fetchmany(32768):
                blocks.append(np.array(rows, dtype=np.int64))
            raw: Any = np.concatenate(blocks) if blocks else []
            ids_rowids = self.conn.execute("SELECT id, rowid FROM nodes ORDER BY id").fetchall()
        else:
            raw = []
            for chunk in _chunks(list(origins)):
                marks = ",".join("?" * len(chunk))
                raw.extend(
                    self.conn.execute(
                        f"SELECT source, target, kind, confidence, origin FROM edges WHERE origin IN ({marks})",  # noqa: S608
                        chunk,
                    )
                )
            rowids = sorted({r[0] for r in raw} | {r[1] for r in raw})
            ids_rowids = []
            for chunk in _chunks(rowids):
                marks = ",".join("?" * len(chunk))
                query = f"SELECT id, rowid FROM nodes WHERE rowid IN ({marks})"  # noqa: S608
                ids_rowids.extend(self.conn.execute(query, chunk))
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

    def origin_ids(self, origins: Iterable[str]) -> dict[str, int]:
        return self._origin_ids(origins)

    def all_edges(self) -> list[Edge]:
        return [
            Edge(s, t, EdgeKind(k), c / 10000)
            for s, t, k, c in self.conn.execute(
                "SELECT s.id, t.id, e.kind, e.confidence FROM edges e"
                " JOIN nodes s ON s.rowid = e.source JOIN nodes t ON t.rowid = e.target"
            )
        ]

    def edges_touching(self, ids: Iterable[str]) -> list[Edge]:
        rowids = self._rowids(ids)
        out: list[Edge] = []
        values = list(rowids.values())
        for chunk in _chunks(values):
            marks = ",".join("?" * len(chunk))
            out.extend(
                Edge(s, t, EdgeKind(k), c / 10000)
                for s, t, k, c in self.conn.execute(
                    "SELECT s.id, t.id, e.kind, e.confidence FROM edges e"  # noqa: S608
                    " JOIN nodes s ON s.rowid = e.source JOIN nodes t ON t.rowid = e.target"
                    f" WHERE e.source IN ({marks}) OR e.target IN ({marks})",
                    chunk + chunk,
                )
            )
        return out

    def put_refs(self, rows: Iterable[tuple[str, str, Iterable[str]]]) -> None:
        rows = list(rows)
        fids = self.file_ids(p for p, _, _ in rows)
        for path, data, names in rows:
            fid = fids[path]
            self.conn.execute(
                "INSERT OR REPLACE INTO refs(fid, data) VALUES (?, ?)", (fid, zlib.compress(data.encode(), 6))
            )
            self.conn.execute("DELETE FROM ref_names WHERE fid = ?", (fid,))
            self.conn.executemany(
                "INSERT INTO ref_names(name, fid) VALUES (?, ?)", [(n, fid) for n in sorted(set(names))]
            )

    def refs_for(self, paths: Iterable[str]) -> dict[str, str]:
        fids = self.file_ids(paths)
        by_fid = {v: k for k, v in fids.items()}
        out: dict[str, str] = {}
        for chunk in _chunks(list(by_fid)):
            marks = ",".join("?" * len(chunk))
            for fid, data in self.conn.execute(
                f"SELECT fid, data FROM refs WHERE fid IN ({marks})",  # noqa: S608
                chunk,
            ):
                out[by_fid[fid]] = zlib.decompress(data).decode()
        return out

    def paths_referencing(self, names: Iterable[str]) -> set[str]:
        out: set[str] = set()
        for chunk in _chunks(sorted(set(names))):
            marks = ",".join("?" * len(chunk))
            out.update(
                r[0]
                for r in self.conn.execute(
                    "SELECT DISTINCT f.path FROM ref_names r JOIN files f ON f.fid = r.fid"  # noqa: S608
                    f" WHERE r.name IN ({marks})",
                    chunk,
                )
            )
        return out

    # -- merkle roots --------------------------------------------------------------------
    def dir_roots(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT path, root FROM dirs"))

    def dir_roots_of(self, paths: Iterable[str]) -> dict[str, str]:
        """The stored roots of these directories (absent ones are left out)."""
        out: dict[str, str] = {}
        for chunk in _chunks(sorted(set(paths))):
            marks = ",".join("?" * len(chunk))
            out.update(self.conn.execute(f"SELECT path, root FROM dirs WHERE path IN ({marks})", chunk))  # noqa: S608
        return out

    def subdir_roots(self, directory: str) -> dict[str, str]:
        """path → root of the stored directories directly inside ``directory``."""
        return dict(self.conn.execute("SELECT path, root FROM dirs WHERE parent = ?", (directory,)))

    def dirs_named(self, name: str) -> list[str]:
        """The stored directories whose last segment is ``name``."""
        return sorted(r[0] for r in self.conn.execute("SELECT path FROM dirs WHERE name = ?", (name,)))

    def replace_dir_roots(self, changed: dict[str, str], removed: Iterable[str]) -> None:
        self.conn.executemany("DELETE FROM dirs WHERE path = ?", [(p,) for p in removed])
        self.conn.executemany(
            "INSERT OR REPLACE INTO dirs(path, root, parent, name) VALUES (?, ?, ?, ?)",
            [
                (path, root, path.rpartition("/")[0] if path else None, path.rpartition("/")[2])
                for path, root in sorted(changed.items())
            ],
        )

    # -- blobs -------------------------------------------------------------------------
    def put_blob(self, name: str, tag: str, data: bytes) -> None:
        self.conn.execute("INSERT OR REPLACE INTO blobs(name, tag, data) VALUES (?, ?, ?)", (name, tag, data))

    def get_blob(self, name: str) -> tuple[str, bytes] | None:
        row = self.conn.execute("SELECT tag, data FROM blobs WHERE name = ?", (name,)).fetchone()
        return None if row is None else (str(row[0]), bytes(row[1]))

    # -- history (knowing_pr/cochange.py) ------------------------------------------------
    def replace_history(
        self,
        files: Iterable[tuple[str, int, int, float]],
        pairs: Iterable[tuple[str, str, int, float]],
    ) -> None:
        history.replace_history(self.conn, files, pairs)

    def update_history_rows(
        self,
        files: Iterable[tuple[str, int, int, float]],
        pairs: Iterable[tuple[str, str, int, float]],
        removed_files: Iterable[str],
        removed_pairs: Iterable[tuple[str, str]],
    ) -> None:
        """Upsert the given ``hist_*`` rows and delete the removed ones; the rest stay."""
        history.update_history_rows(self.conn, files, pairs, removed_files, removed_pairs)

    def history_files(self) -> list[tuple[str, int, int, float]]:
        return history.history_files(self.conn)

    def history_pairs(self) -> list[tuple[str, str, int, float]]:
        return history.history_pairs(self.conn)

    # -- packs -------------------------------------------------------------------------
    def save_pack(self, pack_root: str, commit: str | None, manifest: dict[str, Any]) -> None:
        with self.transaction():
            self.conn.execute(
                "INSERT OR REPLACE INTO packs(pack_root, commit_id, created, manifest) VALUES (?, ?, ?, ?)",
                (pack_root, commit, int(time.time()), json.dumps(manifest, sort_keys=True)),
            )

    def load_pack(self, pack_root: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT manifest FROM packs WHERE pack_root = ?", (pack_root,)).fetchone()
        if row is None:
            return None
        data: dict[str, Any] = json.loads(row[0])
        return data

    # -- search ------------------------------------------------------------------------
    def search_fts(self, query: str, *, limit: int = 30) -> list[tuple[str, float]]:
        """BM25 over the FTS5 table with the seeds' column weights; (node id, bm25) best first."""
        return search_fts(self.conn, query, limit=limit)

    # -- checks and stats --------------------------------------------------------------
    def integrity_problems(self) -> list[str]:
        """The consistency oracle's cheap part: SQLite, FTS5 and edge endpoints."""
        return integrity_problems(self.conn)

    def counts(self) -> dict[str, Any]:
        c = self.conn
        by_language = dict(
            c.execute(
                "SELECT language, count(*) FROM files WHERE status = 'indexed' GROUP BY language ORDER BY 1"
            )
        )
        by_kind = dict(c.execute("SELECT kind, count(*) FROM nodes GROUP BY kind ORDER BY 1"))
        by_edge = {
            EdgeKind(k).label: n
            for k, n in c.execute("SELECT kind, count(*) FROM edges GROUP BY kind ORDER BY 1")
        }
        skipped = dict(
            c.execute(
                "SELECT reason, count(*) FROM files WHERE status = 'skipped' GROUP BY reason ORDER BY 1"
            )
        )
        return {
            "files": int(c.execute("SELECT count(*) FROM files WHERE status = 'indexed'").fetchone()[0]),
            "nodes": int(c.execute("SELECT count(*) FROM nodes").fetchone()[0]),
            "edges": int(c.execute("SELECT count(*) FROM edges").fetchone()[0]),
            "files_by_language": by_language,
            "nodes_by_kind": by_kind,
            "edges_by_type": by_edge,
            "skipped_by_reason": skipped,
        }

    def delete_edges_from_sources(self, origin: str, sources: Iterable[str]) -> None:
        """Delete the edges ``origin`` produced that leave the given node ids."""
        origin_id = self._origin_ids([origin]).get(origin)
        rowids = self._rowids(set(sources))
        if origin_id is None or not rowids:
            return
        ordered = sorted(rowids.values())
        for start in range(0, len(ordered), 500):  # one pass over the origin's edges per chunk
            chunk = ordered[start : start + 500]
            marks = ",".join("?" * len(chunk))
            self.conn.execute(
                f"DELETE FROM edges WHERE origin = ? AND source IN ({marks})",  # noqa: S608
                [origin_id, *chunk],
            )


_T = TypeVar("_T")

_NODE_COLS = (
    "id, path, name, qualified_name, kind, language, start_line, end_line, signature, doc, content_hash"
)


def _chunks(items: Sequence[_T], size: int = 500) -> Iterator[list[_T]]:
    listed = list(items)
    for i in range(0, len(listed), size):
        yield listed[i : i + size]


def _path_keys(path: str) -> tuple[str, str, str]:
    """(directory, stem, reversed module name) of a path: the lookup columns of ``files``."""
    from knowing_pr.graph.paths import file_stem, module_name

    return path.rpartition("/")[0], file_stem(path), module_name(path)[::-1]
