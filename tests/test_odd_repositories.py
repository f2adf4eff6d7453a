"""Repositories and stores a tool meets in the wild: file names that are not UTF-8, a ``--db`` that
is another program's SQLite database, a changed file the index skipped."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from knowing_pr.cli import main

LATIN1_NAME = b"caf\xe9.py".decode("utf-8", "surrogateescape")


def _commit_all(b, message: str) -> None:  # type: ignore[no-untyped-def]
    b.git("add", "-A")
    b.git("commit", "-q", "-m", message)


def test_a_file_name_that_is_not_utf8_is_skipped_and_named(
    make_repo, capsys: pytest.CaptureFixture[str]
) -> None:
    b = make_repo()
    b.write(LATIN1_NAME, "def f():\n    return 1\n")
    b.write("ok.py", "def g():\n    return 1\n")
    _commit_all(b, "one")
    assert main(["index", "--repo", str(b.path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["skipped"] == {"path-not-utf8": 1} and report["files_parsed"] == 1
    b.write(LATIN1_NAME, "def f():\n    return 2\n")
    b.write("ok.py", "def g():\n    return 2\n")
    _commit_all(b, "two")
    assert main(["pr", "--repo", str(b.path), "--format", "json"]) == 0
    pack = json.loads(capsys.readouterr().out)
    assert pack["inputs"]["not_indexed"] == [{"path": "caf\ufffd.py", "reason": "path-not-utf8"}]
    assert [s["qualified_name"] for s in pack["symbols"]] == ["ok.g"]
    b.git("mv", LATIN1_NAME, "renamed.py")
    _commit_all(b, "rename onto a readable name")
    assert main(["index", "--repo", str(b.path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["files_parsed"] == 1


def test_a_db_that_is_another_programs_database_is_refused_untouched(
    make_repo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b = make_repo()
    b.write("a.py", "def f():\n    return 1\n")
    b.commit("one")
    other = tmp_path / "app.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO customers(name) VALUES ('ada')")
    conn.commit()
    conn.close()
    before = other.read_bytes()
    assert main(["index", "--repo", str(b.path), "--db", str(other)]) == 2
    err = capsys.readouterr().err
    assert "another program's SQLite database (tables: customers)" in err and "Traceback" not in err
    assert other.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.sqlite", "repo"]  # no -wal, no -shm


def test_a_changed_file_the_index_skipped_does_not_make_its_callers_former_callers(
    make_repo, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its definitions are unknown at the head, not deleted."""
    b = make_repo()
    b.write(".knowing-pr.yml", "index: {max_file_bytes: 200}\n")
    b.write("big.py", "def f():\n    return 1\n")
    b.write("use.py", "from big import f\n\n\ndef g():\n    return f()\n")
    b.commit("one")
    b.write("big.py", "def f():\n    return 2\n" + "# padding\n" * 40)
    b.commit("big.py grows past the size limit")
    assert main(["pr", "--repo", str(b.path), "--format", "json"]) == 0
    pack = json.loads(capsys.readouterr().out)
    assert pack["inputs"]["not_indexed"] == [{"path": "big.py", "reason": "size"}]
    assert "use.g" not in {s["qualified_name"] for s in pack["symbols"] if s["reason"] == "caller"}
