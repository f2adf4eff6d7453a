"""A JavaScript/TypeScript test runner's config file (Vitest, Jest) → the setup files it runs
before the tests and the test files it includes (``RunnerConfig``), read statically.

A config names its setup files under ``setupFiles``, ``globalSetup`` (both runners) and
``setupFilesAfterEnv`` (Jest), and the test files it runs under ``include``/``exclude``
(Vitest) or ``testMatch`` (Jest), relative to its ``root``/``rootDir`` (its own directory when
absent); one with ``projects``/``workspace`` runs none itself (its projects' configs do). A setup file that imports the changed code makes every test file the config includes
reach the change (vite's end-to-end specs run the dev server its ``vitestSetup.ts`` starts; an
openapi package's ``globalSetup`` generates the clients its tests read); so does a change to
the config itself, which then may name a test file on a line it wrote (``paths_written``).

The file is parsed with tree-sitter, never run. Only what is written out binds: a string
literal, a template without substitutions, ``__dirname + '/x'``, ``path.resolve(__dirname,
'x')`` / ``join(import.meta.dirname, 'x')``, Jest's ``<rootDir>/x``, and arrays of them. The
options are Vitest's ``test`` object (exactly one in the file) or Jest's top-level object (the
one object holding Jest's keys); anything else — two ``test`` objects, a computed ``root``,
``testRegex``, ``roots``, ``dir``, an ``include`` none of whose entries is a literal, a
negated or malformed glob — binds nothing (``read_runner_config`` gives None or leaves the
entry out). A setup file named as a package (``'@testing-library/jest-dom/vitest'``) binds
nothing either.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tree_sitter import Node

from knowing_pr.globs import bounded_glob
from knowing_pr.parse import language_for_path
from knowing_pr.parse.treesitter import descendants, get_parser, node_text

__all__ = [
    "RunnerConfig",
    "glob_regex",
    "is_runner_config",
    "names_a_setup",
    "paths_written",
    "read_runner_config",
]

#: a runner's config file: ``vitest.config.ts``, ``vitest.config.e2e.ts``,
#: ``vitest.e2e.config.mjs``, ``jest.config.js``
_CONFIG_NAME = re.compile(r"^(vitest|jest)(?:\.[\w-]+)*?\.config(?:\.[\w-]+)*?\.[mc]?[jt]s$")
#: bytes a config must hold to name a setup file (the rest are not parsed)
_SETUP_WORDS = re.compile(rb"setupFiles|globalSetup")
_SETUP_KEYS = frozenset({"setupFiles", "globalSetup", "setupFilesAfterEnv"})
_JEST_KEYS = frozenset({"setupFiles", "setupFilesAfterEnv", "globalSetup", "testMatch"})
#: a config that splits its tests into projects (each with its config) runs none itself
_PROJECT_KEYS = frozenset({"projects", "workspace"})
#: options this reader does not follow: a config using one binds nothing
_UNFOLLOWED = frozenset({"testRegex", "roots", "dir"})
#: own-directory anchors: ``__dirname``, ``import.meta.dirname``
_OWN_DIR = frozenset({"__dirname", "import.meta.dirname"})
_PATH_CALLS = frozenset({"resolve", "join", "path.resolve", "path.join"})
_MAX_CONFIG_BYTES = 256 * 1024
#: a string literal on one line
_QUOTED = re.compile(r"""(['"`])([^'"`\\\n]+)\1""")
_MAX_ENTRIES = 64


@dataclass(frozen=True)
class RunnerConfig:
    """What one config binds: ``setups`` (repository paths as written, extension maybe left out),
    ``root`` (the directory its globs are relative to), ``include`` (None: the runner's default,
    every test file under ``root``) and ``exclude`` as compiled globs."""

    path: str
    runner: str
    root: str
    setups: tuple[str, ...]
    include: tuple[re.Pattern[str], ...] | None
    exclude: tuple[re.Pattern[str], ...]

    def includes(self, path: str) -> bool:
        """Whether the config runs the test file ``path`` (a repository path)."""
        relative = _relative_to(path, self.root)
        if relative is None:
            return False
        if self.include is not None and not any(p.match(relative) for p in self.include):
            return False
        return not any(p.match(relative) for p in self.exclude)


def is_runner_config(path: str) -> bool:
    return bool(_CONFIG_NAME.match(posixpath.basename(path)))


def names_a_setup(source: bytes) -> bool:
    """Whether a config's text can name a setup file (it holds ``setupFiles``/``globalSetup``)."""
    return bool(_SETUP_WORDS.search(source))


def read_runner_config(path: str, source: bytes, *, without_setup: bool = False) -> RunnerConfig | None:
    """The setup files and globs of the config at ``path`` (module docstring); None when it names
    no setup file (unless ``without_setup``: a changed config binds its tests anyway) or is one
    this reader does not follow."""
    if not without_setup and not names_a_setup(source):
        return None
    config = _parse_config(path, source)
    return config if without_setup or (config is not None and config.setups) else None


def _parse_config(path: str, source: bytes) -> RunnerConfig | None:
    """What the config at ``path`` binds, with or without a setup file (None: one this reader
    does not follow)."""
    language = language_for_path(path)
    name = _CONFIG_NAME.match(posixpath.basename(path))
    if name is None or language is None or len(source) > _MAX_CONFIG_BYTES:
        return None
    runner = name.group(1)
    found = _options_objects(get_parser(language).parse(source).root_node, source, runner)
    directory = posixpath.dirname(path)
    if not found:  # ``export { default } from '../../vitest.config'``: its defaults
        return RunnerConfig(path, runner, directory, (), None, ())
    if len(found) != 1:
        return None
    pairs = _pairs(found[0], source)
    if _UNFOLLOWED & pairs.keys():
        return None
    root: str | None = directory
    root_key = "rootDir" if runner == "jest" else "root"
    if root_key in pairs:
        written = _entries(pairs[root_key], source)
        root = _anchored(written[0], directory, directory) if len(written) == 1 and written[0] else None
    if root is None:
        return None
    setups: list[str] = []
    for key in sorted(_SETUP_KEYS & pairs.keys()):
        for entry in _entries(pairs[key], source):
            resolved = _setup_path(entry, directory, root) if entry is not None else None
            if resolved is not None:
                setups.append(resolved)
    include_key = "testMatch" if runner == "jest" else "include"
    include: tuple[re.Pattern[str], ...] | None = None
    if _PROJECT_KEYS & pairs.keys():
        include = ()  # its projects run the tests, each by its own config
    elif include_key in pairs:
        include = _globs(_entries(pairs[include_key], source), directory, root)
        if not include:
            return None
    exclude = _globs(_entries(pairs["exclude"], source), directory, root) if "exclude" in pairs else ()
    return RunnerConfig(path, runner, root, tuple(dict.fromkeys(setups)), include, exclude)


def paths_written(source: bytes, lines: Sequence[tuple[int, int]] | None, directory: str) -> list[str]:
    """The repository paths the string literals on ``lines`` of a config name (relative to its
    directory, ``./`` or not); ``lines`` None: every line."""
    text = source.decode("utf-8", "replace").splitlines()
    spans = lines if lines is not None else [(1, len(text))]
    found: list[str] = []
    for start, end in spans:
        for line in text[max(start, 1) - 1 : end]:
            for match in _QUOTED.finditer(line):
                resolved = _anchored(("dir", match.group(2)), directory, directory)
                if resolved:
                    found.append(resolved)
    return found


def _options_objects(root: Node, source: bytes, runner: str) -> list[Node]:
    """Vitest's ``test: {…}`` objects, or Jest's objects holding its keys (one is read)."""
    found: list[Node] = []
    for node in descendants(root):
        if runner == "vitest" and node.type == "pair":
            value = node.child_by_field_name("value")
            if _key(node, source) == "test" and value is not None and value.type == "object":
                found.append(value)
        elif runner == "jest" and node.type == "object" and _JEST_KEYS & _pairs(node, source).keys():
            found.append(node)
    return found


def _key(pair: Node, source: bytes) -> str | None:
    key = pair.child_by_field_name("key")
    if key is None:
        return None
    if key.type == "property_identifier":
        return node_text(key, source)
    return _literal(key, source)


def _pairs(obj: Node, source: bytes) -> dict[str, Node]:
    """An object literal's own ``key: value`` pairs (a key written twice: the last)."""
    out: dict[str, Node] = {}
    for child in obj.named_children:
        if child.type == "pair":
            key, value = _key(child, source), child.child_by_field_name("value")
            if key is not None and value is not None:
                out[key] = value
    return out


def _literal(node: Node, source: bytes) -> str | None:
    """A string literal's or a plain template's text (None: anything else, or an escape)."""
    if node.type not in ("string", "template_string"):
        return None
    if any(c.type in ("escape_sequence", "template_substitution") for c in node.named_children):
        return None
    return node_text(node, source)[1:-1]


def _entries(value: Node, source: bytes) -> list[tuple[str, str] | None]:
    """The paths or globs a value writes: ``("root", text)`` relative to the root,
    ``("dir", text)`` relative to the config's directory; None for an entry not written out."""
    items = value.named_children if value.type == "array" else [value]
    return [_entry(item, source) for item in items[:_MAX_ENTRIES]]


def _entry(node: Node, source: bytes) -> tuple[str, str] | None:
    literal = _literal(node, source)
    if literal is not None:
        if literal.startswith("<rootDir>"):
            return ("root", literal[len("<rootDir>") :].lstrip("/"))
        return ("root", literal)
    if node.type == "binary_expression":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        operator = node.child_by_field_name("operator")
        tail = _literal(right, source) if right is not None else None
        adds = operator is not None and node_text(operator, source) == "+"
        if adds and tail is not None and left is not None and node_text(left, source) in _OWN_DIR:
            return ("dir", tail.lstrip("/"))
        return None
    if node.type == "call_expression":
        function, arguments = node.child_by_field_name("function"), node.child_by_field_name("arguments")
        if function is None or arguments is None or node_text(function, source) not in _PATH_CALLS:
            return None
        args = arguments.named_children
        if not args or node_text(args[0], source) not in _OWN_DIR:
            return None
        parts = [_literal(a, source) for a in args[1:]]
        if not parts or any(p is None for p in parts):
            return None
        return ("dir", posixpath.join(*[p for p in parts if p is not None]))
    return None


def _anchored(entry: tuple[str, str], directory: str, root: str) -> str | None:
    """The repository path an entry names (None: outside the repository, or absolute)."""
    anchor, text = entry
    if text.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(directory if anchor == "dir" else root, text))
    if joined == ".":
        return ""
    if joined == ".." or joined.startswith("../"):
        return None
    return joined


