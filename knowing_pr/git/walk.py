"""A pygit2 revision walk → ``CommitInfo`` records, newest first, shallow boundaries marked.

Each commit's changes are against its first parent (the empty tree for a root commit);
renames are looked for only in a commit that both adds and deletes files, by ``renames``' own
measure (not libgit2's), so every way of reading a commit gives the same record. A commit named in
the clone's ``shallow`` file, or whose trees are missing (a damaged or partial clone), is a
boundary: its real parents are not here and its changes are empty.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

from knowing_pr.git.diff import delta_paths
from knowing_pr.git.lazy import lazy_module
from knowing_pr.git.logstream import LogStream, LogStreamError, stream_commits
from knowing_pr.git.records import CommitInfo, commit_subject, decode_path
from knowing_pr.git.renames import BlobSource, RenameRule, Side, apply_renames, pair_renames

if TYPE_CHECKING:
    import pygit2
else:
    pygit2 = lazy_module("pygit2")

__all__ = [
    "commit_info",
    "commit_record",
    "history_records",
    "ordered_records",
    "OrderedRecords",
    "read_shallow",
    "renamed_record",
    "walk_commits",
]


#: the commits a walk found (sha, parent shas; in its order) → the shas whose records are wanted,
#: in the order they are wanted in
Orderer = Callable[[list[tuple[str, list[str]]]], Sequence[str]]

#: this many commits to stream or more: two ``git log`` runs share them (``stream_commits``), one
#: on each core while this process reads the first
STREAM_TWO_PARTS_FROM = 4000


def walk_commits(
    walker: pygit2.Walker,
    shallow: frozenset[str],
    *,
    max_commits: int,
    merge_changes: bool,
    renames: RenameRule,
    blobs: BlobSource,
) -> Iterator[CommitInfo]:
    """The walker's first ``max_commits`` commits as records (``shallow``: the boundary shas).

    With ``merge_changes=False`` merges come with no changes, which saves the largest diffs
    when the caller skips merges anyway.
    """
    flags = _diff_flags()
    for produced, commit in enumerate(walker):
        if produced >= max_commits:
            return
        yield commit_info(commit, shallow, flags, merge_changes, renames, blobs)


def history_records(
    walker: pygit2.Walker,
    *,
    max_commits: int,
    renames: RenameRule,
    git_dir: str | None,
    blobs: BlobSource,
    defer_renames: bool = False,
    shallow: frozenset[str] = frozenset(),
) -> list[CommitInfo]:
    """What ``walk_commits(merge_changes=False)`` gives for a clone that is not shallow, the
    changed paths read from one streamed ``git log`` (``git_dir``; None: pygit2 only).
    ``shallow``: the boundary shas of a shallow clone (their records say so, with no changes; a
    shallow clone is read with ``git_dir=None``).

    The commits and their order are the walker's; a commit git reports as both adding and
    deleting files gets its renames from the blobs git printed (``renamed_record``,
    ``git/renames.py``: no tree is diffed again), unless ``defer_renames``: then its record keeps
    git's changes and those blobs and says ``renames_pending`` (the caller pairs them when it
    needs its renames). Where git cannot give the paths (not installed, an object missing,
    output not understood) the commits left are diffed with pygit2: the records are the same
    either way.
    """
    commits = list(islice(walker, max_commits))
    by_sha = {str(commit.id): commit for commit in commits}
    shapes = [_shape(commit) for commit in commits]
    log = _started_log(shapes, git_dir, None) if git_dir is not None else None
    records = _ordered_stream(shapes, log, renames, blobs, by_sha.__getitem__, shallow)
    if defer_renames:
        return list(records)
    return [renamed_record(r, renames, blobs) if r.renames_pending else r for r in records]


@dataclass(frozen=True)
class OrderedRecords:
    """The records of the commits a walk found that an ``Orderer`` chose, in its order, read while
    they are consumed (``ordered_records``); ``close`` when done, or to stop early."""

    #: how many records ``records`` gives
    count: int
    #: the newest committer time among them (None: none)
    newest_time: int | None
    records: Generator[CommitInfo, None, None]
    #: the ``git log`` reading them, started with the walk (None: pygit2 diffs them)
    log: LogStream | None = None

    def close(self) -> None:
        """Stop reading: no git is left running, whether any record was read or not."""
        self.records.close()
        if self.log is not None:
            self.log.close()


def ordered_records(
    walker: pygit2.Walker,
    *,
    order: Orderer,
    renames: RenameRule,
    git_dir: str | None,
    blobs: BlobSource,
    lookup: Callable[[str], pygit2.Commit],
    shallow: frozenset[str] = frozenset(),
    idle: Callable[[], bool] | None = None,
) -> OrderedRecords:
    """The records ``history_records(defer_renames=True)`` gives for the walked commits ``order``
    picks, in ``order``'s order, as a stream: each commit's changed paths are read from git (or
    diffed by pygit2) as the consumer asks for its record, so the consumer's work runs while git
    diffs the commits after it, and no list of every record is held. The walk itself (shas,
    parents, times: no commit object is kept) is done, and git started, before this returns: git
    diffs while the caller does other work (its output waits, bounded: ``stream_commits``).

    Where the streamed ``git log`` cannot serve (git missing, an object missing, output not
    understood, even halfway) the rest of the records come from pygit2's diff of the commits
    ``lookup`` gives: they are the same records either way. The consumer closes the result when
    done or when it stops early (no git is left running). ``idle``: the consumer's spare work, run
    while git has printed nothing new (``stream_commits``).
    """
    by_sha = {shape[0]: shape for shape in map(_shape, walker)}
    chosen = [by_sha[sha] for sha in order([(sha, parents) for sha, parents, _ in by_sha.values()])]
    newest = max((time for _, _, time in chosen), default=None)
    log = _started_log(chosen, git_dir, idle) if git_dir is not None else None
    stream = _ordered_stream(chosen, log, renames, blobs, lookup, shallow)
    return OrderedRecords(len(chosen), newest, stream, log)


#: a walked commit as the stream needs it: sha, parent shas, committer time
WalkedCommit = tuple[str, list[str], int]


def _shape(commit: pygit2.Commit) -> WalkedCommit:
    return str(commit.id), [str(p) for p in commit.parent_ids], int(commit.commit_time)


def _started_log(
    commits: Sequence[WalkedCommit], git_dir: str, idle: Callable[[], bool] | None
) -> LogStream | None:
    """``git log`` started over the non-merge ``commits`` (two runs from ``STREAM_TWO_PARTS_FROM``
    on); None where it cannot start (pygit2 then diffs them all: the same records)."""
    wanted = [sha for sha, parents, _ in commits if len(parents) <= 1]
    parts = 2 if len(wanted) >= STREAM_TWO_PARTS_FROM else 1
    try:
        return stream_commits(git_dir, wanted, parts=parts, idle=idle)
    except LogStreamError:
        return None


def _ordered_stream(
    commits: Sequence[WalkedCommit],
    log: LogStream | None,
    renames: RenameRule,
    blobs: BlobSource,
    lookup: Callable[[str], pygit2.Commit],
    shallow: frozenset[str],
) -> Generator[CommitInfo, None, None]:
    done = 0
    if log is not None:
        records = _streamed(commits, log)
        try:
            for record in records:
                yield record
                done += 1
        except LogStreamError:
            pass  # the records from here on are pygit2's: the same as the stream's
        finally:
            records.close()
    flags = _diff_flags()
    for sha, _, _ in commits[done:]:
        yield commit_info(lookup(sha), shallow, flags, False, renames, blobs)


def commit_record(
    commit: pygit2.Commit, shallow: frozenset[str], renames: RenameRule, blobs: BlobSource
) -> CommitInfo:
    """One commit's record as ``walk_commits(merge_changes=False)`` gives it, without a walk."""
    return commit_info(commit, shallow, _diff_flags(), False, renames, blobs)


