"""A repository path + the revisions a ``pr`` names → a reader process that opens the repository with
pygit2 and answers ``GitRepo``'s questions over a pipe; ``ServedRepo`` asks them.

A fresh ``knowing-pr pr`` spent a large part of its start importing pygit2 (libgit2, ``ssl``,
``tarfile``: bench/pr_profile.py) and then waited for its diff. The console script forks this reader first, while the
process is still small: the reader imports pygit2 and works out the revisions, the merge base and
the diff the command will ask for, on the second core, while the command imports numpy and the
ranking (bench/pr_start.py). The command never loads pygit2 unless it asks something the reader
does not serve (a history walk), which ``ServedRepo`` then answers in this process, as ``GitRepo``.

The answers are ``GitRepo``'s own: the reader runs the same methods, so an answer, or the
``RepoError`` it raises, is the one an in-process ``GitRepo`` gives. Anything else going wrong in
the reader (it died, it met an error that is not a ``RepoError``, the question comes from a forked
child of the command) makes ``ServedRepo`` ask in this process instead. The reader has no
terminal (its standard streams are ``/dev/null``), ends with a Ctrl-C or with the command (on
Linux the kernel kills it when the command dies; elsewhere it ends at its next read of the closed
pipe), and is killed by ``stop_reader`` when the command returns: it only reads.

Frames are length-prefixed pickles between this process and its own fork (no other party writes
to the pipes).
"""

from __future__ import annotations

import contextlib
import os
import pickle  # noqa: S403  # only between this process and its own fork
import signal
import struct
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from knowing_pr import die_with_parent
from knowing_pr.errors import RepoError
from knowing_pr.git.records import CommitAuthor, FileChange, FileDiff, LineRange, TreeEntry
from knowing_pr.git.repo import GitRepo, configure_object_reads

if TYPE_CHECKING:
    import pygit2

__all__ = ["Preparation", "ServedRepo", "served_repo", "start_reader", "stop_reader"]

_LENGTH = struct.Struct("<Q")
_T = TypeVar("_T")

#: replies: ("ok", value), ("error", message, hint) for a RepoError, ("local",) to ask in-process
_Reply = tuple[Any, ...]

#: (module, function, extra arguments): a command's own answers the reader begins once it has the
#: change, as ``function(repo, start, diffs, *extra)`` → {question: a call that waits for its
#: answer}; the module is imported in the reader only. The command asks ``has_prepared`` and
#: ``take_prepared``; the reader's answer must be the one the command would work out itself.
Preparation = tuple[str, str, tuple[Any, ...]]
_HAS_PREPARED = "has_prepared"
_TAKE_PREPARED = "take_prepared"


@dataclass(frozen=True)
class RepoFacts:
    """What ``GitRepo`` says of the repository itself, sent once when the reader opened it."""

    workdir: str | None
    git_dir: str
    is_shallow: bool
    is_empty: bool


class _Channel:
    """Whole frames over a pair of pipe ends."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd

    def send(self, value: object) -> None:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(_LENGTH.pack(len(data)) + data)
        while view:
            view = view[os.write(self.write_fd, view) :]

    def receive(self) -> Any:
        """The next frame's value; EOFError when the other end closed."""
        (length,) = _LENGTH.unpack(self._exactly(_LENGTH.size))
        # written only by this process's own fork, over an anonymous pipe that no other process
        # holds (close-on-exec; forks of the command are kept off it by the owner check)
        return pickle.loads(self._exactly(length))  # noqa: S301  # nosec B301

    def _exactly(self, count: int) -> bytes:
        parts: list[bytes] = []
        while count:
            part = os.read(self.read_fd, min(count, 1 << 20))
            if not part:
                raise EOFError
            parts.append(part)
            count -= len(part)
        return b"".join(parts)

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


# -- the reader process ------------------------------------------------------------------------


