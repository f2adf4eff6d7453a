"""Git history → per-file and per-pair change signals (commit counts, recency, decayed co-change).

Mined at index time, and incrementally: only the commits not yet mined are walked, and
mining the first k commits then the rest gives the same state as mining everything at once
(counts equal, weights equal up to rounding).

Definitions (``tau = half_life_days · 86400 / ln 2``; ``t_ref`` = newest commit time mined):

- ``FileStats.commits``  commits that changed the file (a rename counts as a change);
- ``FileStats.last_time``  committer time of the newest of those commits;
- ``FileStats.churn``  the same commits weighted by recency, Σ exp((t - t_anchor)/tau): a
  decayed commit count, not a line count (line counts need blob diffs, 10-100× slower, and a
  "last 90 days" window cannot be updated incrementally without keeping every commit time);
- ``PairStats.count``  commits that changed both files of a pair (a < b);
- ``PairStats.weight``  Σ exp((t - t_anchor)/tau) over those commits.

The weights are stored relative to ``t_anchor = weight_anchor(t_ref)`` (``t_ref`` rounded down
to ``ANCHOR_SPAN`` time constants), not decayed to ``t_ref`` itself: a new commit then changes
only the rows it touches (``HistoryState.delta``), and the value decayed to ``t_ref`` is the
stored one times ``HistoryState.decay_factor``. Every consumer uses ratios of weights (the
decayed co-change share, churn relative to the most churned file), which need no factor.

Commits are applied oldest first, in the order they landed on the first-parent line of
``head`` (see ``landing_order``). Merges and shallow-boundary commits are skipped; a commit
that changes more than ``max_files_per_commit`` files (a reformat, a vendored drop) adds no
counts, but its renames and deletions still apply. A rename moves the old path's file stats
and pair entries to the new path (merging with what is there); a deletion drops the path's
stats and pairs, so the state describes the history of the files that exist at ``head``.

The state is plain data: ``to_rows``/``from_rows`` give tuple lists for the store's tables.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import combinations

from knowing_pr.config import HistoryParams
from knowing_pr.errors import StoreError
from knowing_pr.git import CommitInfo, GitRepo

__all__ = [
    "FileStats",
    "HistoryDelta",
    "HistoryState",
    "landing_order",
    "PairStats",
    "mine_history",
]

SECONDS_PER_DAY = 86_400
HISTORY_FORMAT = "2"
#: the stored weights are exp((t - anchor)/tau) with t - anchor below this many time constants
ANCHOR_SPAN = 16

FileRow = tuple[str, int, int, float]
PairRow = tuple[str, str, int, float]
MetaRow = tuple[str, str]


@dataclass(frozen=True, slots=True)
class FileStats:
    commits: int
    last_time: int
    #: recency-weighted commit count (see the module docstring)
    churn: float


@dataclass(frozen=True, slots=True)
class PairStats:
    count: int
    weight: float


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
        """(path_a, path_b, count, weight) with path_a < path_b, sorted."""
        return [(a, b, s.count, s.weight) for (a, b), s in sorted(self.pairs.items())]

    def to_rows(self) -> tuple[list[MetaRow], list[FileRow], list[PairRow]]:
        return self.meta_rows(), self.file_rows(), self.pair_rows()

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
            pairs = {(str(a), str(b)): PairStats(int(c), float(w)) for a, b, c, w in pair_rows}
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


def mine_history(
    repo: GitRepo, head: str, params: HistoryParams, previous: HistoryState | None = None
) -> HistoryState:
    """Mine the commits reachable from ``head`` that ``previous`` has not seen.

    ``previous`` is extended when its ``mined_head`` is an ancestor of ``head`` and it was
    mined with the same parameters; otherwise the history is mined from scratch. At most
    ``params.max_commits`` commits are walked per call (newest first).
    """
    if not params.enabled:
        return HistoryState.empty(params)
    head_sha = repo.resolve(head)
    base = previous if previous is not None and _extends(repo, previous, head_sha, params) else None
    if base is not None and base.mined_head == head_sha:
        return base
    stop_at = [base.mined_head] if base is not None and base.mined_head else []
    walked = list(
        repo.iter_commits(head_sha, stop_at=stop_at, max_commits=params.max_commits, merge_changes=False)
    )
    commits = landing_order(walked, head_sha)
    accumulator = _Accumulator(base or HistoryState.empty(params), params)
    accumulator.move_reference_time(max((c.time for c in commits), default=None))
    for commit in commits:
        accumulator.apply(commit)
    previous_count = base.mined_commits if base is not None else 0
    return accumulator.freeze(head_sha, previous_count + len(commits))


def landing_order(commits: Collection[CommitInfo], head_sha: str) -> list[CommitInfo]:
    """Commits in the order they landed on ``head``'s first-parent line, oldest first.

    For each commit of the first-parent chain (oldest first) come the commits it brought in
    (a merge's side branch, parents before children), then the commit itself. A run that
    starts where the previous one stopped sees the same order as one run over everything,
    whenever the previous head lies on the new head's first-parent line, which is how a branch
    grows by commits, fast-forwards and merges; this makes incremental mining equal full mining.
    """
    by_sha = {commit.sha: commit for commit in commits}
    chain: list[CommitInfo] = []
    current = by_sha.get(head_sha)
    while current is not None:
        chain.append(current)
        current = by_sha.get(current.parents[0]) if current.parents else None
    ordered: list[CommitInfo] = []
    placed: set[str] = set()
    for landing in reversed(chain):
        _append_ancestors_first(landing, by_sha, placed, ordered)
    # unreachable from head within the given commits: cannot happen for a walk from head
    stray = [commit for commit in commits if commit.sha not in placed]
    return [*reversed(stray), *ordered]


def _append_ancestors_first(
    start: CommitInfo, by_sha: Mapping[str, CommitInfo], placed: set[str], ordered: list[CommitInfo]
) -> None:
    """Depth-first post-order from ``start`` over commits not yet placed (iterative: deep histories)."""
    placed.add(start.sha)
    stack: list[tuple[CommitInfo, int]] = [(start, 0)]
    while stack:
        commit, next_parent = stack.pop()
        if next_parent < len(commit.parents):
            stack.append((commit, next_parent + 1))
            parent = by_sha.get(commit.parents[next_parent])
            if parent is not None and parent.sha not in placed:
                placed.add(parent.sha)
                stack.append((parent, 0))
        else:
            ordered.append(commit)


def _extends(repo: GitRepo, previous: HistoryState, head_sha: str, params: HistoryParams) -> bool:
    if previous.mined_head is None:
        return False
    if previous.half_life_days != params.half_life_days:
        return False
    if previous.max_files_per_commit != params.max_files_per_commit:
        return False
    if not repo.has_commit(previous.mined_head):
        return False
    return repo.is_ancestor(previous.mined_head, head_sha)


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


class _Accumulator:
    """Copy-on-write working copy of a state while commits are applied: the start's mappings
    are copied shallowly and only the entries a commit touches are replaced, so applying k
    commits costs O(k · files per commit²), not O(state)."""

    def __init__(self, start: HistoryState, params: HistoryParams) -> None:
        self.tau_s = decay_time_constant_s(params.half_life_days)
        self.max_files = params.max_files_per_commit
        self.half_life_days = params.half_life_days
        self.reference_time = start.reference_time
        self.anchor = weight_anchor(start.reference_time, params.half_life_days)
        self.start = start
        self.files: dict[str, FileStats] = dict(start.files)
        self.pairs: dict[tuple[str, str], PairStats] = dict(start.pairs)
        #: partner lists of the paths whose pairs changed (the rest: ``start.partners``)
        self.partners: dict[str, set[str]] = {}
        self.dirty_files: set[str] = set()
        self.dirty_pairs: set[tuple[str, str]] = set()
        self.rescaled = False

    def partners_of(self, path: str) -> set[str]:
        if path not in self.partners:
            self.partners[path] = set(self.start.partners(path))
        return self.partners[path]

    def move_reference_time(self, newest: int | None) -> None:
        """Make ``newest`` the reference; when its anchor moves, rescale every weight to it."""
        if newest is None or (self.reference_time is not None and newest <= self.reference_time):
            return
        anchor = weight_anchor(newest, self.half_life_days)
        if self.reference_time is not None and anchor != self.anchor:
            factor = math.exp(-(anchor - self.anchor) / self.tau_s)
            self.files = {
                p: FileStats(s.commits, s.last_time, s.churn * factor) for p, s in self.files.items()
            }
            self.pairs = {k: PairStats(s.count, s.weight * factor) for k, s in self.pairs.items()}
            self.rescaled = True
        self.anchor = anchor
        self.reference_time = newest

    def apply(self, commit: CommitInfo) -> None:
        if commit.is_merge or commit.shallow_boundary:
            return
        self._forget([old for status, old, _ in commit.changes if status == "D" and old is not None])
        renames = {old: new for status, old, new in commit.changes if status == "R" and old and new}
        if renames:
            self._rename(renames)
        if len(commit.changes) > self.max_files:
            return
        touched = sorted({new for status, _, new in commit.changes if status != "D" and new is not None})
        weight = math.exp((commit.time - self.anchor) / self.tau_s)
        for path in touched:
            stats = self.files.get(path)
            if stats is None:
                self.files[path] = FileStats(1, commit.time, weight)
            else:
                self.files[path] = FileStats(
                    stats.commits + 1, max(stats.last_time, commit.time), stats.churn + weight
                )
            self.dirty_files.add(path)
        for key in combinations(touched, 2):
            self._add_pair(key[0], key[1], PairStats(1, weight))

    def _forget(self, paths: Collection[str]) -> None:
        for path in paths:
            if self.files.pop(path, None) is not None:
                self.dirty_files.add(path)
            for partner in list(self.partners_of(path)):
                key = (path, partner) if path < partner else (partner, path)
                if self.pairs.pop(key, None) is not None:
                    self.dirty_pairs.add(key)
                self.partners_of(partner).discard(path)
            self.partners[path] = set()

    def _rename(self, renames: Mapping[str, str]) -> None:
        """Move stats and pairs of every old path to its new path (all at once: swaps work)."""
        moved_files = {old: self.files.pop(old) for old in renames if old in self.files}
        self.dirty_files.update(renames)
        moved_pairs: list[tuple[str, str, PairStats]] = []
        for old in renames:
            for partner in list(self.partners_of(old)):
                key = (old, partner) if old < partner else (partner, old)
                pair = self.pairs.pop(key, None)
                if pair is not None:
                    self.dirty_pairs.add(key)
                    moved_pairs.append((old, partner, pair))
                self.partners_of(partner).discard(old)
            self.partners[old] = set()
        for old, stats in moved_files.items():
            new = renames[old]
            current = self.files.get(new)
            if current is None:
                self.files[new] = stats
            else:
                self.files[new] = FileStats(
                    current.commits + stats.commits,
                    max(current.last_time, stats.last_time),
                    current.churn + stats.churn,
                )
            self.dirty_files.add(new)
        for first, second, pair in moved_pairs:
            self._add_pair(renames.get(first, first), renames.get(second, second), pair)

    def _add_pair(self, first: str, second: str, pair: PairStats) -> None:
        if first == second:
            return
        key = (first, second) if first < second else (second, first)
        current = self.pairs.get(key)
        if current is None:
            self.pairs[key] = pair
            self.partners_of(first).add(second)
            self.partners_of(second).add(first)
        else:
            self.pairs[key] = PairStats(current.count + pair.count, current.weight + pair.weight)
        self.dirty_pairs.add(key)

    def freeze(self, head_sha: str, mined_commits: int) -> HistoryState:
        state = HistoryState(
            mined_head=head_sha,
            mined_commits=mined_commits,
            reference_time=self.reference_time,
            half_life_days=self.half_life_days,
            max_files_per_commit=self.max_files,
            files=self.files,
            pairs=self.pairs,
        )
        if self.start.mined_head is not None and not self.rescaled:
            object.__setattr__(
                state,
                "delta",
                HistoryDelta(
                    files=frozenset(p for p in self.dirty_files if p in self.files),
                    pairs=frozenset(k for k in self.dirty_pairs if k in self.pairs),
                    removed_files=frozenset(p for p in self.dirty_files if p not in self.files),
                    removed_pairs=frozenset(k for k in self.dirty_pairs if k not in self.pairs),
                ),
            )
        index = self.start.partner_index_if_built()
        if index is not None:
            updated = dict(index)
            for path, partners in self.partners.items():
                if partners:
                    updated[path] = sorted(partners)
                else:
                    updated.pop(path, None)
            object.__setattr__(state, "_partners", updated)
        return state