def renamed_record(record: CommitInfo, renames: RenameRule, blobs: BlobSource) -> CommitInfo:
    """``record`` (a ``renames_pending`` one, its ``sides`` from the streamed log) with its renames:
    what a walk gives for the commit. No tree is diffed: the blob ids come with the record."""
    deleted = [(path, blob, mode) for status, path, blob, mode in record.sides if status == "D"]
    added = [(path, blob, mode) for status, path, blob, mode in record.sides if status == "A"]
    pairs = pair_renames(deleted, added, blobs, renames)
    return CommitInfo(
        record.sha, record.time, record.parents, apply_renames(record.changes, pairs), subject=record.subject
    )


def _diff_flags() -> pygit2.enums.DiffOption:
    """The options of every history diff (type changes reported, no binary sniffing)."""
    options = pygit2.enums.DiffOption
    return options.INCLUDE_TYPECHANGE | options.SKIP_BINARY_CHECK


def _streamed(commits: Sequence[WalkedCommit], streamed: LogStream) -> Generator[CommitInfo, None, None]:
    """The record of each of ``commits``, in order, from the streamed ``git log`` (``_started_log``
    over them); a commit that both adds and deletes files keeps git's changes and its blobs,
    ``renames_pending``. Raises ``LogStreamError`` where the stream fails (the records before it
    were right)."""
    try:
        for sha, parents, time in commits:
            if len(parents) > 1:
                yield CommitInfo(sha, time, parents, [])
                continue
            streamed_sha, subject, changes, sides = next(streamed, ("", "", [], []))
            if streamed_sha != sha:
                raise LogStreamError(f"git log printed {streamed_sha[:12]} where {sha[:12]} was due")
            statuses = {status for status, _, _ in changes}
            if "A" in statuses and "D" in statuses:  # renames to find, from the blobs git printed
                yield CommitInfo(
                    sha,
                    time,
                    parents,
                    changes,
                    renames_pending=True,
                    subject=subject,
                    sides=tuple(sides),
                )
            else:
                yield CommitInfo(sha, time, parents, changes, subject=subject)
        for _ in streamed:  # runs git's exit check
            pass
    finally:
        streamed.close()


