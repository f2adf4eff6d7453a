"""Every subcommand × every option that takes a value × a catalogue of bad values → the documented
outcome; every key of ``.knowing-pr.yml`` × wrong types and out-of-range values → a ``ConfigError``
naming the key (issue 17).

The options come from ``knowing_pr.cli.build_parser()`` and the keys from the parameter
dataclasses, so a new option or key is covered automatically, and an option without a catalogue
entry fails ``test_every_option_that_takes_a_value_has_bad_values``. An input error must exit 2
with exactly one ``knowing-pr: error:`` line (plus at most one ``hint:`` line) and no traceback,
leaving the store's bytes unchanged and nothing written. Where the tool does something sensible
with an odd value (a base that is not an ancestor, a partly missing ``--files``, a store in a
new directory), the case names that outcome and it is checked; the graph root never moves.

Most cases run in-process (``cli.main``) against one repository and store built per module; a
handful run through a real ``python -m knowing_pr`` to prove no traceback reaches a user.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2
import pytest
from conftest import RepoBuilder

from knowing_pr import pipeline
from knowing_pr.cli import build_parser, main
from knowing_pr.config import Settings, load_settings
from knowing_pr.config.limits import LIMITS
from knowing_pr.errors import ConfigError
from knowing_pr.model import EdgeKind

NON_UTF8 = os.fsdecode(b"\xff")  # a byte that is not UTF-8, as Python hands it over in argv
PACKAGE_PARENT = str(Path(__file__).resolve().parents[1])


def cli_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "knowing_pr", *args]


def cli_env() -> dict[str, str]:
    """A CLI child's environment: no outside GIT_* or store override, this checkout's package."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "KNOWING_PR_"))}
    env.update(PYTHONPATH=PACKAGE_PARENT, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, LC_ALL="C")
    return env


