"""(path, language, source) items → (path, ParsedFile | None, skip reason | None), isolated.

tree-sitter can crash in C (a stack overflow on deeply nested input) where Python cannot
catch it, so ``parse_files`` parses in child processes: ``workers`` children of
``python -I -c …`` each run ``serve`` under ``RLIMIT_AS`` and speak a small binary protocol
over their standard streams (no pickle: plain bytes in, JSON out):

    parent → child   <u32 language length><u32 path length><u64 source length>
                     <language><path><source>                                       per file
    child → parent   <u32 length><JSON>                                              per frame

The path is sent only for a file whose test cases are wanted (``test_cases``: the paths whose
test cases the caller keeps; a walker reads the path); the child finds them from the same tree.
The first child frame says it is ready; then it answers each file in order with
``{"ok": …}`` or ``{"error": …}``. Up to ``batch_size`` files are in flight per child, so
the pipes stay busy. Because answers stream file by file, the parent always knows which
file a child was on: a child that dies marks that file ``parser-crash``, one silent for
``timeout_s`` on a file is killed and marks it ``timeout``; either way the child is replaced
and the rest of its batch is sent again. Results come out in input order.

``parse_files_inline`` gives the same output in this process (``isolate_parser = False``);
``knowing_pr.parse.fork`` gives it from a fork of this process for a handful of files, over
the same answer frames (``write_frame``, ``complete_frames``) and under the same limits
(``limit_child``).

One module for the pool and its wire protocol (a little over the style's ~400 lines): the
frames, the limits and the pool's state machine must agree, and ``fork.py`` reuses them.
"""

from __future__ import annotations

import json
import os
import selectors
import struct
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from knowing_pr.errors import KnowingPRError
from knowing_pr.model import Definition, Fact, Import, ParsedFile, Reference
from knowing_pr.parse import parse_source

__all__ = [
    "READ_CHUNK",
    "SKIP_CRASH",
    "SKIP_ERROR",
    "SKIP_TIMEOUT",
    "Item",
    "Result",
    "complete_frames",
    "decode_parsed",
    "encode_parsed",
    "isolated_python",
    "limit_child",
    "parse_files",
    "parse_files_inline",
    "serve",
    "write_frame",
]

SKIP_CRASH = "parser-crash"
SKIP_TIMEOUT = "timeout"
SKIP_ERROR = "parser-error"

Item = tuple[str, str, bytes]
Result = tuple[str, ParsedFile | None, str | None]

_REQUEST_HEADER = struct.Struct("<IIQ")
_FRAME_HEADER = struct.Struct("<I")
READ_CHUNK = 1 << 20
_STDERR_TAIL_BYTES = 2000


# ---------------------------------------------------------------- records <-> JSON


def encode_parsed(parsed: ParsedFile, *, definitions_only: bool = False) -> dict[str, Any]:
    """A ``ParsedFile`` (minus path and language) as JSON-able lists; ``definitions_only``: the
    references, imports, facts and test cases left out (they decode as empty lists and None)."""
    definitions = [
        [d.name, d.qualified_name, d.kind, d.start_line, d.end_line, d.start_byte, d.end_byte]
        + [d.signature, d.doc, d.parent]
        for d in parsed.definitions
    ]
    if definitions_only:
        return {"d": definitions, "r": [], "i": [], "n": parsed.line_count, "f": []}
    return {
        "d": definitions,
        "r": [[r.kind, r.name, r.line, r.scope, r.qualifier, r.hint] for r in parsed.references],
        "i": [[i.module, [list(pair) for pair in i.names], i.line] for i in parsed.imports],
        "n": parsed.line_count,
        "f": [[f.kind, f.scope, f.name, list(f.values)] for f in parsed.facts],
        "t": parsed.test_cases,
    }


