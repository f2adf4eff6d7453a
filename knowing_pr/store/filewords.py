"""Whole files ↔ the FTS5 table ``file_words``: one row an indexed file (rowid = its file id),
its path's words and the words of its text, identifiers split (``parseHTTPResponse`` gives
``parsehttpresponse parse http response``); BM25 over it is the task's file channel.

The index run writes a row for every file it parses (``put_file_words``) and deletes the rows
of the files that leave the index; a store written before the table existed gets the rows of
its unchanged files on its next index run (``paths_without_words``). A word counts at most
``MAX_REPEATS`` times in one file: BM25 saturates long before, and the table stays small.
The caller owns the transaction.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence

from knowing_pr.store.batches import chunks
from knowing_pr.store.fts import concepts, word_tokens

__all__ = [
    "FILE_WORDS_TABLE",
    "MAX_REPEATS",
    "delete_file_words",
    "file_text_words",
    "paths_without_words",
    "put_file_words",
    "search_file_words",
]

FILE_WORDS_TABLE = """CREATE VIRTUAL TABLE IF NOT EXISTS file_words USING fts5(
        path_words, text_words, tokenize = "unicode61 tokenchars '_'")"""

#: the most times one word of a file is kept
MAX_REPEATS = 8
#: a file's text beyond this many bytes is not read (a data file that passed the size limit)
_MAX_BYTES = 1 << 20

_WORD = re.compile(r"[^\W\d][\w]*")


def file_text_words(data: bytes) -> str:
    """A file's words for ``file_words``: each identifier and its parts, lower case, each at
    most ``MAX_REPEATS`` times, in order of first appearance (the order is only for stability)."""
    text = data[:_MAX_BYTES].decode("utf-8", errors="replace")
    counts: Counter[str] = Counter()
    for word in _WORD.findall(text):
        if len(word) > 64:
            continue
        for token in dict.fromkeys(token.lower() for token in word_tokens(word)):
            if len(token) > 1:
                counts[token] += 1
    return " ".join(" ".join([token] * min(count, MAX_REPEATS)) for token, count in counts.items())


def _path_words(path: str) -> str:
    return f"{path.lower()} {concepts(path).lower()}"


def put_file_words(conn: sqlite3.Connection, rows: Iterable[tuple[str, str]]) -> None:
    """(path, ``file_text_words`` text) of indexed files: each file's row replaced."""
    rows = list(rows)
    fids = _fids(conn, [path for path, _ in rows])
    kept = [(fids[path], path, words) for path, words in rows if path in fids]
    conn.executemany("DELETE FROM file_words WHERE rowid = ?", [(fid,) for fid, _, _ in kept])
    conn.executemany(
        "INSERT INTO file_words(rowid, path_words, text_words) VALUES (?, ?, ?)",
        [(fid, _path_words(path), words) for fid, path, words in kept],
    )


def delete_file_words(conn: sqlite3.Connection, paths: Sequence[str]) -> None:
    """Forget these files' rows (call before their ``files`` rows go: the row id is the file id)."""
    fids = list(_fids(conn, paths).values())
    conn.executemany("DELETE FROM file_words WHERE rowid = ?", [(fid,) for fid in fids])


def paths_without_words(conn: sqlite3.Connection) -> dict[str, str]:
    """Indexed files with no ``file_words`` row (a store from before the table): path → blob id."""
    rows = conn.execute(
        "SELECT path, blob_id FROM files WHERE status = 'indexed'"
        " AND fid NOT IN (SELECT rowid FROM file_words)"
    )
    return {str(path): str(blob) for path, blob in rows}


def search_file_words(
    conn: sqlite3.Connection, query: str, *, limit: int, path_weight: float
) -> list[tuple[str, float]]:
    """BM25 over ``file_words`` (path words weighted ``path_weight``, text words 1); (path, bm25)
    best first, ties by path. An FTS5 query that does not parse finds nothing."""
    try:
        rows = conn.execute(
            "SELECT files.path, bm25(file_words, ?, 1.0) AS rank FROM file_words"
            " JOIN files ON files.fid = file_words.rowid WHERE file_words MATCH ?"
            " ORDER BY rank, files.path LIMIT ?",
            (path_weight, query, limit),
        ).fetchall()
    except sqlite3.OperationalError:
        return []
    return [(str(r[0]), float(r[1])) for r in rows]


def _fids(conn: sqlite3.Connection, paths: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for chunk in chunks(sorted(set(paths))):
        marks = ",".join("?" * len(chunk))
        out.update(conn.execute(f"SELECT path, fid FROM files WHERE path IN ({marks})", chunk))  # noqa: S608
    return out
