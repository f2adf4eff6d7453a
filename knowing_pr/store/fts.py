"""Node fields → the rows of the contentless FTS5 table ``nodes_fts`` and BM25 searches over it.

``fts_tokens`` makes identifiers searchable by their parts (``parseHTTPResponse`` is found by
``http`` and ``response``); ``concepts`` adds what a file's path says (its directory and stem).
``nodes_fts`` is contentless, so a row is forgotten only when ``fts_delete`` is given the very
values that were indexed: both directions derive them from the node's fields with
``fts_values``.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from knowing_pr.model import Node

__all__ = [
    "FTS_WEIGHTS",
    "concepts",
    "fts_delete",
    "fts_insert",
    "fts_tokens",
    "fts_values",
    "search_fts",
    "word_tokens",
]

#: BM25 column weights (seeds 002/003): symbol name, path concepts, file path, qualified name,
#: doc, signature
FTS_WEIGHTS = (10.0, 5.0, 4.0, 3.0, 3.0, 1.0)


# lower = any letter that is not an ASCII capital (so non-ASCII letters stay inside words)
_IDENTIFIER_PARTS = re.compile(r"[A-Z]+(?=[A-Z][^\W\d_A-Z])|[A-Z]?[^\W\d_A-Z]+|[A-Z]+|[0-9]+")
_WORD_SEPARATORS = str.maketrans({"/": " ", ".": " ", ":": " "})


@lru_cache(maxsize=131072)
def word_tokens(word: str) -> tuple[str, ...]:
    """``parseHTTPResponse_v2`` → itself, ``parse``, ``HTTP``, ``Response``, ``v``, ``2``, …"""
    candidates = [word, *_IDENTIFIER_PARTS.findall(word)]
    if "_" in word:
        candidates.extend(p for p in word.split("_") if p)
    return tuple(candidates)


@lru_cache(maxsize=65536)
def fts_tokens(text: str) -> str:
    """CamelCase/snake_case-aware FTS text: the original tokens plus their parts."""
    tokens: dict[str, str] = {}
    for raw in text.translate(_WORD_SEPARATORS).split():
        word = raw.strip("()[]{},;*<>&|'\"`")
        if word:
            for token in word_tokens(word):
                tokens.setdefault(token.lower(), token)
    return " ".join(tokens.values())


def fts_values(name: str, path: str, qualified_name: str, doc: str, signature: str) -> tuple[str, ...]:
    """One node's ``nodes_fts`` columns, in the table's order (that of ``FTS_WEIGHTS``)."""
    return (fts_tokens(name), concepts(path), path, fts_tokens(qualified_name), doc, fts_tokens(signature))


def concepts(path: str) -> str:
    """The tokens of a file's directory and stem: what the path says the file is about."""
    segments = path.split("/")
    stem = segments[-1].rsplit(".", 1)[0]
    parent = segments[-2] if len(segments) > 1 else ""
    return fts_tokens(f"{parent} {stem}")


def fts_delete(conn: sqlite3.Connection, rows: Iterable[tuple[Any, ...]]) -> None:
    """Contentless FTS5 forgets a row only when given the values it indexed."""
    conn.executemany(
        "INSERT INTO nodes_fts(nodes_fts, rowid, symbol_name, concepts, file_path, qualified_name, doc,"
        " signature) VALUES ('delete', ?, ?, ?, ?, ?, ?, ?)",
        [(r[0], *fts_values(r[1], r[2], r[3], r[4], r[5])) for r in rows],
    )


def fts_insert(conn: sqlite3.Connection, rows: Iterable[tuple[int, Node]]) -> None:
    """Index (node rowid, node) pairs."""
    conn.executemany(
        "INSERT INTO nodes_fts(rowid, symbol_name, concepts, file_path, qualified_name, doc, signature)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(rowid, *fts_values(n.name, n.path, n.qualified_name, n.doc, n.signature)) for rowid, n in rows],
    )


def search_fts(conn: sqlite3.Connection, query: str, *, limit: int = 30) -> list[tuple[str, float]]:
    """BM25 over the FTS5 table with the seeds' column weights; (node id, bm25) best first."""
    weights = ", ".join(str(w) for w in FTS_WEIGHTS)
    try:
        rows = conn.execute(
            f"SELECT nodes.id, bm25(nodes_fts, {weights}) AS rank FROM nodes_fts"  # noqa: S608
            " JOIN nodes ON nodes.rowid = nodes_fts.rowid WHERE nodes_fts MATCH ?"
            " ORDER BY rank, nodes.id LIMIT ?",
            (query, limit),
        ).fetchall()
    except sqlite3.OperationalError:
        return []
    return [(str(r[0]), float(r[1])) for r in rows]