def commit_info(
    commit: pygit2.Commit,
    shallow: frozenset[str],
    flags: pygit2.enums.DiffOption,
    merge_changes: bool,
    renames: RenameRule,
    blobs: BlobSource,
) -> CommitInfo:
    """One commit → its record, changes diffed against the first parent with ``flags``."""
    sha = str(commit.id)
    parents = [str(p) for p in commit.parent_ids]
    if sha in shallow:
        return CommitInfo(sha, int(commit.commit_time), parents, [], shallow_boundary=True)
    if len(parents) > 1 and not merge_changes:
        return CommitInfo(sha, int(commit.commit_time), parents, [])
    try:
        tree = commit.tree
        if parents:
            diff = commit.parents[0].tree.diff_to_tree(tree, flags=flags, context_lines=0)
        else:
            diff = tree.diff_to_tree(flags=flags, context_lines=0, swap=True)
        deltas = list(diff.deltas)
        changes = [delta_paths(delta) for delta in deltas]
    except (KeyError, pygit2.GitError):
        # trees missing (a damaged or partial clone): count nothing, like a shallow cut
        return CommitInfo(sha, int(commit.commit_time), parents, [], shallow_boundary=True)
    has_add = any(status == "A" for status, _, _ in changes)
    if has_add and any(status == "D" for status, _, _ in changes):
        deleted = [_file_side(d.old_file) for d, (s, _, _) in zip(deltas, changes, strict=True) if s == "D"]
        added = [_file_side(d.new_file) for d, (s, _, _) in zip(deltas, changes, strict=True) if s == "A"]
        changes = apply_renames(changes, pair_renames(deleted, added, blobs, renames))
    return CommitInfo(sha, int(commit.commit_time), parents, changes, subject=_subject(commit))


def _file_side(side: pygit2.DiffFile) -> Side:
    """(path, blob id, mode) of one side of a delta."""
    return decode_path(side.raw_path), str(side.id), int(side.mode)


def _subject(commit: pygit2.Commit) -> str:
    """The commit's subject as the streamed ``git log`` gives it (merges and cut commits: none)."""
    return commit_subject(commit.raw_message.decode(_codec(commit.message_encoding), "replace"))


def _codec(name: str | None) -> str:
    """The codec of a commit's ``encoding`` header (UTF-8 when it has none or names none Python
    knows), as ``git log --encoding=UTF-8`` re-encodes the message."""
    try:
        return codecs.lookup(name).name if name else "utf-8"
    except LookupError:
        return "utf-8"


def read_shallow(common_dir: str) -> frozenset[str]:
    """The shas of a shallow clone's boundary commits (its ``shallow`` file); empty when not shallow."""
    try:
        text = (Path(common_dir) / "shallow").read_text(encoding="ascii")
    except OSError:
        text = ""
    return frozenset(line.strip() for line in text.splitlines() if line.strip())
