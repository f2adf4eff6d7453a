"""A mined ``HistoryState`` and the commits it applied ↔ bytes, exactly (no pickle).

The layout: the length of a JSON head (8 bytes, little-endian), the head, then the pairs as five
columns of little-endian numbers (both files as numbers into the head's paths, count, weight,
sized). The head holds the state's meta rows, its file rows, the paths, the caller's own keys and
the commits (sha, time, their files as numbers into the paths, subject). Floats go through JSON
(Python writes the shortest text that reads back to the same double) and the columns as raw
doubles, so a decoded state equals the encoded one bit for bit. Rows keep the order they are
given in, and a decoded state's mappings iterate in that order.

Two users: a state kept by head (``index/historykeep.py``, stored compressed in the store) and
a mine run ahead in a child process (``index/historyahead.py``, over a pipe).
"""

from __future__ import annotations

import json
import sys
from array import array
from collections.abc import Mapping, Sequence
from typing import Any

from knowing_pr.history.state import AppliedCommit, FileRow, HistoryState, MetaRow, PairRow

__all__ = ["decode_history", "encode_history"]

#: the head's own keys: a caller's key must be another one
_HEAD_KEYS = frozenset({"meta", "files", "paths", "commits", "pairs"})


def encode_history(
    rows: tuple[Sequence[MetaRow], Sequence[FileRow], Sequence[PairRow]],
    commits: Sequence[AppliedCommit],
    extra: Mapping[str, object],
) -> bytes:
    """``rows`` (a state's meta, file and pair rows, in the order to keep), ``commits`` and the
    JSON-able ``extra`` keys as bytes (the module's layout)."""
    if _HEAD_KEYS & set(extra):
        raise ValueError(f"the head's own keys cannot be extra: {sorted(_HEAD_KEYS & set(extra))}")
    meta, files, pairs = rows
    firsts, seconds, counts, weights, sizeds = zip(*pairs, strict=True) if pairs else ((),) * 5
    paths = sorted({*firsts, *seconds, *(p for c in commits for p in c.touched)})
    number = {path: i for i, path in enumerate(paths)}
    head = {
        "meta": meta,
        "files": files,
        "paths": paths,
        **extra,
        "commits": [[c.sha, c.time, [number[p] for p in c.touched], c.subject] for c in commits],
        "pairs": len(pairs),
    }
    encoded = json.dumps(head).encode("utf-8", "surrogateescape")
    columns = (
        array("I", map(number.__getitem__, firsts)),
        array("I", map(number.__getitem__, seconds)),
        array("q", counts),
        array("d", weights),
        array("d", sizeds),
    )
    return b"".join([len(encoded).to_bytes(8, "little"), encoded, *map(_little_endian, columns)])


def decode_history(payload: bytes) -> tuple[HistoryState, tuple[AppliedCommit, ...], dict[str, Any]]:
    """``encode_history``'s state, commits and whole head back; ``ValueError`` (or ``TypeError``,
    ``KeyError``, ``IndexError``, ``StoreError``) when the payload is malformed."""
    size = int.from_bytes(payload[:8], "little")
    head = json.loads(payload[8 : 8 + size].decode("utf-8", "surrogateescape"))
    if not isinstance(head, dict):
        raise ValueError("the history's head is not an object")
    paths, count = _paths(head["paths"]), head["pairs"]
    if not isinstance(count, int):
        raise ValueError("the history's pairs are malformed")
    columns: list[array[Any]] = []
    offset = 8 + size
    for code in ("I", "I", "q", "d", "d"):
        column = array(code)
        end = offset + count * column.itemsize
        column.frombytes(payload[offset:end])
        if len(column) != count:
            raise ValueError("the history's pairs are cut short")
        columns.append(_little_endian(column))
        offset = end
    firsts, seconds, counts, weights, sizeds = columns
    state = HistoryState.from_rows(
        [tuple(r) for r in head["meta"]],
        [tuple(r) for r in head["files"]],
        zip(
            map(paths.__getitem__, firsts),
            map(paths.__getitem__, seconds),
            counts,
            weights,
            sizeds,
            strict=True,
        ),
    )
    return state, _commits(head["commits"], paths), head


def _little_endian(column: array[Any]) -> array[Any]:
    """On a big-endian machine, ``column`` with its bytes swapped (the payload is little-endian
    either way; swapping twice restores it)."""
    if sys.byteorder == "big":
        column.byteswap()
    return column


def _paths(paths: object) -> list[str]:
    """The list of paths the pairs and commits number; ``ValueError`` when it is malformed."""
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ValueError("the history's paths are malformed")
    return paths


def _commits(rows: object, paths: list[str]) -> tuple[AppliedCommit, ...]:
    """The commits, their files numbers into ``paths``; ``ValueError`` when they are malformed."""
    if not isinstance(rows, list):
        raise ValueError("the history's commits are not a list")
    out: list[AppliedCommit] = []
    for row in rows:
        sha, time, touched, subject = row
        if not (isinstance(sha, str) and isinstance(time, int) and isinstance(subject, str)):
            raise ValueError("a commit of the history is malformed")
        if not isinstance(touched, list) or not all(
            isinstance(i, int) and 0 <= i < len(paths) for i in touched
        ):
            raise ValueError("the files of a commit of the history are malformed")
        out.append(AppliedCommit(sha, time, tuple(paths[i] for i in touched), subject))
    return tuple(out)
