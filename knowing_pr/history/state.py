"""Mined history as plain data: per-file and per-pair change counts with their decayed weights
(``HistoryState``), the rows one mine changed (``HistoryDelta``), the state ↔ table rows, and the
decay anchor the weights are stored relative to. What the numbers mean: ``mine.py``."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from knowing_pr.config import HistoryParams
from knowing_pr.errors import StoreError

__all__ = [
    "ANCHOR_SPAN",
    "AppliedCommit",
    "FileStats",
    "HistoryDelta",
    "HistoryState",
    "PairStats",
    "decay_time_constant_s",
    "weight_anchor",
]

SECONDS_PER_DAY = 86_400
HISTORY_FORMAT = "3"
#: the stored weights are exp((t - anchor)/tau) with t - anchor below this many time constants
ANCHOR_SPAN = 16

FileRow = tuple[str, int, int, float]
PairRow = tuple[str, str, int, float, float]
MetaRow = tuple[str, str]


class FileStats(NamedTuple):
    """One file's mined history (a named tuple: the miner builds hundreds of thousands of them as
    plain tuples and names them once, ``mine._Accumulator.freeze``)."""

    commits: int
    last_time: int
    #: recency-weighted commit count (see the module docstring)
    churn: float


class PairStats(NamedTuple):
    """One pair of files' commits together (a named tuple, as ``FileStats``)."""

    count: int  # type: ignore[assignment]  # the field hides ``tuple.count``, which no caller uses
    weight: float
    #: the same decayed weight with each commit's share divided by (files it changed - 1): large
    #: commits count less (a 2-file commit links its pair fully, a 30-file one 1/29 of that)
    sized: float = 0.0


@dataclass(frozen=True, slots=True)
class AppliedCommit:
    """A commit the miner counted, as the fit of the file ranking replays it (``mine.py``)."""

    sha: str
    time: int
    #: the paths it changed that the counts took in (sorted; empty when it changed too many files)
    touched: tuple[str, ...]
    #: its subject (``git.commit_subject``); not kept with the file model's recent commits
    subject: str = field(default="", compare=False)


