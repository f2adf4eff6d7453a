"""History in the index and the ranking: co-change edges, PR evidence, incremental == full,
renames, shallow clones, recency and the mixed walk matrix (real git, real SQLite)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import RepoBuilder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowing_pr.config import HistoryParams, Settings
from knowing_pr.git import GitRepo
from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.history import recency_of
from knowing_pr.index import index_commit
from knowing_pr.model import Edge, EdgeKind
from knowing_pr.pipeline import PrRequest, Workspace, build_pr_pack
from knowing_pr.rank.matrix import transition_matrix, walk_matrix
from knowing_pr.store import Store

INLINE = dataclasses.replace(Settings(), index=dataclasses.replace(Settings().index, isolate_parser=False))


def _edit(b: RepoBuilder, path: str, n: int) -> None:
    name = path.rsplit("/", 1)[-1].split(".")[0]
    b.write(path, f"def f_{name}():\n    return {n}\n")


def _history_repo(b: RepoBuilder) -> None:
    """a.py and b.py change together 4 times out of a's 5 commits; c.py only once with a."""
    for i, path in enumerate(("a.py", "b.py", "c.py")):
        _edit(b, path, i)
    b.commit("add a, b, c")
    for n in range(1, 4):
        _edit(b, "a.py", 10 + n)
        _edit(b, "b.py", 20 + n)
        b.commit(f"a and b {n}")
    _edit(b, "a.py", 99)
    b.commit("a alone")
    _edit(b, "c.py", 99)
    b.commit("c alone")


def _rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _history_edges(db: Path) -> list[Edge]:
    with Store.open(db) as store:
        return [e for e in store.all_edges() if e.kind == EdgeKind.CO_CHANGED_WITH]


def test_pr_pack_lists_the_cochanged_file_with_counts_and_brings_its_symbols(make_repo, tmp_path) -> None:
    b = make_repo()
    _history_repo(b)
    ws = Workspace(GitRepo.open(str(b.path)), INLINE, tmp_path / "store.sqlite")
    pack = build_pr_pack(ws, PrRequest(files=("a.py",), fmt="json"))
    assert pack.cochange == [("b.py", 4, 5)]  # c.py changed with a.py once: below min_support
    names = [s.node.name for s in pack.symbols]
    assert "f_b" in names
    assert names.index("f_b") < names.index("f_c") if "f_c" in names else True
    assert sorted(e.confidence for e in _history_edges(ws.db_path)) == [0.8, 1.0]  # 4/5 and 4/4


def test_history_off_gives_no_edges_and_no_evidence(make_repo, tmp_path) -> None:
    b = make_repo()
    _history_repo(b)
    off = dataclasses.replace(INLINE, history=dataclasses.replace(INLINE.history, enabled=False))
    ws = Workspace(GitRepo.open(str(b.path)), off, tmp_path / "store.sqlite")
    pack = build_pr_pack(ws, PrRequest(files=("a.py",), fmt="json"))
    assert pack.cochange == []
    assert _history_edges(ws.db_path) == []


def test_rename_keeps_history(make_repo, tmp_path) -> None:
    b = make_repo()
    _history_repo(b)
    b.rename("b.py", "lib/b2.py")
    b.commit("move b")
    db = tmp_path / "store.sqlite"
    index_commit(GitRepo.open(str(b.path)), INLINE, db_path=db)
    pairs = _rows(db, "SELECT a, b, count FROM hist_pairs WHERE a = 'a.py' AND b = 'lib/b2.py'")
    assert pairs == [("a.py", "lib/b2.py", 4)]
    assert _rows(db, "SELECT commits FROM hist_files WHERE path = 'lib/b2.py'") == [(5,)]
    assert _rows(db, "SELECT count(*) FROM hist_files WHERE path = 'b.py'") == [(0,)]