# -- outcomes and the catalogue ------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """Exit ``code``; for an error, ``says`` is in the error line (``hint`` in the hint line); for a
    success, ``check`` (a name in ``CHECKS``) verifies the sensible thing the tool did."""

    code: int
    says: str = ""
    hint: str = ""
    check: str = ""


@dataclass(frozen=True)
class Bad:
    """One bad value (several for a list option), the outcome, and per-command exceptions.
    ``also`` sets other arguments of the case (``{shallow}`` as the repository, ``run`` as the
    hook action)."""

    label: str
    value: str | tuple[str, ...]
    outcome: Outcome
    per_command: Mapping[str, Outcome] = field(default_factory=dict)
    also: Mapping[str, str] = field(default_factory=dict)


def error(says: str = "", hint: str = "") -> Outcome:
    return Outcome(2, says, hint)


def ok(check: str = "") -> Outcome:
    return Outcome(0, check=check)


OUTPUT_FILE = [
    Bad("empty", "", error("the path is empty")),
    Bad("missing-directory", "{missing}/out.txt", error("does not exist", hint="mkdir -p")),
    Bad("a-directory", "{out}", error("is a directory", hint="name a file")),
    Bad("file-under-proc", "/proc/version", error("cannot create a file in /proc")),
    Bad("new-file-under-proc", "/proc/knowing-pr-out.txt", error("cannot create a file in /proc")),
    Bad("parent-is-a-file", "{file}/out.txt", error("is not a directory")),
    Bad("non-utf8-name", "{fresh}" + NON_UTF8 + ".txt", ok("written")),
    Bad("a-device", "/dev/null", ok("device_kept")),
]
OUTPUT_DIR = [
    Bad("empty", "", error("the path is empty")),
    Bad("a-file", "{file}", error("is not a directory")),
    Bad("file-under-proc", "/proc/version", error("is not a directory")),
    Bad("new-under-proc", "/proc/knowing-pr-pack", error("cannot create a file in /proc")),
    Bad("parent-is-a-file", "{file}/pack", error("is not a directory")),
    Bad("missing-directories", "{fresh}/deeper", ok("folder_written")),
    Bad("non-utf8-name", "{fresh}" + NON_UTF8, ok("folder_written")),
]
REPO = [
    Bad("empty", "", error("the path is empty")),
    Bad("missing", "{missing}", error("no such directory"), {"hook": error("not inside a git")}),
    Bad("not-a-repository", "{plain}", error("not a git repository"), {"hook": error("not inside a git")}),
    Bad("a-file", "{file}", error("not a git repository"), {"hook": error("not inside a git")}),
    Bad(
        "non-utf8-name",
        "{missing}" + NON_UTF8,
        error("no such directory"),
        {"hook": error("not inside a git")},
    ),
    Bad(
        "a-shallow-clone",
        "{shallow}",
        ok(),
        {
            "pr": error("the clone is shallow", hint="git fetch --deepen"),
            "replay": error("no record of pack"),
            "diff": error("no record of pack"),
        },
    ),
]
STORE = [
    Bad("empty", "", error("the path is empty")),
    Bad("a-directory", "{out}", error("is a directory")),
    Bad("not-a-store", "{file}", error("is not a knowing-pr store")),
    Bad("a-device", "/dev/null", error("is not a regular file")),
    Bad("new-file-under-proc", "/proc/knowing-pr.sqlite", error("cannot create a file in /proc")),
    Bad("parent-is-a-file", "{file}/index.sqlite", error("is not a directory")),
    Bad(
        "missing-directories",
        "{fresh}/deeper/index.sqlite",
        ok("new_store"),
        {"replay": error("no record of pack"), "diff": error("no record of pack")},
    ),
    Bad(
        "non-utf8-name",
        "{fresh}" + NON_UTF8 + ".sqlite",
        ok("new_store"),
        {"replay": error("no record of pack"), "diff": error("no record of pack")},
    ),
]
CONFIG = [
    Bad("empty", "", error("the path is empty")),
    Bad("missing", "{missing}.yml", error("no such file")),
    Bad("a-directory", "{out}", error("is a directory")),
    Bad("a-device", "/dev/null", error("not a regular file")),
    Bad("not-utf8", "{latin1}", error("cannot read")),
    Bad("not-yaml", "{bad_yaml}", error("not valid YAML")),
    Bad("not-a-mapping", "{list_yaml}", error("must be a mapping")),
    Bad("nan-edge-weight", "{nan_yaml}", error("'rank.edge_weights.calls' must be a finite number")),
    Bad("empty-file", "{empty_yaml}", ok()),
]
REVISION = [
    Bad("empty", "", error("the revision is empty")),
    Bad("blank", "  ", error("the revision is empty")),
    Bad("unknown", "no-such-branch", error("unknown revision 'no-such-branch'", hint="git rev-parse")),
    Bad("before-the-root", "HEAD~50", error("unknown revision 'HEAD~50'")),
    Bad("absent-sha", "0" * 40, error("unknown revision")),
    Bad("a-blob", "HEAD:a.py", error("unknown revision 'HEAD:a.py'")),
    Bad("a-range", "HEAD~1..HEAD", error("unknown revision")),
    Bad("option-like", "-x", error("expected one argument")),
    Bad("non-utf8", NON_UTF8, error("unknown revision")),
    Bad(
        "not-fetched-in-a-shallow-clone",
        "HEAD~1",
        error("unknown revision", hint="shallow clone"),
        also={"repo": "{shallow}"},
    ),
]
BASE_ONLY = [
    Bad("not-an-ancestor", "{sibling}", ok("starts_at_merge_base")),
    Bad("unrelated-history", "{orphan}", ok("starts_at_orphan")),
    Bad("the-head-itself", "HEAD", ok("empty_change")),
]
DIFF_ONLY = [Bad("not-an-ancestor", "{sibling}", ok())]
BUDGET = [
    Bad("empty", "", error("--budget")),
    Bad("words", "lots", error("whole number of tokens")),
    Bad("nan", "nan", error("whole number of tokens")),
    Bad("infinity", "inf", error("whole number of tokens")),
    Bad("negative-infinity", "-inf", error("--budget")),
    Bad("negative", "-1", error("between 500")),
    Bad("zero", "0", error("between 500")),
    Bad("below-minimum", "499", error("between 500")),
    Bad("exponent", "1e3", error("whole number of tokens")),
    Bad("fraction", "8000.5", error("whole number of tokens")),
    Bad("above-maximum", "10000001", error("between 500")),
    Bad("huge", "1" + "0" * 40, error("between 500")),
    Bad("non-utf8", NON_UTF8, error("whole number of tokens")),
    Bad("the-minimum", "500", ok("within_500_tokens")),
]
CHOICE = [
    Bad("empty", "", error("invalid choice")),
    Bad("unknown", "html5", error("invalid choice")),
    Bad("wrong-case", "JSON", error("invalid choice")),
    Bad("non-utf8", NON_UTF8, error("invalid choice")),
]
FTS_SYNTAX = '"unbalanced AND ( * NEAR(x'
HUGE_TEXT = "parse the amount " * 6_000  # about 100 kB
TASK_TEXT = [
    Bad("empty", "", ok("no_task_text"), {"why": error("the task description is empty")}),
    Bad("blank", "   ", ok("no_task_text"), {"why": error("the task description is empty")}),
    Bad("non-utf8", "fix " + NON_UTF8, error("not valid UTF-8")),
    Bad("huge", HUGE_TEXT, ok()),
    Bad("search-syntax", FTS_SYNTAX, ok()),
    Bad("only-punctuation", "?!", ok()),
]
QUERY = [
    Bad("empty", "", ok()),
    Bad("blank", "   ", ok()),
    Bad("non-utf8", "amount " + NON_UTF8, error("not valid UTF-8")),
    Bad("huge", HUGE_TEXT, ok()),
    Bad("search-syntax", FTS_SYNTAX, ok()),
]
DESCRIPTION = [
    Bad("empty", "", error("the task description is empty", hint="describe the task")),
    Bad("blank", "  \t ", error("the task description is empty")),
    Bad("non-utf8", "fix " + NON_UTF8, error("not valid UTF-8")),
    Bad("huge", HUGE_TEXT, ok()),
    Bad("search-syntax", FTS_SYNTAX, ok()),
    Bad("only-punctuation", "?!", ok()),
]
AUTHOR = [
    Bad("empty", "", ok()),
    Bad("non-utf8", "pat" + NON_UTF8, error("not valid UTF-8")),
    Bad("too-long", "p" * 1000, error("at most 320 characters")),
    Bad("mention", "@everyone", ok()),
]
SYMBOL = [
    Bad("empty", "", error("the symbol is empty")),
    Bad("blank", "  ", error("the symbol is empty")),
    Bad("non-utf8", "parse" + NON_UTF8, error("not valid UTF-8")),
    Bad("unknown", "no_such_symbol_xyz", error("symbol not found", hint="path:line")),
    Bad("line-out-of-range", "a.py:999999", error("symbol not found", hint="path:line")),
    Bad("like-wildcards", "%_%", error("symbol not found", hint="path:line")),
    Bad("search-syntax", FTS_SYNTAX, error("symbol not found", hint="path:line")),
]
REPO_PATHS = [
    Bad("empty", "", error("not a repository-relative path")),
    Bad("missing", "nope.py", error("no such file in", hint="repository-relative")),
    Bad("all-missing", ("nope.py", "gone/x.py"), error("gone/x.py, nope.py")),
    Bad("partly-missing", ("nope.py", "a.py"), ok("warned_and_kept_the_rest")),
    Bad("absolute", "/etc/passwd", error("not a repository-relative path")),
    Bad("escaping", "../a.py", error("not a repository-relative path")),
    Bad("a-directory", "pkg", error("no such file in")),
    Bad("dot", ".", error("no such file in")),
    Bad("non-utf8", NON_UTF8 + ".py", error("no such file in")),
    Bad("option-like", "-x", error()),
]
PACK_ROOT = [
    Bad("empty", "", error("not a PackRoot")),
    Bad("short", "abc", error("not a PackRoot", hint="64 lowercase")),
    Bad("upper-case", "A" * 64, error("not a PackRoot")),
    Bad("trailing-newline", "{root_pr}\n", error("not a PackRoot")),
    Bad("non-utf8", NON_UTF8, error("not a PackRoot")),
    Bad("unknown", "0" * 64, error("no record of pack", hint="--manifest")),
]
#: diff has no --manifest: its hint names the notes and --pr
DIFF_ROOT = [
    b if b.label != "unknown" else Bad(b.label, b.value, error("no record of pack", hint="--pr"))
    for b in PACK_ROOT
]
PULL_REQUEST = [  # refused before any lookup: the pack of the plain case is in the store
    Bad("empty", "", error("not a pull request number or URL")),
    Bad("words", "abc", error("not a pull request number or URL", hint="--pr 12")),
    Bad("zero", "0", error("not a pull request number or URL")),
    Bad("huge", "1" * 40, error("not a pull request number or URL")),
    Bad("not-a-pull-url", "https://example.com/o/r/issues/5", error("not a pull request number or URL")),
    Bad("no-scheme", "github.com/o/r/pull/5", error("not a pull request number or URL")),
    Bad("non-utf8", NON_UTF8, error()),
]
MANIFEST = [
    Bad("empty", "", error("the path is empty")),
    Bad("missing", "{missing}.json", error("no such file")),
    Bad("a-directory", "{out}", error("is a directory")),
    Bad("not-utf8", "{latin1}", error("cannot read")),
    Bad("not-json", "{not_json}", error("cannot read")),
    Bad("a-json-array", "{json_array}", error("must be a JSON object")),
    Bad("an-empty-object", "{empty_object}", error("manifest")),
    Bad("another-packs", "{manifest_files}", error("the manifest is for pack")),
]
ERROR_FILE = [
    Bad("empty", "", error("the path is empty")),
    Bad("missing", "{missing}.log", error("cannot read the error file")),
    Bad("a-directory", "{out}", error("cannot read the error file")),
    Bad("not-utf8", "{latin1}", ok()),
    Bad("a-device", "/dev/null", ok()),
]
HOOK_ACTION = [
    Bad("empty", "", error("invalid choice")),
    Bad("unknown", "reinstall", error("invalid choice")),
    Bad("non-utf8", NON_UTF8, error("invalid choice")),
]
HOOK_ARGS = [  # hooks never fail git: whatever a hook is called with, it exits 0
    Bad("unknown-hook", "no-such-hook", ok(), also={"action": "run"}),
    Bad("empty", "", ok(), also={"action": "run"}),
    Bad("non-utf8", NON_UTF8, ok(), also={"action": "run"}),
]

#: option dest → its bad values; ``(command, dest)`` when a command reads the option differently
CATALOGUE: dict[str | tuple[str, str], list[Bad]] = {
    "out": OUTPUT_FILE,
    "export": OUTPUT_FILE,
    "manifest_out": OUTPUT_FILE,  # pr --manifest FILE
    "record": CHOICE,
    "out_dir": OUTPUT_DIR,
    "repo": REPO,
    "db": STORE,
    "config": CONFIG,
    "rev": REVISION,
    "head": REVISION,
    "base": REVISION + BASE_ONLY,
    "diff": REVISION + DIFF_ONLY,
    "budget": BUDGET,
    "format": CHOICE,
    "profile": CHOICE,
    "action": HOOK_ACTION,
    "hook_args": HOOK_ARGS,
    "task": TASK_TEXT,
    "author": AUTHOR,
    "query": QUERY,
    "description": DESCRIPTION,
    "symbol": SYMBOL,
    "files": REPO_PATHS,
    # why --change: the same paths; what is left after a warning is a file list, not a pack
    ("why", "change"): [
        b if b.label != "partly-missing" else Bad(b.label, b.value, ok()) for b in REPO_PATHS
    ],
    "paths": REPO_PATHS,
    "pack_root": PACK_ROOT,
    ("replay", "pr"): PULL_REQUEST,
    "before": DIFF_ROOT,
    "after": DIFF_ROOT,
    ("diff", "pr"): PULL_REQUEST,
    "manifest": MANIFEST,
    "error_file": ERROR_FILE,
}

#: the plain invocation of each command (dest → value); a case replaces one of them
PLAIN: dict[str, dict[str, str]] = {
    "index": {"repo": "{repo}"},
    "stats": {"repo": "{repo}"},
    "pr": {"repo": "{repo}", "format": "json"},
    "files": {"paths": "a.py", "repo": "{repo}", "format": "json"},
    "task": {"description": "fix the amount parser", "repo": "{repo}", "format": "json"},
    "why": {"symbol": "parse_amount", "task": "fix the amount parser", "repo": "{repo}"},
    "replay": {"pack_root": "{root_pr}", "repo": "{repo}", "format": "json"},
    "diff": {"before": "{root_pr}", "after": "{root_pr}", "repo": "{repo}", "format": "json"},
    "map": {"repo": "{repo}"},
    "export": {"repo": "{repo}"},
    "hook": {"action": "status", "repo": "{repo}"},
    "mcp": {"repo": "{repo}"},
}


# -- options, from the parser --------------------------------------------------------------------


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def value_options() -> list[tuple[str, argparse.Action]]:
    """(command, action) for every argument that takes a value, positionals included."""
    found = []
    for command, sub in sorted(_subparsers().items()):
        for action in sub._actions:
            if action.nargs == 0 or isinstance(action, argparse._HelpAction):
                continue
            found.append((command, action))
    return found


def bad_values(command: str, dest: str) -> list[Bad]:
    return CATALOGUE.get((command, dest)) or CATALOGUE.get(dest, [])


def matrix() -> Iterator[Any]:
    for command, action in value_options():
        for bad in bad_values(command, action.dest):
            yield pytest.param(command, action.dest, bad, id=f"{command}-{action.dest}-{bad.label}")


def argv_for(command: str, dest: str, values: Mapping[str, str | tuple[str, ...]]) -> list[str]:
    """The command line: positionals in the parser's order, then options."""
    sub = _subparsers()[command]
    positionals: list[str] = []
    options: list[str] = []
    for action in sub._actions:
        if action.dest not in values:
            continue
        value = values[action.dest]
        items = list(value) if isinstance(value, tuple) else [value]
        if action.option_strings:
            options += [action.option_strings[0], *items]
        else:
            positionals += items
    return [command, *positionals, *options]


