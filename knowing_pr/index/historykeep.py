"""Mined history states kept by head, so a store that comes back to a commit (or to an ancestor
of where it goes) takes the state instead of mining the history from scratch again.

A state mined from scratch (the store moved to an older commit, to another branch, a full index)
is kept as the blob ``history_at:<head>`` (its rows, the file model's recent commits of that head
and the subjects of the commits it applied (``store/commitwords.py``), compressed, tagged with the
history's format and parameters); the newest ``KEPT_STATES``
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
import zlib
from dataclasses import dataclass

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
#: the kept payload's shape (2: a commit's files are numbers into ``paths``); another: not taken
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
    meta, files, pairs = state.to_rows()
    # the commits that changed no counted file vote for nothing (``append_commits`` leaves them out);
    # their files are numbers into one list of paths (a path is named by many commits)
    number: dict[str, int] = {}
    commits = [
        [c.sha, c.time, [number.setdefault(p, len(number)) for p in c.touched], c.subject]
        for c in state.applied
        if c.touched
    ]
    payload = json.dumps(
        {
            "meta": meta,
            "files": files,
            "pairs": pairs,
            "recent": recent_lines,
            "paths": list(number),
            "commits": commits,
        }
    )
    store.put_blob(
        PREFIX + head,
        _tag(state, window),
        zlib.compress(payload.encode("utf-8", "surrogateescape"), _LEVEL),
    )
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
            data = json.loads(zlib.decompress(found[1]))
            state = HistoryState.from_rows(
                [tuple(r) for r in data["meta"]],
                [tuple(r) for r in data["files"]],
                [tuple(r) for r in data["pairs"]],
            )
            recent = [str(line) for line in data["recent"]]
            commits = _commits(data["commits"], data["paths"])  # kept without them: KeyError, not taken
        except (ValueError, TypeError, KeyError, zlib.error, StoreError):  # damaged: mined again
            continue
        return KeptState(state, recent, commits)
    return None


def _commits(rows: object, paths: object) -> tuple[AppliedCommit, ...]:
    """The kept commits, their files numbers into ``paths``; ``ValueError`` when they are malformed."""
    if not isinstance(rows, list) or not isinstance(paths, list):
        raise ValueError("kept commits are not a list")
    if not all(isinstance(p, str) for p in paths):
        raise ValueError("a kept commit's files are malformed")
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
