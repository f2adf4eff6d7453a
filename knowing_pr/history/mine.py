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
- ``PairStats.weight``  Σ exp((t - t_anchor)/tau) over those commits;
- ``PairStats.sized``  Σ exp((t - t_anchor)/tau) / (n - 1) over those commits, n the files the
  commit changed: a large commit says less about any one pair (Zimmermann et al. 2004 drop
  large transactions; this keeps them at a weight that falls with their size).

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

The mined commits are a window of ``head``'s history: number every commit reachable from
``head`` by its place in the landing order of the whole history (0 the oldest); a commit keeps
its number as the branch grows, since a commit on the first-parent line of a later head sees the
same order. Of ``n`` commits, those numbered from ``window_start(n)`` on are mined: the start is
a multiple of ``window_step``, the largest that leaves at least ``max_commits`` commits, so the
window holds ``max_commits`` to ``max_commits + window_step - 1`` commits (all of a shorter
history). ``k`` new commits on top of a window of ``w`` leave its start where it was exactly when
``w + k < max_commits + window_step``: the previous state is then extended by them, bit for bit,
and once in ``window_step`` commits the start moves and the window is mined from scratch.

The state is plain data: ``to_rows``/``from_rows`` give tuple lists for the store's tables.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Generator, Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from itertools import combinations
from typing import Any, TypeVar, cast

from knowing_pr.config import HistoryParams
from knowing_pr.git import CommitInfo, GitRepo, is_utf8
from knowing_pr.git.renames import RenameRule
from knowing_pr.git.walk import OrderedRecords
from knowing_pr.history.state import (
    AppliedCommit,
    FileStats,
    HistoryDelta,
    HistoryState,
    PairStats,
    decay_time_constant_s,
    weight_anchor,
)

__all__ = ["StartedWindow", "landing_order", "mine_history", "rename_rule", "start_window", "window_start"]

#: a file's or a pair's stats while commits are applied: ``FileStats``/``PairStats`` or a plain
#: tuple in their order (a tuple is built many times faster than a named one)
_FileTuple = tuple[int, int, float]
_PairTuple = tuple[int, float, float]
_K = TypeVar("_K")
_V = TypeVar("_V")


def mine_history(
    repo: GitRepo,
    head: str,
    params: HistoryParams,
    previous: HistoryState | None = None,
    *,
    keep_recent: int = 0,
    on_applied: Callable[[AppliedCommit], None] | None = None,
    idle: Callable[[], bool] | None = None,
    window: StartedWindow | None = None,
) -> HistoryState:
    """Mine the commits reachable from ``head`` that ``previous`` has not seen.

    ``previous`` is extended when it was mined with the same parameters and extending it gives
    the state a mine from scratch gives, bit for bit (``_same_as_full_mine``: its head on the
    first-parent line of ``head``, no rescale of the weights); otherwise the history is mined
    from scratch. The result is a function of ``head``'s history and ``params`` only: the
    commits of the window (the module's docstring), fewer than ``max_commits + window_step``.
    The newest ``keep_recent`` commits this call applied are on the result's ``recent``.
    ``on_applied`` is told of each commit as it is appended to the result's ``applied``; ``idle``
    is the caller's spare work, run while git has printed nothing new (a mine from scratch).
    ``window``: the records of a mine from scratch, started earlier (``start_window``), read where
    this call mines ``head`` from scratch with its parameters (their ``idle`` is the one given
    there; one started for another head or other parameters is closed unread). The caller closes
    it where this call returns without a mine from scratch.
    """
    if not params.enabled:
        return HistoryState.empty(params)
    head_sha = repo.resolve(head)
    base = previous if previous is not None and _extends(repo, previous, head_sha, params) else None
    if base is not None and base.mined_head == head_sha:
        return base
    rule = rename_rule(params)

    def with_renames(commit: CommitInfo) -> CommitInfo:
        return repo.with_renames(commit, rule)

    if base is not None and base.mined_head is not None:
        room = max(params.max_commits + params.window_step - base.mined_commits, 0)
        walked = repo.history_commits(
            head_sha, stop_at=[base.mined_head], max_commits=room, defer_renames=True, renames=rule
        )
        commits = landing_order(walked, head_sha)
        if not _same_as_full_mine(base, commits, head_sha, params):
            return mine_history(
                repo,
                head_sha,
                params,
                None,
                keep_recent=keep_recent,
                on_applied=on_applied,
                idle=idle,
                window=window,
            )
        # built after the check: a working copy of ``base`` must not outlive it into a mine from scratch
        accumulator = _Accumulator(base, params, with_renames, on_applied)
        accumulator.move_reference_time(max((c.time for c in commits), default=None))
        for commit in commits:
            accumulator.apply(commit)
        state = accumulator.freeze(head_sha, base.mined_commits + len(commits))
    else:
        if window is not None and (window.head, window.params) != (head_sha, params):
            window.close()  # started for another mine: its git stops before this one's starts
            window = None
        records = (
            window.records if window is not None else _window_records(repo, head_sha, params, rule, idle)
        )
        with closing(records):  # each applied as git reads the ones after it
            accumulator = _Accumulator(HistoryState.empty(params), params, with_renames, on_applied)
            accumulator.move_reference_time(records.newest_time)
            for commit in records.records:
                accumulator.apply(commit)
        state = accumulator.freeze(head_sha, records.count)
    object.__setattr__(state, "extended", base is not None)
    object.__setattr__(state, "applied", tuple(accumulator.applied))
    if keep_recent > 0:
        object.__setattr__(state, "recent", tuple(accumulator.applied[-keep_recent:]))
    return state


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