# -- the world: one repository, its store, a shallow clone and odd files ---------------------------


@dataclass
class World:
    root: Path
    repo: Path
    shallow: Path
    names: dict[str, str]
    merge_base: str
    orphan: str
    counter: int = 0

    def store(self, repo: Path) -> Path:
        return repo / ".git" / "knowing-pr" / "index.sqlite"

    def fill(self, value: str) -> str:
        return value.format(**self.names)

    def fresh(self) -> str:
        self.counter += 1
        return str(self.root / "out" / f"fresh-{self.counter}")


def _build_repo(path: Path) -> tuple[RepoBuilder, str, str, str]:
    b = RepoBuilder(path)
    b.write("pkg/__init__.py", "")
    b.write("pkg/core.py", "def parse_amount(text):\n    return int(text)\n")
    b.write(
        "a.py",
        "from pkg.core import parse_amount\n\n\ndef total(xs):\n    return sum(map(parse_amount, xs))\n",
    )
    b.write(
        "tests/test_core.py",
        "from pkg.core import parse_amount\n\n\ndef test_parse():\n    assert parse_amount('1') == 1\n",
    )
    first = b.commit("one")
    b.branch("side", at=first)
    b.checkout("side")
    b.write("pkg/other.py", "def other():\n    return 2\n")
    sibling = b.commit("side")
    b.checkout("main")
    b.write("pkg/core.py", "def parse_amount(text):\n    return int(text.strip())\n")
    b.commit("two")
    b.write(
        "a.py",
        "from pkg.core import parse_amount\n\n\ndef total(xs):\n    return sum(parse_amount(x) for x in xs)\n",
    )
    b.commit("three")
    repo = b.repo
    blob = repo.create_blob(b"def lonely():\n    return 0\n")
    tree = repo.TreeBuilder()
    tree.insert("lonely.py", blob, pygit2.enums.FileMode.BLOB)
    signature = pygit2.Signature("Knowing Tester", "tester@example.com", 1_700_000_000, 0)
    orphan = str(repo.create_commit("refs/heads/lonely", signature, signature, "orphan", tree.write(), []))
    return b, first, sibling, orphan


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            if name.startswith(("KNOWING_PR_", "GIT_")):
                patch.delenv(name)
        root = tmp_path_factory.mktemp("matrix")
        b, first, sibling, orphan = _build_repo(root / "repo")
        pipeline.update_index(str(b.path))
        ws = pipeline.open_workspace(str(b.path))
        root_pr = pipeline.build_pr_pack(ws, pipeline.PrRequest(fmt="json")).pack_root
        root_files = pipeline.build_files_pack(ws, ["a.py"], fmt="json").pack_root
        (root / "out").mkdir()
        (root / "plain").mkdir()
        files = {
            "file": "keep me\n",
            "latin1": b"caf\xe9 \xff\n",
            "bad_yaml": "rank: [unclosed\n",
            "list_yaml": "- a\n- b\n",
            "nan_yaml": "rank: {edge_weights: {calls: .nan}}\n",
            "empty_yaml": "",
            "not_json": "{not json",
            "json_array": "[1, 2]\n",
            "empty_object": "{}\n",
        }
        names = {"repo": str(b.path), "root_pr": root_pr, "sibling": sibling, "orphan": orphan}
        for name, content in files.items():
            target = root / "inputs" / name
            target.parent.mkdir(exist_ok=True)
            target.write_bytes(content if isinstance(content, bytes) else content.encode())
            names[name] = str(target)
        manifest = root / "inputs" / "manifest-files.json"
        pipeline.replay(ws, pipeline.ReplayRequest(root_files, export=str(manifest)))
        shallow = root / "shallow"
        subprocess.run(
            ["git", "clone", "-q", "--depth", "1", f"file://{b.path}", str(shallow)],
            check=True,
            env=b.git_env(),
        )
        pipeline.update_index(str(shallow))
        names |= {
            "manifest_files": str(manifest),
            "shallow": str(shallow),
            "out": str(root / "out"),
            "plain": str(root / "plain"),
            "missing": str(root / "no-such-dir"),
            "tmp": str(root),
        }
        yield World(root, b.path, shallow, names, merge_base=first, orphan=orphan)


