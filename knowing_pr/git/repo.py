"""A repository path + revisions → commits, trees, blobs and diffs, read through pygit2 (``GitRepo``).

``GitRepo`` opens a repository (bare, normal, linked worktree or submodule, found upward like
git does), resolves revisions, lists trees, reads raw blobs and diffs trees into the records of
``knowing_pr.git.records`` (the conversions live in ``knowing_pr.git.diff``, the history walk
in ``knowing_pr.git.walk``). It reads git objects only (one write: a git note, ``write_note``)
and raises ``RepoError`` with a hint.

One class a little over the style's ~400 lines: every question the tool asks git goes through
it, with one error policy (a missing object, a shallow boundary, an unknown revision).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Collection, Generator, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knowing_pr.errors import RepoError
from knowing_pr.git.diff import file_change, file_diff, find_renames
from knowing_pr.git.lazy import lazy_module
from knowing_pr.git.logstream import PACK_MAPPED_BYTES, PACK_WINDOW_BYTES
from knowing_pr.git.notes import read_notes, remote_url, write_note
from knowing_pr.git.records import (
    MODE_GITLINK,
    CommitAuthor,
    CommitInfo,
    FileChange,
    FileDiff,
    LineRange,
    TreeEntry,
    decode_path,
)
from knowing_pr.git.renames import RenameRule
from knowing_pr.git.revisions import revision_problem
from knowing_pr.git.walk import (
    OrderedRecords,
    Orderer,
    commit_record,
    history_records,
    ordered_records,
    read_shallow,
    renamed_record,
    walk_commits,
)

if TYPE_CHECKING:
    import pygit2
else:
    pygit2 = lazy_module("pygit2")

__all__ = ["GitRepo"]

_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
#: per process: the last diffs between two commit ids (commits are immutable)
_DIFFS: dict[tuple[str, str, int], tuple[FileDiff, ...]] = {}


@functools.cache
def configure_object_reads() -> None:
    """libgit2's process-wide settings for reading objects (once, before a repository opens):

    - cap the pack memory it keeps mapped (``git/logstream.py``'s ``PACK_WINDOW_BYTES`` and
      ``PACK_MAPPED_BYTES``, git's own bounds in a mine's ``git log`` too);
    - read objects as git reads them, without hashing each one again on every read (libgit2's
      strict hash verification). The history walk reads every commit, the parse and the rename
      measure read blobs: without it the walk took 0.70–0.91 of the time and blob reads
      0.39–0.71 on six clones (``bench/object_reads.py``, BENCHMARKS.md). git checks an
      object's id when it receives one (fetch, clone), not on a read; zlib's checksum still
      catches a damaged object, and an object whose id is right reads the same either way.
      Not a setting: nothing read changes. (pygit2 exposes the option from 1.18.2; an older one
      reads verified, slower, the same bytes.)
    """
    pygit2.settings.mwindow_size = PACK_WINDOW_BYTES
    pygit2.settings.mwindow_mapped_limit = PACK_MAPPED_BYTES
    verify = getattr(pygit2.settings, "enable_strict_hash_verification", None)
    if verify is not None:
        verify(False)


def keep_no_objects() -> None:
    """libgit2 keeps no object it has read, in this whole process: for a process that reads each
    commit once (the history mine's child, ``index/historyahead.py``), where the cache would only
    hold them (35 MB of that child's 190 MB on terraform's history, at the same speed without: a
    scratch measurement, docs/history.md)."""
    pygit2.settings.enable_caching(False)


_SHALLOW_HINT = (
    "this is a shallow clone; fetch more history (`git fetch --deepen=100` or `git fetch --unshallow`; "
    "in GitHub Actions: actions/checkout with `fetch-depth: 0`)"
)


class GitRepo:
    """A read-only view of one git repository (bare, normal, linked worktree or submodule)."""

    def __init__(self, repo: pygit2.Repository, *, rename_threshold: int = 50) -> None:
        self._repo = repo
        #: percent similarity from which a deleted + added pair is a rename (git's default 50)
        self.rename_threshold = rename_threshold
        self._shallow_cache: frozenset[str] | None = None

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, rename_threshold: int = 50) -> GitRepo:
        """Open the repository containing ``path``, searching upward like git does."""
        start = Path(path)
        if not start.exists():
            raise RepoError(f"{start}: no such directory", hint="pass --repo with the path of a git clone")
        try:
            git_dir = pygit2.discover_repository(str(start))
        except pygit2.GitError as exc:
            raise _open_error(start, exc) from None
        if git_dir is None:
            raise RepoError(
                f"not a git repository (or any parent up to the filesystem root): {start}",
                hint="run inside a git clone or pass --repo PATH",
            )
        configure_object_reads()
        try:
            return cls(pygit2.Repository(git_dir), rename_threshold=rename_threshold)
        except pygit2.GitError as exc:
            raise _open_error(start, exc) from None

    # -- where the repository lives ---------------------------------------------------------

    @property
    def workdir(self) -> str | None:
        """The working tree (no trailing separator), None for a bare repository."""
        workdir = self._repo.workdir
        return (workdir.rstrip("/\\") or "/") if workdir else None

    @property
    def git_dir(self) -> str:
        """The per-worktree git dir (``.git/worktrees/<name>`` in a linked worktree)."""
        return self._repo.path.rstrip("/\\") or "/"

    @property
    def common_dir(self) -> str:
        """The directory shared by all worktrees (objects, refs, config)."""
        git_dir = Path(self.git_dir)
        pointer = git_dir / "commondir"
        try:
            text = pointer.read_text(encoding="utf-8").strip()
        except OSError:
            return str(git_dir)
        return os.path.normpath(git_dir / text) if text else str(git_dir)

    @property
    def is_shallow(self) -> bool:
        return bool(self._repo.is_shallow)

    @property
    def is_empty(self) -> bool:
        """True while HEAD is unborn and no ref exists at all (fresh ``git init``, any branch name)."""
        return bool(self._repo.head_is_unborn) and not self._repo.listall_references()

    # -- revisions ----------------------------------------------------------------------------

    def head_commit(self) -> str | None:
        """The commit HEAD points to (attached or detached); None while HEAD is unborn."""
        if self._repo.head_is_unborn:
            return None
        try:
            return str(self._repo.head.peel(pygit2.Commit).id)
        except (pygit2.GitError, KeyError) as exc:
            raise RepoError(f"cannot read HEAD: {exc}", hint=self._missing_hint()) from None

    def resolve(self, rev: str) -> str:
        """A revision (sha, short sha, branch, tag, HEAD~1, origin/main, ...) → the commit sha it peels to."""
        problem = revision_problem(rev)
        if problem is not None:
            raise RepoError(
                f"invalid revision {rev[:40]!r}: {problem}", hint="pass a commit sha, branch or tag name"
            )
        try:
            obj = self._repo.revparse_single(rev)
            return str(obj.peel(pygit2.Commit).id)
        except _ambiguous_error():
            raise RepoError(
                f"ambiguous revision {rev!r}", hint="use more characters of the sha or a full ref name"
            ) from None
        except (KeyError, ValueError, pygit2.GitError) as exc:
            hint = "check the name with `git rev-parse --verify " + rev + "^{commit}`"
            if self.is_shallow:
                hint = _SHALLOW_HINT
            reason = _reason(exc)
            detail = f" ({reason})" if reason != rev else ""
            raise RepoError(f"unknown revision {rev!r}{detail}", hint=hint) from None

    def is_shallow_boundary(self, sha: str) -> bool:
        """True for a commit of a shallow clone whose parents were not fetched."""
        return self.is_shallow and sha in self._shallow_commits()

    def has_commit(self, sha: str) -> bool:
        try:
            obj = self._repo.get(sha)
        except (ValueError, pygit2.GitError):
            return False
        return isinstance(obj, pygit2.Commit)

    def parents(self, sha: str) -> list[str]:
        """Parent shas in order (first parent first); empty for a root or a shallow boundary."""
        return [str(p) for p in self._commit(sha).parent_ids]

    def commit_time(self, sha: str) -> int:
        """Committer time in seconds since the epoch."""
        return int(self._commit(sha).commit_time)

    def merge_base(self, a: str, b: str) -> str | None:
        """The best common ancestor of two revisions, None when they share no history."""
        first, second = self._commit(a), self._commit(b)
        try:
            base = self._repo.merge_base(first.id, second.id)
        except pygit2.GitError as exc:
            raise RepoError(
                f"cannot compute the merge base of {a} and {b}: {exc}", hint=_SHALLOW_HINT
            ) from None
        return str(base) if base is not None else None

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """True when ``ancestor`` is reachable from ``descendant`` (a commit is its own ancestor)."""
        first, second = self._commit(ancestor), self._commit(descendant)
        if first.id == second.id:
            return True
        try:
            return bool(self._repo.descendant_of(second.id, first.id))
        except pygit2.GitError as exc:
            raise RepoError(
                f"cannot compare {ancestor} and {descendant}: {exc}", hint=self._missing_hint()
            ) from None

    def default_base(self, head: str) -> str | None:
        """Where a change on ``head`` started: its merge base with the default branch.

        The default branch is the target of ``refs/remotes/origin/HEAD``, else ``origin/main``,
        ``origin/master``, else local ``main``/``master``. A candidate whose merge base is
        ``head`` itself (``head`` is already on that branch) is passed over. Without a usable
        candidate the first parent of ``head`` is the base; None for a root commit.
        """
        head_sha = self.resolve(head)
        for branch in self._default_branch_candidates():
            base = self.merge_base(head_sha, branch)
            if base is not None and base != head_sha:
                return base
        parents = self.parents(head_sha)
        return parents[0] if parents else None

    def _default_branch_candidates(self) -> list[str]:
        refs = self._repo.references
        candidates: list[str] = []
        origin_head = "refs/remotes/origin/HEAD"
        if origin_head in refs:
            target = refs[origin_head].target
            if isinstance(target, str) and target in refs:
                candidates.append(target)
        candidates += [
            name
            for name in (
                "refs/remotes/origin/main",
                "refs/remotes/origin/master",
                "refs/heads/main",
                "refs/heads/master",
            )
            if name in refs
        ]
        return [name for name in dict.fromkeys(candidates) if self._ref_commit(name) is not None]

    def _ref_commit(self, ref_name: str) -> str | None:
        try:
            return str(self._repo.references[ref_name].peel(pygit2.Commit).id)
        except (KeyError, ValueError, pygit2.GitError):
            return None

    # -- trees and blobs ----------------------------------------------------------------------

    def tree_entries(self, commit: str) -> list[TreeEntry]:
        """Every blob, symlink and gitlink of the commit's whole tree, sorted by path."""
        root = self._commit(commit).tree
        read_header = _header_reader(self._repo.odb)
        entries: list[TreeEntry] = []
        pending: list[tuple[bytes, pygit2.Tree]] = [(b"", root)]
        try:
            while pending:
                prefix, tree = pending.pop()
                for item in tree:
                    mode = item.filemode
                    raw = prefix + (item.raw_name or b"")
                    if isinstance(item, pygit2.Tree):
                        pending.append((raw + b"/", item))
                        continue
                    oid = item.id
                    size = 0 if mode == MODE_GITLINK else _blob_size(read_header, oid)
                    entries.append(TreeEntry(decode_path(raw), str(oid), int(mode), size))
        except (KeyError, pygit2.GitError) as exc:
            raise RepoError(
                f"objects of commit {commit} are missing ({_reason(exc)})", hint=self._missing_hint()
            ) from None
        entries.sort(key=lambda entry: entry.path)
        return entries

    def entries_at(self, commit: str, paths: Iterable[str]) -> dict[str, TreeEntry]:
        """Tree entries of just these paths (absent paths are left out): an incremental
        index needs only what a diff named, not the whole tree."""
        tree = self._commit(commit).tree
        read_header = _header_reader(self._repo.odb)
        found: dict[str, TreeEntry] = {}
        for path in paths:
            try:
                item = tree[path]
            except UnicodeEncodeError:  # a non-UTF-8 name: look it up the slow way
                entry = next((e for e in self.tree_entries(commit) if e.path == path), None)
                if entry is not None:
                    found[path] = entry
                continue
            except (KeyError, ValueError):
                continue
            if isinstance(item, pygit2.Tree):
                continue
            mode = item.filemode
            size = 0 if mode == MODE_GITLINK else _blob_size(read_header, item.id)
            found[path] = TreeEntry(path, str(item.id), int(mode), size)
        return found

    def file_names(self, commit: str, directory: str) -> list[str]:
        """Names of the blobs directly in one directory of the commit's tree ("" is the root;
        an absent directory has none)."""
        tree = self._commit(commit).tree
        if directory:
            try:
                item = tree[directory]
            except (KeyError, ValueError, UnicodeEncodeError):
                return []
            if not isinstance(item, pygit2.Tree):
                return []
            tree = item
        return sorted(
            decode_path(entry.raw_name or b"") for entry in tree if not isinstance(entry, pygit2.Tree)
        )

    def read_blob(self, blob_id: str) -> bytes:
        """The raw bytes of a blob (no filters, no line-ending conversion)."""
        try:
            obj = self._repo[blob_id]
        except (KeyError, ValueError, pygit2.GitError) as exc:
            raise RepoError(f"blob {blob_id} not found ({_reason(exc)})", hint=self._missing_hint()) from None
        if not isinstance(obj, pygit2.Blob):
            raise RepoError(f"object {blob_id} is a {obj.type_str}, not a blob")
        return bytes(obj.data)

    # -- diffs --------------------------------------------------------------------------------

    def diff_trees(self, old_commit: str | None, new_commit: str) -> list[FileChange]:
        """Files changed from ``old_commit`` (None = the empty tree) to ``new_commit``, renames found."""
        diff = self._tree_diff(old_commit, new_commit, context_lines=0)
        return [file_change(delta) for delta in diff.deltas]

    def diff_hunks(self, base: str, head: str) -> list[FileDiff]:
        """Changed line ranges per file from ``base`` to ``head`` (a plain tree diff; pass the merge base).

        Between two full commit ids the answer never changes, so a process keeps the last few."""
        key = (base, head, self.rename_threshold)
        if not (_FULL_SHA.fullmatch(base) and _FULL_SHA.fullmatch(head)):
            return self._diff_hunks(base, head)
        if key not in _DIFFS:
            _DIFFS[key] = tuple(self._diff_hunks(base, head))
            while len(_DIFFS) > 8:
                del _DIFFS[next(iter(_DIFFS))]
        return list(_DIFFS[key])

    def _diff_hunks(self, base: str, head: str) -> list[FileDiff]:
        diff = self._tree_diff(base, head, context_lines=0)
        try:
            patches = list(diff)
        except (KeyError, pygit2.GitError) as exc:
            raise RepoError(
                f"cannot read the blobs of {base}..{head} ({_reason(exc)})", hint=self._missing_hint()
            ) from None
        return [file_diff(patch) for patch in patches if patch is not None]

    def _tree_diff(self, old_commit: str | None, new_commit: str, *, context_lines: int) -> pygit2.Diff:
        new_tree = self._commit(new_commit).tree
        flags = pygit2.enums.DiffOption.INCLUDE_TYPECHANGE
        try:
            if old_commit is None:
                diff = new_tree.diff_to_tree(flags=flags, context_lines=context_lines, swap=True)
            else:
                old_tree = self._commit(old_commit).tree
                diff = old_tree.diff_to_tree(new_tree, flags=flags, context_lines=context_lines)
            find_renames(diff, self.rename_threshold)
        except (KeyError, pygit2.GitError) as exc:
            raise RepoError(
                f"cannot diff {old_commit}..{new_commit} ({_reason(exc)})", hint=self._missing_hint()
            ) from None
        return diff

    # -- history ------------------------------------------------------------------------------

    def iter_commits(
        self,
        head: str,
        *,
        stop_at: Collection[str] = (),
        max_commits: int,
        merge_changes: bool = True,
        renames: RenameRule | None = None,
    ) -> Iterator[CommitInfo]:
        """Commits reachable from ``head``, newest first (topological, then time order).

        Stops at (excludes) every commit of ``stop_at`` and their ancestors; unknown shas in
        ``stop_at`` are ignored. ``changes`` are against the first parent (the empty tree for
        a root commit); with ``merge_changes=False`` merges come with no changes, which saves
        the largest diffs when the caller skips merges anyway. Renames are looked for only in
        a commit that both adds and deletes files, by ``renames`` (default: this repository's
        threshold and the rule's bounds).
        """
        walker = self._walker(head, stop_at)
        shallow = self._shallow_commits()
        try:
            yield from walk_commits(
                walker,
                shallow,
                max_commits=max_commits,
                merge_changes=merge_changes,
                renames=renames or self._rename_rule(),
                blobs=_ObjectBlobs(self._repo),
            )
        except (KeyError, pygit2.GitError) as exc:
            raise RepoError(
                f"history walk from {head} failed ({_reason(exc)})", hint=self._missing_hint()
            ) from None

    def history_commits(
        self,
        head: str,
        *,
        stop_at: Collection[str] = (),
        max_commits: int,
        defer_renames: bool = False,
        renames: RenameRule | None = None,
    ) -> list[CommitInfo]:
        """``list(iter_commits(head, stop_at=..., max_commits=..., merge_changes=False))``, the same
        records, with the changed paths streamed from one ``git log`` (``git/logstream.py``) where
        git sees the commits as pygit2 does: not in a shallow clone, a partial clone or a
        repository with grafts (there the pygit2 walk runs). ``defer_renames``: a streamed commit
        that both adds and deletes files keeps git's changes without renames and says
        ``renames_pending`` (``with_renames`` gives its full record)."""
        # where git could see other commits than pygit2 (a shallow or partial clone, grafts) the
        # chosen commits are diffed by pygit2 alone, as ``iter_commits`` diffs them
        pygit2_only = self.is_shallow or self._has_grafts_or_promisor()
        walker = self._walker(head, stop_at)
        try:
            return history_records(
                walker,
                max_commits=max_commits,
                renames=renames or self._rename_rule(),
                git_dir=None if pygit2_only else self.git_dir,
                blobs=_ObjectBlobs(self._repo),
                defer_renames=defer_renames,
                shallow=self._shallow_commits() if pygit2_only else frozenset(),
            )
        except (KeyError, pygit2.GitError) as exc:
            raise RepoError(
                f"history walk from {head} failed ({_reason(exc)})", hint=self._missing_hint()
            ) from None

    def ordered_commits(
        self, head: str, *, order: Orderer, renames: RenameRule, idle: Callable[[], bool] | None = None
    ) -> OrderedRecords:
        """The records ``history_commits(head, defer_renames=True)`` gives for the walked commits
        ``order`` picks, in its order, read from git while they are consumed
        (``walk.ordered_records``; the same sources: pygit2 alone in a shallow or partial clone or
        with grafts); git starts before this returns. The consumer closes the result when done or
        when it stops early; ``idle`` is its spare work, run while git has printed nothing new."""
        pygit2_only = self.is_shallow or self._has_grafts_or_promisor()
        try:
            found = ordered_records(
                self._walker(head, ()),
                order=order,
                renames=renames,
                git_dir=None if pygit2_only else self.git_dir,
                blobs=_ObjectBlobs(self._repo),
                lookup=self._commit,
                shallow=self._shallow_commits() if pygit2_only else frozenset(),
                idle=idle,
            )
        except (KeyError, pygit2.GitError) as exc:
            raise RepoError(
                f"history walk from {head} failed ({_reason(exc)})", hint=self._missing_hint()
            ) from None
        return OrderedRecords(
            found.count, found.newest_time, self._walk_errors(head, found.records), found.log
        )

    def _walk_errors(
        self, head: str, records: Generator[CommitInfo, None, None]
    ) -> Generator[CommitInfo, None, None]:
        """``records``, a pygit2 failure while they are read raised as ``RepoError``."""
        try:
            yield from records
        except (KeyError, pygit2.GitError) as exc:
            raise RepoError(
                f"history walk from {head} failed ({_reason(exc)})", hint=self._missing_hint()
            ) from None
        finally:
            records.close()

    def _walker(self, head: str, stop_at: Collection[str]) -> pygit2.Walker:
        """A walk from ``head`` (topological, then time order) that hides every known commit of
        ``stop_at`` and its ancestors."""
        walker = self._repo.walk(
            self._commit(head).id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME
        )
        for sha in stop_at:
            if self.has_commit(sha):
                walker.hide(sha)
        return walker

    def commit_record(self, sha: str, renames: RenameRule | None = None) -> CommitInfo:
        """``sha``'s record as the history walk gives it: its changes against its first parent,
        renames by ``renames`` (``git/renames.py``); a merge's come without changes."""
        try:
            return commit_record(
                self._commit(sha),
                self._shallow_commits(),
                renames or self._rename_rule(),
                _ObjectBlobs(self._repo),
            )
        except (KeyError, pygit2.GitError) as exc:
            raise RepoError(f"cannot read commit {sha} ({_reason(exc)})", hint=self._missing_hint()) from None

    def with_renames(self, commit: CommitInfo, renames: RenameRule | None = None) -> CommitInfo:
        """The record of ``commit`` (a ``renames_pending`` one of ``history_commits``) with its
        renames by ``renames``, as the walk gives it (``git/renames.py``)."""
        if not commit.renames_pending:
            return commit
        # no tree is diffed; a blob that cannot be read is measured as unreadable (``_ObjectBlobs``)
        return renamed_record(commit, renames or self._rename_rule(), _ObjectBlobs(self._repo))

    def _rename_rule(self) -> RenameRule:
        """The history's rename rule at this repository's threshold (a mine passes its own)."""
        return RenameRule(threshold=self.rename_threshold)

    def _has_grafts_or_promisor(self) -> bool:
        if (Path(self.common_dir) / "info" / "grafts").exists():
            return True
        try:
            config = self._repo.config
            return any(name in config for name in ("extensions.partialclone", "remote.origin.promisor"))
        except (pygit2.GitError, ValueError):
            return True

    # -- notes and remotes --------------------------------------------------------------------

    def notes(self, ref: str) -> dict[str, str] | None:
        """Commit sha → note text under ``ref`` (None: no such ref here)."""
        return read_notes(self._repo, ref)

    def write_note(self, ref: str, sha: str, text: str) -> None:
        """Make ``text`` the note of ``sha`` under ``ref`` (``RepoError`` when git refuses)."""
        try:
            write_note(self._repo, ref, sha, text)
        except (pygit2.GitError, ValueError) as exc:
            raise RepoError(f"could not write the git note on {sha[:12]} ({ref}): {exc}") from None

    def remote_url(self, name: str = "origin") -> str | None:
        return remote_url(self._repo, name)

    # -- who changed what (``git/blame.py``; the reader of ``git/served.py`` answers these too) --

    def blame_ranges(
        self, commit: str, path: str, ranges: Sequence[LineRange], oldest: str | None = None
    ) -> list[tuple[int, int, str]]:
        """The commits that last changed ``ranges`` of ``path`` at ``commit`` (``blame.blame_ranges``)."""
        from knowing_pr.git import blame

        return blame.blame_ranges(self, commit, path, ranges, oldest=oldest)

    def commits_between(self, base: str, head: str, limit: int) -> list[str]:
        """The commits of ``head`` that ``base`` lacks, newest first (``blame.commits_between``)."""
        from knowing_pr.git import blame

        return blame.commits_between(self, base, head, limit)

    def commit_authors(
        self, shas: Iterable[str], mailmap_text: bytes | None = None
    ) -> dict[str, CommitAuthor]:
        """Each commit's author through a mailmap (``blame.commit_authors``)."""
        from knowing_pr.git import blame

        return blame.commit_authors(self, shas, mailmap_text)

    # -- internals ----------------------------------------------------------------------------

    def _commit(self, rev: str) -> pygit2.Commit:
        try:
            obj = self._repo.get(rev) if len(rev) == 40 else None
        except (ValueError, pygit2.GitError):
            obj = None
        if isinstance(obj, pygit2.Commit):
            return obj
        commit = self._repo[self.resolve(rev)]
        assert isinstance(commit, pygit2.Commit)  # resolve() peels to a commit
        return commit

    def _shallow_commits(self) -> frozenset[str]:
        if self._shallow_cache is None:
            self._shallow_cache = read_shallow(self.common_dir)
        return self._shallow_cache

    def _missing_hint(self) -> str:
        if self.is_shallow:
            return _SHALLOW_HINT
        return "the object database is incomplete (partial clone?); run `git fetch` or `git fsck`"


class _ObjectBlobs:
    """Blob sizes and bytes for the rename measure (``git/renames.py``); a blob that cannot be read
    (missing in a partial clone, not a blob) is -1 / None."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self._odb = repo.odb
        self._read_header = _header_reader(self._odb)

    def size(self, blob_id: str) -> int:
        return _blob_size(self._read_header, blob_id)

    def read(self, blob_id: str) -> bytes | None:
        # the object database's raw read: no object is built around the bytes (half the time)
        try:
            kind, data = self._odb.read(blob_id)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        return bytes(data) if kind == pygit2.enums.ObjectType.BLOB else None


def _header_reader(odb: Any) -> Any:
    """``Odb.read_header`` (an object's type and size without inflating it), or, on a pygit2
    that lacks it (the releases that still support Python 3.10), a read of the whole object."""
    read_header = getattr(odb, "read_header", None)
    if read_header is not None:
        return read_header

    def read_whole(oid: Any) -> tuple[Any, int]:
        kind, data = odb.read(oid)
        return kind, len(data)

    return read_whole


def _blob_size(read_header: Any, oid: Any) -> int:
    """The blob's size, or -1 when the object is not in this clone (partial clones with a
    blob filter, damaged mirrors): the indexer skips such a file instead of failing."""
    try:
        return int(read_header(oid)[1])
    except (KeyError, ValueError, pygit2.GitError):
        return -1


def _ambiguous_error() -> Any:
    """pygit2 ≥ 1.20.1 names an ambiguous short sha; older releases (the last ones for Python
    3.10) raise a plain ValueError for it, which then reads as an unknown revision."""
    return getattr(pygit2, "AmbiguousError", ())


def _reason(exc: BaseException) -> str:
    text = str(exc.args[0]) if exc.args else type(exc).__name__
    return text.strip() or type(exc).__name__


def _open_error(path: Path, exc: BaseException) -> RepoError:
    reason = _reason(exc)
    if "owned" in reason or "ownership" in reason:
        return RepoError(
            f"{path}: the repository is owned by another user ({reason})",
            hint="mark it safe: git config --global --add safe.directory <path>",
        )
    return RepoError(f"{path}: cannot open the git repository ({reason})", hint="check the path and its .git")
