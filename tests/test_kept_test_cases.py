"""The test cases the index keeps for the files that may hold some (``keeps_test_cases``): found
from the index's own parse, in every parse path (the worker pool, in-process, the hook's fork),
equal to a fresh ``find_test_cases``; read by the tests-to-run only while the head's file is the
blob they were found in; and a store of the layout before them keeps its rows (packs too)."""

from __future__ import annotations

import dataclasses
import sqlite3

import pytest
from conftest import RepoBuilder

from knowing_pr.config import Settings, load_settings
from knowing_pr.git import GitRepo
from knowing_pr.index import index_commit
from knowing_pr.index.parse import keeps_test_cases
from knowing_pr.parse.testcases import decode_test_cases, encode_test_cases, find_test_cases
from knowing_pr.pipeline import PrRequest, build_pr_pack, open_workspace
from knowing_pr.rank.callers import ChangeLines
from knowing_pr.rank.candidates import load_adjacency
from knowing_pr.rank.runnable import select_tests
from knowing_pr.rank.runners import RepoFiles
from knowing_pr.store import Store

FILES = {
    "pkg/calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": (
        "from pkg.calc import add\n\n\n"
        "class TestAdd:\n    def setUp(self):\n        pass\n\n    def test_two(self):\n        assert add(1, 1) == 2\n\n\n"
        "def test_zero():\n    assert add(0, 0) == 0\n"
    ),
    "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef numbers():\n    return [1, 2]\n",
    "calc/calc_test.go": (
        'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {}\n\nfunc helper() {}\n'
    ),
    "calc/calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
    "src/lib.rs": "pub fn add() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {}\n}\n",
    "web/sum.test.js": "describe('sum', () => {\n  it('adds', () => {})\n})\n",
    "web/sum.js": "export function sum(a, b) { return a + b }\n",
}


def kept_rows(db) -> dict[str, str]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT f.path, t.data FROM test_cases t JOIN files f USING (fid)"))


def stored(db) -> dict[str, str]:
    """path → the kept cases' text (decompressed), straight from the store."""
    with Store.open(db, readonly=True) as store:
        return {path: data for path, (_, _, data) in store.test_cases_for(list(FILES)).items()}


PARSERS = {
    # each way the index parses: worker processes (a batch bigger than a fork takes), a fork of
    # the indexing process (a hook's few files), in-process (isolation off)
    "worker-pool": "index:\n  isolate_parser: true\n  fork_max_files: 0\n",
    "fork": "index:\n  isolate_parser: true\n  fork_max_files: 64\n",
    "in-process": "index:\n  isolate_parser: false\n",
}


@pytest.mark.parametrize("parser", sorted(PARSERS))
def test_the_index_keeps_the_cases_of_the_files_that_may_hold_them(make_repo, tmp_path, parser) -> None:
    from knowing_pr.parse import fork

    b = make_repo()
    for path, text in FILES.items():
        b.write(path, text)
    b.write(".knowing-pr.yml", PARSERS[parser])
    b.commit("all")
    db = tmp_path / "store.sqlite"
    settings = load_settings(b.path / ".knowing-pr.yml")
    items = [(p, "x", b"") for p in FILES]
    # the way this case names (``index.parse.parse_items``: the pool when neither holds)
    isolated = settings.index.isolate_parser
    assert isolated == (parser != "in-process")
    assert (isolated and fork.forkable(items, settings.index)) == (parser == "fork")
    index_commit(GitRepo.open(str(b.path)), settings, db_path=db)
    kept = stored(db)
    languages = {"py": "python", "go": "go", "rs": "rust", "js": "javascript"}
    expected = {p for p in FILES if keeps_test_cases(p, languages[p.rsplit(".", 1)[1]])}
    assert (
        set(kept)
        == expected
        == {
            "tests/test_calc.py",
            "tests/conftest.py",
            "calc/calc_test.go",
            "src/lib.rs",
            "web/sum.test.js",
        }
    )
    for path in expected:
        language = languages[path.rsplit(".", 1)[1]]
        assert decode_test_cases(kept[path]) == find_test_cases(path, language, FILES[path].encode()), path
    names = {path: [c.parts for c in decode_test_cases(kept[path])[0]] for path in expected}
    assert names["tests/test_calc.py"] == [("TestAdd", "test_two"), ("test_zero",)]
    assert names["calc/calc_test.go"] == [("TestAdd",)]  # the path said it is a Go test file
    assert names["src/lib.rs"] == [("tests", "adds")]  # with its inline module