class _Answers:
    """The reader's answers by question. The warm-up's are kept for the command to ask; any other
    is worked out when asked and not kept (a ``pr`` that must index first reads every blob)."""

    def __init__(self, repo: GitRepo) -> None:
        self.repo = repo
        self.known: dict[tuple[Any, ...], _Reply] = {}
        self.keeping = True
        #: answers begun by the command's ``Preparation`` (module docstring), by question
        self.prepared: dict[Hashable, Callable[[], Any]] = {}

    def ask(self, name: str, args: tuple[Any, ...], rename_threshold: int) -> _Reply:
        if name == _HAS_PREPARED:
            return ("ok", args[0] in self.prepared)
        if name == _TAKE_PREPARED:
            return self._take(args[0])
        key = (name, args, rename_threshold)
        if key in self.known:
            return self.known[key]
        reply = self._work_out(name, args, rename_threshold)
        if self.keeping:
            self.known[key] = reply
        return reply

    def _take(self, question: Hashable) -> _Reply:
        pending = self.prepared.pop(question, None)
        if pending is None:
            return ("local",)
        try:
            return ("ok", pending())
        except Exception:  # noqa: BLE001  # the command works it out itself and meets the real error
            return ("local",)

    def value(self, name: str, *args: Any) -> Any:
        """A warm-up question: the value, or None when it failed (the command asks again)."""
        reply = self.ask(name, args, self.repo.rename_threshold)
        return reply[1] if reply[0] == "ok" else None

    def _work_out(self, name: str, args: tuple[Any, ...], rename_threshold: int) -> _Reply:
        if name not in SERVED:
            return ("local",)
        self.repo.rename_threshold = rename_threshold
        try:
            return ("ok", getattr(self.repo, name)(*args))
        except RepoError as exc:
            return ("error", exc.message, exc.hint)
        except Exception:  # noqa: BLE001  # the command asks in-process and meets the real error
            return ("local",)


def _warm_up(
    answers: _Answers, base: str | None, head: str | None, with_diff: bool
) -> tuple[str, list[FileDiff]] | None:
    """Ask what ``pipeline.pr.build_pr_pack`` asks first: the head, and for a diff the base, where
    the change starts (their merge base) and the diff from there: (that start, the diff)."""
    head_sha = answers.value("resolve", head) if head else answers.value("head_commit")
    if not head_sha or not with_diff:
        return None
    base_sha = answers.value("resolve", base) if base else answers.value("default_base", head_sha)
    if not base_sha:
        return None
    start = answers.value("merge_base", base_sha, head_sha) or base_sha
    diffs = answers.value("diff_hunks", start, head_sha)
    return (start, diffs) if diffs is not None else None


def _prepare(
    answers: _Answers, preparation: Preparation | None, change: tuple[str, list[FileDiff]] | None
) -> None:
    """Begin the command's own answers for the change (``Preparation``); any failure leaves
    them to the command."""
    if preparation is None or change is None:
        return
    import importlib

    module, function, extra = preparation
    try:
        begin = getattr(importlib.import_module(module), function)
        answers.prepared.update(begin(answers.repo, *change, *extra))
    except Exception:  # noqa: BLE001,S110  # the command asks for nothing prepared and works it out
        pass


def _serve(
    path: str,
    base: str | None,
    head: str | None,
    with_diff: bool,
    channel: _Channel,
    preparation: Preparation | None = None,
) -> None:
    try:
        repo = GitRepo.open(path)
    except RepoError as exc:
        channel.send(("error", exc.message, exc.hint))
        return
    except Exception:  # noqa: BLE001  # opened in-process, where the real error is raised
        channel.send(("local",))
        return
    channel.send(("ok", RepoFacts(repo.workdir, repo.git_dir, repo.is_shallow, repo.is_empty)))
    answers = _Answers(repo)
    _prepare(answers, preparation, _warm_up(answers, base, head, with_diff))
    answers.keeping = False
    while True:
        try:
            name, args, rename_threshold = channel.receive()
        except EOFError:
            return
        channel.send(answers.ask(name, args, rename_threshold))


# -- the command's side ------------------------------------------------------------------------


@dataclass
class _Reader:
    pid: int
    path: str
    channel: _Channel
    #: the process that forked the reader: only it may use the pipes
    owner: int
    alive: bool = True
    handed_out: bool = False

    def ask(self, name: str, args: tuple[Any, ...], rename_threshold: int) -> _Reply:
        if not self.alive or os.getpid() != self.owner:
            return ("local",)
        try:
            self.channel.send((name, args, rename_threshold))
            reply: _Reply = self.channel.receive()
        except (OSError, EOFError, pickle.PickleError):
            self.alive = False
            return ("local",)
        return reply


_READER: _Reader | None = None