def _history_snapshot(db: Path) -> tuple[object, ...]:
    files = _rows(db, "SELECT path, commits, last_time, round(churn, 6) FROM hist_files ORDER BY path")
    pairs = _rows(db, "SELECT a, b, count, round(weight, 6) FROM hist_pairs ORDER BY a, b")
    edges = sorted(_history_edges(db))
    meta = _rows(
        db,
        "SELECT key, value FROM meta WHERE key IN ('history_mined_head', 'history_mined_commits',"
        " 'history_predictiveness', 'history_reference_time', 'graph_root') ORDER BY key",
    )
    blob = _rows(db, "SELECT data FROM blobs WHERE name = 'adjacency'")
    return files, pairs, edges, meta, blob


_EXAMPLE = itertools.count()
_commit = st.lists(
    st.sampled_from(["a.py", "b.py", "c.py", "d.py", "pkg/e.py"]), min_size=1, max_size=4, unique=True
)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    commits=st.lists(_commit, min_size=2, max_size=7), renames=st.lists(st.booleans(), min_size=7, max_size=7)
)
def test_incremental_mining_through_the_indexer_equals_full(make_repo, commits, renames) -> None:
    b = make_repo(f"prop{next(_EXAMPLE)}")
    current = {p: p for p in ["a.py", "b.py", "c.py", "d.py", "pkg/e.py"]}
    for n, path in enumerate(sorted(current)):
        _edit(b, path, n)
    b.commit("base")
    repo = GitRepo.open(str(b.path))
    incremental = b.path.parent / f"{b.path.name}-inc.sqlite"
    index_commit(repo, INLINE, db_path=incremental)
    for step, (paths, rename) in enumerate(zip(commits, renames, strict=False)):
        for path in paths:
            _edit(b, current[path], 100 + step)
        if rename and step % 3 == 0:
            old = current["d.py"]
            new = f"moved/d{step}.py"
            b.rename(old, new)
            current["d.py"] = new
        b.commit(f"step {step}")
        index_commit(repo, INLINE, db_path=incremental)
    full = b.path.parent / f"{b.path.name}-full.sqlite"
    assert index_commit(repo, INLINE, db_path=full, full=True).mode == "full"
    assert _history_snapshot(incremental) == _history_snapshot(full)


def test_a_shallow_clone_keeps_the_richer_cached_history(make_repo, tmp_path) -> None:
    b = make_repo()
    _history_repo(b)
    db = tmp_path / "store.sqlite"
    index_commit(GitRepo.open(str(b.path)), INLINE, db_path=db)
    mined = _rows(db, "SELECT value FROM meta WHERE key = 'history_mined_commits'")
    _edit(b, "a.py", 1234)
    _edit(b, "b.py", 1234)
    b.commit("one more")
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{b.path}", str(clone)],
        check=True,
        env={**b.git_env(), "GIT_CONFIG_NOSYSTEM": "1"},
    )
    shallow_repo = GitRepo.open(str(clone))
    assert shallow_repo.is_shallow
    copy = tmp_path / "restored.sqlite"
    shutil.copy(db, copy)
    index_commit(shallow_repo, INLINE, db_path=copy)
    assert _rows(copy, "SELECT value FROM meta WHERE key = 'history_shallow'") == [("1",)]
    assert _rows(copy, "SELECT value FROM meta WHERE key = 'history_mined_commits'") == mined
    assert _rows(copy, "SELECT count FROM hist_pairs WHERE a = 'a.py' AND b = 'b.py'") == [(4,)]
    fresh = tmp_path / "fresh.sqlite"
    index_commit(shallow_repo, INLINE, db_path=fresh)
    assert _rows(fresh, "SELECT count(*) FROM hist_pairs") == [(0,)]


