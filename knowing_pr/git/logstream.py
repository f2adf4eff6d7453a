"""One ``git log`` process as a stream → the subjects and changed paths of many commits (the history
mine's fast path).

libgit2's tree diff costs about ten times git's own, and a history mine diffs every commit once;
so the changed paths of the commits a pygit2 walk listed come from a single
``git log --no-walk=unsorted --stdin --no-renames --raw --no-abbrev -z`` read as a stream, in the
order the shas were given (or from two such runs over the two halves of a long list, one after the
other: ``parts``), one commit at a time, each with its subject (``%s``, one more field
after the header, bounded by ``commit_subject``) and the blob id and mode of every file it
deletes or adds. Rename detection is not asked of git (its similarity measure is its own, and
changes with its version): the caller pairs the deleted and added files of the few commits that
have both with ``git/renames.py``, from those blob ids, as the pygit2 walk does.

git runs with a scrubbed environment (no ``GIT_*`` from outside, replace refs and lazy fetches
off) and every option that could make it run a program or change what it prints pinned on the
command line; no revision is on the command line (the shas go in on stdin, each checked to be a
full hex object id). Any failure (git missing, an object missing, output not understood) is
``None``: the caller falls back to the pygit2 walk, never to a different history.
"""

from __future__ import annotations

import contextlib
import os
import re
import weakref
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import IO, TYPE_CHECKING

from knowing_pr.git.records import commit_subject, decode_path
from knowing_pr.gitenv import scrubbed_env

__all__ = ["LogStream", "LogStreamError", "PACK_MAPPED_BYTES", "PACK_WINDOW_BYTES", "stream_commits"]

#: one change as ``CommitInfo.changes`` holds it
Change = tuple[str, str | None, str | None]
#: a file the commit deletes ("D": its old blob) or adds ("A": its new blob): status, path, blob id,
#: mode (``CommitInfo.sides``, what the rename measure of ``git/renames.py`` needs)
FileSide = tuple[str, str, str, int]
#: one commit as the stream gives it: sha, subject, changes, the files it deletes or adds
LogRecord = tuple[str, str, list[Change], list[FileSide]]

_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
#: the statuses git prints without rename or copy detection, all libgit2 gives without find_similar
_STATUSES = frozenset({"A", "D", "M", "T"})
_HEADER = b"@"
_RAW = b":"
_READ_BYTES = 1 << 16
#: the chunks of one run's output read ahead of the parse (git waits when they are full)
_QUEUED_CHUNKS = 256

#: git maps pack files into memory in windows of this size, and keeps at most
#: ``PACK_MAPPED_BYTES`` mapped (least recently used windows go first); libgit2 in this process the
#: same (``git/repo.py``). Their defaults (1 GiB windows, 8 GiB mapped) keep a whole pack resident
#: once a history mine has read it: on a 330 MB pack that was 240 MB of the index's peak memory,
#: and these bounds keep 40 MB at no measurable cost in time (the pages stay in the page cache).
#: A mine's ``git log`` over terraform's history held 330 MB without them and 113 MB with them and
#: ``_DELTA_BASE_CACHE_BYTES`` (timed in a shell: 1.4-2.0 s against 1.8-2.5 s, where the mine
#: reading it takes 4 s). Not settings: nothing read changes.
PACK_WINDOW_BYTES = 32 << 20
PACK_MAPPED_BYTES = 96 << 20
#: git's cache of delta bases while it diffs trees (its default 96 MiB)
_DELTA_BASE_CACHE_BYTES = 32 << 20

if TYPE_CHECKING:
    from queue import Queue

_GIT_ARGS = (
    "--no-pager",
    "-c",
    "core.fsmonitor=",
    "-c",
    "log.showSignature=false",
    "-c",
    f"core.packedGitWindowSize={PACK_WINDOW_BYTES}",
    "-c",
    f"core.packedGitLimit={PACK_MAPPED_BYTES}",
    "-c",
    f"core.deltaBaseCacheLimit={_DELTA_BASE_CACHE_BYTES}",
    "log",
    "--no-walk=unsorted",
    "--stdin",
    "--no-renames",
    "--raw",
    "--no-abbrev",
    "-z",
    "--root",
    "--format=@%H%x00%s",
    "--encoding=UTF-8",  # whatever i18n.logOutputEncoding the repository sets: as pygit2 reads it
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--no-show-signature",
    "--no-relative",
    "--ignore-submodules=none",
    f"-O{os.devnull}",
    "--end-of-options",
)


