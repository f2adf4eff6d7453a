"""File paths ↔ the ``files`` table (one row a path, indexed or skipped, with a file id that
stays the path's for as long as the row exists) and each file's references (``refs``,
``ref_names``).

The lookup columns ``dir``, ``stem`` and ``module_reversed`` let an incremental index ask for
the files of one directory, of one stem, or whose module name ends in given segments, without
reading the whole table. ``delete_files`` removes everything derived from a file: its nodes
and their FTS rows (``nodes.delete_nodes_of``) and its references. References are stored
zlib-compressed under the file id, with the names they mention in ``ref_names`` for
``paths_referencing``.
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from knowing_pr.store.batches import chunks
from knowing_pr.store.nodes import delete_nodes_of

__all__ = [
    "FileRow",
    "delete_files",
    "file_ids",
    "file_paths",
    "files",
    "indexed_among",
    "indexed_file_count",
    "indexed_paths",
    "indexed_paths_in_dir",
    "indexed_paths_with_module_suffix",
    "indexed_paths_with_stem",
    "path_keys",
    "paths_referencing",
    "put_refs",
    "put_test_cases",
    "refs_for",
    "test_cases_for",
    "skip_reasons",
    "upsert_files",
]


@dataclass(frozen=True, slots=True)
class FileRow:
    """A file of the indexed commit as the store keeps it (indexed, or skipped and why)."""

    path: str
    blob_id: str
    language: str | None
    size: int
    status: str  # "indexed" | "skipped"
    reason: str | None
    root: str | None
    line_count: int


def path_keys(path: str) -> tuple[str, str, str]:
    """(directory, stem, reversed module name) of a path: the lookup columns of ``files``."""
    from knowing_pr.graph.paths import file_stem, module_name

    return path.rpartition("/")[0], file_stem(path), module_name(path)[::-1]


def files(conn: sqlite3.Connection) -> dict[str, FileRow]:
    rows = conn.execute("SELECT path, blob_id, language, size, status, reason, root, line_count FROM files")
    return {r[0]: FileRow(*r) for r in rows}


def file_ids(conn: sqlite3.Connection, paths: Iterable[str] | None = None) -> dict[str, int]:
    if paths is None:
        return dict(conn.execute("SELECT path, fid FROM files"))
    out: dict[str, int] = {}
    for chunk in chunks(list(paths)):
        marks = ",".join("?" * len(chunk))
        out.update(conn.execute(f"SELECT path, fid FROM files WHERE path IN ({marks})", chunk))  # noqa: S608
    return out


def upsert_files(conn: sqlite3.Connection, rows: Iterable[FileRow]) -> None:
    """Insert or update file rows, keeping each path's file id stable."""
    conn.executemany(
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
                *path_keys(r.path),
            )
            for r in rows
        ],
    )


def file_paths(conn: sqlite3.Connection) -> list[str]:
    """Every file row's path (indexed or skipped)."""
    return [r[0] for r in conn.execute("SELECT path FROM files")]


def indexed_among(conn: sqlite3.Connection, paths: Iterable[str]) -> set[str]:
    """Which of ``paths`` are indexed files."""
    out: set[str] = set()
    for chunk in chunks(sorted(set(paths))):
        marks = ",".join("?" * len(chunk))
        query = f"SELECT path FROM files WHERE status = 'indexed' AND path IN ({marks})"  # noqa: S608
        out.update(r[0] for r in conn.execute(query, chunk))
    return out


def skip_reasons(conn: sqlite3.Connection, paths: Iterable[str]) -> dict[str, str]:
    """path → why it was not indexed, for those of ``paths`` the index skipped."""
    out: dict[str, str] = {}
    for chunk in chunks(sorted(set(paths))):
        marks = ",".join("?" * len(chunk))
        query = f"SELECT path, reason FROM files WHERE status = 'skipped' AND path IN ({marks})"  # noqa: S608
        out.update((path, reason or "skipped") for path, reason in conn.execute(query, chunk))
    return out


def indexed_paths_in_dir(conn: sqlite3.Connection, directory: str) -> list[str]:
    """The indexed files directly inside ``directory`` (``""``: the repository root)."""
    return _indexed_paths_where(conn, "dir", directory)


def indexed_paths_with_stem(conn: sqlite3.Connection, stem: str) -> list[str]:
    """The indexed files whose name up to its first dot is ``stem``."""
    return _indexed_paths_where(conn, "stem", stem)


def indexed_paths_with_module_suffix(conn: sqlite3.Connection, dotted: str) -> list[str]:
    """The indexed files whose module name (``graph.paths.module_name``) is ``dotted`` or
    ends in ``.dotted``."""
    reversed_name = dotted[::-1]
    rows = conn.execute(
        "SELECT path, module_reversed FROM files WHERE module_reversed >= ? AND module_reversed < ?"
        " AND status = 'indexed'",
        (reversed_name, reversed_name + "/"),  # "/" is the character after "."
    )
    return sorted(p for p, r in rows if r == reversed_name or r.startswith(reversed_name + "."))


