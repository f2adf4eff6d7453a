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
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Frame", "parse_frames"]


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
_GO_FUNC = re.compile(r"^(?P<fn>(?:[\w.\-/]+/)?[\w.\-]+\.(?:\(\*?[\w\[\], ]+\)\.)?[\w.$\[\]]+)\(.*\)\s*$")
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


def _go(lines: list[str]) -> list[Frame]:
    frames: list[Frame] = []
    for previous, line in zip(lines, lines[1:], strict=False):
        loc = _GO_LOC.match(line)
        if not loc:
            continue
        func = _GO_FUNC.match(previous.strip())
        name = func["fn"] if func else ""
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


def parse_frames(text: str, *, max_frames: int = 50) -> list[Frame]:
    """Every recognised frame of ``text``, innermost first, without duplicates."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
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
    return unique