def decode_parsed(path: str, language: str, payload: dict[str, Any]) -> ParsedFile:
    return ParsedFile(
        path=path,
        language=language,
        definitions=[Definition(*row) for row in payload["d"]],
        references=[Reference(*row) for row in payload["r"]],
        imports=[
            Import(module, tuple((str(a), str(b)) for a, b in names), line)
            for module, names, line in payload["i"]
        ],
        line_count=int(payload["n"]),
        facts=[Fact(kind, scope, name, tuple(values)) for kind, scope, name, values in payload["f"]],
        test_cases=payload.get("t"),
    )


# ---------------------------------------------------------------- in process


def parse_files_inline(
    items: Iterable[Item],
    *,
    timeout_s: float = 0.0,
    memory_mb: int = 0,
    workers: int = 1,
    test_cases: Collection[str] = frozenset(),
) -> Iterator[Result]:
    """Same output as ``parse_files`` without isolation (limits do not apply in-process)."""
    del timeout_s, memory_mb, workers
    for path, language, source in items:
        try:
            yield path, parse_source(path, language, source, test_cases=path in test_cases), None
        except Exception:  # a bug in extraction must not stop the index
            yield path, None, SKIP_ERROR


# ---------------------------------------------------------------- child side


def serve(memory_mb: int) -> None:
    """Child main loop: limit memory, say ready, answer each request until stdin closes."""
    limit_child(memory_mb)
    requests = sys.stdin.buffer
    answers = sys.stdout.buffer
    write_frame(answers, {"ready": True})
    while True:
        header = requests.read(_REQUEST_HEADER.size)
        if len(header) < _REQUEST_HEADER.size:
            return
        language_length, path_length, source_length = _REQUEST_HEADER.unpack(header)
        language = requests.read(language_length).decode("ascii", "replace")
        path = requests.read(path_length).decode("utf-8", "surrogateescape")
        source = requests.read(source_length)
        try:
            parsed = parse_source(path, language, source, test_cases=bool(path))
            answer: dict[str, Any] = {"ok": encode_parsed(parsed)}
        except Exception as error:  # reported to the parent as parser-error
            answer = {"error": f"{type(error).__name__}: {error}"[:500]}
        write_frame(answers, answer)