@dataclass(frozen=True)
class HistoryState:
    """Mined history signals; treat the mappings as read-only (mining copies them)."""

    mined_head: str | None
    #: commits walked so far, skipped ones included
    mined_commits: int
    #: newest committer time among the mined commits: the decay reference t_ref
    reference_time: int | None
    #: the parameters the counts depend on; a change forces a full re-mine
    half_life_days: float
    max_files_per_commit: int
    files: Mapping[str, FileStats]
    pairs: Mapping[tuple[str, str], PairStats]
    _partners: dict[str, list[str]] | None = field(default=None, init=False, repr=False, compare=False)
    #: what the mine that produced this state changed in the state it extended; ``None``:
    #: mined from scratch (or every weight was rescaled), so every row is new
    delta: HistoryDelta | None = field(default=None, init=False, repr=False, compare=False)
    #: the newest commits this mine applied, oldest first (at most ``mine_history``'s
    #: ``keep_recent``; not persisted with the state)
    recent: tuple[AppliedCommit, ...] = field(default=(), init=False, repr=False, compare=False)
    #: whether that mine extended a previous state (else it mined from scratch)
    extended: bool = field(default=False, init=False, repr=False, compare=False)
    #: every commit that mine applied, oldest first, with its subject (the store's past commits,
    #: ``store/commitwords.py``); empty for a state that was not mined by this call
    applied: tuple[AppliedCommit, ...] = field(default=(), init=False, repr=False, compare=False)
    #: ``to_rows``, once (the store's tables and the kept copy write the same rows)
    _rows: tuple[list[MetaRow], list[FileRow], list[PairRow]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @classmethod
    def empty(cls, params: HistoryParams) -> HistoryState:
        return cls(None, 0, None, params.half_life_days, params.max_files_per_commit, {}, {})

    def partners(self, path: str) -> list[str]:
        """Files that changed together with ``path`` at least once (index built on first use)."""
        if self._partners is None:
            index: dict[str, list[str]] = {}
            for first, second in self.pairs:
                index.setdefault(first, []).append(second)
                index.setdefault(second, []).append(first)
            object.__setattr__(self, "_partners", index)
            return index.get(path, [])
        return self._partners.get(path, [])

    def with_pairs(self, pair_rows: Iterable[PairRow]) -> HistoryState:
        """This state's meta and file rows with ``pair_rows`` (as ``pair_rows`` gives them) as
        its pairs: a state read for some files' pairs only. ``StoreError`` for malformed rows."""
        return dataclasses.replace(self, pairs=_pair_stats(pair_rows))

    def partner_index_if_built(self) -> dict[str, list[str]] | None:
        return self._partners

    @property
    def decay_factor(self) -> float:
        """Multiply a stored churn or weight by this for its value decayed to ``reference_time``
        (the stored values are relative to ``weight_anchor``; ratios of them need no factor)."""
        if self.reference_time is None:
            return 1.0
        anchor = weight_anchor(self.reference_time, self.half_life_days)
        return math.exp(-(self.reference_time - anchor) / decay_time_constant_s(self.half_life_days))

    def pair(self, a: str, b: str) -> PairStats | None:
        return self.pairs.get((a, b) if a < b else (b, a))

    # -- persistence as plain rows -----------------------------------------------------------

    def meta_rows(self) -> list[MetaRow]:
        return [
            ("format", HISTORY_FORMAT),
            ("mined_head", self.mined_head or ""),
            ("mined_commits", str(self.mined_commits)),
            ("reference_time", "" if self.reference_time is None else str(self.reference_time)),
            ("half_life_days", repr(self.half_life_days)),
            ("max_files_per_commit", str(self.max_files_per_commit)),
        ]

    def file_rows(self) -> list[FileRow]:
        """(path, commits, last_time, churn) sorted by path."""
        return [(path, s.commits, s.last_time, s.churn) for path, s in sorted(self.files.items())]

    def pair_rows(self) -> list[PairRow]:
        """(path_a, path_b, count, weight, sized) with path_a < path_b, sorted."""
        return [(a, b, s.count, s.weight, s.sized) for (a, b), s in sorted(self.pairs.items())]

    def to_rows(self) -> tuple[list[MetaRow], list[FileRow], list[PairRow]]:
        """The state as rows, built once (treat them as read-only)."""
        if self._rows is None:
            object.__setattr__(self, "_rows", (self.meta_rows(), self.file_rows(), self.pair_rows()))
        assert self._rows is not None
        return self._rows

    @classmethod
    def from_rows(
        cls, meta_rows: Iterable[MetaRow], file_rows: Iterable[FileRow], pair_rows: Iterable[PairRow]
    ) -> HistoryState:
        """Rebuild a state from the rows of ``to_rows`` (as read back from the store)."""
        meta = dict(meta_rows)
        if meta.get("format") != HISTORY_FORMAT:
            raise StoreError(
                f"history rows have format {meta.get('format')!r}, expected {HISTORY_FORMAT!r}",
                hint="re-index with --full to mine the history again",
            )
        try:
            files = {str(p): FileStats(int(c), int(t), float(w)) for p, c, t, w in file_rows}
            pairs = _pair_stats(pair_rows)
            return cls(
                mined_head=meta["mined_head"] or None,
                mined_commits=int(meta["mined_commits"]),
                reference_time=int(meta["reference_time"]) if meta["reference_time"] else None,
                half_life_days=float(meta["half_life_days"]),
                max_files_per_commit=int(meta["max_files_per_commit"]),
                files=files,
                pairs=pairs,
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise StoreError(f"history rows are malformed: {exc!r}", hint="re-index with --full") from None


def _pair_stats(pair_rows: Iterable[PairRow]) -> dict[tuple[str, str], PairStats]:
    """Pair rows as read back from the store → the pairs of a state (``StoreError``: malformed)."""
    try:
        return {(str(a), str(b)): PairStats(int(c), float(w), float(z)) for a, b, c, w, z in pair_rows}
    except (ValueError, TypeError) as exc:
        raise StoreError(f"history rows are malformed: {exc!r}", hint="re-index with --full") from None


def decay_time_constant_s(half_life_days: float) -> float:
    """tau such that exp(-t/tau) halves every ``half_life_days``."""
    return half_life_days * SECONDS_PER_DAY / math.log(2)


def weight_anchor(reference_time: int | None, half_life_days: float) -> float:
    """The time the stored weights are relative to: ``reference_time`` rounded down to a
    multiple of ``ANCHOR_SPAN`` time constants (a pure function of the newest commit, so a full
    and an incremental mine agree; it moves, and every row is rescaled, once in that span)."""
    if reference_time is None:
        return 0.0
    span = ANCHOR_SPAN * decay_time_constant_s(half_life_days)
    return math.floor(reference_time / span) * span


@dataclass(frozen=True)
class HistoryDelta:
    """Rows one mine changed relative to the state it extended (``None`` on a state: all)."""

    files: frozenset[str]
    pairs: frozenset[tuple[str, str]]
    removed_files: frozenset[str]
    removed_pairs: frozenset[tuple[str, str]]

    @property
    def empty(self) -> bool:
        return not (self.files or self.pairs or self.removed_files or self.removed_pairs)

    def touched_paths(self) -> set[str]:
        """Files whose own stats or any of whose pairs changed (or went away)."""
        paths = set(self.files) | set(self.removed_files)
        for first, second in (*self.pairs, *self.removed_pairs):
            paths.add(first)
            paths.add(second)
        return paths