class LogStreamError(Exception):
    """git failed or printed what this reader does not understand (the caller falls back)."""


def _git_env() -> dict[str, str]:
    env = scrubbed_env(os.environ)
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    env["GIT_NO_LAZY_FETCH"] = "1"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def stream_commits(
    git_dir: str, shas: Sequence[str], *, parts: int = 1, idle: Callable[[], bool] | None = None
) -> LogStream:
    """(sha, subject, changes against the first parent, the blob of each file deleted or added)
    for each of ``shas`` (non-merge commits), in order; git starts before this returns, so it
    diffs while the caller does other work, and reads on while the records are consumed.

    With ``parts`` > 1 the shas are cut into that many consecutive runs, each given to its own
    ``git log`` at once (a history's commits are independent of one another: the runs' outputs,
    read one after the other, are one run's); a run's output waits in memory, at most
    ``_QUEUED_CHUNKS`` chunks, while the runs before it are read (git then waits).

    A record is given only once it is known whole: when git has printed the next commit's header,
    or, for a run's last commit, when git has exited well (a git that dies inside a commit's
    changes printed only part of them; a consumer that counts records as they come never counts
    such a one).

    ``idle``: called while git has printed nothing new yet, before waiting for it (a little work
    each call; False: none left); the caller's spare work then runs while git diffs.

    Raises ``LogStreamError`` when git cannot be run (here), fails, or prints anything unexpected
    (while the records are read).
    """
    for sha in shas:
        if not _SHA.fullmatch(sha):
            raise LogStreamError(f"not a full object id: {sha[:50]!r}")
    size = max(-(-len(shas) // max(parts, 1)), 1)
    runs: list[_Run] = []
    try:
        for start in range(0, len(shas), size):
            runs.append(_Run(git_dir, shas[start : start + size]))
    except BaseException:
        for run in runs:
            run.close()
        raise
    return LogStream(runs, idle)


class LogStream:
    """The records of ``stream_commits``, an iterator over its running ``git log`` processes;
    ``close`` stops them, whether their records were read or not, and so does the stream's end as
    an object (dropped unclosed: git started is never left running, even before a first read)."""

    def __init__(self, runs: list[_Run], idle: Callable[[], bool] | None) -> None:
        self._records = _read_runs(runs, idle)  # holds the runs, not this stream: no cycle
        self._stop = weakref.finalize(self, _close_runs, runs)

    def __iter__(self) -> LogStream:
        return self

    def __next__(self) -> LogRecord:
        return next(self._records)

    def close(self) -> None:
        """Stop git where it still runs (a reader that stopped early, or never began)."""
        self._records.close()
        self._stop()


def _read_runs(runs: list[_Run], idle: Callable[[], bool] | None) -> Generator[LogRecord, None, None]:
    try:
        for run in runs:
            # a record is whole once git prints the next header; the last one of a run only once
            # git exits well (a git that dies inside a commit's changes printed part of them)
            last = None
            for record in _parse(_tokens(run.chunks(idle)), run.shas):
                if last is not None:
                    yield last
                last = record
            run.finish()
            if last is not None:
                yield last
    finally:
        _close_runs(runs)


def _close_runs(runs: list[_Run]) -> None:
    for run in runs:
        run.close()


class _Run:
    """One ``git log`` over some shas: a thread feeds them, another reads its output in chunks."""

    def __init__(self, git_dir: str, shas: Sequence[str]) -> None:
        # imported here: ``knowing_pr.git`` is on every command's start-up path, a history mine is not
        import queue
        import subprocess
        import threading

        self.shas = shas
        try:
            self.process = subprocess.Popen(
                ["git", f"--git-dir={git_dir}", *_GIT_ARGS],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=_git_env(),
            )
        except OSError as exc:
            raise LogStreamError(f"cannot run git: {exc}") from None
        assert self.process.stdin is not None and self.process.stdout is not None
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=_QUEUED_CHUNKS)
        #: a read of git's output that failed (the output then ends short of git's end)
        self._failed: list[BaseException] = []
        self._threads = [
            threading.Thread(target=_feed, args=(self.process.stdin, shas), daemon=True),
            threading.Thread(
                target=_drain, args=(self.process.stdout, self._queue, self._failed), daemon=True
            ),
        ]
        try:
            for thread in self._threads:
                thread.start()
        except RuntimeError as exc:  # no thread to be had: git must not outlive this
            self.process.kill()
            self.process.wait()
            raise LogStreamError(f"cannot read git log: {exc}") from None

    def chunks(self, idle: Callable[[], bool] | None = None) -> Iterator[bytes]:
        """git's output, chunk by chunk, until it ends; ``idle`` runs while none is ready."""
        import queue

        while True:
            try:
                chunk = self._queue.get_nowait()
            except queue.Empty:
                if idle is not None and idle():
                    continue
                chunk = self._queue.get()
            if chunk is None:
                break
            yield chunk
        if self._failed:
            raise LogStreamError(f"reading git log failed: {self._failed[0]}")

    def finish(self) -> None:
        """git's exit check (its output has been read to the end)."""
        if self.process.wait() != 0:
            raise LogStreamError(f"git log exited with status {self.process.returncode}")

    def close(self) -> None:
        """Stop git if it still runs (an error, a reader that stopped early) and join the threads."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        while self._threads[1].is_alive():  # a reader blocked on a full queue: unblock it
            with contextlib.suppress(Exception):
                self._queue.get_nowait()
            self._threads[1].join(timeout=0.01)
        self._threads[0].join()
        assert self.process.stdin is not None and self.process.stdout is not None
        with contextlib.suppress(OSError):  # the feeder closes it, unless git died under its write
            self.process.stdin.close()
        self.process.stdout.close()


def _feed(stdin: IO[bytes], shas: Sequence[str]) -> None:
    try:
        stdin.write("".join(f"{sha}\n" for sha in shas).encode("ascii"))
        stdin.close()
    except OSError:
        pass  # git exited early: its status says why


def _drain(stdout: IO[bytes], chunks: Queue[bytes | None], failed: list[BaseException]) -> None:
    """git's output into ``chunks`` (None at its end), waiting while they are full; a read that
    fails (the pipe closed under it by ``close``, or an error) goes to ``failed``."""
    try:
        while chunk := stdout.read(_READ_BYTES):
            chunks.put(chunk)
    except (OSError, ValueError) as exc:
        failed.append(exc)
    finally:
        chunks.put(None)


def _tokens(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """git's NUL-separated fields, from its output in chunks (memory bounded by one chunk and one
    field)."""
    pending = b""
    for chunk in chunks:
        pending += chunk
        fields = pending.split(b"\0")
        pending = fields.pop()
        yield from fields
    if pending.strip(b"\n"):
        yield pending


def _side(status: str, path: str, raw: bytes) -> FileSide:
    """The deleted file's old blob or the added file's new blob, from a ``--raw`` field."""
    try:
        old_mode, new_mode, old_blob, new_blob, _ = raw[1:].decode("ascii").split(" ")
        mode, blob = (old_mode, old_blob) if status == "D" else (new_mode, new_blob)
        if not _SHA.fullmatch(blob):
            raise ValueError(blob)
        return status, path, blob, int(mode, 8)
    except ValueError:
        raise LogStreamError(f"unexpected change in git log output: {raw[:60]!r}") from None


def _parse(tokens: Iterator[bytes], shas: Sequence[str]) -> Iterator[LogRecord]:
    expected = iter(shas)
    current: str | None = None
    subject = ""
    changes: list[Change] = []
    sides: list[FileSide] = []
    for token in tokens:
        field = token.lstrip(b"\n")
        if field.startswith(_HEADER) and len(field) > 2:
            if current is not None:
                yield current, subject, changes, sides
            current = field[1:].decode("ascii", "replace")
            if current != next(expected, None):
                raise LogStreamError(f"git log printed {current[:12]} out of order")
            # the subject is the field right after the header (git prints no NUL inside it)
            subject = commit_subject(next(tokens, b"").decode("utf-8", "replace"))
            changes = []
            sides = []
            continue
        # ":old-mode new-mode old-blob new-blob status", then the path
        status = field[-1:].decode("ascii", "replace")
        if current is None or status not in _STATUSES or not field.startswith(_RAW):
            raise LogStreamError(f"unexpected field in git log output: {field[:40]!r}")
        path = decode_path(next(tokens, b""))
        if not path:
            raise LogStreamError("git log output ends inside a change")
        changes.append((status, None if status == "A" else path, None if status == "D" else path))
        if status == "A" or status == "D":
            sides.append(_side(status, path, field))
    if current is not None:
        yield current, subject, changes, sides
    if next(expected, None) is not None:
        raise LogStreamError("git log stopped before the last commit")
