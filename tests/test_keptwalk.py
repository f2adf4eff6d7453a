"""rank.keptwalk: the walk matrix kept in the store is the built one to the byte, is used only for
the state and settings it was built from, and a damaged copy is rebuilt (real repositories and
stores, real index runs)."""

from __future__ import annotations

import json
import subprocess
import sys

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


def indexed(repo) -> Store:
    candidates._WALK_MATRICES.clear()  # the fixture's commits, so graph roots, repeat across tests
    repo.write("app/core.py", CORE)
    repo.write("app/use.py", USE)
    repo.commit("base")
    repo.write("app/core.py", CORE.replace("strip()", "strip().lower()"))
    repo.commit("lower")
    update_index(repo.path)
    return Store.open(repo.path / ".git" / "knowing-pr" / "index.sqlite")


def same(a: CsrMatrix, b: CsrMatrix) -> bool:
    return (
        a.shape == b.shape
        and a.indptr.tobytes() == b.indptr.tobytes()
        and a.indices.tobytes() == b.indices.tobytes()
        and a.data.tobytes() == b.data.tobytes()
    )


def test_the_index_command_keeps_the_matrix_the_ranking_would_build(repo) -> None:
    store = indexed(repo)
    try:
        settings = Settings()
        adjacency = load_adjacency(store)
        built = walk_matrix(adjacency, settings.rank.edge_weights, 0.0)
        assert built.nnz > 0
        tag = walk_tag(store.graph_root or "", adjacency.node_count, settings.rank.edge_weights, 0.0)
        assert store.blob_tag(WALK_BLOB) == tag
        kept = stored_walk_matrix(store, tag)
        assert kept is not None and same(kept, built)
    finally:
        store.close()


def test_a_copy_serves_only_the_state_and_settings_it_was_built_from(repo) -> None:
    store = indexed(repo)
    try:
        settings = Settings()
        adjacency = load_adjacency(store)
        root, count, weights = store.graph_root or "", adjacency.node_count, settings.rank.edge_weights
        tag = walk_tag(root, count, weights, 0.0)
        assert stored_walk_matrix(store, tag) is not None
        other_weights = {**weights, EdgeKind.CALLS: weights[EdgeKind.CALLS] / 2}
        for other in (
            walk_tag("0" * 64, count, weights, 0.0),
            walk_tag(root, count + 1, weights, 0.0),
            walk_tag(root, count, other_weights, 0.0),
            walk_tag(root, count, weights, 0.1),
        ):
            assert other != tag
            assert stored_walk_matrix(store, other) is None
    finally:
        store.close()


def test_a_damaged_copy_is_ignored_and_the_ranking_writes_a_good_one(repo) -> None:
    store = indexed(repo)
    try:
        tag = store.blob_tag(WALK_BLOB)
        assert tag is not None
        good = store.get_blob(WALK_BLOB)
        assert good is not None
        middle = len(good[1]) // 2
        flipped = good[1][:middle] + bytes([good[1][middle] ^ 0x01]) + good[1][middle + 1 :]
        for damaged in (good[1][:-8], good[1][:40] + b"\xff" * (len(good[1]) - 40), b"", b"KPWM", flipped):
            with store.transaction():
                store.put_blob(WALK_BLOB, tag, damaged)
            assert stored_walk_matrix(store, tag) is None
        candidates._WALK_MATRICES.clear()
        settings = Settings()
        matrix = candidates._walk_matrix(store, load_adjacency(store), settings.rank, 0.0)
        assert store.get_blob(WALK_BLOB) == good  # rebuilt, and kept again byte for byte
        assert same(matrix, stored_walk_matrix(store, tag) or CsrMatrix([0], [], [], (0, 0)))
    finally:
        store.close()


def test_keeping_inside_another_transaction_or_read_only_changes_nothing_and_raises_nothing(
    repo, tmp_path
) -> None:
    store = indexed(repo)
    matrix = CsrMatrix.from_triplets([0, 1], [1, 0], [1.0, 1.0], (2, 2))
    try:
        with store.transaction():
            keep_walk_matrix(store, "another", matrix)  # nested: nothing kept, the outer one goes on
            store.set_meta("outer", "kept")
        assert store.get_meta("outer") == "kept"
        assert store.blob_tag(WALK_BLOB) != "another"
    finally:
        store.close()
    path = repo.path / ".git" / "knowing-pr" / "index.sqlite"
    read_only = Store.open(path)
    read_only.conn.execute("PRAGMA query_only = ON")
    try:
        keep_walk_matrix(read_only, "another", matrix)
        assert read_only.blob_tag(WALK_BLOB) != "another"
    finally:
        read_only.close()


def test_a_pack_from_the_kept_matrix_equals_one_built_without_it(repo) -> None:
    indexed(repo).close()
    command = [sys.executable, "-m", "knowing_pr", "pr", "--repo", str(repo.path), "--format", "json"]
    with_copy = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    store = Store.open(repo.path / ".git" / "knowing-pr" / "index.sqlite")
    try:
        with store.transaction():
            store.conn.execute("DELETE FROM blobs WHERE name = ?", (WALK_BLOB,))
    finally:
        store.close()
    without = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert json.loads(with_copy)["symbols"] and with_copy == without
    store = Store.open(repo.path / ".git" / "knowing-pr" / "index.sqlite")
    try:
        assert store.blob_tag(WALK_BLOB) is not None  # the pr that found none kept the one it built
    finally:
        store.close()


def test_the_layout_keeps_every_array_exactly(tmp_path) -> None:
    rng = np.random.default_rng(7)
    rows, cols = rng.integers(0, 50, 400), rng.integers(0, 60, 400)
    matrix = CsrMatrix.from_triplets(rows, cols, rng.random(400) / 3, (50, 60))
    store = Store.open(tmp_path / "s.sqlite")
    try:
        keep_walk_matrix(store, "t", matrix)
        kept = stored_walk_matrix(store, "t")
        assert kept is not None and same(kept, matrix)
        assert np.array_equal(kept @ np.ones(60), matrix @ np.ones(60))
        empty = CsrMatrix.from_triplets([], [], [], (3, 3))
        keep_walk_matrix(store, "empty", empty)
        found = stored_walk_matrix(store, "empty")
        assert found is not None and found.nnz == 0 and found.shape == (3, 3)
    finally:
        store.close()


def test_a_process_that_has_the_matrix_already_still_keeps_it(repo) -> None:
    from knowing_pr.rank import keep_walk_matrix_of

    store = indexed(repo)
    try:
        tag = store.blob_tag(WALK_BLOB)
        with store.transaction():
            store.conn.execute("DELETE FROM blobs WHERE name = ?", (WALK_BLOB,))
        settings = Settings()
        candidates._walk_matrix(store, load_adjacency(store), settings.rank, 0.0)  # warm, from the memo
        assert store.blob_tag(WALK_BLOB) is None
        keep_walk_matrix_of(store, settings)
        assert tag is not None and store.blob_tag(WALK_BLOB) == tag
    finally:
        store.close()
