"""Text with stack traces → frames (file path, line, function), innermost first.

Recognised formats:

- Python tracebacks: ``File "/app/src/x.py", line 12, in load`` (listed outermost first,
  so the order is reversed; chained tracebacks keep the last one's frames first);
- JavaScript / Node: ``at fn (/app/src/x.js:10:5)``, ``at /app/src/x.js:10:5``,
  ``at async fn (file:///app/x.mjs:3:1)``, and Firefox's ``fn@http://host/x.js:10:5``;
- Go panics and goroutine dumps: a ``pkg.(*T).Method(...)`` line followed by a
  ``\\t/go/src/pkg/file.go:42 +0x1d`` line;
- Java (and Kotlin/Scala): ``at com.acme.Foo.bar(Foo.java:42)``;
- Rust panics: ``panicked at src/main.rs:5:9`` (and the older ``panicked at 'msg',
  src/main.rs:5:9``) and ``RUST_BACKTRACE`` frames ``  3: crate::m::f`` +
  ``at ./src/lib.rs:10:5``;
- C#: ``at Ns.Type.Method() in /src/Type.cs:line 42``; Ruby: ``app/x.rb:10:in `method'``.

Frames from the standard library or dependencies are kept; the caller matches them against
the indexed paths, and paths that are not in the repository simply match nothing.
Pure functions, no I/O.

The text is hostile input (an error log of up to 1 MiB, a pasted issue): every pattern runs in
time linear in its line (no two quantifiers compete for the same characters; the Go function
line, which a regular expression could only match in quadratic time, is checked by
``go_function``), and a line longer than ``max_line_chars`` is not read as a frame at all
(``read_frames`` counts such lines, so the caller can say so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MAX_LINE_CHARS", "Frame", "Trace", "go_function", "parse_frames", "read_frames"]

#: a line longer than this is not read as a stack frame (real frame lines are far shorter)
MAX_LINE_CHARS = 2000


@dataclass(frozen=True)
class Frame:
    """One stack frame: ``path`` as printed (POSIX separators), 1-based ``line``."""

    path: str
    line: int
    function: str
    language: str


_PY = re.compile(r'^\s*File "(?P<path>[^"\n]+)", line (?P<line>\d+)(?:, in (?P<fn>[^\s]+))?')
_JS_PAREN = re.compile(
    r"^\s*at (?:async )?(?P<fn>[^\s(][^(]*?) \((?P<path>[^()\s]+?):(?P<line>\d+)(?::\d+)?\)\s*$"
)
_JS_BARE = re.compile(r"^\s*at (?:async )?(?P<path>[^\s()]+?):(?P<line>\d+)(?::\d+)?\s*$")
_JS_FIREFOX = re.compile(r"^(?P<fn>[\w$.<>/]*)@(?P<path>[^\s@]+?):(?P<line>\d+)(?::\d+)?\s*$")
_JAVA = re.compile(r"^\s*at (?P<fn>[\w$.<>/]+)\((?P<file>[\w$-]+\.(?:java|kt|scala|groovy)):(?P<line>\d+)\)")
_CSHARP = re.compile(r"^\s*at (?P<fn>[^\s(]+)\([^)]*\) in (?P<path>.+?):line (?P<line>\d+)")
#: the characters of a Go function line's parts: the package path, the package's last element
#: (``[\w.\-]``), a method receiver (``(*T)``), the function's own name (``[\w.$\[\]]``)
_GO_PATH = re.compile(r"[\w.\-/]*")
_GO_PACKAGE = re.compile(r"[\w.\-]*")
_GO_RECEIVER = re.compile(r"\*?[\w\[\], ]+")
_GO_NAME = re.compile(r"[\w.$\[\]]+")
_GO_LOC = re.compile(r"^\s+(?P<path>\S+\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?\s*$")
_RUST_PANIC = re.compile(r"panicked at (?:'.*?', |\".*?\", )?(?P<path>[^\s:]+\.rs):(?P<line>\d+)(?::\d+)?")
_RUST_FN = re.compile(r"^\s*\d+: (?P<fn>[\w:<>$. ]+?)(?:::h[0-9a-f]{16})?\s*$")
_RUST_AT = re.compile(r"^\s*at (?P<path>\S+\.rs):(?P<line>\d+)(?::\d+)?\s*$")
_RUBY = re.compile(r"^\s*(?:from )?(?P<path>[^\s:]+\.rb):(?P<line>\d+):in [`'](?P<fn>[^'`]+)'")


def _clean_path(path: str) -> str:
    path = path.strip().replace("\\", "/")
    for prefix in ("file://", "webpack:///", "webpack://"):
        if path.startswith(prefix):
            path = path[len(prefix) :]
    if re.match(r"^https?://", path):
        path = path.split("://", 1)[1].split("/", 1)[-1]
    path = path.split("?", 1)[0]
    while path.startswith("./"):
        path = path[2:]
    return path


def _python(lines: list[str]) -> list[Frame]:
    """Frames of the last traceback in the text, innermost first."""
    blocks: list[list[Frame]] = []
    current: list[Frame] = []
    for line in lines:
        if line.startswith("Traceback (most recent call last)"):
            if current:
                blocks.append(current)
            current = []
            continue
        match = _PY.match(line)
        if match:
            current.append(Frame(_clean_path(match["path"]), int(match["line"]), match["fn"] or "", "python"))
    if current:
        blocks.append(current)
    # the last traceback holds the exception that surfaced; earlier ones caused it
    return [frame for block in reversed(blocks) for frame in reversed(block)]


def go_function(line: str) -> str | None:
    """The function a Go trace's function line names (``pkg/path.(*T).Method`` of
    ``pkg/path.(*T).Method(0x1, ...)``), else ``None``; in one pass over the line.

    The line is ``[path/]package.[(receiver).]name(arguments)`` with trailing spaces: the
    arguments' ``(`` is the first one that does not open a receiver, and the line ends at ``)``.
    """
    line = line.rstrip()
    if not line.endswith(")"):
        return None
    opening = line.find("(")
    if opening > 0 and line[opening - 1] == ".":  # a receiver: ``pkg.(*T).Method(``
        closing = line.find(")", opening)
        call = line.find("(", closing + 1) if closing > 0 else -1
        if (
            call > 0
            and line.startswith(".", closing + 1)
            and _GO_RECEIVER.fullmatch(line, opening + 1, closing)
            and _GO_NAME.fullmatch(line, closing + 2, call)
            and _go_package_dot(line[:opening])
        ):
            return line[:call]
    if opening <= 0 or not _go_qualified(line[:opening]):
        return None
    return line[:opening]


def _go_package_dot(head: str) -> bool:
    """``[path/]package.``: the part of a name before a receiver."""
    slash = head.rfind("/")
    package = head[slash + 1 :]
    return (
        (slash < 0 or (slash > 0 and _GO_PATH.fullmatch(head, 0, slash) is not None))
        and len(package) >= 2
        and package.endswith(".")
        and _GO_PACKAGE.fullmatch(package, 0, len(package) - 1) is not None
    )


def _go_qualified(name: str) -> bool:
    r"""``[path/]package.name`` where the package part is ``[\w.\-]+`` and the name part
    ``[\w.$\[\]]+``, split at some dot (both may hold dots: the split is found in one pass)."""
    slash = name.rfind("/")
    if slash == 0 or (slash > 0 and _GO_PATH.fullmatch(name, 0, slash) is None):
        return False
    start = slash + 1
    package_end = _GO_PACKAGE.match(name, start).end()  # type: ignore[union-attr]  # `*` always matches
    name_start = len(name)  # the first position from which every character can be in the name
    while name_start > start and _GO_NAME.fullmatch(name[name_start - 1]):
        name_start -= 1
    # a dot at ``dot`` with the package before it and the name after it, neither empty
    low, high = max(start + 1, name_start - 1), min(package_end, len(name) - 2)
    return low <= high and name.find(".", low, high + 1) >= 0


def _go(lines: list[str]) -> list[Frame]:
    frames: list[Frame] = []
    for previous, line in zip(lines, lines[1:], strict=False):
        loc = _GO_LOC.match(line)
        if not loc:
            continue
        name = go_function(previous.strip()) or ""
        frames.append(Frame(_clean_path(loc["path"]), int(loc["line"]), _go_short_name(name), "go"))
    return frames


def _go_short_name(name: str) -> str:
    tail = name.rsplit("/", 1)[-1]
    return tail.rsplit(".", 1)[-1] if "." in tail else tail


def _rust(lines: list[str]) -> list[Frame]:
    frames: list[Frame] = []
    for line in lines:
        match = _RUST_PANIC.search(line)
        if match:
            frames.append(Frame(_clean_path(match["path"]), int(match["line"]), "", "rust"))
    for previous, line in zip(lines, lines[1:], strict=False):
        loc = _RUST_AT.match(line)
        func = _RUST_FN.match(previous)
        if loc and func:
            name = func["fn"].strip().rsplit("::", 1)[-1]
            frames.append(Frame(_clean_path(loc["path"]), int(loc["line"]), name, "rust"))
    return frames


def _java_path(qualified: str, file_name: str) -> str:
    """``com.acme.Foo$Inner.bar`` + ``Foo.java`` → ``com/acme/Foo.java`` (a path suffix)."""
    parts = qualified.split(".")
    package = [p for p in parts[:-2] if p and p[0].islower()]
    return "/".join([*package, file_name])


def _line_frames(lines: list[str]) -> list[Frame]:
    frames: list[Frame] = []
    for line in lines:
        if m := _JAVA.match(line):
            fn = m["fn"].rsplit(".", 1)[-1]
            frames.append(Frame(_java_path(m["fn"], m["file"]), int(m["line"]), fn, "java"))
        elif m := _CSHARP.match(line):
            fn = m["fn"].rsplit(".", 1)[-1]
            frames.append(Frame(_clean_path(m["path"]), int(m["line"]), fn, "csharp"))
        elif m := _JS_PAREN.match(line):
            fn = m["fn"].strip().rsplit(".", 1)[-1].removeprefix("new ")
            frames.append(Frame(_clean_path(m["path"]), int(m["line"]), fn, "javascript"))
        elif (m := _JS_BARE.match(line)) and not line.strip().endswith(".rs"):
            path = _clean_path(m["path"])
            if not path.endswith(".rs"):
                frames.append(Frame(path, int(m["line"]), "", "javascript"))
        elif m := _JS_FIREFOX.match(line.strip()):
            fn = m["fn"].rsplit("/", 1)[-1].rsplit(".", 1)[-1]
            frames.append(Frame(_clean_path(m["path"]), int(m["line"]), fn, "javascript"))
        elif m := _RUBY.match(line):
            fn = m["fn"].split(" ")[-1]
            frames.append(Frame(_clean_path(m["path"]), int(m["line"]), fn, "ruby"))
    return frames


@dataclass(frozen=True)
class Trace:
    """The frames of a text, and how many of its lines were too long to be read as frames."""

    frames: list[Frame]
    long_lines: int = 0


def read_frames(text: str, *, max_frames: int = 50, max_line_chars: int = MAX_LINE_CHARS) -> Trace:
    """Every recognised frame of ``text``, innermost first, without duplicates; lines longer than
    ``max_line_chars`` are left out (an empty line stands in for each) and counted."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    long_lines = 0
    for position, line in enumerate(lines):
        if len(line) > max_line_chars:
            lines[position] = ""
            long_lines += 1
    found = [*_python(lines), *_go(lines), *_rust(lines), *_line_frames(lines)]
    unique: list[Frame] = []
    seen: set[tuple[str, int]] = set()
    for frame in found:
        key = (frame.path, frame.line)
        if frame.path and frame.line > 0 and key not in seen:
            seen.add(key)
            unique.append(frame)
        if len(unique) >= max_frames:
            break
    return Trace(unique, long_lines)


def parse_frames(text: str, *, max_frames: int = 50, max_line_chars: int = MAX_LINE_CHARS) -> list[Frame]:
    """``read_frames``'s frames."""
    return read_frames(text, max_frames=max_frames, max_line_chars=max_line_chars).frames