def _setup_path(entry: tuple[str, str], directory: str, root: str) -> str | None:
    """A setup entry's repository path; None for a package name (``'@x/setup'``, ``'pkg/sub'``)."""
    anchor, text = entry
    if anchor == "root" and not text.startswith((".", "/")):
        first = text.split("/", 1)[0]
        if first.startswith("@") or "." not in text.rsplit("/", 1)[-1]:
            return None
    return _anchored(entry, directory, root)


def _globs(entries: list[tuple[str, str] | None], directory: str, root: str) -> tuple[re.Pattern[str], ...]:
    """The entries as globs relative to ``root`` (those not written out, or not understood, left out)."""
    out: list[re.Pattern[str]] = []
    for entry in entries:
        if entry is None:
            continue
        anchor, text = entry
        if anchor == "dir":
            anchored = _anchored(entry, directory, root)
            relative = _relative_to(anchored, root) if anchored is not None else None
            if relative is None:
                continue
            text = relative
        pattern = glob_regex(text[2:] if text.startswith("./") else text)
        if pattern is not None:
            out.append(pattern)
    return tuple(out)


def _relative_to(path: str, root: str) -> str | None:
    if not root:
        return path
    return path[len(root) + 1 :] if path.startswith(f"{root}/") else None


#: extglob openers: ``?(x)``, ``*(x)``, ``+(x)``, ``@(x)`` → the regex closing each
_EXTGLOB_CLOSERS = {"?": ")?", "*": ")*", "+": ")+", "@": ")"}


