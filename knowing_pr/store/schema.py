"""A connection to a store file → its settings (WAL, busy timeout, ``trusted_schema=OFF``) and
the current schema in it: tables created, added or, from an older schema version, dropped and
created again; a newer version, a planted trigger or a view refused.

The version lives in ``PRAGMA user_version``. A version that only lacks tables or indexes
(``ADDED_SINCE``) gets them and keeps every row (its recorded packs too). Any other older layout
is not converted: its tables are dropped and the next index is a full one. The DDL below is the
one description of the tables (the other modules of the package read and write them).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager

from knowing_pr.errors import StoreCorrupt, UsageError
from knowing_pr.store.commitwords import COMMIT_TABLES
from knowing_pr.store.filewords import FILE_WORDS_TABLE

__all__ = [
    "BUSY_TIMEOUT_MS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "refuse_a_foreign_database",
    "TABLES",
    "check_schema_objects",
    "configure",
    "migrate",
]

SCHEMA_VERSION = 7
BUSY_TIMEOUT_MS = 30_000

#: the test cases of each file that may hold some (``index.parse.keeps_test_cases``), as
#: found at index time: the tests-to-run read them instead of parsing the test files again
_TEST_CASES = "CREATE TABLE IF NOT EXISTS test_cases(fid INTEGER PRIMARY KEY, data BLOB NOT NULL)"
#: a change's pairs are read by either side (``store.history._rows_naming``)
_PAIRS_BY_B = "CREATE INDEX IF NOT EXISTS hist_pairs_b ON hist_pairs(b)"

SCHEMA = [
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS files(
        fid INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, blob_id TEXT NOT NULL, language TEXT,
        size INTEGER NOT NULL, status TEXT NOT NULL, reason TEXT, root TEXT,
        line_count INTEGER NOT NULL DEFAULT 0, dir TEXT NOT NULL, stem TEXT NOT NULL,
        module_reversed TEXT NOT NULL)""",
    # an incremental index asks for one directory's or stem's files at a time, and for the
    # files whose module name ends in given segments (a prefix of the reversed name)
    "CREATE INDEX IF NOT EXISTS files_dir ON files(dir)",
    "CREATE INDEX IF NOT EXISTS files_stem ON files(stem)",
    "CREATE INDEX IF NOT EXISTS files_module_reversed ON files(module_reversed)",
    """CREATE TABLE IF NOT EXISTS nodes(
        rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, path TEXT NOT NULL,
        name TEXT NOT NULL, qualified_name TEXT NOT NULL, kind TEXT NOT NULL,
        language TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
        signature TEXT NOT NULL, doc TEXT NOT NULL, content_hash TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS nodes_path ON nodes(path)",
    "CREATE INDEX IF NOT EXISTS nodes_name ON nodes(name COLLATE NOCASE)",
    "CREATE INDEX IF NOT EXISTS nodes_name_kind ON nodes(name, kind)",
    # node rowids and file ids keep edges small; confidence in basis points (0..10000); rule:
    # the number of the rule that made the edge (knowing_pr/graph/rules.py, RULES)
    """CREATE TABLE IF NOT EXISTS edges(
        source INTEGER NOT NULL, target INTEGER NOT NULL, kind INTEGER NOT NULL,
        confidence INTEGER NOT NULL, rule INTEGER NOT NULL, origin INTEGER NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS edges_origin ON edges(origin)",
    "CREATE TABLE IF NOT EXISTS refs(fid INTEGER PRIMARY KEY, data BLOB NOT NULL)",
    """CREATE TABLE IF NOT EXISTS ref_names(
        name TEXT NOT NULL, fid INTEGER NOT NULL, PRIMARY KEY(name, fid)) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS ref_names_fid ON ref_names(fid)",
    _TEST_CASES,
    # parent: the directory above ("" for top-level ones, NULL for the root itself); name: the
    # last path segment. An incremental index re-hashes one ancestor chain from these.
    """CREATE TABLE IF NOT EXISTS dirs(
        path TEXT PRIMARY KEY, root TEXT NOT NULL, parent TEXT, name TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS dirs_parent ON dirs(parent)",
    "CREATE INDEX IF NOT EXISTS dirs_name ON dirs(name)",
    "CREATE TABLE IF NOT EXISTS blobs(name TEXT PRIMARY KEY, tag TEXT NOT NULL, data BLOB NOT NULL)",
    """CREATE TABLE IF NOT EXISTS packs(
        pack_root TEXT PRIMARY KEY, commit_id TEXT, created INTEGER NOT NULL, manifest TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS hist_files(
        path TEXT PRIMARY KEY, commits INTEGER NOT NULL, last_time INTEGER NOT NULL,
        churn REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS hist_pairs(
        a TEXT NOT NULL, b TEXT NOT NULL, count INTEGER NOT NULL, weight REAL NOT NULL,
        sized REAL NOT NULL DEFAULT 0, PRIMARY KEY(a, b))""",
    _PAIRS_BY_B,
    # one content sketch per indexed file (MinHash over token shingles) and whether the file
    # says it is generated; the file ranking's near-duplicate and generated signals
    """CREATE TABLE IF NOT EXISTS file_sketches(
        path TEXT PRIMARY KEY, sketch BLOB NOT NULL, generated INTEGER NOT NULL) WITHOUT ROWID""",
    # contentless: the tokens are derived from node rows, so deletes re-derive them
    """CREATE VIRTUAL TABLE IF NOT EXISTS nodes_fts USING fts5(
        symbol_name, concepts, file_path, qualified_name, doc, signature,
        content = '', tokenize = "unicode61 tokenchars '_'")""",
    # whole files' words (``filewords``): the task's file-level BM25
    FILE_WORDS_TABLE,
    # the mined commits' subjects and files (``commitwords``): the task's past-commits channel
    *COMMIT_TABLES,
]

#: every table of the schema (dropped when an older schema version is found)
TABLES = (
    "meta",
    "files",
    "nodes",
    "edges",
    "refs",
    "ref_names",
    "test_cases",
    "dirs",
    "blobs",
    "packs",
    "hist_files",
    "hist_pairs",
    "file_sketches",
    "nodes_fts",
    "file_words",
    "hist_commits",
    "commit_words",
)


def configure(conn: sqlite3.Connection, *, readonly: bool) -> None:
    """The connection's pragmas: a busy timeout instead of "database is locked", no trusted
    schema, WAL (or a rollback journal where WAL is not possible), a bounded cache."""
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA trusted_schema=OFF")
    if not readonly:
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()
        if mode is None or str(mode[0]).lower() != "wal":
            # e.g. a file system without shared memory: fall back to a rollback journal
            conn.execute("PRAGMA journal_mode=DELETE")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute("PRAGMA cache_size=-16384")  # 16 MiB: bounded peak memory on big indexes


def migrate(conn: sqlite3.Connection, transaction: Callable[[], AbstractContextManager[None]]) -> None:
    """Bring the store to ``SCHEMA_VERSION`` (creating it in one ``transaction()`` when it is
    new or older); ``StoreCorrupt`` when it is newer or holds a trigger or a view."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise StoreCorrupt(
            f"the store was written by a newer knowing-pr (schema {version} > {SCHEMA_VERSION})",
            hint="upgrade knowing-pr, or delete the store and re-index",
        )
    if version == SCHEMA_VERSION:
        check_schema_objects(conn)
        return
    if version in ADDED_SINCE:
        _add_tables(conn, transaction, version)
        return
    with transaction():
        # an older layout is not converted: it is dropped, and the next index is a full one
        for table in TABLES:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in SCHEMA:
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


#: schema version → the statements that bring a store of it to ``SCHEMA_VERSION`` keeping every
#: row: new tables and indexes only (files indexed before have no kept test cases until indexed
#: again; their cases are found from the source meanwhile; the files of a store without
#: ``file_words`` get their rows on the next index run, ``IndexRun._fill_file_words``; the
#: commits of ``hist_commits`` come with the next index run's history step)
#: meta key set when ``file_words`` is added to an older store: its indexed files have no rows yet
FILE_WORDS_PENDING_META = "file_words_pending"

ADDED_SINCE: dict[int, tuple[str, ...]] = {
    4: (_TEST_CASES, _PAIRS_BY_B, FILE_WORDS_TABLE, *COMMIT_TABLES),
    5: (FILE_WORDS_TABLE, *COMMIT_TABLES),
    6: COMMIT_TABLES,
}


def _add_tables(
    conn: sqlite3.Connection, transaction: Callable[[], AbstractContextManager[None]], version: int
) -> None:
    check_schema_objects(conn)
    with transaction():
        for statement in ADDED_SINCE[version]:
            conn.execute(statement)
        if FILE_WORDS_TABLE in ADDED_SINCE[version]:  # its rows come with the next index run
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, '1')", (FILE_WORDS_PENDING_META,)
            )
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


def refuse_a_foreign_database(conn: sqlite3.Connection) -> None:
    """A store never written by this tool (schema version 0) must be empty: another program's
    database is never dropped, added to or switched to WAL (``--db`` pointing at the wrong file is an
    input error). Called before anything writes, so the file stays byte for byte as it was."""
    if int(conn.execute("PRAGMA user_version").fetchone()[0]) != 0:
        return
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    shadows = ("data", "idx", "content", "docsize", "config")
    ours = set(TABLES) | {
        f"{fts}_{part}" for fts in ("nodes_fts", "file_words", "commit_words") for part in shadows
    }
    foreign = sorted(name for name in names - ours if not name.startswith("sqlite_"))
    if foreign:
        raise UsageError(
            f"the store file is another program's SQLite database (tables: {', '.join(foreign[:5])})",
            hint="point --db or KNOWING_PR_DB at a new file, or at a knowing-pr store",
        )


def check_schema_objects(conn: sqlite3.Connection) -> None:
    """Refuse planted triggers and views (a poisoned cache restored by an Action)."""
    rows = conn.execute("SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view')").fetchall()
    if rows:
        raise StoreCorrupt(f"the store contains unexpected {rows[0][0]} '{rows[0][1]}'")
