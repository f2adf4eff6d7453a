"""Mined history states kept by head, so a store that comes back to a commit (or to an ancestor
of where it goes) takes the state instead of mining the history from scratch again.

A state mined from scratch (the store moved to an older commit, to another branch, a full index)
is kept as the blob ``history_at:<head>`` (its rows, the file model's recent commits of that head
and the subjects of the commits it applied (``store/commitwords.py``), compressed, tagged with the
history's format and parameters and the payload's shape); the newest ``KEPT_STATES``
are kept, a state of more than ``KEPT_STATE_MAX_PAIRS`` pairs is not. A run whose stored state
cannot be extended to its target takes the newest kept state whose head is the target or an
ancestor of it; the miner then extends it only when that is what a mine from scratch gives
(``history/mine.py``), so a kept state changes no number. The subjects come back with it, so a
store that switches branches does not walk the whole history again for them; a state kept before
they were kept is not taken (restoring it would still need a whole walk for its subjects: the
history is mined from scratch once instead).
"""

from __future__ import annotations

import json
import sys
import zlib
from array import array
from dataclasses import dataclass
from typing import Any

from knowing_pr.errors import StoreError
from knowing_pr.git import GitRepo
from knowing_pr.history import HistoryState
from knowing_pr.history.state import AppliedCommit
from knowing_pr.store import Store

__all__ = ["KEPT_STATES", "KeptState", "keep_state", "kept_state_for"]

PREFIX = "history_at:"
HEADS_META = "history_kept_heads"
KEPT_STATES = 4
KEPT_STATE_MAX_PAIRS = 500_000
#: zlib level of a kept state: 1 compresses a mined state ~3× faster than the default 6 for ~20%
#: more bytes (vite: 0.03 s against 0.08 s, 630 against 525 kB)
_LEVEL = 1
#: the kept payload's shape (``_payload``); a state kept in another is not taken
_PAYLOAD_FORMAT = "payload2"


@dataclass(frozen=True)
class KeptState:
    """A kept state, the file model's recent commits of its head (stored lines) and the commits it
    applied with their subjects."""

    state: HistoryState
    recent: list[str]
    commits: tuple[AppliedCommit, ...]


def keep_state(store: Store, state: HistoryState, recent_lines: list[str], window: tuple[str, ...]) -> None:
    """Keep ``state`` (a mine from scratch: its ``applied`` are all its commits; with the file
    model's recent commits of its head, as stored lines), mined over the window and rename rule
    ``window`` (``index.history.walk_meta``)."""
    head = state.mined_head
    if head is None or len(state.pairs) > KEPT_STATE_MAX_PAIRS:
        return
    store.put_blob(PREFIX + head, _tag(state, window), zlib.compress(_payload(state, recent_lines), _LEVEL))
    heads = [h for h in (store.get_meta(HEADS_META) or "").split() if h != head] + [head]
    for old in heads[:-KEPT_STATES]:
        store.conn.execute("DELETE FROM blobs WHERE name = ?", (PREFIX + old,))
    store.set_meta(HEADS_META, " ".join(heads[-KEPT_STATES:]))


def kept_state_for(
    store: Store, repo: GitRepo, target: str, params: HistoryState, window: tuple[str, ...]
) -> KeptState | None:
    """The newest kept state whose head is ``target`` or an ancestor of it, mined with the
    parameters of ``params`` (an empty state of the run's settings) over the same ``window``."""
    for head in reversed((store.get_meta(HEADS_META) or "").split()):
        if head != target and not (repo.has_commit(head) and repo.is_ancestor(head, target)):
            continue
        found = store.get_blob(PREFIX + head)
        if found is None or found[0] != _tag(params, window):
            continue
        try:
            kept = _kept(zlib.decompress(found[1]))  # a state kept in another shape: not taken
        except (
            ValueError,
            TypeError,
            KeyError,
            IndexError,
            OverflowError,
            RecursionError,
            zlib.error,
            StoreError,
        ):  # damaged: mined again
            continue
        return kept
    return None