def _class_body(body: str) -> str:
    """A glob's ``[…]`` body as a regex class body: ranges kept, and the characters ``re`` would
    read as class syntax or warn about (``\\``, ``[``, the set operators ``--``, ``&&``, ``~~``,
    ``||``) escaped, so repository text reaches neither ``re``'s syntax nor stderr."""
    for char in "\\[&~|":
        body = body.replace(char, "\\" + char)
    return body.replace("--", "-\\-")


def glob_regex(glob: str) -> re.Pattern[str] | None:
    """A runner's glob (``**``, ``*``, ``?``, ``[tj]``, ``{a,b}``, extglobs ``?(x)``/``+(x|y)``)
    → a regex matching a whole relative path; None for a negation (``!x``, ``!(x)``), an
    unbalanced, malformed or outsized one, or one whose match could backtrack for long
    (``globs.bounded_glob``)."""
    if not glob or glob.startswith("!") or not bounded_glob(glob):
        return None
    out: list[str] = []
    closers: list[tuple[str, str]] = []  # (the character closing it, its regex)
    index = 0
    while index < len(glob):
        char = glob[index]
        following = glob[index + 1] if index + 1 < len(glob) else ""
        if glob.startswith("**/", index):
            out.append("(?:[^/]*/)*")
            index += 3
            continue
        if glob.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        if following == "(" and char in "?*+@!":
            if char == "!":
                return None
            closers.append((")", _EXTGLOB_CLOSERS[char]))
            out.append("(?:")
            index += 2
            continue
        if char == "[":
            end = glob.find("]", index + 2)
            if end < 0:
                return None
            body = glob[index + 1 : end]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + _class_body(body) + "]")
            index = end + 1
            continue
        if char == "{":
            closers.append(("}", ")"))
            out.append("(?:")
        elif char in "})":
            if not closers or closers[-1][0] != char:
                return None
            out.append(closers.pop()[1])
        elif char == "," and closers and closers[-1][0] == "}" or char == "|" and closers:
            out.append("|")
        elif char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(char))
        index += 1
    if closers:
        return None
    try:
        return re.compile("".join(out) + r"\Z")
    except re.error:
        return None