@dataclass(frozen=True)
class StartedWindow:
    """The records of a mine from scratch of ``head`` with ``params`` (``start_window``): the walk
    done and git reading them while the caller does other work, until ``mine_history`` reads
    them; ``close`` stops git when it will not."""

    #: the full commit id the window is of
    head: str
    params: HistoryParams
    records: OrderedRecords

    def close(self) -> None:
        self.records.close()


def start_window(
    repo: GitRepo, head: str, params: HistoryParams, idle: Callable[[], bool] | None = None
) -> StartedWindow:
    """``head``'s window walked and its records started (git diffs them from now on), for a mine
    from scratch ``mine_history(window=...)`` does later: the same records it reads when it starts
    them itself, so the mined state is the same. ``idle``: the mine's spare work."""
    head_sha = repo.resolve(head)
    return StartedWindow(head_sha, params, _window_records(repo, head_sha, params, rename_rule(params), idle))


def window_start(total: int, params: HistoryParams) -> int:
    """The landing-order number of the oldest mined commit of a history of ``total`` commits: the
    largest multiple of ``window_step`` that leaves at least ``max_commits`` commits (0 for a
    history shorter than ``max_commits + window_step``)."""
    return max((total - params.max_commits) // params.window_step, 0) * params.window_step


def rename_rule(params: HistoryParams) -> RenameRule:
    """The history's rename rule (``git/renames.py``) as ``params`` set it."""
    return RenameRule(params.rename_threshold, params.rename_max_pairs, params.rename_max_bytes)


def _window_records(
    repo: GitRepo, head_sha: str, params: HistoryParams, rule: RenameRule, idle: Callable[[], bool] | None
) -> OrderedRecords:
    """The records of the commits of ``head_sha``'s window (a mine from scratch) in landing order,
    read from git as they are applied: one walk of the whole history (shas and parents), numbered
    in landing order; a history shorter than ``max_commits + window_step`` is all window, a longer
    one starts at ``window_start``. Only the window's commits are read from git."""
    if params.max_commits == 0:
        return OrderedRecords(0, None, _no_records())

    def order(walked: list[tuple[str, list[str]]]) -> list[str]:
        # the landing order puts every commit after its ancestors: the commits from the window's
        # start on are in the order their own landing order gives them
        ordered = landing_order([CommitInfo(sha, 0, parents, []) for sha, parents in walked], head_sha)
        return [commit.sha for commit in ordered[window_start(len(walked), params) :]]

    return repo.ordered_commits(head_sha, order=order, renames=rule, idle=idle)


def _no_records() -> Generator[CommitInfo, None, None]:
    yield from ()


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


def _same_as_full_mine(
    base: HistoryState, commits: Sequence[CommitInfo], head_sha: str, params: HistoryParams
) -> bool:
    """Whether applying ``commits`` (landing order) to ``base`` gives, bit for bit, the state a
    mine of ``head_sha`` from scratch gives: ``base``'s head lies on the first-parent line of
    ``head_sha`` (so the order is the full mine's), the weights' anchor does not move (a
    rescale multiplies, a full mine exponentiates once), and the window's start does not move
    (``base``'s window of ``w`` commits and ``k`` new ones: ``w + k < max_commits + window_step``,
    the module's docstring)."""
    if not commits or params.max_commits == 0:
        return False
    if base.mined_commits + len(commits) >= params.max_commits + params.window_step:
        return False
    newest = max(commit.time for commit in commits)
    if base.reference_time is not None and newest > base.reference_time:
        anchor = weight_anchor(base.reference_time, params.half_life_days)
        if weight_anchor(newest, params.half_life_days) != anchor:
            return False
    by_sha = {commit.sha: commit for commit in commits}
    current = by_sha.get(head_sha)
    while current is not None:
        first_parent = current.parents[0] if current.parents else None
        if first_parent == base.mined_head:
            return True
        current = by_sha.get(first_parent) if first_parent is not None else None
    return False


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


class _Accumulator:
    """Copy-on-write working copy of a state while commits are applied: the start's mappings
    are copied shallowly and only the entries a commit touches are replaced, so applying k
    commits costs O(k · files per commit²), not O(state)."""

    def __init__(
        self,
        start: HistoryState,
        params: HistoryParams,
        with_renames: Callable[[CommitInfo], CommitInfo],
        on_applied: Callable[[AppliedCommit], None] | None = None,
    ) -> None:
        #: a ``renames_pending`` record → the record with its renames (``git/renames.py``)
        self.with_renames = with_renames
        self.tau_s = decay_time_constant_s(params.half_life_days)
        self.max_files = params.max_files_per_commit
        self.half_life_days = params.half_life_days
        self.reference_time = start.reference_time
        self.anchor = weight_anchor(start.reference_time, params.half_life_days)
        self.start = start
        #: plain tuples where a commit changed them (``FileStats``/``PairStats`` order), named at ``freeze``
        self.files: dict[str, _FileTuple] = dict(start.files)
        self.pairs: dict[tuple[str, str], _PairTuple] = dict(start.pairs)
        #: partner lists of the paths whose pairs changed (the rest: ``start.partners``)
        self.partners: dict[str, set[str]] = {}
        self.dirty_files: set[str] = set()
        self.dirty_pairs: set[tuple[str, str]] = set()
        #: only an extending mine reports a delta (``freeze``): a mine from scratch keeps no dirty sets
        self.track_dirty = start.mined_head is not None
        self.rescaled = False
        #: every commit applied (merges and shallow boundaries are not), oldest first
        self.applied: list[AppliedCommit] = []
        self.on_applied = on_applied

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
            self.files = {p: (s[0], s[1], s[2] * factor) for p, s in self.files.items()}
            self.pairs = {k: (s[0], s[1] * factor, s[2] * factor) for k, s in self.pairs.items()}
            self.rescaled = True
        self.anchor = anchor
        self.reference_time = newest

    def apply(self, commit: CommitInfo) -> None:
        if commit.is_merge or commit.shallow_boundary:
            return
        if commit.renames_pending and self._renames_matter(commit):
            commit = self.with_renames(commit)
        changes = _storable(commit.changes)
        self._forget([old for status, old, _ in changes if status == "D" and old is not None])
        renames = {old: new for status, old, new in changes if status == "R" and old and new}
        if renames:
            self._rename(renames)
        if len(commit.changes) > self.max_files:
            self._applied(AppliedCommit(commit.sha, commit.time, (), commit.subject))
            return
        touched = sorted({new for status, _, new in changes if status != "D" and new is not None})
        self._applied(AppliedCommit(commit.sha, commit.time, tuple(touched), commit.subject))
        weight = math.exp((commit.time - self.anchor) / self.tau_s)
        sized = weight / max(len(touched) - 1, 1)
        files = self.files
        for path in touched:
            stats = files.get(path)
            if stats is None:
                files[path] = (1, commit.time, weight)
            else:
                last = stats[1]
                files[path] = (stats[0] + 1, last if last > commit.time else commit.time, stats[2] + weight)
        if self.track_dirty:
            self.dirty_files.update(touched)
        self._add_commit_pairs(touched, weight, sized)

    def _applied(self, commit: AppliedCommit) -> None:
        self.applied.append(commit)
        if self.on_applied is not None:
            self.on_applied(commit)

    def _add_commit_pairs(self, touched: list[str], weight: float, sized: float) -> None:
        """``_add_pair`` of every pair of ``touched`` (sorted, distinct: each pair is its own key),
        the same sums in the same order, without a call and a ``PairStats`` per pair (a history
        mine makes hundreds of thousands of them)."""
        pairs, partners, dirty = self.pairs, self.partners, self.dirty_pairs
        for key in combinations(touched, 2):
            current = pairs.get(key)
            if current is None:
                pairs[key] = (1, weight, sized)
                first, second = key
                (partners[first] if first in partners else self.partners_of(first)).add(second)
                (partners[second] if second in partners else self.partners_of(second)).add(first)
            else:
                pairs[key] = (current[0] + 1, current[1] + weight, current[2] + sized)
        if self.track_dirty:
            dirty.update(combinations(touched, 2))

    def _renames_matter(self, commit: CommitInfo) -> bool:
        """Whether finding the renames of ``commit`` (its changes as adds and deletes) can change
        what applying it does. It cannot when this mine starts from scratch (no delta lists a
        rename's source), no deleted path has stats yet (a rename then moves nothing: the new
        path is counted as an add is, the old one forgotten as a delete is) and pairing adds with
        deletes cannot move the commit across ``max_files`` (a rename is one change, not two).
        Pairing reads blobs, a large part of a history mine's cost, and large moves (a vendored
        tree, a reorganisation) are mostly of paths no counted commit touched."""
        if self.start.mined_head is not None:
            return True
        deleted = [old for status, old, _ in commit.changes if status == "D"]
        if any(path in self.files for path in deleted):
            return True
        added = sum(1 for status, _, _ in commit.changes if status == "A")
        count = len(commit.changes)
        return count > self.max_files >= count - min(added, len(deleted))

    def _forget(self, paths: Collection[str]) -> None:
        for path in paths:
            if self.files.pop(path, None) is not None:
                self.dirty_files.add(path)
            for partner in sorted(self.partners_of(path)):
                key = (path, partner) if path < partner else (partner, path)
                if self.pairs.pop(key, None) is not None:
                    self.dirty_pairs.add(key)
                self.partners_of(partner).discard(path)
            self.partners[path] = set()

    def _rename(self, renames: Mapping[str, str]) -> None:
        """Move stats and pairs of every old path to its new path (all at once: swaps work)."""
        moved_files = {old: self.files.pop(old) for old in renames if old in self.files}
        self.dirty_files.update(renames)
        moved_pairs: list[tuple[str, str, _PairTuple]] = []
        for old in renames:
            # sorted: two moved pairs that meet sum in one order, whatever the hash seed
            for partner in sorted(self.partners_of(old)):
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
                self.files[new] = (current[0] + stats[0], max(current[1], stats[1]), current[2] + stats[2])
            self.dirty_files.add(new)
        for first, second, pair in moved_pairs:
            self._add_pair(renames.get(first, first), renames.get(second, second), pair)

    def _add_pair(self, first: str, second: str, pair: _PairTuple) -> None:
        if first == second:
            return
        key = (first, second) if first < second else (second, first)
        current = self.pairs.get(key)
        if current is None:
            self.pairs[key] = pair
            self.partners_of(first).add(second)
            self.partners_of(second).add(first)
        else:
            self.pairs[key] = (current[0] + pair[0], current[1] + pair[1], current[2] + pair[2])
        self.dirty_pairs.add(key)

    def _named(self) -> tuple[dict[str, FileStats], dict[tuple[str, str], PairStats]]:
        """The working copies with every plain tuple made ``FileStats``/``PairStats``: all of them
        after a mine from scratch or a rescale, only those a commit changed after an extension (the
        rest are the start's, named already)."""
        whole = not self.track_dirty or self.rescaled
        files = _named_in_place(self.files, self.files if whole else self.dirty_files, FileStats)
        pairs = _named_in_place(self.pairs, self.pairs if whole else self.dirty_pairs, PairStats)
        return files, pairs

    def freeze(self, head_sha: str, mined_commits: int) -> HistoryState:
        files, pairs = self._named()
        state = HistoryState(
            mined_head=head_sha,
            mined_commits=mined_commits,
            reference_time=self.reference_time,
            half_life_days=self.half_life_days,
            max_files_per_commit=self.max_files,
            files=files,
            pairs=pairs,
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


def _named_in_place(
    values: dict[_K, tuple[Any, ...]], keys: Iterable[_K], kind: Callable[..., _V]
) -> dict[_K, _V]:
    """``values`` with the plain tuples at ``keys`` made ``kind`` (in place: the dict is returned)."""
    named = cast("dict[_K, Any]", values)
    for key in keys:
        value = named.get(key)
        if value is not None and type(value) is not kind:
            named[key] = kind(*value)
    return cast("dict[_K, _V]", named)


def _storable(changes: list[tuple[str, str | None, str | None]]) -> list[tuple[str, str | None, str | None]]:
    """A commit's changes with every path that is not UTF-8 left out (the index cannot store such a
    file): a rename onto one is the old path's deletion, a rename from one an addition."""
    if all(
        (old or new) and (old is None or old.isascii()) and (new is None or new.isascii())
        for _, old, new in changes
    ):
        return changes  # ASCII is UTF-8: nothing to leave out (most commits of most histories)
    out: list[tuple[str, str | None, str | None]] = []
    for status, old, new in changes:
        old = old if old is not None and is_utf8(old) else None
        new = new if new is not None and is_utf8(new) else None
        if status == "R" and old and not new:
            out.append(("D", old, None))
        elif status == "R" and new and not old:
            out.append(("A", None, new))
        elif (old or new) and (status != "R" or (old and new)):
            out.append((status, old, new))
    return out