def _payload(state: HistoryState, recent_lines: list[str]) -> bytes:
    """A kept state as bytes: the length of a JSON head, the head (meta, file rows, the paths, the
    recent commits' lines, the commits with their subjects), then the pairs as five columns of
    little-endian numbers (both files as numbers into the paths, count, weight, sized), exact."""
    meta, files, pairs = state.to_rows()
    firsts, seconds, counts, weights, sizeds = zip(*pairs, strict=True) if pairs else ((),) * 5
    paths = sorted({*firsts, *seconds, *(p for c in state.applied for p in c.touched)})
    number = {path: i for i, path in enumerate(paths)}
    # the commits that changed no counted file vote for nothing (``append_commits`` leaves them out)
    commits = [[c.sha, c.time, [number[p] for p in c.touched], c.subject] for c in state.applied if c.touched]
    head = {"meta": meta, "files": files, "paths": paths, "recent": recent_lines, "commits": commits}
    encoded = json.dumps({**head, "pairs": len(pairs)}).encode("utf-8", "surrogateescape")
    columns = (
        array("I", map(number.__getitem__, firsts)),
        array("I", map(number.__getitem__, seconds)),
        array("q", counts),
        array("d", weights),
        array("d", sizeds),
    )
    return b"".join([len(encoded).to_bytes(8, "little"), encoded, *map(_little_endian, columns)])


def _kept(payload: bytes) -> KeptState:
    """``_payload``'s state back; ``ValueError`` (or ``TypeError``, ``KeyError``, ``IndexError``,
    ``StoreError``) when it is malformed."""
    size = int.from_bytes(payload[:8], "little")
    head = json.loads(payload[8 : 8 + size].decode("utf-8", "surrogateescape"))
    paths, count = _paths(head["paths"]), head["pairs"]
    if not isinstance(count, int):
        raise ValueError("the kept pairs are malformed")
    columns: list[array[Any]] = []
    offset = 8 + size
    for code in ("I", "I", "q", "d", "d"):
        column = array(code)
        end = offset + count * column.itemsize
        column.frombytes(payload[offset:end])
        if len(column) != count:
            raise ValueError("the kept pairs are cut short")
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
    recent = [str(line) for line in head["recent"]]
    return KeptState(state, recent, _commits(head["commits"], paths))


def _little_endian(column: array[Any]) -> array[Any]:
    """On a big-endian machine, ``column`` with its bytes swapped (the payload is little-endian
    either way; swapping twice restores it)."""
    if sys.byteorder == "big":
        column.byteswap()
    return column


def _paths(paths: object) -> list[str]:
    """The kept list of paths the pairs and commits number; ``ValueError`` when it is malformed."""
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise ValueError("the kept paths are malformed")
    return paths


def _commits(rows: object, paths: list[str]) -> tuple[AppliedCommit, ...]:
    """The kept commits, their files numbers into ``paths``; ``ValueError`` when they are malformed."""
    if not isinstance(rows, list):
        raise ValueError("kept commits are not a list")
    out: list[AppliedCommit] = []
    for row in rows:
        sha, time, touched, subject = row
        if not (isinstance(sha, str) and isinstance(time, int) and isinstance(subject, str)):
            raise ValueError("a kept commit is malformed")
        if not isinstance(touched, list) or not all(
            isinstance(i, int) and 0 <= i < len(paths) for i in touched
        ):
            raise ValueError("a kept commit's files are malformed")
        out.append(AppliedCommit(sha, time, tuple(paths[i] for i in touched), subject))
    return tuple(out)


def _tag(state: HistoryState, window: tuple[str, ...]) -> str:
    meta = dict(state.meta_rows())
    fields = (meta["format"], meta["half_life_days"], meta["max_files_per_commit"], *window)
    return "|".join((*fields, _PAYLOAD_FORMAT))
