"""rank.keptwalk: the walk matrix kept in the store is the built one to the byte, is used only for
the state and settings it was built from, and a damaged copy is rebuilt (real repositories and
stores, real index runs)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from knowing_pr.config import Settings
from knowing_pr.model import EdgeKind
from knowing_pr.pipeline import update_index
from knowing_pr.rank import candidates, load_adjacency, walk_matrix
from knowing_pr.rank.keptwalk import WALK_BLOB, keep_walk_matrix, stored_walk_matrix, walk_tag
from knowing_pr.rank.sparse import CsrMatrix
from knowing_pr.store import Store

CORE = "def parse(text):\n    return text.strip()\n\n\ndef handle(text):\n    return parse(text)\n"
USE = "from app.core import handle\n\n\ndef main():\n    return handle(' x ')\n"


def indexed(repo) -> Path:
    candidates._WALK_MATRICES.clear()  # the fixture's commits, so graph roots, repeat across tests
    repo.write("app/core.py", CORE)
    repo.write("app/use.py", USE)
    repo.commit("base")
    repo.write("app/core.py", CORE.replace("strip()", "strip().lower()"))
    repo.commit("lower")
    update_index(repo.path)
    return repo.path / ".git" / "knowing-pr" / "index.sqlite"


def same(a: CsrMatrix, b: CsrMatrix) -> bool:
    return (
        a.shape == b.shape
        and a.indptr.tobytes() == b.indptr.tobytes()
        and a.indices.tobytes() == b.indices.tobytes()
        and a.data.tobytes() == b.data.tobytes()
    )


def test_the_index_command_keeps_the_matrix_the_ranking_would_build(repo) -> None:
    with Store.open(indexed(repo)) as store:
        settings = Settings()
        adjacency = load_adjacency(store)
        built = walk_matrix(adjacency, settings.rank.edge_weights, 0.0)
        assert built.nnz > 0
        tag = walk_tag(adjacency, settings.rank.edge_weights, 0.0)
        assert store.blob_tag(WALK_BLOB) == tag
        kept = stored_walk_matrix(store, tag, adjacency.node_count)
        assert kept is not None and same(kept, built)


def test_a_copy_serves_only_the_arrays_and_settings_it_was_built_from(repo) -> None:
    with Store.open(indexed(repo)) as store:
        settings = Settings()
        adjacency = load_adjacency(store)
        weights = settings.rank.edge_weights
        tag = walk_tag(adjacency, weights, 0.0)
        assert stored_walk_matrix(store, tag, adjacency.node_count) is not None
        assert stored_walk_matrix(store, tag, adjacency.node_count + 1) is None  # another size
        # the same graph with its co-change edges rewritten (same graph root, other history)
        history = dataclasses.replace(adjacency, confidence=adjacency.confidence * np.float32(0.5))
        kinds = adjacency.kinds.copy()
        kinds[0] = (
            int(EdgeKind.CO_CHANGED_WITH)
            if kinds[0] != int(EdgeKind.CO_CHANGED_WITH)
            else int(EdgeKind.CALLS)
        )
        retyped = dataclasses.replace(adjacency, kinds=kinds)
        other_weights = {**weights, EdgeKind.CALLS: weights[EdgeKind.CALLS] / 2}
        for other in (
            walk_tag(history, weights, 0.0),
            walk_tag(retyped, weights, 0.0),
            walk_tag(adjacency, other_weights, 0.0),
            walk_tag(adjacency, weights, 0.1),
        ):
            assert other != tag
            assert stored_walk_matrix(store, other, adjacency.node_count) is None


def test_a_damaged_copy_is_ignored_and_the_ranking_writes_a_good_one(repo) -> None:
    with Store.open(indexed(repo)) as store:
        tag = store.blob_tag(WALK_BLOB)
        assert tag is not None
        good = store.get_blob(WALK_BLOB)
        assert good is not None
        middle = len(good[1]) // 2
        flipped = good[1][:middle] + bytes([good[1][middle] ^ 0x01]) + good[1][middle + 1 :]
        wide = good[1][:16] + bytes([good[1][16] ^ 0x80]) + good[1][17:]  # the column count, in the header
        count = load_adjacency(store).node_count
        for damaged in (
            good[1][:-8],
            good[1][:40] + b"\xff" * (len(good[1]) - 40),
            b"",
            b"KPWM",
            flipped,
            wide,
        ):
            with store.transaction():
                store.put_blob(WALK_BLOB, tag, damaged)
            assert stored_walk_matrix(store, tag, count) is None
        candidates._WALK_MATRICES.clear()
        settings = Settings()
        matrix = candidates._walk_matrix(store, load_adjacency(store), settings.rank, 0.0)
        assert store.get_blob(WALK_BLOB) == good  # rebuilt, and kept again byte for byte
        assert same(matrix, stored_walk_matrix(store, tag, count) or CsrMatrix([0], [], [], (0, 0)))


def test_keeping_inside_another_transaction_or_read_only_changes_nothing_and_raises_nothing(repo) -> None:
    path = indexed(repo)
    matrix = CsrMatrix.from_triplets([0, 1], [1, 0], [1.0, 1.0], (2, 2))
    with Store.open(path) as store:
        with store.transaction():
            keep_walk_matrix(store, "another", matrix)  # nested: nothing kept, the outer one goes on
            store.set_meta("outer", "kept")
        assert store.get_meta("outer") == "kept"
        assert store.blob_tag(WALK_BLOB) != "another"
    with Store.open(path) as read_only:
        read_only.conn.execute("PRAGMA query_only = ON")
        keep_walk_matrix(read_only, "another", matrix)
        assert read_only.blob_tag(WALK_BLOB) != "another"


def test_a_pack_from_the_kept_matrix_equals_one_built_without_it(repo) -> None:
    path = indexed(repo)
    command = [sys.executable, "-m", "knowing_pr", "pr", "--repo", str(repo.path), "--format", "json"]
    with_copy = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    with Store.open(path) as store, store.transaction():
        store.conn.execute("DELETE FROM blobs WHERE name = ?", (WALK_BLOB,))
    without = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert json.loads(with_copy)["symbols"] and with_copy == without
    with Store.open(path) as store:
        assert store.blob_tag(WALK_BLOB) is not None  # the pr that found none kept the one it built


def test_the_layout_keeps_every_array_exactly(tmp_path) -> None:
    rng = np.random.default_rng(7)
    rows, cols = rng.integers(0, 50, 400), rng.integers(0, 50, 400)
    matrix = CsrMatrix.from_triplets(rows, cols, rng.random(400) / 3, (50, 50))
    with Store.open(tmp_path / "s.sqlite") as store:
        keep_walk_matrix(store, "t", matrix)
        kept = stored_walk_matrix(store, "t", 50)
        assert kept is not None and same(kept, matrix)
        assert np.array_equal(kept @ np.ones(50), matrix @ np.ones(50))
        empty = CsrMatrix.from_triplets([], [], [], (3, 3))
        keep_walk_matrix(store, "empty", empty)
        found = stored_walk_matrix(store, "empty", 3)
        assert found is not None and found.nnz == 0 and found.shape == (3, 3)


def test_a_process_that_has_the_matrix_already_still_keeps_it(repo) -> None:
    from knowing_pr.rank import keep_walk_matrix_of

    with Store.open(indexed(repo)) as store:
        tag = store.blob_tag(WALK_BLOB)
        with store.transaction():
            store.conn.execute("DELETE FROM blobs WHERE name = ?", (WALK_BLOB,))
        settings = Settings()
        candidates._walk_matrix(store, load_adjacency(store), settings.rank, 0.0)  # warm, from the memo
        assert store.blob_tag(WALK_BLOB) is None
        keep_walk_matrix_of(store, settings)
        assert tag is not None and store.blob_tag(WALK_BLOB) == tag


def test_history_that_grew_under_the_same_graph_root_answers_as_a_fresh_store(make_repo, tmp_path) -> None:
    """Commits that come back to an indexed tree (a change and its revert, twice) keep the graph
    root while the mined history grows: the pack from the kept copies must equal a fresh store's
    (a matrix tagged with the graph root alone failed this)."""
    b = make_repo()
    for name in "abcde":
        b.write(
            f"app/{name}.py", f"from app import util\n\ndef {name}_fn(x):\n    return util.helper(x) + 1\n"
        )
    b.write("app/util.py", "def helper(x):\n    return x * 2\n")
    b.commit("base")
    for n in range(1, 7):
        for name in "ab" + ("c" if n % 2 == 0 else "") + ("d" if n % 3 == 0 else ""):
            with (b.path / f"app/{name}.py").open("a") as file:
                file.write(f"# c{n}\n")
        b.git("commit", "-qam", f"co {n}")
    with (b.path / "app/a.py").open("a") as file:
        file.write("def extra(): return 3\n")
    b.git("commit", "-qam", "head")

    def knowing_pr(*args: str) -> str:
        command = [sys.executable, "-m", "knowing_pr", *args, "--repo", str(b.path)]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout

    knowing_pr("index", "--quiet")
    before = json.loads(knowing_pr("pr", "--format", "json", "--base", "HEAD~1"))
    for n in (1, 2):
        for name in "ce":
            with (b.path / f"app/{name}.py").open("a") as file:
                file.write(f"# x{n}\n")
        b.git("commit", "-qam", f"x {n}")
        b.git("revert", "--no-edit", "HEAD")
    knowing_pr("index", "--quiet")
    kept = json.loads(knowing_pr("pr", "--format", "json", "--base", "HEAD~1"))
    fresh = json.loads(
        knowing_pr("pr", "--format", "json", "--base", "HEAD~1", "--db", str(tmp_path / "f.sqlite"))
    )
    assert kept["graph_root"] == before["graph_root"]  # the same tree: the graph root stayed
    assert [s["score"] for s in kept["symbols"]] == [s["score"] for s in fresh["symbols"]]
    assert kept["symbols"] == fresh["symbols"] and kept["files"] == fresh["files"]


def test_a_full_index_with_other_history_settings_answers_as_a_fresh_store(make_repo, tmp_path) -> None:
    """The same commit and graph root with another mined history (a full run with other history
    settings): the pack from the kept copies must equal a fresh store's (partner counts kept
    under an unchanged tag failed this)."""
    b = make_repo()
    for n in range(8):
        b.write("app/a.py", f"def a():\n    return {n}\n")
        b.write("app/b.py", f"from app.a import a\n\n\ndef b():\n    return a() + {n}\n")
        if n % 2:
            b.write("app/c.py", f"def c():\n    return {n}\n")
        if n % 3 == 0:
            b.write("app/d.py", f"def d():\n    return {n}\n")
        b.commit(f"change {n}")
    b.write("app/a.py", "def a():\n    return 100\n")
    b.commit("change a")
    narrow = tmp_path / "narrow.yml"
    narrow.write_text("history:\n  max_files_per_commit: 2\n")

    def knowing_pr(*args: str) -> str:
        command = [sys.executable, "-m", "knowing_pr", *args, "--repo", str(b.path)]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout

    def pack(*args: str) -> dict[str, object]:
        return json.loads(knowing_pr("pr", "--format", "json", *args))

    knowing_pr("index", "--quiet")
    pack()  # the default history's matrix and inputs are kept now
    knowing_pr("index", "--quiet", "--full", "--config", str(narrow))
    kept = pack("--config", str(narrow))
    fresh = pack("--config", str(narrow), "--db", str(tmp_path / "fresh.sqlite"))
    default = pack("--db", str(tmp_path / "default.sqlite"))
    assert kept["files"] != default["files"]  # the history settings do change this answer
    assert kept == fresh