def start_reader(
    path: str,
    *,
    base: str | None = None,
    head: str | None = None,
    with_diff: bool = True,
    preparation: Preparation | None = None,
) -> None:
    """Fork the reader for the repository at ``path`` (as the command will open it), which begins
    with the questions a ``pr`` of ``head`` (from ``base`` when ``with_diff``) asks first, then
    ``preparation``'s. Once per process; nothing happens where there is no ``fork`` or it fails."""
    global _READER
    if _READER is not None or not hasattr(os, "fork"):
        return
    requests = os.pipe()
    replies = os.pipe()
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        for fd in (*requests, *replies):
            os.close(fd)
        return
    if pid == 0:  # the reader
        try:
            _detach_from_the_terminal()
            # killed with the command instead of finishing its warm-up (elsewhere it ends at its
            # next read of the closed pipe)
            die_with_parent(parent)
            os.close(requests[1])
            os.close(replies[0])
            _serve(path, base, head, with_diff, _Channel(requests[0], replies[1]), preparation)
        finally:
            os._exit(0)
    os.close(requests[0])
    os.close(replies[1])
    _READER = _Reader(pid, path, _Channel(replies[0], requests[1]), owner=os.getpid())


def _detach_from_the_terminal() -> None:
    """The reader reads no input and writes no output: a pipeline reading the command's output
    sees its end when the command ends. A Ctrl-C ends the reader as it ends the command (it has
    nothing to unwind; the command, if it goes on, asks in-process)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(quiet, fd)
    os.close(quiet)


def stop_reader(*, reap: bool = True) -> None:
    """End the reader (its work is no longer wanted) and, unless ``reap`` is False, reap it: a
    process that ends right away leaves that to the system instead of waiting while the kernel
    tears the reader down."""
    global _READER
    reader, _READER = _READER, None
    if reader is None or os.getpid() != reader.owner:
        return
    reader.alive = False
    reader.channel.close()
    with contextlib.suppress(OSError):  # ChildProcessError is one
        os.kill(reader.pid, signal.SIGKILL)
        if reap:
            os.waitpid(reader.pid, 0)


def served_repo(path: str, *, rename_threshold: int = 50) -> ServedRepo | None:
    """The reader's view of the repository at ``path`` (the first time it is asked for, when a
    reader was started for that path), else None. Raises the ``RepoError`` opening it raised."""
    reader = _READER
    if reader is None or reader.handed_out or reader.path != path or os.getpid() != reader.owner:
        return None
    reader.handed_out = True
    try:
        opened: _Reply = reader.channel.receive()
    except (OSError, EOFError, pickle.PickleError):
        reader.alive = False
        return None
    if opened[0] == "error":
        raise RepoError(opened[1], hint=opened[2])
    if opened[0] != "ok":
        reader.alive = False
        return None
    return ServedRepo(reader, opened[1], rename_threshold=rename_threshold)


class ServedRepo(GitRepo):
    """``GitRepo`` whose questions the reader answers (see the module docstring); whatever it does
    not serve is asked of pygit2 in this process, opened on first use."""

    def __init__(self, reader: _Reader, facts: RepoFacts, *, rename_threshold: int = 50) -> None:
        self.rename_threshold = rename_threshold
        self._shallow_cache = None
        self._reader = reader
        self._facts = facts
        self._local: pygit2.Repository | None = None

    @property
    def _repo(self) -> pygit2.Repository:
        """pygit2's repository, opened in this process for what the reader does not answer."""
        if self._local is None:
            import pygit2

            configure_object_reads()  # read as the reader and ``GitRepo.open`` read
            self._local = pygit2.Repository(self._facts.git_dir)
        return self._local

    @_repo.setter
    def _repo(self, value: pygit2.Repository) -> None:
        self._local = value

    def _ask(self, name: str, args: tuple[Any, ...], local: Callable[[], _T]) -> _T:
        reply = self._reader.ask(name, args, self.rename_threshold)
        if reply[0] == "ok":
            return cast(_T, reply[1])
        if reply[0] == "error":
            raise RepoError(reply[1], hint=reply[2])
        return local()

    # -- what the repository is: known since it was opened -----------------------------------

    @property
    def workdir(self) -> str | None:
        return self._facts.workdir

    @property
    def git_dir(self) -> str:
        return self._facts.git_dir

    @property
    def is_shallow(self) -> bool:
        return self._facts.is_shallow

    @property
    def is_empty(self) -> bool:
        return self._facts.is_empty

    # -- the questions the reader answers ------------------------------------------------------

    def head_commit(self) -> str | None:
        return self._ask("head_commit", (), lambda: GitRepo.head_commit(self))

    def resolve(self, rev: str) -> str:
        return self._ask("resolve", (rev,), lambda: GitRepo.resolve(self, rev))

    def has_commit(self, sha: str) -> bool:
        return self._ask("has_commit", (sha,), lambda: GitRepo.has_commit(self, sha))

    def parents(self, sha: str) -> list[str]:
        return self._ask("parents", (sha,), lambda: GitRepo.parents(self, sha))

    def commit_time(self, sha: str) -> int:
        return self._ask("commit_time", (sha,), lambda: GitRepo.commit_time(self, sha))

    def merge_base(self, a: str, b: str) -> str | None:
        return self._ask("merge_base", (a, b), lambda: GitRepo.merge_base(self, a, b))

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return self._ask(
            "is_ancestor", (ancestor, descendant), lambda: GitRepo.is_ancestor(self, ancestor, descendant)
        )

    def is_shallow_boundary(self, sha: str) -> bool:
        return self._ask("is_shallow_boundary", (sha,), lambda: GitRepo.is_shallow_boundary(self, sha))

    def default_base(self, head: str) -> str | None:
        return self._ask("default_base", (head,), lambda: GitRepo.default_base(self, head))

    def tree_entries(self, commit: str) -> list[TreeEntry]:
        return self._ask("tree_entries", (commit,), lambda: GitRepo.tree_entries(self, commit))

    def entries_at(self, commit: str, paths: Iterable[str]) -> dict[str, TreeEntry]:
        wanted = tuple(paths)
        return self._ask("entries_at", (commit, wanted), lambda: GitRepo.entries_at(self, commit, wanted))

    def file_names(self, commit: str, directory: str) -> list[str]:
        return self._ask(
            "file_names", (commit, directory), lambda: GitRepo.file_names(self, commit, directory)
        )

    def read_blob(self, blob_id: str) -> bytes:
        return self._ask("read_blob", (blob_id,), lambda: GitRepo.read_blob(self, blob_id))

    # -- what the command asked the reader to prepare (``Preparation``) -------------------------

    def has_prepared(self, question: Hashable) -> bool:
        """Whether the reader began an answer to ``question`` (False when it cannot say)."""
        reply = self._reader.ask(_HAS_PREPARED, (question,), self.rename_threshold)
        return reply[0] == "ok" and bool(reply[1])

    def take_prepared(self, question: Hashable) -> tuple[bool, Any]:
        """(True, the answer) once the reader has it; (False, None) when it failed: the caller
        works it out itself."""
        reply = self._reader.ask(_TAKE_PREPARED, (question,), self.rename_threshold)
        return (True, reply[1]) if reply[0] == "ok" else (False, None)

    def diff_trees(self, old_commit: str | None, new_commit: str) -> list[FileChange]:
        return self._ask(
            "diff_trees", (old_commit, new_commit), lambda: GitRepo.diff_trees(self, old_commit, new_commit)
        )

    def diff_hunks(self, base: str, head: str) -> list[FileDiff]:
        return self._ask("diff_hunks", (base, head), lambda: GitRepo.diff_hunks(self, base, head))

    def notes(self, ref: str) -> dict[str, str] | None:
        return self._ask("notes", (ref,), lambda: GitRepo.notes(self, ref))

    def remote_url(self, name: str = "origin") -> str | None:
        return self._ask("remote_url", (name,), lambda: GitRepo.remote_url(self, name))

    def blame_ranges(
        self, commit: str, path: str, ranges: Sequence[LineRange], oldest: str | None = None
    ) -> list[tuple[int, int, str]]:
        wanted = tuple(ranges)
        return self._ask(
            "blame_ranges",
            (commit, path, wanted, oldest),
            lambda: GitRepo.blame_ranges(self, commit, path, wanted, oldest=oldest),
        )

    def commits_between(self, base: str, head: str, limit: int) -> list[str]:
        return self._ask(
            "commits_between", (base, head, limit), lambda: GitRepo.commits_between(self, base, head, limit)
        )

    def commit_authors(
        self, shas: Iterable[str], mailmap_text: bytes | None = None
    ) -> dict[str, CommitAuthor]:
        wanted = tuple(sorted(set(shas)))
        return self._ask(
            "commit_authors",
            (wanted, mailmap_text),
            lambda: GitRepo.commit_authors(self, wanted, mailmap_text),
        )


#: the questions the reader answers: every ``GitRepo`` method ``ServedRepo`` sends it
SERVED = frozenset(
    name for name, member in vars(ServedRepo).items() if callable(member) and not name.startswith("_")
)
