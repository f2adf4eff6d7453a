"""Graph records ↔ one SQLite file: files, nodes, edges, references, FTS5, Merkle roots,
the adjacency blob, history signals, packs and metadata.

Decisions (DESIGN.md, RELIABILITY.md 5): WAL with one writer; every "commit indexed" goes
in one ``BEGIN IMMEDIATE`` transaction, so a killed process leaves the previous commit; a
busy timeout instead of "database is locked"; ``trusted_schema=OFF`` so a planted trigger
or view never runs; a schema version with forward migrations; an unreadable or corrupt file
is reported as ``StoreCorrupt`` and the caller moves it aside and rebuilds.

``Store`` is the one entry point: it owns the connection and the transaction (nothing else
begins or commits), and its table methods each call the function of the same name, with the
connection, in ``files`` (file rows, references), ``roots`` (Merkle roots), ``nodes`` (node
rows), ``edges`` (edge rows, the ranking's arrays) or ``history`` (mined history rows). Beside
them: ``schema`` (connection settings, DDL, migration), ``recovery`` (damage detected, told
apart, moved aside), ``fts`` (identifier tokens, FTS rows, BM25) and ``batches``.

A little over the style's ~400 lines: ``Store``'s methods are one-line delegations, kept in
one class so that every transaction visibly begins and ends here.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from knowing_pr.errors import StoreCorrupt, StoreError, UsageError
from knowing_pr.model import Edge, EdgeKind, Node
from knowing_pr.store import edges as _edges
from knowing_pr.store import files as _files
from knowing_pr.store import history as _history
from knowing_pr.store import nodes as _nodes
from knowing_pr.store import roots as _roots
from knowing_pr.store.files import FileRow
from knowing_pr.store.fts import fts_tokens, search_fts
from knowing_pr.store.recovery import (
    check_quick,
    file_state,
    integrity_problems,
    is_damage,
    looks_like_sqlite,
    move_aside,
)
from knowing_pr.store.schema import (
    BUSY_TIMEOUT_MS,
    SCHEMA_VERSION,
    configure,
    migrate,
    refuse_a_foreign_database,
)
from knowing_pr.writing import open_append, write_atomic

__all__ = ["SCHEMA_VERSION", "FileRow", "Store", "fts_tokens", "is_damage", "move_aside"]


class Store:
    """An open store; use ``Store.open`` and close it (or use it as a context manager).

    Writes go inside ``with store.transaction():`` (``save_pack`` opens its own)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self._marker = path.with_name(path.name + ".writing")
        self._stamp = path.with_name(path.name + ".stamp")
        self._wrote = False
        self._state_at_open = ""

    # -- lifecycle -------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike[str], *, readonly: bool = False, any_thread: bool = False) -> Store:
        """Open (creating if needed) and check the store; raises StoreCorrupt when unusable.
        ``any_thread``: another thread than the opener's may use or close the connection (the
        caller keeps them from using it at once)."""
        db_path = Path(path)
        if not readonly:
            db_path.parent.mkdir(parents=True, exist_ok=True)
        exists = db_path.exists()
        if exists and db_path.is_file() and db_path.stat().st_size and not looks_like_sqlite(db_path):
            raise StoreCorrupt(f"{db_path.name} is not an SQLite database")
        state_before_open = file_state(db_path)  # opening in WAL mode creates the -wal file
        try:
            uri = f"file:{db_path}?mode=ro" if readonly else str(db_path)
            conn = sqlite3.connect(
                uri,
                uri=readonly,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=not any_thread,
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store {db_path}: {exc}") from None
        store = cls(conn, db_path)
        store._state_at_open = state_before_open
        try:
            if exists and not readonly:
                refuse_a_foreign_database(conn)
            configure(conn, readonly=readonly)
            if exists and store._marker.exists():
                # a writer did not finish (killed or crashed): check before trusting the file
                check_quick(conn, db_path.name)
            if not readonly:
                migrate(conn, store.transaction)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreCorrupt(f"the store {db_path.name} is damaged: {exc}") from None
        except (StoreError, UsageError):
            conn.close()
            raise
        return store

    def close(self) -> None:
        self.conn.close()
        if self._wrote:
            # after close: the last connection's checkpoint has touched the file by now
            with suppress(OSError):
                write_atomic(self._stamp, [file_state(self.path)])  # never through a link

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
                os.close(open_append(self._marker))  # created, never through a link
            yield
        except BaseException:
            # SQLITE_FULL / IOERR can already have rolled the transaction back
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            with suppress(OSError):  # a read-only directory: the first error is the one to tell
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
            with suppress(OSError):
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

    # -- files -------------------------------------------------------------------------
    def files(self) -> dict[str, FileRow]:
        return _files.files(self.conn)

    def file_ids(self, paths: Iterable[str] | None = None) -> dict[str, int]:
        return _files.file_ids(self.conn, paths)

    def file_paths(self) -> list[str]:
        """Every file row's path (indexed or skipped)."""
        return _files.file_paths(self.conn)

    def indexed_file_count(self) -> int:
        return _files.indexed_file_count(self.conn)

    def indexed_paths(self) -> list[str]:
        return _files.indexed_paths(self.conn)

    def indexed_among(self, paths: Iterable[str]) -> set[str]:
        """Which of ``paths`` are indexed files."""
        return _files.indexed_among(self.conn, paths)

    def skip_reasons(self, paths: Iterable[str]) -> dict[str, str]:
        """path → why it was not indexed, for those of ``paths`` the index skipped."""
        return _files.skip_reasons(self.conn, paths)

    def indexed_paths_in_dir(self, directory: str) -> list[str]:
        """The indexed files directly inside ``directory`` (``""``: the repository root)."""
        return _files.indexed_paths_in_dir(self.conn, directory)

    def indexed_paths_with_stem(self, stem: str) -> list[str]:
        """The indexed files whose name up to its first dot is ``stem``."""
        return _files.indexed_paths_with_stem(self.conn, stem)

    def indexed_paths_with_module_suffix(self, dotted: str) -> list[str]:
        """The indexed files whose module name is ``dotted`` or ends in ``.dotted``."""
        return _files.indexed_paths_with_module_suffix(self.conn, dotted)

    def upsert_files(self, rows: Iterable[FileRow]) -> None:
        """Insert or update file rows, keeping each path's file id stable."""
        _files.upsert_files(self.conn, rows)

    def delete_files(self, paths: Sequence[str]) -> None:
        """Remove these files and everything derived from them (nodes, FTS rows, references)."""
        _files.delete_files(self.conn, paths)

    # -- references --------------------------------------------------------------------
    def put_refs(self, rows: Iterable[tuple[str, str, Iterable[str]]]) -> None:
        _files.put_refs(self.conn, rows)

    def refs_for(self, paths: Iterable[str]) -> dict[str, str]:
        return _files.refs_for(self.conn, paths)

    # -- test cases --------------------------------------------------------------------
    def put_test_cases(self, rows: Iterable[tuple[str, str | None]]) -> None:
        """Each file's test cases as the index found them (None: it keeps none)."""
        _files.put_test_cases(self.conn, rows)

    def test_cases_for(self, paths: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        """path → (blob id, language, test cases' text) of the files among ``paths`` that keep
        test cases (``store.files.test_cases_for``)."""
        return _files.test_cases_for(self.conn, paths)

    def paths_referencing(self, names: Iterable[str]) -> set[str]:
        return _files.paths_referencing(self.conn, names)

    def keys_reading(self, names: Iterable[str], prefix: str) -> set[str]:
        """Keys of the stored ``<prefix><name> <key>`` reference entries for these names."""
        return _files.keys_reading(self.conn, names, prefix)

    # -- merkle roots ------------------------------------------------------------------
    def dir_roots(self) -> dict[str, str]:
        return _roots.dir_roots(self.conn)

    def dir_roots_of(self, paths: Iterable[str]) -> dict[str, str]:
        """The stored roots of these directories (absent ones are left out)."""
        return _roots.dir_roots_of(self.conn, paths)

    def subdir_roots(self, directory: str) -> dict[str, str]:
        """path → root of the stored directories directly inside ``directory``."""
        return _roots.subdir_roots(self.conn, directory)

    def dirs_named(self, name: str) -> list[str]:
        """The stored directories whose last segment is ``name``."""
        return _roots.dirs_named(self.conn, name)

    def replace_dir_roots(self, changed: dict[str, str], removed: Iterable[str]) -> None:
        _roots.replace_dir_roots(self.conn, changed, removed)

    def file_roots_in_dirs(self, directories: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
        """(path, root) of the indexed files with a root directly inside each directory."""
        return _roots.file_roots_in_dirs(self.conn, directories)

    def set_file_roots(self, roots: dict[str, str]) -> None:
        _roots.set_file_roots(self.conn, roots)

    # -- nodes -------------------------------------------------------------------------
    def replace_nodes(self, path: str, nodes: Sequence[Node]) -> None:
        """Make ``path``'s nodes exactly ``nodes``; a node that keeps its id keeps its rowid."""
        _nodes.replace_nodes(self.conn, path, nodes)

    def nodes_in_paths(self, paths: Iterable[str]) -> list[Node]:
        return _nodes.nodes_in_paths(self.conn, paths)

    def nodes_by_ids(self, ids: Iterable[str]) -> dict[str, Node]:
        return _nodes.nodes_by_ids(self.conn, ids)

    def all_nodes(self) -> list[Node]:
        return _nodes.all_nodes(self.conn)

    def node_ids(self) -> list[str]:
        return _nodes.node_ids(self.conn)

    def paths_of_nodes(self, ids: Iterable[str]) -> dict[str, str]:
        """Node id → its file's path."""
        return _nodes.paths_of_nodes(self.conn, ids)

    def node_paths(self, paths: Iterable[str] | None = None) -> list[tuple[str, str]]:
        """(id, path) of every node (or of the nodes of ``paths``)."""
        return _nodes.node_paths(self.conn, paths)

    def nodes_named(self, name: str, *, limit: int = 200) -> list[Node]:
        return _nodes.nodes_named(self.conn, name, limit=limit)

    def nodes_where_name_like(self, pattern: str, *, limit: int = 200) -> list[Node]:
        return _nodes.nodes_where_name_like(self.conn, pattern, limit=limit)

    def nodes_where_qualified_like(self, pattern: str, *, limit: int = 200) -> list[Node]:
        return _nodes.nodes_where_qualified_like(self.conn, pattern, limit=limit)

    def nodes_where_path_like(self, pattern: str, *, limit: int = 200) -> list[Node]:
        return _nodes.nodes_where_path_like(self.conn, pattern, limit=limit)

    def symbol_rows(self) -> list[tuple[str, str, str, str, str]]:
        """(id, path, name, qualified_name, kind) of every node: the resolver's symbol table."""
        return _nodes.symbol_rows(self.conn)

    def symbol_rows_named(self, names: Iterable[str]) -> list[tuple[str, str, str, str, str]]:
        return _nodes.symbol_rows_named(self.conn, names)

    def first_symbol_rows_named(
        self, name: str, kinds: Sequence[str], count: int, skipped_paths: AbstractSet[str]
    ) -> list[tuple[str, str, str, str, str]]:
        """Up to ``count`` symbols called ``name`` of one of ``kinds`` outside ``skipped_paths``."""
        return _nodes.first_symbol_rows_named(self.conn, name, kinds, count, skipped_paths)

    def symbol_rows_with_ids(self, ids: Iterable[str]) -> list[tuple[str, str, str, str, str]]:
        return _nodes.symbol_rows_with_ids(self.conn, ids)

    def symbol_rows_in(self, paths: Iterable[str]) -> list[tuple[str, str, str, str, str]]:
        return _nodes.symbol_rows_in(self.conn, paths)

    # -- edges -------------------------------------------------------------------------
    def insert_edges(self, edges: Iterable[tuple[Edge, str]]) -> None:
        """Edges with the path (or special origin) whose resolution produced them."""
        _edges.insert_edges(self.conn, edges)

    def delete_edges_from(self, origins: Sequence[str]) -> None:
        _edges.delete_edges_from(self.conn, origins)

    def delete_edges_from_sources(self, origin: str, sources: Iterable[str]) -> None:
        """Delete the edges ``origin`` produced that leave the given node ids."""
        _edges.delete_edges_from_sources(self.conn, origin, sources)

    def origin_ids(self, origins: Iterable[str]) -> dict[str, int]:
        return _edges.origin_ids(self.conn, origins)

    def edge_arrays(self, origins: Sequence[int] | None = None) -> tuple[list[str], Any, Any, Any, Any, Any]:
        """(node ids, source index, target index, kind, confidence, origin id) as numpy arrays."""
        return _edges.edge_arrays(self.conn, origins)

    def all_edges(self) -> list[Edge]:
        return _edges.all_edges(self.conn)

    def edges_touching(self, ids: Iterable[str]) -> list[Edge]:
        return _edges.edges_touching(self.conn, ids)

    # -- blobs -------------------------------------------------------------------------
    def put_blob(self, name: str, tag: str, data: bytes) -> None:
        self.conn.execute("INSERT OR REPLACE INTO blobs(name, tag, data) VALUES (?, ?, ?)", (name, tag, data))

    def blob_tag(self, name: str) -> str | None:
        """The tag of a blob, without reading its data (``None``: no such blob)."""
        row = self.conn.execute("SELECT tag FROM blobs WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row[0])

    def get_blob(self, name: str) -> tuple[str, bytes] | None:
        row = self.conn.execute("SELECT tag, data FROM blobs WHERE name = ?", (name,)).fetchone()
        return None if row is None else (str(row[0]), bytes(row[1]))

    # -- history (store/history.py) ---------------------------------------------------------
    def replace_history(
        self,
        files: Iterable[tuple[str, int, int, float]],
        pairs: Iterable[tuple[str, str, int, float, float]],
    ) -> None:
        _history.replace_history(self.conn, files, pairs)

    def update_history_rows(
        self,
        files: Iterable[tuple[str, int, int, float]],
        pairs: Iterable[tuple[str, str, int, float, float]],
        removed_files: Iterable[str],
        removed_pairs: Iterable[tuple[str, str]],
    ) -> None:
        """Upsert the given ``hist_*`` rows and delete the removed ones; the rest stay."""
        _history.update_history_rows(self.conn, files, pairs, removed_files, removed_pairs)

    def history_files(self, paths: Collection[str] | None = None) -> list[tuple[str, int, int, float]]:
        return _history.history_files(self.conn, paths)

    def history_pairs(self, paths: Collection[str] | None = None) -> list[tuple[str, str, int, float, float]]:
        return _history.history_pairs(self.conn, paths)

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
