"""F5: a good store file → damaged variants (byte flips in the header, in b-tree pages, in the
FTS5 shadow tables and in the adjacency blob; truncations; zero length; not SQLite; a future
schema version), and the verdict of one run of the tool over each.

``variants(template, count, seed)`` yields ``(name, bytes)``; the same seed gives the same
variants. ``classify`` says what became of a variant after the tool ran: ``rebuilt`` (moved
aside to ``*.corrupt-*`` and rebuilt), ``harmless`` (not detected, and the final store passes
the oracle: the flip hit bytes nothing reads) or ``missed`` (not detected and the final store
fails the oracle — a defect).
"""

from __future__ import annotations

import random
import sqlite3
import struct
from collections.abc import Iterator
from pathlib import Path

HEADER_BYTES = 100


def _page_size(data: bytes) -> int:
    size = struct.unpack(">H", data[16:18])[0]
    return 65536 if size == 1 else size


def _pages_of(template: Path, like: str) -> list[int]:
    """Root pages of the tables and indexes whose name matches ``like`` (1-based)."""
    conn = sqlite3.connect(f"file:{template}?mode=ro", uri=True)
    try:
        return [
            int(r[0]) for r in conn.execute("SELECT rootpage FROM sqlite_master WHERE name LIKE ?", (like,))
        ]
    finally:
        conn.close()


def _blob_span(template: Path, data: bytes) -> tuple[int, int] | None:
    """Where (a piece of) the adjacency blob's bytes sit in the file."""
    conn = sqlite3.connect(f"file:{template}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT data FROM blobs WHERE name = 'adjacency'").fetchone()
    finally:
        conn.close()
    if row is None or len(row[0]) < 64:
        return None
    probe = bytes(row[0][16:64])
    at = data.find(probe)
    return None if at < 0 else (at, min(len(data), at + len(row[0]) - 16))


def _flip(data: bytes, offset: int, rng: random.Random) -> bytes:
    out = bytearray(data)
    out[offset] ^= rng.randrange(1, 256)
    return bytes(out)


def variants(template: Path, count: int, seed: int = 0) -> Iterator[tuple[str, bytes]]:
    rng = random.Random(seed)
    data = template.read_bytes()
    page = _page_size(data)
    pages = len(data) // page
    fts_pages = _pages_of(template, "nodes_fts%")
    blob = _blob_span(template, data)
    fixed: list[tuple[str, bytes]] = [
        ("zero-length", b""),
        ("not-sqlite", b"this is not a database\n" * 200),
        ("half-header", data[:50]),
        ("first-page-only", data[:page]),
        ("future-schema", _with_user_version(template, 99)),
    ]
    yield from fixed[:count]
    kinds = ["header", "btree", "fts", "blob", "truncate"]
    for i in range(max(0, count - len(fixed))):
        kind = kinds[i % len(kinds)]
        if kind == "header":
            offset = rng.randrange(0, HEADER_BYTES)
            yield f"header@{offset}", _flip(data, offset, rng)
        elif kind == "btree" or (kind == "fts" and not fts_pages) or (kind == "blob" and blob is None):
            number = rng.randrange(2, pages + 1)
            offset = (number - 1) * page + rng.randrange(0, page)
            yield f"btree-page{number}@{offset}", _flip(data, offset, rng)
        elif kind == "fts":
            number = rng.choice(fts_pages)
            offset = (number - 1) * page + rng.randrange(0, min(page, 64))
            yield f"fts-page{number}@{offset}", _flip(data, offset, rng)
        elif kind == "blob":
            assert blob is not None
            offset = rng.randrange(*blob)
            yield f"adjacency@{offset}", _flip(data, offset, rng)
        else:
            length = rng.randrange(1, len(data))
            yield f"truncate@{length}", data[:length]


def _with_user_version(template: Path, version: int) -> bytes:
    data = bytearray(template.read_bytes())
    data[60:64] = struct.pack(">I", version)  # the header's user_version field
    return bytes(data)


def moved_aside(db: Path) -> list[Path]:
    return sorted(p for p in db.parent.iterdir() if p.name.startswith(db.name + ".corrupt-"))


def plant(db: Path, content: bytes) -> None:
    for p in [*moved_aside(db), *(Path(str(db) + s) for s in ("-wal", "-shm", ".writing"))]:
        p.unlink(missing_ok=True)
    db.write_bytes(content)