# -- what a case must leave behind ---------------------------------------------------------------


def _store_state(db: Path) -> tuple[bytes | None, bytes | None]:
    """The store's bytes and its WAL's (None when absent)."""
    wal = Path(str(db) + "-wal")
    return (db.read_bytes() if db.exists() else None, wal.read_bytes() if wal.exists() else None)


def _graph_root(db: Path) -> tuple[str | None, str | None]:
    conn = sqlite3.connect(f"file:{db}?immutable=1", uri=True)
    try:
        rows = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('graph_root', 'indexed_commit')"))
    finally:
        conn.close()
    return rows.get("graph_root"), rows.get("indexed_commit")


def _listing(directory: Path) -> dict[str, int]:
    return {str(p.relative_to(directory)): p.lstat().st_size for p in sorted(directory.rglob("*"))}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_error(err: str, says: str = "", hint: str = "") -> None:
    """Exactly one ``knowing-pr: error:`` line, at most one ``hint:`` line, no traceback."""
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert 1 <= len(lines) <= 2, err
    assert lines[0].startswith("knowing-pr: error: "), err
    assert says in lines[0], f"{says!r} not in {lines[0]!r}"
    if len(lines) == 2:
        assert lines[1].startswith("hint: "), err
    if hint:
        assert len(lines) == 2 and hint in lines[1], f"{hint!r} not in {err!r}"