def test_a_store_mined_in_a_shallow_clone_gives_a_fresh_stores_history_once_deepened(
    make_repo, tmp_path
) -> None:
    b = make_repo()
    _history_repo(b)
    for n in range(6):
        _edit(b, "a.py", 100 + n)
        _edit(b, "c.py", 100 + n)
        b.commit(f"a and c {n}")
    clone = tmp_path / "clone"
    env = {**b.git_env(), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(
        ["git", "clone", "-q", "--depth", "4", f"file://{b.path}", str(clone)], check=True, env=env
    )
    kept = tmp_path / "kept.sqlite"
    index_commit(GitRepo.open(str(clone)), INLINE, db_path=kept)
    assert _rows(kept, "SELECT value FROM meta WHERE key = 'history_shallow'") == [("1",)]
    _edit(b, "a.py", 999)
    _edit(b, "b.py", 999)
    b.commit("later")
    for command in (["fetch", "-q", "--unshallow"], ["merge", "-q", "--ff-only", "origin/main"]):
        subprocess.run(["git", *command], cwd=clone, check=True, env=env)
    deepened = GitRepo.open(str(clone))
    assert not deepened.is_shallow
    index_commit(deepened, INLINE, db_path=kept)
    fresh = tmp_path / "fresh.sqlite"
    index_commit(deepened, INLINE, db_path=fresh)
    keys = "('history_window', 'history_predictiveness', 'history_mined_commits', 'history_shallow')"
    query = f"SELECT key, value FROM meta WHERE key IN {keys} ORDER BY key"
    assert _rows(kept, query) == _rows(fresh, query)
    assert _rows(kept, "SELECT * FROM hist_pairs ORDER BY a, b") == _rows(
        fresh, "SELECT * FROM hist_pairs ORDER BY a, b"
    )


@pytest.mark.parametrize(("age_days", "expected"), [(0.5, 1.0), (3, 0.8), (20, 0.5), (400, 0.2)])
def test_recency_steps_are_relative_to_the_newest_mined_commit(age_days: float, expected: float) -> None:
    params = dataclasses.replace(HistoryParams(), churn_share=0.0)
    reference = 1_800_000_000
    assert recency_of(reference - int(age_days * 86_400), 1.0, 2.0, reference, params) == expected
    blended = dataclasses.replace(params, churn_share=0.5)
    assert recency_of(reference, 1.0, 2.0, reference, blended) == 0.75


def _small_adjacency() -> Adjacency:
    ids = [f"{i:032x}" for i in range(5)]
    edges = [
        Edge(ids[0], ids[1], EdgeKind.CALLS, 1.0),
        Edge(ids[1], ids[2], EdgeKind.CONTAINS, 1.0),
        Edge(ids[2], ids[3], EdgeKind.CO_CHANGED_WITH, 0.5),
        Edge(ids[3], ids[4], EdgeKind.CALLS, 1.0),
        Edge(ids[2], ids[4], EdgeKind.CO_CHANGED_WITH, 1.0),
    ]
    return Adjacency.from_edges(ids, edges)


def test_walk_matrix_without_share_is_the_structural_walk() -> None:
    adj = _small_adjacency()
    no_history = {**Settings().rank.edge_weights, EdgeKind.CO_CHANGED_WITH: 0.0}
    expected = transition_matrix(adj, no_history).toarray()
    assert np.allclose(walk_matrix(adj, Settings().rank.edge_weights, 0.0).toarray(), expected)


def test_walk_matrix_gives_history_its_share_split_by_confidence() -> None:
    adj = _small_adjacency()
    matrix = walk_matrix(adj, Settings().rank.edge_weights, 0.6).toarray()
    assert np.allclose(matrix.sum(axis=1), 1.0)
    # node 2: structural edge to 1 only, history edges to 3 (0.5) and 4 (1.0)
    assert matrix[2, 1] == pytest.approx(0.4)
    assert matrix[2, 3] == pytest.approx(0.6 * 0.5 / 1.5)
    assert matrix[2, 4] == pytest.approx(0.6 * 1.0 / 1.5)
    # node 3: structural (4) and history (2)
    assert matrix[3, 2] == pytest.approx(0.6)
    assert matrix[3, 4] == pytest.approx(0.4)


def test_predictiveness_is_recorded_and_the_window_memoised(make_repo, tmp_path) -> None:
    b = make_repo()
    _history_repo(b)
    db = tmp_path / "store.sqlite"
    index_commit(GitRepo.open(str(b.path)), INLINE, db_path=db)
    (score,) = _rows(db, "SELECT value FROM meta WHERE key = 'history_predictiveness'")[0]
    # leave-one-out: each a+b commit is fully predicted (2 trials x 3 commits); in the first
    # commit a finds b and b finds a (1/2 each) while c's partners fall under min_support
    assert float(str(score)) == pytest.approx(7 / 9)
    (window,) = _rows(db, "SELECT value FROM meta WHERE key = 'history_window'")[0]
    assert len(json.loads(str(window))) == 6


def test_the_window_pairs_renames_by_the_historys_own_rule_not_libgit2s(make_repo, tmp_path) -> None:
    """A move that re-indents every line: libgit2's measure (leading whitespace ignored) calls it a
    rename, the history's own rule (lines compared byte for byte) a deletion and an addition. The
    window must read it as the mine does, whatever libgit2's version measures."""
    b = make_repo()
    body = "".join(f"value_{i} = compute({i}, 'a long enough line')\n" for i in range(30))
    b.write("pkg/old.py", body)
    b.write("pkg/other.py", "x = 1\n")
    b.commit("root")
    b.delete("pkg/old.py")
    b.write("pkg/new.py", "".join(f"    {line}\n" for line in body.splitlines()))
    b.commit("move and indent")
    repo = GitRepo.open(str(b.path))
    libgit2 = {c.status for c in repo.diff_trees(repo.resolve("HEAD~1"), repo.resolve("HEAD"))}
    assert libgit2 == {"R"}, "libgit2 pairs the move (else this test shows nothing)"
    db = tmp_path / "store.sqlite"
    index_commit(repo, INLINE, db_path=db)
    (window,) = _rows(db, "SELECT value FROM meta WHERE key = 'history_window'")[0]
    assert json.loads(str(window))[0] == [repo.resolve("HEAD"), ["pkg/new.py", "pkg/old.py"]]
    (rule,) = _rows(db, "SELECT value FROM meta WHERE key = 'history_window_rule'")[0]
    assert rule == "own:50/250000/1048576"


# -- incremental rows and edges, late fusion -----------------------------------------------------


def test_a_new_commit_rewrites_only_the_rows_and_edges_it_touches(make_repo, tmp_path) -> None:
    b = make_repo()
    _history_repo(b)
    for n in range(3):  # d.py and e.py: a pair that the new commit leaves alone
        _edit(b, "d.py", 40 + n)
        _edit(b, "e.py", 50 + n)
        b.commit(f"d and e {n}")
    repo = GitRepo.open(str(b.path))
    db = tmp_path / "store.sqlite"
    index_commit(repo, INLINE, db_path=db)
    before_files = dict(
        (r[0], r[1:]) for r in _rows(db, "SELECT path, commits, last_time, churn FROM hist_files")
    )
    before_pairs = dict(
        ((r[0], r[1]), r[2:]) for r in _rows(db, "SELECT a, b, count, weight FROM hist_pairs")
    )
    history_edges = f"SELECT rowid, source, target FROM edges WHERE kind = {int(EdgeKind.CO_CHANGED_WITH)}"
    untouched = {
        r[0] for r in _rows(db, "SELECT rowid FROM nodes WHERE kind = 'module' AND path IN ('d.py', 'e.py')")
    }
    de_edges = {r for r in _rows(db, history_edges) if r[1] in untouched}
    assert len(de_edges) == 2
    _edit(b, "a.py", 123)
    _edit(b, "c.py", 123)
    b.commit("a and c again")
    index_commit(repo, INLINE, db_path=db)
    after_files = dict(
        (r[0], r[1:]) for r in _rows(db, "SELECT path, commits, last_time, churn FROM hist_files")
    )
    after_pairs = dict(((r[0], r[1]), r[2:]) for r in _rows(db, "SELECT a, b, count, weight FROM hist_pairs"))
    changed_files = {p for p in after_files if after_files[p] != before_files.get(p)}
    changed_pairs = {k for k in after_pairs if after_pairs[k] != before_pairs.get(k)}
    assert changed_files == {"a.py", "c.py"} and changed_pairs == {("a.py", "c.py")}
    # the edges leaving untouched files were not rewritten (same rowids), and the edges equal a
    # full index's
    assert de_edges <= set(_rows(db, history_edges))
    full = tmp_path / "full.sqlite"
    index_commit(repo, INLINE, db_path=full, full=True)
    assert sorted(_history_edges(db), key=repr) == sorted(_history_edges(full), key=repr)
    assert _rows(db, "SELECT value FROM meta WHERE key = 'history_edges_head'") == [(repo.head_commit(),)]


def test_rrf_fuse_weights_each_list_by_reciprocal_rank() -> None:
    from knowing_pr.rank.fusion import rrf_ranking as rrf_fuse

    fused = rrf_fuse([["a", "b", "c"], ["c", "d"]], [1.0, 2.0], 5)
    assert [item for item, _ in fused] == ["c", "d", "a", "b"]
    assert dict(fused)["c"] == pytest.approx(1 / 8 + 2 / 6)
    assert dict(fused)["d"] == pytest.approx(2 / 7)
    assert rrf_fuse([["a"], ["b"]], [1.0, 0.0], 5) == [("a", pytest.approx(1 / 6))]


def test_fused_files_lead_in_order_and_keep_their_own_symbol_order() -> None:
    from knowing_pr.model import Node, ScoredSymbol
    from knowing_pr.rank.fusion import files_in_fused_order as fuse_candidates

    def symbol(path: str, name: str, score: float, *, seed: bool = False) -> ScoredSymbol:
        node = Node(f"{path}:{name}", path, name, name, "function", "python", 1, 2, "", "", "h")
        return ScoredSymbol(node=node, score=score, is_seed=seed)

    candidates = [
        symbol("changed.py", "edit", 0.9, seed=True),
        symbol("near.py", "one", 0.6),
        symbol("near.py", "two", 0.3),
        symbol("far.py", "x", 0.5),
    ]
    lead = symbol("history.py", "often", 0.0)
    fused = [("history.py", 0.5), ("near.py", 0.25)]
    out = fuse_candidates(candidates, fused, {"history.py": lead}, files=2)
    files = list(dict.fromkeys(s.node.path for s in out))
    # the change keeps its score; the co-changed file leads at the best score, then the fused
    # order; a file outside the fused ones comes after the last lead
    assert files == ["changed.py", "history.py", "near.py", "far.py"]
    scores = {s.node.name: s.score for s in out}
    assert scores["edit"] == 0.9 and scores["often"] == pytest.approx(0.9)
    assert scores["one"] == pytest.approx(0.45)
    assert scores["two"] == pytest.approx(0.45 * 0.3 / 0.6)  # keeps its ratio to the file's lead
    assert scores["x"] == pytest.approx(0.5 * 0.45 * 0.99 / 0.9)
    assert fuse_candidates(candidates, [], {}, files=2) == candidates


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    commits=st.lists(st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=5), min_size=1, max_size=25),
    with_module=st.sets(st.sampled_from("abcdefg")),
    min_support=st.integers(1, 3),
)
def test_the_edges_of_all_files_are_those_of_every_file_asked_for(
    commits: list[list[str]], with_module: set[str], min_support: int
) -> None:
    """``cochange_edges`` reads all files in one pass over the pairs and some files through the
    partner index: asked for every file, the second gives the first's edges."""
    from knowing_pr.history import HistoryState, cochange_edges
    from knowing_pr.history.state import FileStats, PairStats

    files: dict[str, FileStats] = {}
    pairs: dict[tuple[str, str], PairStats] = {}
    for when, names in enumerate(commits):
        touched = sorted({f"{n}.py" for n in names})
        for path in touched:
            old = files.get(path, FileStats(0, 0, 0.0))
            files[path] = FileStats(old.commits + 1, when, old.churn + 1.0)
        for key in itertools.combinations(touched, 2):
            old_pair = pairs.get(key, PairStats(0, 0.0, 0.0))
            pairs[key] = PairStats(old_pair.count + 1, old_pair.weight + 1.0, old_pair.sized + 0.5)
    state = HistoryState("0" * 40, len(commits), len(commits), 30.0, 30, files, pairs)
    params = dataclasses.replace(HistoryParams(), min_support=min_support, cochange_max_partners=2)
    ids = {f"{n}.py": f"id:{n}" for n in sorted(with_module)}
    assert cochange_edges(state, ids, params) == cochange_edges(state, ids, params, sources=list(ids))
