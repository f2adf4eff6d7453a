"""(path, language, source) items → (path, ParsedFile | None, skip reason | None), from a fork of this process.

For a handful of files (a hook's one-file update) starting a fresh interpreter costs more than
the parse, so ``ForkedParse`` forks this process, whose grammars are already loaded,
and the fork answers file by file over a pipe with the frames of ``knowing_pr.parse.worker``
under the same memory limit (counted from what the fork already maps). A fork that dies
marks the file it was on ``parser-crash`` (one silent for ``timeout_s``: ``timeout``) and a new
fork takes the rest. POSIX only. ``start_parse`` picks, as the index does, between such a fork,
the pool of worker processes and no isolation.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from knowing_pr import die_with_parent
from knowing_pr.parse import parse_source
from knowing_pr.parse.worker import (
    READ_CHUNK,
    SKIP_CRASH,
    SKIP_ERROR,
    SKIP_TIMEOUT,
    Item,
    Result,
    complete_frames,
    decode_parsed,
    encode_parsed,
    limit_child,
    write_frame,
)

if TYPE_CHECKING:
    from knowing_pr.config import IndexParams

__all__ = ["ForkedParse", "forkable", "start_parse"]


def forkable(items: list[Item], params: IndexParams) -> bool:
    """A handful of files on a system that forks: a fork of this process parses them."""
    small = len(items) <= params.fork_max_files and sum(len(i[2]) for i in items) <= params.fork_max_bytes
    return small and hasattr(os, "fork")


def start_parse(
    items: list[Item],
    params: IndexParams,
    *,
    definitions_only: bool = False,
    test_cases: Collection[str] = frozenset(),
) -> Callable[[], Iterable[Result]]:
    """The items parsed as the index parses them (``params.isolate_parser``): begun now in a fork
    when a fork would parse them (it works while this process goes on; the returned call waits
    for its results), else, in a pool of workers or inline, when the returned call is made.
    ``definitions_only``: a fork sends back the definitions and line counts alone (the other
    records come back empty), which is all some callers read. The files whose paths are in
    ``test_cases`` come back with their test cases too."""
    from knowing_pr.parse import worker

    if not params.isolate_parser:
        return lambda: worker.parse_files_inline(items, test_cases=test_cases)
    if not forkable(items, params):
        return lambda: worker.parse_files(
            items,
            timeout_s=params.parse_timeout_s,
            memory_mb=params.parse_memory_mb,
            workers=params.workers,
            test_cases=test_cases,
        )
    started = ForkedParse(
        items,
        timeout_s=params.parse_timeout_s,
        memory_mb=params.parse_memory_mb,
        definitions_only=definitions_only,
        test_cases=test_cases,
    )
    return started.results


class ForkedParse:
    """Same isolation as ``parse_files`` for a handful of files, without starting a new
    interpreter, begun now: a ``fork`` of this process (its grammars already loaded) parses them
    under the same memory limit and answers file by file over a pipe while this process goes on;
    a thread of this process reads the answers (so a full pipe never stalls it), and ``results``
    waits for them. A child that dies marks the file it was on ``parser-crash`` (one silent for
    ``timeout_s`` on a file: ``timeout``) and a new fork takes the rest. POSIX only; this is what
    keeps a hook's one-file update fast. The fork is made before that thread starts (a process
    that runs other threads, as the MCP server's tool workers do, forks with them: the child only
    parses and writes to its pipe)."""

    def __init__(
        self,
        items: Iterable[Item],
        *,
        timeout_s: float,
        memory_mb: int,
        definitions_only: bool = False,
        test_cases: Collection[str] = frozenset(),
    ) -> None:
        self._items = list(items)
        self._timeout_s = timeout_s
        self._memory_mb = memory_mb
        self._definitions_only = definitions_only
        self._test_cases = test_cases
        self._answers: list[dict[str, Any] | str] = []
        self._reader: threading.Thread | None = None
        if self._items:
            pid, read_fd = _fork_child(self._items, memory_mb, definitions_only, test_cases)
            self._reader = threading.Thread(
                target=self._read, args=(pid, read_fd), name="knowing-pr-parse-reader", daemon=True
            )
            self._reader.start()

    def _read(self, pid: int, read_fd: int) -> None:
        self._answers = _answers_of(pid, read_fd, len(self._items), self._timeout_s)

    def results(self) -> Iterator[Result]:
        """The results, in the items' order (after a crash or a timeout a new fork takes the
        rest)."""
        if self._reader is not None:
            self._reader.join()
        return _rounds(
            self._items,
            self._answers,
            timeout_s=self._timeout_s,
            memory_mb=self._memory_mb,
            definitions_only=self._definitions_only,
            test_cases=self._test_cases,
        )


def _rounds(
    pending: list[Item],
    first: list[dict[str, Any] | str] | None,
    *,
    timeout_s: float,
    memory_mb: int,
    definitions_only: bool = False,
    test_cases: Collection[str] = frozenset(),
) -> Iterator[Result]:
    """Fork after fork until every item has an answer; ``first``: the first fork's answers,
    when it was started already."""
    while pending:
        if first is not None:
            answers, first = first, None
        else:
            forked = _fork_child(pending, memory_mb, definitions_only, test_cases)
            answers = _answers_of(*forked, len(pending), timeout_s)
        timed_out = bool(answers) and answers[-1] == SKIP_TIMEOUT
        if timed_out:
            answers = answers[:-1]
        for (path, language, _), answer in zip(pending, answers, strict=False):
            yield _result_of(path, language, answer)
        done = len(answers)
        if done < len(pending):
            yield pending[done][0], None, SKIP_TIMEOUT if timed_out else SKIP_CRASH
            done += 1
        pending = pending[done:]


def _result_of(path: str, language: str, answer: dict[str, Any] | str) -> Result:
    if isinstance(answer, dict) and "ok" in answer:
        return path, decode_parsed(path, language, answer["ok"]), None
    return path, None, SKIP_ERROR


def _mapped_mb() -> int:
    try:
        with open("/proc/self/statm", "rb") as statm:
            pages = int(statm.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE") // (1024 * 1024) + 1


def _fork_child(
    items: list[Item],
    memory_mb: int,
    definitions_only: bool = False,
    test_cases: Collection[str] = frozenset(),
) -> tuple[int, int]:
    """A fork that parses ``items`` and answers file by file on a pipe: (its pid, the read end)."""
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: parse, answer, and leave without running the parent's cleanup
        status = 0
        try:
            os.close(read_fd)
            _close_inherited(keep=write_fd)
            die_with_parent(parent)  # the timeout is the parent's to keep: no parent, no parse
            import faulthandler

            faulthandler.disable()  # a crash is an expected answer here, not a report
            # the fork shares the parent's mappings: the cap counts from what is already mapped
            limit_child(memory_mb + _mapped_mb() if memory_mb > 0 else 0)
            with os.fdopen(write_fd, "wb") as out:
                for path, language, source in items:
                    try:
                        wanted = not definitions_only and path in test_cases
                        parsed = parse_source(path, language, source, test_cases=wanted)
                        answer: dict[str, Any] = {
                            "ok": encode_parsed(parsed, definitions_only=definitions_only)
                        }
                    except Exception as error:  # reported as parser-error
                        answer = {"error": f"{type(error).__name__}: {error}"[:500]}
                    write_frame(out, answer)
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(write_fd)
    return pid, read_fd


def _close_inherited(keep: int) -> None:
    """Close what the fork inherited besides the standard streams and ``keep``: the pipes of
    another process (the git reader's, when the reader forks this) must see their end when that
    process dies, not when this fork does."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.isdigit() and int(name) > 2 and int(name) != keep:
                with contextlib.suppress(OSError):
                    os.close(int(name))
        return


def _answers_of(pid: int, read_fd: int, count: int, timeout_s: float) -> list[dict[str, Any] | str]:
    """Answers for a prefix of the fork's ``count`` items; fewer answers than items means the
    child died or hung on the next one (a trailing ``SKIP_TIMEOUT`` marker says which). Closes
    the pipe and reaps the child."""
    answers: list[dict[str, Any] | str] = []
    inbox = bytearray()
    deadline = time.monotonic() + timeout_s if timeout_s > 0 else None
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(read_fd, selectors.EVENT_READ)
            while len(answers) < count:
                wait = None if deadline is None else max(deadline - time.monotonic(), 0.0)
                if not selector.select(wait):
                    os.kill(pid, 9)
                    answers.append(SKIP_TIMEOUT)
                    break
                chunk = os.read(read_fd, READ_CHUNK)
                if not chunk:
                    break  # the child is gone
                inbox.extend(chunk)
                frames = complete_frames(inbox)
                answers.extend(frames)
                if frames and deadline is not None:
                    deadline = time.monotonic() + timeout_s
    finally:
        os.close(read_fd)
        os.waitpid(pid, 0)
    if answers and answers[-1] == SKIP_TIMEOUT:
        return answers
    return answers[:count]