# -- the checks of sensible outcomes -------------------------------------------------------------


@dataclass
class Ran:
    world: World
    argv: list[str]
    value: str | tuple[str, ...]
    out: str
    err: str

    def pack(self) -> dict[str, Any]:
        return json.loads(self.out)


def _written(ran: Ran) -> None:
    assert isinstance(ran.value, str) and Path(ran.value).stat().st_size > 0


def _device_kept(ran: Ran) -> None:
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def _folder_written(ran: Ran) -> None:
    assert isinstance(ran.value, str) and (Path(ran.value) / "PACK.md").is_file()


def _new_store(ran: Ran) -> None:
    assert isinstance(ran.value, str) and _graph_root(Path(ran.value))[0]


def _starts_at_merge_base(ran: Ran) -> None:
    assert ran.pack()["inputs"]["base"] == ran.world.merge_base


def _starts_at_orphan(ran: Ran) -> None:
    assert ran.pack()["inputs"]["base"] == ran.world.orphan


def _empty_change(ran: Ran) -> None:
    assert ran.pack()["inputs"]["files_total"] == 0


def _no_task_text(ran: Ran) -> None:
    assert "task" not in ran.pack()["inputs"]


def _within_500_tokens(ran: Ran) -> None:
    """The minimum budget is accepted and governs the code; past it only the whole name lists
    and the best changed symbol's line (README, "The budget governs code")."""
    if ran.out.startswith("{"):
        pack = ran.pack()
        assert pack["token_budget"] == 500
        if pack["tokens_used"] > 500:
            assert [(s["reason"], s.get("brief")) for s in pack["symbols"]] == [("changed", True)]