def test_an_incremental_index_replaces_and_drops_kept_cases(make_repo, tmp_path) -> None:
    b = make_repo()
    for path, text in FILES.items():
        b.write(path, text)
    b.commit("all")
    db = tmp_path / "store.sqlite"
    repo = GitRepo.open(str(b.path))
    index_commit(repo, Settings(), db_path=db)
    b.write("tests/test_calc.py", FILES["tests/test_calc.py"].replace("test_zero", "test_nothing"))
    b.delete("web/sum.test.js")
    b.commit("rename a test, remove another file")
    report = index_commit(repo, Settings(), db_path=db)  # a few files: parsed in a fork
    assert report.mode == "incremental"
    kept = stored(db)
    assert "web/sum.test.js" not in kept and "web/sum.test.js" not in kept_rows(db)
    assert [c.parts for c in decode_test_cases(kept["tests/test_calc.py"])[0]][-1] == ("test_nothing",)


def shop(make_repo) -> RepoBuilder:
    b = make_repo("shop")
    b.write("pkg/__init__.py", "")
    b.write("pkg/calc.py", FILES["pkg/calc.py"])
    b.write("tests/test_calc.py", FILES["tests/test_calc.py"])
    b.commit("base")
    b.write("pkg/calc.py", "def add(a, b):\n    return b + a\n")
    b.commit("swap")
    return b


def rename_kept_case(db, path: str, old: str, new: str) -> None:
    """Rewrite the store's kept cases of ``path`` as if the index had found ``new`` for ``old``."""
    import zlib

    with sqlite3.connect(db) as conn:
        (fid, data) = conn.execute(
            "SELECT t.fid, t.data FROM test_cases t JOIN files f USING (fid) WHERE f.path = ?", (path,)
        ).fetchone()
        cases, groups = decode_test_cases(zlib.decompress(data).decode())
        renamed = [
            dataclasses.replace(c, parts=tuple(new if p == old else p for p in c.parts)) for c in cases
        ]
        text = encode_test_cases(renamed, groups)
        conn.execute("UPDATE test_cases SET data = ? WHERE fid = ?", (zlib.compress(text.encode()), fid))


def test_tests_to_run_read_the_kept_cases_only_for_the_blob_they_were_found_in(make_repo, tmp_path) -> None:
    b = shop(make_repo)
    db = tmp_path / "store.sqlite"
    fresh = build_pr_pack(open_workspace(str(b.path), db=str(db)), PrRequest(base="HEAD~1", fmt="json"))
    assert fresh.summary is not None
    assert [t.name for t in fresh.summary.tests] == ["TestAdd::test_two", "test_zero"]

    rename_kept_case(db, "tests/test_calc.py", "test_zero", "test_zero_as_kept")
    pack = build_pr_pack(open_workspace(str(b.path), db=str(db)), PrRequest(base="HEAD~1", fmt="json"))
    assert pack.summary is not None
    assert [t.name for t in pack.summary.tests] == ["TestAdd::test_two", "test_zero_as_kept"]

    store = Store.open(db, readonly=True)
    try:
        adjacency = load_adjacency(store)
        changed = [n for n in store.nodes_named("add") if n.path == "pkg/calc.py"]
        source = FILES["tests/test_calc.py"].encode()
        kept_blob = store.test_cases_for(["tests/test_calc.py"])["tests/test_calc.py"][0]

        def names(blob_id: str | None) -> list[str]:
            files = RepoFiles(
                lister=lambda directory: [],
                reader=lambda path: source if path == "tests/test_calc.py" else None,
                identifier=lambda path: blob_id,
            )
            found = select_tests(store, adjacency, changed, lines=ChangeLines({}), files=files)
            return [t.name for t in found]

        assert names(kept_blob) == ["TestAdd::test_two", "test_zero_as_kept"]
        assert names("0" * 40) == ["TestAdd::test_two", "test_zero"]  # another blob: parsed
        assert names(None) == ["TestAdd::test_two", "test_zero"]  # no id to compare: parsed
    finally:
        store.close()

    b.write("tests/test_calc.py", FILES["tests/test_calc.py"] + "\n")
    b.commit("touch the tests")
    again = build_pr_pack(open_workspace(str(b.path), db=str(db)), PrRequest(base="HEAD~2", fmt="json"))
    assert again.summary is not None
    assert [t.name for t in again.summary.tests] == ["TestAdd::test_two", "test_zero"]  # indexed again