def _indexed_paths_where(conn: sqlite3.Connection, column: str, value: str) -> list[str]:
    query = f"SELECT path FROM files WHERE {column} = ? AND status = 'indexed'"  # noqa: S608
    return sorted(r[0] for r in conn.execute(query, (value,)))


def delete_files(conn: sqlite3.Connection, paths: Sequence[str]) -> None:
    """Remove these files and everything derived from them (nodes, FTS rows, references)."""
    fids = list(file_ids(conn, paths).values())
    delete_nodes_of(conn, paths)
    for chunk in chunks(fids):
        marks = ",".join("?" * len(chunk))
        for table in ("refs", "ref_names", "test_cases", "files"):
            conn.execute(f"DELETE FROM {table} WHERE fid IN ({marks})", chunk)  # noqa: S608


def indexed_file_count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM files WHERE status = 'indexed'").fetchone()[0])


def indexed_paths(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT path FROM files WHERE status = 'indexed'")]


def put_refs(conn: sqlite3.Connection, rows: Iterable[tuple[str, str, Iterable[str]]]) -> None:
    rows = list(rows)
    fids = file_ids(conn, (p for p, _, _ in rows))
    for path, data, names in rows:
        fid = fids[path]
        conn.execute(
            "INSERT OR REPLACE INTO refs(fid, data) VALUES (?, ?)", (fid, zlib.compress(data.encode(), 6))
        )
        conn.execute("DELETE FROM ref_names WHERE fid = ?", (fid,))
        conn.executemany(
            "INSERT INTO ref_names(name, fid) VALUES (?, ?)", [(n, fid) for n in sorted(set(names))]
        )


def put_test_cases(conn: sqlite3.Connection, rows: Iterable[tuple[str, str | None]]) -> None:
    """Each file's test cases (encoded text), or None: the file keeps none."""
    rows = list(rows)
    fids = file_ids(conn, (p for p, _ in rows))
    conn.executemany(
        "DELETE FROM test_cases WHERE fid = ?", [(fids[path],) for path, data in rows if data is None]
    )
    conn.executemany(
        "INSERT OR REPLACE INTO test_cases(fid, data) VALUES (?, ?)",
        [(fids[path], zlib.compress(data.encode(), 6)) for path, data in rows if data is not None],
    )


def test_cases_for(conn: sqlite3.Connection, paths: Iterable[str]) -> dict[str, tuple[str, str, str]]:
    """path → (the blob id it was indexed at, its language, its test cases' text), for the
    indexed files among ``paths`` whose test cases are kept."""
    fids = file_ids(conn, paths)
    by_fid = {v: k for k, v in fids.items()}
    out: dict[str, tuple[str, str, str]] = {}
    try:
        for chunk in chunks(list(by_fid)):
            marks = ",".join("?" * len(chunk))
            for fid, blob_id, language, data in conn.execute(
                "SELECT t.fid, f.blob_id, f.language, t.data FROM test_cases t"  # noqa: S608
                f" JOIN files f ON f.fid = t.fid WHERE t.fid IN ({marks}) AND f.status = 'indexed'",
                chunk,
            ):
                out[by_fid[fid]] = (blob_id, language or "", zlib.decompress(data).decode())
    except sqlite3.OperationalError as exc:
        if "no such table: test_cases" not in str(exc):
            raise
        return {}  # a store of schema 4 opened read-only (``schema.ADDED_SINCE``): none kept
    return out


def refs_for(conn: sqlite3.Connection, paths: Iterable[str]) -> dict[str, str]:
    fids = file_ids(conn, paths)
    by_fid = {v: k for k, v in fids.items()}
    out: dict[str, str] = {}
    for chunk in chunks(list(by_fid)):
        marks = ",".join("?" * len(chunk))
        for fid, data in conn.execute(
            f"SELECT fid, data FROM refs WHERE fid IN ({marks})",  # noqa: S608
            chunk,
        ):
            out[by_fid[fid]] = zlib.decompress(data).decode()
    return out


def paths_referencing(conn: sqlite3.Connection, names: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for chunk in chunks(sorted(set(names))):
        marks = ",".join("?" * len(chunk))
        out.update(
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT f.path FROM ref_names r JOIN files f ON f.fid = r.fid"  # noqa: S608
                f" WHERE r.name IN ({marks})",
                chunk,
            )
        )
    return out


def keys_reading(conn: sqlite3.Connection, names: Iterable[str], prefix: str) -> set[str]:
    """The keys of the stored ``<prefix><name> <key>`` entries for these names (a range scan
    of the ``ref_names`` primary key per name)."""
    out: set[str] = set()
    for name in sorted(set(names)):
        low = f"{prefix}{name} "
        rows = conn.execute(
            "SELECT DISTINCT name FROM ref_names WHERE name >= ? AND name < ?", (low, low[:-1] + "!")
        )
        out.update(r[0][len(low) :] for r in rows)
    return out
