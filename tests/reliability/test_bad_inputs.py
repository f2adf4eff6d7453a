"""B1–B15 bad inputs through the real indexer (what tests/test_index.py's
``test_bad_inputs_are_indexed_or_skipped_with_a_reason`` does not already cover): NUL-only
files, missing trailing newlines, CRLF and lone CR, hostile symlinks, nested and
uninitialised submodules, detached HEAD, orphan branches, a depth-1 clone, 500 renames,
delete-then-re-add, case-only renames, hostile paths round-tripping through the store, the
renderer and replay, and a time-boxed Hypothesis fuzzer over file bytes per language.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
import unicodedata
from collections import Counter
from pathlib import Path

import pytest
from conftest import RepoBuilder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_support import Oracle, run_cli

from knowing_pr import pipeline
from knowing_pr.config import Settings, default_db_path
from knowing_pr.git import GitRepo
from knowing_pr.index import index_commit
from knowing_pr.parse import LANGUAGE_BY_EXTENSION
from knowing_pr.parse.worker import SKIP_CRASH, SKIP_ERROR, SKIP_TIMEOUT, parse_files


def _db(b: RepoBuilder) -> Path:
    return default_db_path(str(b.path / ".git"))


def _rows(b: RepoBuilder) -> dict[str, tuple[str, str | None, int]]:
    conn = sqlite3.connect(_db(b))
    try:
        return {
            p: (s, r, n) for p, s, r, n in conn.execute("SELECT path, status, reason, line_count FROM files")
        }
    finally:
        conn.close()


def _check(b: RepoBuilder, tmp_path: Path) -> None:
    """The consistency oracle at HEAD (a clean full index in a scratch store)."""
    assert Oracle(b.path, tmp_path / f"clean-{time.monotonic_ns()}").problems(_db(b), (b.head(),)) == []


def _lines_of(b: RepoBuilder, name: str) -> tuple[int, int]:
    conn = sqlite3.connect(_db(b))
    try:
        return conn.execute(
            "SELECT start_line, end_line FROM nodes WHERE name = ? AND kind = 'function'", (name,)
        ).fetchone()
    finally:
        conn.close()


def test_b5_nul_only_empty_no_newline_crlf_and_lone_cr(make_repo, tmp_path: Path) -> None:
    b = make_repo()
    b.write("zeros.py", b"\0" * 4096)
    b.write("empty.py", b"")
    b.write("nonl.py", b"x = 1\n\ndef last():\n    return 2")
    b.write("crlf.py", b"x = 1\r\n\r\ndef crlf():\r\n    return 2\r\n")
    b.write("cr.py", b"x = 1\r\rdef lone_cr():\r    return 2\r")
    b.commit("b5")
    pipeline.update_index(str(b.path))
    rows = _rows(b)
    assert rows["zeros.py"][:2] == ("skipped", "binary")
    assert rows["empty.py"][0] == "indexed"
    assert rows["nonl.py"][0] == "indexed" and _lines_of(b, "last") == (3, 4)
    assert _lines_of(b, "crlf") == (3, 4)
    assert rows["cr.py"][0] == "indexed"  # a lone CR is not a line break for git or tree-sitter
    _check(b, tmp_path)


def test_b6_symlinks_are_link_entries_and_never_read(make_repo, tmp_path: Path) -> None:
    b = make_repo()
    b.write("ok.py", "def ok():\n    return 1\n")
    b.symlink("environ.py", "/proc/self/environ")
    b.symlink("up.py", "../../..")
    b.symlink("a.py", "b.py")
    b.symlink("b.py", "a.py")
    b.symlink("dirlink", "/etc")
    b.commit("b6")
    env_marker = os.environ.get("PATH", "")[:40]
    pipeline.update_index(str(b.path))
    rows = _rows(b)
    assert {p: rows[p][:2] for p in ("environ.py", "up.py", "a.py", "b.py", "dirlink")} == {
        p: ("skipped", "symlink") for p in ("environ.py", "up.py", "a.py", "b.py", "dirlink")
    }
    assert env_marker.encode() not in _db(b).read_bytes()
    _check(b, tmp_path)


def test_b7_nested_and_uninitialised_submodules(make_repo, tmp_path: Path) -> None:
    b = make_repo()
    b.write("ok.py", "def ok():\n    return 1\n")
    b.add_gitlink("libs/sub", "2" * 40)
    b.add_gitlink("libs/sub2/deeper", "3" * 40)
    b.commit("b7")
    pipeline.update_index(str(b.path))
    rows = _rows(b)
    assert rows["libs/sub"][:2] == ("skipped", "submodule")
    assert rows["libs/sub2/deeper"][:2] == ("skipped", "submodule")
    b.delete("libs/sub")
    b.commit("drop one")
    assert pipeline.update_index(str(b.path)).mode == "incremental"
    assert "libs/sub" not in _rows(b)
    _check(b, tmp_path)


def test_b8_lfs_pointer_text_is_not_indexed(make_repo, tmp_path: Path) -> None:
    b = make_repo()
    pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:" + "b" * 64 + "\nsize 99\n"
    b.write("model.py", pointer)
    b.write(".gitattributes", "*.py filter=lfs diff=lfs merge=lfs -text\n")
    b.commit("b8")
    pipeline.update_index(str(b.path))
    assert _rows(b)["model.py"][:2] == ("skipped", "lfs")
    assert b"sha256:bbbb" not in _db(b).read_bytes()


def test_b10_detached_head_and_orphan_branch(make_repo, tmp_path: Path) -> None:
    b = make_repo()
    b.write("a.py", "def a():\n    return 1\n")
    first = b.commit("one")
    b.write("b.py", "def b():\n    return a()\n")
    b.commit("two")
    pipeline.update_index(str(b.path))
    b.checkout(first)  # detached
    report = pipeline.update_index(str(b.path))
    assert report.commit == first and report.mode == "incremental"
    _check(b, tmp_path)
    b.git("checkout", "-q", "--orphan", "lonely")
    b.git("rm", "-rqf", ".")
    b.write("z.py", "def z():\n    return 0\n")
    b.git("add", "z.py")
    b.git("commit", "-qm", "orphan root")
    report = pipeline.update_index(str(b.path))
    assert report.commit == b.head()
    assert set(_rows(b)) == {"z.py"}
    _check(b, tmp_path)


def test_b11_depth_one_clone_indexes_and_pr_is_clear(make_repo, tmp_path: Path) -> None:
    b = make_repo()
    b.write("a.py", "def a():\n    return 1\n")
    b.commit("one")
    b.write("b.py", "def b():\n    return a()\n")
    b.commit("two")
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{b.path}", str(clone)], check=True, env=b.git_env()
    )
    assert run_cli("index", "--quiet", cwd=clone).returncode == 0
    oracle = Oracle(b.path, tmp_path / "clean")
    assert oracle.problems(clone / ".git" / "knowing-pr" / "index.sqlite", (b.head(),)) == []
    result = run_cli("pr", "--format", "json", cwd=clone)  # no parent to diff against
    assert "Traceback" not in result.stderr
    assert result.returncode == 2, result.stderr  # an input error: the history was not fetched
    error, hint = result.stderr.splitlines()
    assert error.startswith("knowing-pr: error:") and "shallow" in error and "root commit" not in error
    assert "git fetch --deepen" in hint and "--unshallow" in hint


def test_b12_renames_re_add_and_case_only_rename(make_repo, tmp_path: Path) -> None:
    b = make_repo()
    for i in range(500):
        b.write(f"old/m{i}.py", f"def f{i}():\n    return {i}\n")
    b.write("Caller.py", "from old.m1 import f1\n\ndef call():\n    return f1()\n")
    b.commit("base")
    pipeline.update_index(str(b.path))
    for i in range(500):
        b.rename(f"old/m{i}.py", f"new/m{i}.py")
    b.commit("500 renames")
    report = pipeline.update_index(str(b.path))
    assert report.mode == "incremental" and report.files_removed == 500
    _check(b, tmp_path)
    b.delete("new/m7.py")
    b.commit("delete")
    pipeline.update_index(str(b.path))
    b.write("new/m7.py", "def f7():\n    return 7\n")
    b.commit("re-add")
    pipeline.update_index(str(b.path))
    _check(b, tmp_path)
    b.rename("Caller.py", "caller.py")
    b.commit("case-only rename")
    pipeline.update_index(str(b.path))
    assert "caller.py" in _rows(b) and "Caller.py" not in _rows(b)
    _check(b, tmp_path)


HOSTILE_PATHS = [
    unicodedata.normalize("NFC", "caf\u00e9.py"),
    unicodedata.normalize("NFD", "caf\u00e9.py"),
    "with space/and\ttab.py",
    "new\nline.py",
    "pipe|name.py",
    "back`tick`.py",
    "-leading.py",
    "--double.py",
    "CON.py",
    "aux.py",
    "$(touch pwned).py",
]


def test_b13_hostile_paths_round_trip_through_store_render_and_replay(make_repo, tmp_path: Path) -> None:
    b = make_repo()
    for i, path in enumerate(HOSTILE_PATHS):
        b.write(path, f"def fn{i}():\n    return {i}\n")
    b.write("main.py", "def main():\n    return 0\n")
    base = b.commit("base")
    for i, path in enumerate(HOSTILE_PATHS):
        b.write(path, f"def fn{i}():\n    return {i + 1}\n")
    b.commit("edit all")
    pipeline.update_index(str(b.path))
    assert set(HOSTILE_PATHS) <= set(_rows(b))  # byte-exact, NFC and NFD kept apart
    result = run_cli("pr", "--base", base, "--format", "json", cwd=b.path)
    assert result.returncode == 0, result.stderr
    pack = json.loads(result.stdout)
    text = json.dumps(pack)
    rendered_paths = {s["file"] for s in pack["symbols"]}
    assert rendered_paths <= set(HOSTILE_PATHS) | {"main.py"}
    assert len(rendered_paths & set(HOSTILE_PATHS)) >= 5, text[:500]
    assert not (b.path / "pwned").exists()
    markdown = run_cli("pr", "--base", base, cwd=b.path)
    assert markdown.returncode == 0 and not (b.path / "pwned").exists()
    root = pack["pack_root"]
    verify = run_cli("replay", root, "--verify", cwd=b.path)
    verdict = verify.stdout.rstrip().splitlines()[-1]  # after the pack, as replay prints it
    assert verify.returncode == 0 and verdict.startswith("verified"), verify.stdout + verify.stderr
    _check(b, tmp_path)


# -- B15: fuzzing file bytes per language -------------------------------------------------------

FUZZ_SECONDS = float(os.environ.get("KNOWING_PR_FUZZ_SECONDS", "15"))
EXTENSIONS = sorted(LANGUAGE_BY_EXTENSION)
FRAGMENTS = [
    "def ",
    "class ",
    "func ",
    "fn ",
    "function ",
    "import ",
    "from ",
    "package ",
    "module ",
    "end\n",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "<",
    ">",
    "'",
    '"',
    '"""',
    "`",
    "${",
    "#",
    "//",
    "/*",
    "*/",
    ";",
    ":",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "    ",
    "\\",
    "\0",
    "\ufeff",
    "\u202e",
    "é",
    "𝔘",
    "x",
    "y1",
    "=",
    "=>",
    "->",
    "@",
    "<T>",
    "impl ",
    "struct ",
    "interface ",
    "namespace ",
    "using ",
    "require ",
    "self.",
    "this.",
]
_structured = st.lists(st.sampled_from(FRAGMENTS), max_size=200).map(lambda xs: "".join(xs).encode("utf-8"))
_nesting = st.tuples(
    st.sampled_from(["(", "[", "{", "<", "/*", "f(", "a[", "'${"]), st.integers(100, 20_000)
).map(lambda t: (t[0] * t[1]).encode())
_source = st.one_of(st.binary(max_size=3000), _structured, _nesting)
_items = st.lists(st.tuples(st.sampled_from(EXTENSIONS), _source), min_size=16, max_size=16)