def _warned_and_kept_the_rest(ran: Ran) -> None:
    (warning,) = ran.err.splitlines()
    assert warning.startswith("knowing-pr: warning: ") and "nope.py" in warning
    assert ran.pack()["inputs"]["files"] == ["a.py"]


CHECKS: dict[str, Callable[[Ran], None]] = {
    "written": _written,
    "device_kept": _device_kept,
    "folder_written": _folder_written,
    "new_store": _new_store,
    "starts_at_merge_base": _starts_at_merge_base,
    "starts_at_orphan": _starts_at_orphan,
    "empty_change": _empty_change,
    "no_task_text": _no_task_text,
    "within_500_tokens": _within_500_tokens,
    "warned_and_kept_the_rest": _warned_and_kept_the_rest,
}


# -- the CLI matrix ------------------------------------------------------------------------------


def test_every_option_that_takes_a_value_has_bad_values() -> None:
    missing = sorted({f"{c} {a.dest}" for c, a in value_options() if not bad_values(c, a.dest)})
    assert not missing, f"add bad values for these to CATALOGUE: {missing}"
    assert set(PLAIN) == {c for c, _ in value_options()}
    unknown_checks = {b.outcome.check for v in CATALOGUE.values() for b in v} - set(CHECKS) - {""}
    assert not unknown_checks


@pytest.mark.parametrize(("command", "dest", "bad"), list(matrix()))
def test_bad_value(
    world: World, capsys: pytest.CaptureFixture[str], command: str, dest: str, bad: Bad
) -> None:
    outcome = bad.per_command.get(command, bad.outcome)
    values: dict[str, str | tuple[str, ...]] = {k: world.fill(v) for k, v in PLAIN[command].items()}
    values |= {k: world.fill(v) for k, v in bad.also.items()}
    names = world.names | {"fresh": world.fresh()}
    value = (
        tuple(v.format(**names) for v in bad.value)
        if isinstance(bad.value, tuple)
        else bad.value.format(**names)
    )
    values[dest] = value
    argv = argv_for(command, dest, values)
    repo = world.shallow if values.get("repo") == str(world.shallow) else world.repo
    store = world.store(repo)
    before, root_before = _store_state(store), _graph_root(store)
    outputs_before = _listing(world.root / "out")

    if command == "mcp" and outcome.code == 0:
        # the server would serve this process's stdin: a real process whose stdin is closed at once
        # starts, serves nothing and exits
        served = subprocess.run(
            cli_command(*argv),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=cli_env(),
            timeout=120,
            check=False,
        )
        assert served.returncode == 0 and "Traceback" not in served.stderr, served.stderr
        return
    code, out, err = _run(argv, capsys)

    shown = shlex.join(argv)[:300]
    assert code == outcome.code, f"{shown}\n{err}"
    assert "Traceback" not in err
    assert _graph_root(store) == root_before, shown
    assert Path(world.names["file"]).read_text() == "keep me\n"
    assert not list(world.root.rglob(".knowing-pr-probe-*"))
    if outcome.code != 0:
        assert_one_error(err, outcome.says, outcome.hint)
        assert _store_state(store) == before, f"the store changed: {shown}"
        assert _listing(world.root / "out") == outputs_before, f"something was written: {shown}"
        return
    assert all(line.startswith("knowing-pr: warning: ") for line in err.splitlines()), err
    if outcome.check:
        CHECKS[outcome.check](Ran(world, argv, value, out, err))


# -- a handful through a real process ------------------------------------------------------------

SUBPROCESS_CASES = [
    (["pr", "--out", "/proc/version"], "cannot create a file in /proc"),
    (["pr", "--files", "nope.py"], "no such file in"),
    (["pr", "--repo", "{missing}"], "no such directory"),
    (["pr", "--budget", "nan"], "whole number of tokens"),
    (["pr", "--config", "{nan_yaml}"], "rank.edge_weights.calls"),
    (["pr", "--task", "fix " + NON_UTF8], "not valid UTF-8"),
    (["pr", "--repo", "{shallow}"], "the clone is shallow"),
    (["index", "--rev", "no-such-branch"], "unknown revision"),
]