def limit_child(memory_mb: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if memory_mb > 0:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def write_frame(stream: IO[bytes], payload: dict[str, Any]) -> None:
    body = json.dumps(payload, separators=(",", ":")).encode("utf-8", "surrogatepass")
    stream.write(_FRAME_HEADER.pack(len(body)) + body)
    stream.flush()


# ---------------------------------------------------------------- parent side


@dataclass(eq=False)
class _Child:
    process: subprocess.Popen[bytes]
    stderr: IO[bytes]
    ready: bool = False
    pending: deque[int] = field(default_factory=deque)
    inbox: bytearray = field(default_factory=bytearray)
    outbox: bytearray = field(default_factory=bytearray)
    deadline: float = 0.0

    @property
    def stdin_fd(self) -> int:
        assert self.process.stdin is not None
        return self.process.stdin.fileno()

    @property
    def stdout_fd(self) -> int:
        assert self.process.stdout is not None
        return self.process.stdout.fileno()


def isolated_python(code: str, *args: str) -> list[str]:
    """The command of a child Python that runs ``code`` with this process's import path, its own
    arguments from ``sys.argv[2]`` on: ``-I``, so it never imports from the working directory (an
    untrusted checkout) nor reads ``PYTHON*`` variables."""
    bootstrap = f"import json, sys; sys.path[:] = json.loads(sys.argv[1]); {code}"
    paths = [entry for entry in sys.path if entry]
    return [sys.executable, "-I", "-c", bootstrap, json.dumps(paths), *args]


def _child_command(memory_mb: int) -> list[str]:
    return isolated_python(
        "from knowing_pr.parse.worker import serve; serve(int(sys.argv[2]))", str(memory_mb)
    )


class _Pool:
    """Children, their in-flight files and the selector that watches their pipes."""

    def __init__(
        self,
        *,
        timeout_s: float,
        memory_mb: int,
        workers: int,
        batch_size: int,
        start_timeout_s: float,
        test_cases: Collection[str] = frozenset(),
    ) -> None:
        self.timeout_s = timeout_s
        self.test_cases = test_cases
        self.start_timeout_s = start_timeout_s
        self.memory_mb = memory_mb
        self.workers = workers if workers > 0 else (os.cpu_count() or 1)
        self.batch_size = max(1, batch_size)
        self.selector = selectors.DefaultSelector()
        self.children: list[_Child] = []
        self.items: dict[int, Item] = {}
        self.retry: deque[int] = deque()
        self.results: dict[int, Result] = {}

    # -- lifecycle

    def spawn(self) -> _Child:
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in retire)
        process = subprocess.Popen(
            _child_command(self.memory_mb),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            close_fds=True,
        )
        child = _Child(process=process, stderr=stderr, deadline=time.monotonic() + self.start_timeout_s)
        os.set_blocking(child.stdin_fd, False)
        os.set_blocking(child.stdout_fd, False)
        self.selector.register(child.stdout_fd, selectors.EVENT_READ, child)
        self.children.append(child)
        return child

    def retire(self, child: _Child) -> None:
        self.selector.unregister(child.stdout_fd)
        if child.outbox:
            self.selector.unregister(child.stdin_fd)
        if child.process.poll() is None:
            child.process.kill()
        child.process.wait()
        for stream in (child.process.stdin, child.process.stdout):
            if stream is not None:
                stream.close()
        child.stderr.close()
        self.children.remove(child)

    def close(self) -> None:
        for child in list(self.children):
            self.retire(child)
        self.selector.close()

    # -- work

    def assign(self, child: _Child, index: int) -> None:
        path, language, source = self.items[index]
        language_bytes = language.encode("ascii", "replace")
        # the path goes along only when the file's test cases are wanted (the module docstring)
        path_bytes = path.encode("utf-8", "surrogateescape") if path in self.test_cases else b""
        was_idle = not child.outbox
        header = _REQUEST_HEADER.pack(len(language_bytes), len(path_bytes), len(source))
        child.outbox += header + language_bytes + path_bytes + source
        if was_idle:
            self.selector.register(child.stdin_fd, selectors.EVENT_WRITE, child)
        if not child.pending and child.ready:
            child.deadline = time.monotonic() + self.timeout_s
        child.pending.append(index)

    def fail(self, child: _Child, reason: str) -> None:
        """The child died or hung: blame the file it was on, resend the rest, replace it."""
        if not child.ready:
            self.retire(child)
            raise KnowingPRError(
                "the parse worker process could not start",
                hint=f"its error output ends with: {_tail(child.stderr)!r}; "
                "set isolate_parser: false to parse in-process",
            )
        if child.pending:
            culprit = child.pending.popleft()
            self.results[culprit] = (self.items.pop(culprit)[0], None, reason)
        self.retry.extendleft(reversed(child.pending))
        child.pending.clear()
        self.retire(child)

    def on_readable(self, child: _Child) -> None:
        try:
            data = os.read(child.stdout_fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.fail(child, SKIP_CRASH)
            return
        child.inbox += data
        try:
            frames = complete_frames(child.inbox)
        except ValueError:  # a garbled answer: the child is not trustworthy any more
            self.fail(child, SKIP_CRASH)
            return
        for payload in frames:
            self.on_frame(child, payload)

    def on_frame(self, child: _Child, payload: dict[str, Any]) -> None:
        now = time.monotonic()
        if not child.ready:
            child.ready = True
        elif child.pending:
            index = child.pending.popleft()
            path, language, _ = self.items.pop(index)
            if "ok" in payload:
                self.results[index] = (path, decode_parsed(path, language, payload["ok"]), None)
            else:
                self.results[index] = (path, None, SKIP_ERROR)
        child.deadline = now + self.timeout_s

    def on_writable(self, child: _Child) -> None:
        try:
            written = os.write(child.stdin_fd, child.outbox)
        except BlockingIOError:
            return
        except OSError:  # the child is gone; its stdout will report EOF
            written = len(child.outbox)
        del child.outbox[:written]
        if not child.outbox:
            self.selector.unregister(child.stdin_fd)

    def wait(self) -> None:
        """Handle pipe events until something happens or the earliest deadline passes."""
        busy = [child for child in self.children if child.pending or not child.ready]
        if not busy:
            return
        timeout = max(0.0, min(child.deadline for child in busy) - time.monotonic())
        for key, events in self.selector.select(timeout):
            child = key.data
            if child not in self.children:
                continue
            if events & selectors.EVENT_WRITE and key.fd == child.stdin_fd:
                self.on_writable(child)
            if events & selectors.EVENT_READ and key.fd == child.stdout_fd:
                self.on_readable(child)
        now = time.monotonic()
        for child in list(self.children):
            if (child.pending or not child.ready) and child.deadline <= now:
                self.fail(child, SKIP_TIMEOUT)


def complete_frames(inbox: bytearray) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    while len(inbox) >= _FRAME_HEADER.size:
        (length,) = _FRAME_HEADER.unpack_from(inbox)
        end = _FRAME_HEADER.size + length
        if len(inbox) < end:
            break
        frames.append(json.loads(bytes(inbox[_FRAME_HEADER.size : end])))
        del inbox[:end]
    return frames


def _tail(stream: IO[bytes]) -> str:
    stream.seek(0, os.SEEK_END)
    size = stream.tell()
    stream.seek(max(0, size - _STDERR_TAIL_BYTES))
    return stream.read().decode("utf-8", "replace").strip()


def parse_files(
    items: Iterable[Item],
    *,
    timeout_s: float,
    memory_mb: int,
    workers: int,
    batch_size: int = 32,
    start_timeout_s: float = 30.0,
    test_cases: Collection[str] = frozenset(),
) -> Iterator[Result]:
    """Parse every item in worker processes; yield (path, parsed, skip reason) in input order.

    ``skip reason`` is ``parser-crash``, ``timeout`` or ``parser-error`` when ``parsed`` is
    ``None``. ``timeout_s`` bounds each file, ``memory_mb`` each child's address space
    (0: unlimited), ``workers=0`` means one per CPU, ``batch_size`` files are in flight per
    child. Children start lazily and are killed when the iterator ends or is closed; a child
    that cannot start within ``start_timeout_s`` raises ``KnowingPRError``. The files whose
    paths are in ``test_cases`` come back with their test cases too.
    """
    pool = _Pool(
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        workers=workers,
        batch_size=batch_size,
        start_timeout_s=start_timeout_s,
        test_cases=test_cases,
    )
    source = iter(items)
    taken = 0
    emitted = 0
    exhausted = False
    try:
        while True:
            exhausted, taken = _feed(pool, source, taken, exhausted)
            while emitted in pool.results:
                yield pool.results.pop(emitted)
                emitted += 1
            if emitted == taken and exhausted:
                return
            pool.wait()
    finally:
        pool.close()


def _feed(pool: _Pool, source: Iterator[Item], taken: int, exhausted: bool) -> tuple[bool, int]:
    """Give every child up to ``batch_size`` files in flight, starting children as needed."""
    while True:
        child = _child_with_room(pool, has_work=bool(pool.retry) or not exhausted)
        if child is None:
            return exhausted, taken
        if pool.retry:
            pool.assign(child, pool.retry.popleft())
            continue
        item = next(source, None)
        if item is None:
            return True, taken
        pool.items[taken] = item
        pool.assign(child, taken)
        taken += 1


def _child_with_room(pool: _Pool, *, has_work: bool) -> _Child | None:
    """The least busy child with room; a new one while all are busy and more are allowed."""
    if not has_work:
        return None
    least = min(pool.children, key=lambda child: len(child.pending), default=None)
    if (least is None or least.pending) and len(pool.children) < pool.workers:
        return pool.spawn()
    return least if least is not None and len(least.pending) < pool.batch_size else None
