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

import zlib
from dataclasses import dataclass

from knowing_pr.errors import StoreError
from knowing_pr.git import GitRepo
from knowing_pr.history import HistoryState
from knowing_pr.history.codec import decode_history, encode_history
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
    """A kept state as bytes (``history/codec.py``, exact): its rows, the recent commits' lines,
    and the commits it applied with their subjects (those that changed a counted file: the rest
    vote for nothing, ``append_commits`` leaves them out)."""
    return encode_history(state.to_rows(), [c for c in state.applied if c.touched], {"recent": recent_lines})


def _kept(payload: bytes) -> KeptState:
    """``_payload``'s state back; ``ValueError`` (or ``TypeError``, ``KeyError``, ``IndexError``,
    ``StoreError``) when it is malformed."""
    state, commits, head = decode_history(payload)
    recent = head["recent"]
    if not isinstance(recent, list):
        raise ValueError("the kept recent commits are malformed")
    return KeptState(state, [str(line) for line in recent], commits)


def _tag(state: HistoryState, window: tuple[str, ...]) -> str:
    meta = dict(state.meta_rows())
    fields = (meta["format"], meta["half_life_days"], meta["max_files_per_commit"], *window)
    return "|".join((*fields, _PAYLOAD_FORMAT))