@pytest.mark.parametrize(
    ("args", "says"),
    SUBPROCESS_CASES,
    ids=[" ".join(a[:2]) + f"-{i}" for i, (a, _) in enumerate(SUBPROCESS_CASES)],
)
def test_a_real_process_prints_one_line_and_exits_2(world: World, args: list[str], says: str) -> None:
    argv = [world.fill(a) for a in args]
    if "--repo" not in argv:
        argv += ["--repo", str(world.repo)]
    before = _store_state(world.store(world.repo))
    result = subprocess.run(
        [os.fsencode(a) for a in cli_command(*argv)],
        env=cli_env(),
        capture_output=True,
        timeout=120,
        check=False,
    )
    err = result.stderr.decode("utf-8", "surrogateescape")
    assert result.returncode == 2, err
    assert_one_error(err, says)
    assert _store_state(world.store(world.repo)) == before


def _namespaces_work() -> bool:
    try:
        probe = subprocess.run(
            [
                "unshare",
                "-rm",
                "sh",
                "-c",
                "mount -t tmpfs -o size=64k tmpfs /mnt || mount -t tmpfs tmpfs /tmp",
            ],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def _read_only(paths: list[Path], command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``command`` with ``paths`` bind-mounted read-only (a private mount namespace)."""
    mounts = " && ".join(
        f"mount --bind {shlex.quote(str(p))} {shlex.quote(str(p))} && mount -o remount,bind,ro {shlex.quote(str(p))}"
        for p in paths
    )
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", f"{mounts} && exec {shlex.join(command)}"],
        cwd=cwd,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


needs_namespaces = pytest.mark.skipif(
    not _namespaces_work(), reason="unshare -rm (user+mount namespace) unavailable"
)

READ_ONLY_OUTPUTS = [
    ["pr", "--out", "{ro}/pack.md"],
    ["replay", "{root_pr}", "--export", "{ro}/manifest.json"],
    ["map", "--out", "{ro}/CONTEXT.md"],
    ["export", "--out", "{ro}/graph.jsonl"],
    ["task", "fix the amount parser", "--out-dir", "{ro}/pack"],
]


@needs_namespaces
@pytest.mark.parametrize("args", READ_ONLY_OUTPUTS, ids=[a[0] for a in READ_ONLY_OUTPUTS])
def test_an_output_in_a_read_only_directory_is_an_input_error(world: World, args: list[str]) -> None:
    read_only = world.root / "read-only"
    read_only.mkdir(exist_ok=True)
    argv = [a.format(**world.names, ro=read_only) for a in args] + ["--repo", str(world.repo)]
    before = _store_state(world.store(world.repo))
    result = _read_only([read_only], cli_command(*argv), world.root)
    assert result.returncode == 2, result.stderr
    assert_one_error(result.stderr, "Read-only file system")
    assert _store_state(world.store(world.repo)) == before
    assert not list(read_only.iterdir())


@needs_namespaces
def test_a_read_only_store_is_not_blamed_on_disk_space(tmp_path: Path) -> None:
    b, *_ = _build_repo(tmp_path / "repo")
    pipeline.update_index(str(b.path))
    b.write("pkg/core.py", "def parse_amount(text):\n    return float(text)\n")
    b.commit("four")  # the store lags HEAD: the next reader writes
    db = b.path / ".git" / "knowing-pr" / "index.sqlite"
    before = db.read_bytes()
    for paths in ([db], [db.parent]):
        result = _read_only(paths, cli_command("pr", "--repo", str(b.path)), tmp_path)
        assert result.returncode == 1, result.stderr
        assert_one_error(result.stderr)
        assert "disk" not in result.stderr and "read-only" in result.stderr.lower(), result.stderr
        assert "--db" in result.stderr and "KNOWING_PR_DB" in result.stderr
        assert db.read_bytes() == before


# -- the config matrix ---------------------------------------------------------------------------


def config_sections() -> dict[str, Any]:
    """Section name → its parameter dataclass instance, from ``Settings``."""
    settings = Settings()
    return {
        f.name: getattr(settings, f.name)
        for f in dataclasses.fields(Settings)
        if dataclasses.is_dataclass(getattr(settings, f.name))
    }


def config_keys() -> list[tuple[str, str, Any]]:
    return [
        (section, f.name, getattr(params, f.name))
        for section, params in config_sections().items()
        for f in dataclasses.fields(params)
    ]


def _numeric(default: Any) -> bool:
    return isinstance(default, (int, float)) and not isinstance(default, bool)


def wrong_values(section: str, name: str, default: Any) -> list[str]:
    """YAML texts of wrong types and out-of-range values for one key."""
    if name == "edge_weights":
        return ["[1]", "calls", "{telepathy: 1}"]
    if isinstance(default, bool):
        return ['"yes please"', "1", "null", "[true]"]
    if isinstance(default, tuple):
        wrong = ['"*.py"', "[1, 2]", "{a: b}", "null", "[null]"]
        return wrong + (["[cobol]"] if name == "languages" else [])
    if isinstance(default, Mapping):  # a model's weights
        return ['"x"', "[1]", "null", "{bias: x}", "{bias: .nan}", "{bias: .inf}", "{bias: 1e9}", "{1: 2}"]
    if isinstance(default, str):  # a choice
        return ['"x"', "1", "null", "[pairwise]"]
    assert _numeric(default), (section, name)
    limit = LIMITS[f"{section}.{name}"]
    wrong = ['"12"', "true", "[1]", "{a: 1}", "null", ".nan", ".inf", "-.inf", "-1", "1" + "0" * 400]
    wrong.append(repr(limit.high * 10 + 1))
    if limit.low_open:
        wrong.append(repr(limit.low))
    if isinstance(default, int):
        wrong.append("1.5")
    return wrong


def config_matrix() -> Iterator[Any]:
    for section, name, default in config_keys():
        for text in wrong_values(section, name, default):
            yield pytest.param(
                f"{section}:\n  {name}: {text}\n", f"'{section}.{name}", id=f"{section}.{name}={text[:20]}"
            )
    for kind in EdgeKind:
        for text in ('"x"', ".nan", ".inf", "-.inf", "-1", "101", "null", "true"):
            yield pytest.param(
                f"rank:\n  edge_weights: {{{kind.label}: {text}}}\n",
                f"'rank.edge_weights.{kind.label}'",
                id=f"rank.edge_weights.{kind.label}={text}",
            )
    for text in (".nan", ".inf", "0", "-1", '"8000"', "1.5", "1" + "0" * 30, "true", "null"):
        yield pytest.param(f"budget: {text}\n", "'budget'", id=f"budget={text[:20]}")
    for text in ('"*.py"', "[1]", "null"):
        yield pytest.param(f"exclude: {text}\n", "'exclude'", id=f"exclude={text}")
    for text in ('"x"', "[1]", "[{name: x}]", "[{name: x, phrases: [a], targets: [b], weight: .nan}]"):
        yield pytest.param(
            f"equivalence_classes: {text}\n", "'equivalence_classes'", id=f"equivalence_classes={text[:20]}"
        )
    for section in config_sections():
        for text in ('"x"', "[1]", "1", "null"):
            yield pytest.param(f"{section}: {text}\n", f"'{section}'", id=f"{section}={text}")


@pytest.mark.parametrize(("text", "names"), list(config_matrix()))
def test_a_wrong_config_value_is_a_config_error_naming_the_key(text: str, names: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings(text=text)
    message = raised.value.message
    assert message.startswith(".knowing-pr.yml") and names in message, message
    assert "\n" not in message and len(message) < 200, message


def test_every_numeric_key_has_a_limit_that_admits_its_default_and_its_ends() -> None:
    numeric = {f"{s}.{n}": d for s, n, d in config_keys() if _numeric(d)}
    assert set(LIMITS) - {"rank.edge_weights"} == set(numeric), (
        "config/limits.py: LIMITS and the dataclasses differ"
    )
    for key, default in numeric.items():
        limit = LIMITS[key]
        assert limit.admits(default), key
        section, name = key.split(".")
        low = limit.low + (1 if isinstance(default, int) else 1e-3) if limit.low_open else limit.low
        for value in (low, limit.high):
            number = int(value) if isinstance(default, int) else float(value)
            settings = load_settings(text=f"{section}:\n  {name}: {number!r}\n")
            assert getattr(getattr(settings, section), name) == number, key
    for kind, weight in Settings().rank.edge_weights.items():
        assert LIMITS["rank.edge_weights"].admits(weight), kind


def test_a_parser_built_for_one_command_parses_and_refuses_as_the_whole_one(capsys) -> None:
    """``build_parser(argv)`` builds only the parser of the command ``argv`` names: the same
    options, defaults, help and errors as that command's parser among all of them."""
    whole = build_parser()
    commands = next(a for a in whole._actions if isinstance(a, argparse._SubParsersAction)).choices
    for command, full in commands.items():
        alone = build_parser([command])
        own = next(a for a in alone._actions if isinstance(a, argparse._SubParsersAction)).choices
        assert list(own) == [command]
        assert own[command].format_help() == full.format_help()
    line = ["pr", "--base", "HEAD~1", "--budget", "900", "--format", "json"]
    assert vars(build_parser(line).parse_args(line)) == vars(whole.parse_args(line))
    for wrong in (["pr", "--budget", "12"], ["pr", "--nope"], ["nope"], []):
        with pytest.raises(SystemExit) as alone_exit:
            build_parser(wrong).parse_args(wrong)
        alone_says = capsys.readouterr().err
        with pytest.raises(SystemExit) as whole_exit:
            build_parser().parse_args(wrong)
        assert (alone_exit.value.code, alone_says) == (whole_exit.value.code, capsys.readouterr().err)
        assert alone_exit.value.code == 2 and alone_says.startswith("knowing-pr: error: ")
