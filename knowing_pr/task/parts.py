"""A long task text (an issue report) → what it is made of, each part for the channel it fits.

An issue mixes prose with code: snippets (fenced blocks, indented blocks, ``>>>`` lines),
tracebacks, file paths, error messages (``KeyError: 'x'``), config excerpts (``key = value``,
``key: value``) and names (``snake_case``, ``CamelCase``, ``dotted.names``, backticks).
``split_task`` sorts them out:

- ``prose``: the words of the sentences (stop words left out) — a file's text is asked for
  all of them (BM25 over whole files);
- ``identifiers``: the names written as code anywhere (in snippets, backticks, error
  messages, config keys, prose words that are code-shaped) — the precise channel;
- ``paths``: file paths the text names outside tracebacks; ``frames``: a Python traceback's
  files, in the order printed (innermost last);
- ``errors``: the exception names of error lines;
- ``title``: its first line of prose (an issue's or a commit's title), stripped; "" when none.

``file_query`` turns words into an FTS5 query over ``file_words`` (each term quoted,
identifiers split into their parts as the index splits them, OR-joined).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from knowing_pr.store.fts import word_tokens
from knowing_pr.task.keywords import STOP_WORDS

__all__ = ["TaskParts", "code_names", "file_query", "split_task", "text_words"]

_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.S)
_PY_FRAME = re.compile(r'^\s*File "([^"\n]+)", line \d+')
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z]{1,5})(?::\d+)?(?![\w/])")
_ERROR_LINE = re.compile(r"^\s*(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt))\b:?")
_CONFIG_KEY = re.compile(r"^\s*([A-Za-z_][\w.-]*)\s*(?:=|:)\s*\S")
_WORD = re.compile(r"[^\W\d][\w]*(?:\.[^\W\d][\w]*)*")
_BACKTICK = re.compile(r"`([^`\n]+)`")
#: extensions that name source or config files (a ``v1.2`` or ``e.g`` is no path)
_PATH_EXTENSIONS = frozenset(
    [
        "py",
        "pyi",
        "js",
        "jsx",
        "ts",
        "tsx",
        "mjs",
        "cjs",
        "go",
        "rs",
        "java",
        "kt",
        "rb",
        "php",
        "cs",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "swift",
        "scala",
        "toml",
        "yaml",
        "yml",
        "json",
        "cfg",
        "ini",
        "txt",
        "md",
        "rst",
        "html",
        "css",
    ]
)
#: words of code and of a traceback's header that name nothing of the repository
_CODE_NOISE = frozenset(
    [
        "import",
        "from",
        "def",
        "class",
        "return",
        "self",
        "cls",
        "none",
        "true",
        "false",
        "traceback",
        "recent",
        "call",
        "last",
        "line",
        "file",
        "print",
        "assert",
        "raise",
        "lambda",
        "pass",
        "elif",
        "else",
        "async",
        "await",
        "yield",
    ]
)
#: the most terms one query gets (FTS5 handles more, but each costs a posting-list read)
_MAX_TERMS = 160


@dataclass(frozen=True)
class TaskParts:
    """The parts of one task text (module docstring), each a tuple in order of appearance."""

    prose: tuple[str, ...]
    identifiers: tuple[str, ...]
    paths: tuple[str, ...]
    frames: tuple[str, ...]
    errors: tuple[str, ...]
    code_lines: int
    title: str


def _is_code_shaped(word: str) -> bool:
    """``snake_case``, ``CamelCase`` (an inner capital), ``dotted.name``."""
    core = word.strip("_")
    return "_" in core or "." in core or any(c.isupper() for c in core[1:]) and any(c.islower() for c in core)


def _code_blocks(text: str) -> tuple[list[str], str]:
    """(code lines, the text without them): fenced blocks, indented lines after a blank line,
    interpreter lines (``>>>``, ``...``, ``$``) and traceback lines."""
    code: list[str] = []
    for match in _FENCE.finditer(text):
        code.extend(match.group(1).splitlines())
    rest = _FENCE.sub("\n", text)
    prose: list[str] = []
    previous_blank = True
    in_indented = False
    for line in rest.splitlines():
        stripped = line.strip()
        if not stripped:
            previous_blank, in_indented = True, False
            prose.append("")
            continue
        indented = line.startswith(("    ", "\t"))
        if (
            indented
            and (previous_blank or in_indented)
            or stripped.startswith((">>> ", "... ", "$ ", "Traceback"))
        ):
            code.append(line)
            in_indented = indented
        elif _PY_FRAME.match(line) or _ERROR_LINE.match(line):
            code.append(line)
        else:
            prose.append(line)
            in_indented = False
        previous_blank = False
    return code, "\n".join(prose)


def split_task(text: str) -> TaskParts:
    """The parts of ``text`` (module docstring)."""
    code, prose_text = _code_blocks(text.replace("\r\n", "\n"))
    paths: list[str] = []
    frames: list[str] = []
    errors: list[str] = []
    identifiers: list[str] = []
    for line in code:
        frame = _PY_FRAME.match(line)
        if frame:
            frames.append(frame.group(1))
            continue
        error = _ERROR_LINE.match(line)
        if error:
            errors.append(error.group(1))
        key = _CONFIG_KEY.match(line)
        if key:
            identifiers.append(key.group(1))
        identifiers.extend(
            w for w in _WORD.findall(line) if w.lower() not in STOP_WORDS | _CODE_NOISE and len(w) > 1
        )
    for match in _BACKTICK.finditer(prose_text):
        identifiers.extend(_WORD.findall(match.group(1)))
    words: list[str] = []
    for line in prose_text.splitlines():
        error = _ERROR_LINE.match(line)
        if error:
            errors.append(error.group(1))
        for word in _WORD.findall(line.replace("`", " ")):
            if _is_code_shaped(word):
                identifiers.append(word)
            elif word.lower() not in STOP_WORDS and len(word) > 1:
                words.append(word)
    for match in _PATH.finditer("\n".join(line for line in text.splitlines() if not _PY_FRAME.match(line))):
        path = match.group(1)
        if path.rsplit(".", 1)[-1].lower() in _PATH_EXTENSIONS and not path[0].isdigit():
            paths.append(path.lstrip("./"))
    return TaskParts(
        prose=tuple(words),
        identifiers=tuple(dict.fromkeys(identifiers)),
        paths=tuple(dict.fromkeys(p for p in paths if p)),
        frames=tuple(frames),
        errors=tuple(dict.fromkeys(errors)),
        code_lines=len(code),
        title=next((line.strip() for line in prose_text.splitlines() if text_words(line)), ""),
    )


def text_words(text: str) -> list[str]:
    """Every word of ``text`` (prose and code alike), stop words left out: the plain BM25 query."""
    return [w for w in _WORD.findall(text) if w.lower() not in STOP_WORDS and len(w) > 1]


def code_names(text: str, parts: TaskParts) -> list[str]:
    """The names ``text`` writes as code, lower case, each once, in order: its code-shaped words
    (``snake_case``, ``CamelCase``, ``dotted.name``), the names of its snippets, backticks and
    error lines (``parts.identifiers``), and the names a dotted word is made of when one of
    them is such a name; at least 3 characters, stop words left out; at most ``_MAX_TERMS``
    (each is one lookup among the definitions)."""
    written = set(parts.identifiers)
    out: dict[str, None] = {}
    for word in text_words(text):
        for name in dict.fromkeys([word, *word.split(".")]):
            lowered = name.lower()
            if len(lowered) < 3 or lowered in STOP_WORDS:
                continue
            if _is_code_shaped(name) or name in written:
                out.setdefault(lowered, None)
        if len(out) >= _MAX_TERMS:
            break
    return list(out)[:_MAX_TERMS]


def _terms(word: str) -> list[str]:
    """``parseHTTPResponse`` → ``parsehttpresponse``, ``parse``, ``http``, ``response`` (as the
    index splits a file's words); a dotted name → each of its names, split."""
    out: list[str] = []
    for name in word.split("."):
        for token in word_tokens(name):
            lowered = token.lower()
            if len(lowered) > 1 and lowered not in STOP_WORDS and not lowered.isdigit():
                out.append(lowered)
    return out


def file_query(words: Iterable[str]) -> str:
    """An FTS5 query over ``file_words``: every term of ``words`` quoted, OR-joined, at most
    ``_MAX_TERMS`` distinct ones in order of appearance; "" when there is none."""
    terms: dict[str, None] = {}
    for word in words:
        for term in _terms(word)[: _MAX_TERMS - len(terms)]:
            terms.setdefault(term.replace('"', ""), None)
        if len(terms) >= _MAX_TERMS:
            break
    return " OR ".join(f'"{t}"' for t in terms if t)