def test_a_store_of_schema_4_gets_the_table_and_keeps_its_rows_and_packs(make_repo, tmp_path) -> None:
    from knowing_pr.store.schema import SCHEMA_VERSION

    b = shop(make_repo)
    db = tmp_path / "store.sqlite"
    first = build_pr_pack(open_workspace(str(b.path), db=str(db)), PrRequest(base="HEAD~1", fmt="json"))
    with sqlite3.connect(db) as conn:  # what a schema-4 store holds
        conn.execute("DROP TABLE test_cases")
        conn.execute("DROP INDEX hist_pairs_b")
        conn.execute("PRAGMA user_version=4")
        files_before = conn.execute("SELECT count(*) FROM files").fetchone()[0]

    readonly = Store.open(db, readonly=True)  # not migrated: reads as keeping no cases
    try:
        assert readonly.test_cases_for(["tests/test_calc.py"]) == {}
    finally:
        readonly.close()

    again = build_pr_pack(open_workspace(str(b.path), db=str(db)), PrRequest(base="HEAD~1", fmt="json"))
    assert again.pack_root == first.pack_root
    assert again.summary is not None and [t.name for t in again.summary.tests] == [
        "TestAdd::test_two",
        "test_zero",
    ]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == files_before
        assert conn.execute("SELECT count(*) FROM packs WHERE pack_root = ?", (first.pack_root,)).fetchone()[
            0
        ]
        assert conn.execute("SELECT count(*) FROM test_cases").fetchone()[0] == 0  # until indexed again
        plan = conn.execute("EXPLAIN QUERY PLAN SELECT a FROM hist_pairs WHERE b = 'x'").fetchall()
    assert "hist_pairs_b" in str(plan)  # a change's pairs by either side: a seek, not a scan


def test_a_store_of_an_earlier_release_is_indexed_again_in_full_and_keeps_its_packs(
    make_repo, tmp_path
) -> None:
    """A release may read code differently (this one keeps test cases and reads captures in
    document order): the settings key names the release, so an earlier one's store is indexed
    again in full by its next update, its recorded packs kept."""
    import json

    from knowing_pr import __version__

    b = shop(make_repo)
    db = tmp_path / "store.sqlite"
    first = build_pr_pack(open_workspace(str(b.path), db=str(db)), PrRequest(base="HEAD~1", fmt="json"))
    with sqlite3.connect(db) as conn:
        key = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'settings_key'").fetchone()[0])
        assert key["tool"] == __version__
        key["tool"] = "0.1.0"  # as the earlier release wrote it
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'settings_key'", (json.dumps(key, sort_keys=True),)
        )
        conn.execute("DELETE FROM test_cases")  # it kept none
    report = index_commit(GitRepo.open(str(b.path)), Settings(), db_path=db)
    assert report.mode == "full"
    assert set(stored(db)) == {"tests/test_calc.py"}
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM packs WHERE pack_root = ?", (first.pack_root,)).fetchone()[
            0
        ]
