"""Content sketches ↔ the ``file_sketches`` table: one row an indexed file, its MinHash sketch
(``parse.sketch``) and whether it says it is generated. Written by the index run for the files
it parsed, deleted with the files that left the index; read whole by the file ranking.
The caller owns the transaction."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knowing_pr.store import Store

__all__ = ["all_sketches", "delete_sketches", "put_sketches"]


def put_sketches(store: Store, rows: Iterable[tuple[str, bytes, bool]]) -> None:
    """Insert or replace (path, sketch bytes, generated) rows."""
    store.conn.executemany(
        "INSERT OR REPLACE INTO file_sketches(path, sketch, generated) VALUES (?, ?, ?)",
        ((path, sketch, int(generated)) for path, sketch, generated in rows),
    )


def delete_sketches(store: Store, paths: Sequence[str]) -> None:
    store.conn.executemany("DELETE FROM file_sketches WHERE path = ?", [(p,) for p in sorted(set(paths))])


def all_sketches(store: Store) -> list[tuple[str, bytes, bool]]:
    """(path, sketch bytes, generated) of every sketched file, by path."""
    return [
        (str(path), bytes(sketch), bool(generated))
        for path, sketch, generated in store.conn.execute(
            "SELECT path, sketch, generated FROM file_sketches ORDER BY path"
        )
    ]