_FUZZ_STATE: dict[str, object] = {"inputs": 0, "reasons": Counter(), "deadline": None}


@pytest.mark.slow
@settings(
    max_examples=400,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(batch=_items)
def test_b15_fuzzed_sources_never_crash_the_parent(batch: list[tuple[str, bytes]]) -> None:
    deadline = _FUZZ_STATE["deadline"] or time.monotonic() + FUZZ_SECONDS
    _FUZZ_STATE["deadline"] = deadline
    if time.monotonic() > deadline:  # type: ignore[operator]
        return
    items = [(f"f{i}{ext}", LANGUAGE_BY_EXTENSION[ext], data) for i, (ext, data) in enumerate(batch)]
    results = list(parse_files(items, timeout_s=5.0, memory_mb=1024, workers=2))
    assert [r[0] for r in results] == [i[0] for i in items]  # every file answered, in order
    reasons: Counter[str] = _FUZZ_STATE["reasons"]  # type: ignore[assignment]
    for _path, parsed, reason in results:
        assert (parsed is None) == (reason is not None)
        assert reason in (None, SKIP_CRASH, SKIP_TIMEOUT, SKIP_ERROR)
        reasons[reason or "parsed"] += 1
    _FUZZ_STATE["inputs"] = int(_FUZZ_STATE["inputs"]) + len(items)  # type: ignore[call-overload]


@pytest.mark.slow
def test_b15_fuzz_report_and_one_batch_through_the_indexer(make_repo, tmp_path: Path) -> None:
    """Runs after the fuzzer (file order): report its counts; one fuzzed tree through the indexer."""
    inputs = int(_FUZZ_STATE["inputs"])  # type: ignore[call-overload]
    print(f"\nB15 fuzz: {inputs} inputs in {FUZZ_SECONDS:.0f} s; outcomes {dict(_FUZZ_STATE['reasons'])}")
    assert inputs >= 16
    b = make_repo()
    b.write("ok.py", "def ok():\n    return 1\n")
    for i, ext in enumerate(EXTENSIONS):
        b.write(f"fz/n{i}{ext}", ("(" * 30_000 + "\n" + "\0\xff" * 10).encode("latin-1"))
        b.write(f"fz/t{i}{ext}", "".join(FRAGMENTS[j % len(FRAGMENTS)] for j in range(i, 400 + i)))
    b.commit("fuzz tree")
    report = index_commit(GitRepo.open(str(b.path)), Settings())
    assert report.files_parsed >= 1
    _check(b, tmp_path)
