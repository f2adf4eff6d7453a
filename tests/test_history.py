"""knowing_pr.history on real repositories: counts, decay, renames, skips, incremental == full."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from conftest import RepoBuilder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowing_pr.config import HistoryParams
from knowing_pr.errors import StoreError
from knowing_pr.git import GitRepo
from knowing_pr.history import HistoryState, cochange_neighbours, decayed_cochange_ranking, mine_history
from knowing_pr.history.state import ANCHOR_SPAN, decay_time_constant_s, weight_anchor

PARAMS = HistoryParams(max_files_per_commit=4, half_life_days=1.0)


def commit_files(builder: RepoBuilder, paths: list[str], message: str = "change") -> str:
    for path in paths:
        previous = (builder.path / path).read_text() if (builder.path / path).exists() else ""
        builder.write(path, previous + f"{message} {len(previous)}\n")
    return builder.commit(message)


def mine(
    builder: RepoBuilder, params: HistoryParams = PARAMS, previous: HistoryState | None = None, head="HEAD"
):
    return mine_history(GitRepo.open(builder.path), head, params, previous)


def assert_same_state(actual: HistoryState, expected: HistoryState) -> None:
    """Counts, times and keys equal; decayed weights equal up to 1e-9 relative."""
    assert (actual.mined_head, actual.mined_commits, actual.reference_time) == (
        expected.mined_head,
        expected.mined_commits,
        expected.reference_time,
    )
    assert {p: (s.commits, s.last_time) for p, s in actual.files.items()} == {
        p: (s.commits, s.last_time) for p, s in expected.files.items()
    }
    assert {k: s.count for k, s in actual.pairs.items()} == {k: s.count for k, s in expected.pairs.items()}
    for path, stats in expected.files.items():
        assert actual.files[path].churn == pytest.approx(stats.churn, rel=1e-9, abs=0)
    for key, stats in expected.pairs.items():
        assert actual.pairs[key].weight == pytest.approx(stats.weight, rel=1e-9, abs=0)


def test_cochange_neighbours_rank_the_frequent_partner_first(repo):
    for n in range(5):
        commit_files(repo, ["a.py", "b.py"], f"ab{n}")
    commit_files(repo, ["a.py", "c.py"], "ac")
    commit_files(repo, ["b.py", "d.py"], "bd")
    state = mine(repo)
    assert state.files["a.py"].commits == 6
    assert state.files["b.py"].commits == 6
    assert state.pair("b.py", "a.py") == state.pairs[("a.py", "b.py")]
    assert state.pairs[("a.py", "b.py")].count == 5
    neighbours = cochange_neighbours(state, ["a.py"], limit=10)
    assert neighbours == [("b.py", 5, 6, pytest.approx(5 / 6)), ("c.py", 1, 6, pytest.approx(1 / 6))]
    assert cochange_neighbours(state, ["a.py"], limit=1) == [("b.py", 5, 6, pytest.approx(5 / 6))]
    assert cochange_neighbours(state, ["a.py"], limit=10, min_together=2) == [
        ("b.py", 5, 6, pytest.approx(5 / 6))
    ]
    # several sources: the best confidence wins; sources are never their own neighbours
    assert [n[0] for n in cochange_neighbours(state, ["a.py", "b.py"], limit=10)] == ["c.py", "d.py"]
    assert cochange_neighbours(state, ["unknown.py"], limit=10) == []


def test_weights_decay_from_the_newest_commit(repo):
    first = commit_files(repo, ["a.py", "b.py"], "one")
    commit_files(repo, ["a.py", "b.py"], "two")
    git = GitRepo.open(repo.path)
    state = mine(repo)
    tau = decay_time_constant_s(PARAMS.half_life_days)
    assert tau == pytest.approx(86_400 / math.log(2))
    expected = 1.0 + math.exp(-60 / tau)
    assert state.reference_time == git.commit_time(first) + 60
    # stored relative to the anchor; times the decay factor: decayed to the newest commit
    pair, stats = state.pairs[("a.py", "b.py")], state.files["a.py"]
    assert pair.count == 2 and stats.commits == 2 and stats.last_time == state.reference_time
    assert pair.weight * state.decay_factor == pytest.approx(expected, rel=1e-12)
    assert stats.churn * state.decay_factor == pytest.approx(expected, rel=1e-12)
    anchor = weight_anchor(state.reference_time, PARAMS.half_life_days)
    assert anchor <= state.reference_time < anchor + ANCHOR_SPAN * tau
    assert pair.weight == pytest.approx(math.exp((state.reference_time - anchor) / tau) * expected, rel=1e-12)


def test_an_incremental_mine_names_only_the_rows_it_changed(repo):
    commit_files(repo, ["a.py", "b.py"], "one")
    commit_files(repo, ["c.py", "d.py"], "two")
    first = mine(repo)
    assert first.delta is None  # mined from scratch: every row is new
    commit_files(repo, ["a.py", "c.py"], "three")
    second = mine(repo, previous=first)
    assert second.delta is not None
    assert (second.delta.files, second.delta.pairs) == ({"a.py", "c.py"}, {("a.py", "c.py")})
    assert not second.delta.removed_files and not second.delta.removed_pairs
    assert second.files["b.py"] is first.files["b.py"]  # untouched rows are shared, not copied
    repo.delete("d.py")
    commit_files(repo, ["b.py"], "four")
    third = mine(repo, previous=second)
    assert third.delta is not None
    assert third.delta.removed_files == {"d.py"} and third.delta.removed_pairs == {("c.py", "d.py")}
    assert third.delta.touched_paths() == {"b.py", "c.py", "d.py"}
    assert third.partners("c.py") == ["a.py"]
    assert_same_state(third, mine(repo))


def test_decayed_ranking_sums_the_shares_of_every_changed_file(repo):
    commit_files(repo, ["a.py", "c.py"], "one")
    commit_files(repo, ["b.py", "c.py"], "two")
    commit_files(repo, ["a.py", "d.py"], "three")
    commit_files(repo, ["a.py", "d.py"], "four")
    state = mine(repo)
    ranked = decayed_cochange_ranking(state, ["a.py", "b.py"], limit=5)
    # c.py: 1/3 of a.py's decayed changes + all of b.py's; d.py: 2/3 of a.py's (the newest two)
    assert [path for path, _ in ranked] == ["c.py", "d.py"]
    share = {path: value for path, value in ranked}
    churn_a = state.files["a.py"].churn
    assert share["c.py"] == pytest.approx(state.pair("a.py", "c.py").weight / churn_a + 1.0)
    assert share["d.py"] == pytest.approx(state.pair("a.py", "d.py").weight / churn_a)
    assert share["d.py"] > 2 / 3  # recent co-changes weigh more than older ones
    assert decayed_cochange_ranking(state, ["a.py", "b.py"], limit=5, min_together=2) == [
        ("d.py", pytest.approx(share["d.py"]))
    ]


def test_commit_over_the_file_threshold_is_skipped(repo):
    commit_files(repo, ["a.py", "b.py"], "small")
    commit_files(repo, ["a.py", "b.py", "c.py", "d.py", "e.py"], "huge")  # 5 files > 4
    commit_files(repo, ["a.py", "b.py", "c.py", "d.py"], "at the limit")  # 4 files: counted
    state = mine(repo)
    assert state.files["a.py"].commits == 2
    assert state.files["c.py"].commits == 1
    assert "e.py" not in state.files
    assert state.pairs[("a.py", "b.py")].count == 2
    assert state.pairs[("c.py", "d.py")].count == 1
    assert state.mined_commits == 3


def test_rename_carries_history_over(repo):
    for n in range(3):
        commit_files(repo, ["old.py", "partner.py"], f"pair{n}")
    repo.git("mv", "old.py", "new.py")
    repo.git("commit", "-q", "-m", "rename")
    commit_files(repo, ["new.py"], "after")
    state = mine(repo)
    assert "old.py" not in state.files
    assert state.files["new.py"].commits == 5  # 3 before, the rename itself, 1 after
    assert state.pairs[("new.py", "partner.py")].count == 3
    assert not any("old.py" in key for key in state.pairs)
    assert cochange_neighbours(state, ["new.py"], limit=5)[0][:3] == ("partner.py", 3, 5)


def test_rename_in_a_skipped_commit_still_moves_history(repo):
    for n in range(2):
        commit_files(repo, ["pkg/a.py", "pkg/b.py"], f"pair{n}")
    for name in "cdefg":
        repo.write(f"pkg/{name}.py", f"{name} = 1\n" * 20)
    repo.commit("more files")
    repo.git("mv", "pkg", "lib")  # 7 renames in one commit: over the threshold
    repo.git("commit", "-q", "-m", "move the package")
    state = mine(repo)
    assert state.files["lib/a.py"].commits == 2
    assert state.pairs[("lib/a.py", "lib/b.py")].count == 2
    assert not any(path.startswith("pkg/") for path in state.files)


def test_deleted_files_leave_the_state(repo):
    commit_files(repo, ["a.py", "b.py"], "one")
    commit_files(repo, ["a.py", "b.py"], "two")
    repo.delete("b.py")
    repo.commit("delete b")
    state = mine(repo)
    assert set(state.files) == {"a.py"}
    assert state.pairs == {}
    assert cochange_neighbours(state, ["a.py"], limit=5) == []


def test_merges_are_skipped_and_side_commits_counted_once(repo):
    commit_files(repo, ["a.py"], "root")
    repo.branch("side")
    commit_files(repo, ["a.py", "main_only.py"], "main work")
    repo.checkout("side")
    commit_files(repo, ["b.py", "c.py"], "side work")
    repo.checkout("main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    state = mine(repo)
    assert state.mined_commits == 4
    assert state.files["b.py"].commits == 1
    assert state.files["a.py"].commits == 2
    assert ("a.py", "b.py") not in state.pairs
    assert state.pairs[("b.py", "c.py")].count == 1


def test_incremental_mining_reuses_and_extends_the_previous_state(repo):
    commit_files(repo, ["a.py", "b.py"], "one")
    middle = commit_files(repo, ["a.py", "c.py"], "two")
    early = mine(repo)
    assert mine(repo, previous=early) is early  # nothing new
    commit_files(repo, ["a.py", "b.py"], "three")
    later = mine(repo, previous=early)
    assert later.mined_head == repo.head()
    assert later.mined_commits == 3
    assert_same_state(later, mine(repo))
    assert early.mined_head == middle


def test_history_is_mined_again_after_a_rewrite_or_a_parameter_change(repo):
    commit_files(repo, ["a.py", "b.py"], "one")
    commit_files(repo, ["a.py", "b.py"], "two")
    state = mine(repo)
    repo.git("reset", "-q", "--hard", "HEAD~1")
    commit_files(repo, ["a.py", "c.py"], "rewritten")
    rewritten = mine(repo, previous=state)
    assert_same_state(rewritten, mine(repo))
    assert rewritten.pairs[("a.py", "b.py")].count == 1
    stricter = replace(PARAMS, max_files_per_commit=1)
    assert_same_state(mine(repo, stricter, previous=rewritten), mine(repo, stricter))
    assert mine(repo, replace(PARAMS, enabled=False)).files == {}


def test_rows_round_trip(repo):
    commit_files(repo, ["a.py", "b.py", "dir/c d.py"], "one")
    commit_files(repo, ["a.py", "b.py"], "two")
    state = mine(repo)
    meta, files, pairs = state.to_rows()
    assert files[0] == ("a.py", 2, state.files["a.py"].last_time, state.files["a.py"].churn)
    assert pairs[0][:3] == ("a.py", "b.py", 2)
    assert all(isinstance(v, str) for _, v in meta)
    restored = HistoryState.from_rows(meta, files, pairs)
    assert restored == state
    assert cochange_neighbours(restored, ["a.py"], 5) == cochange_neighbours(state, ["a.py"], 5)
    with pytest.raises(StoreError, match="format"):
        HistoryState.from_rows([("format", "0")], files, pairs)
    with pytest.raises(StoreError, match="malformed"):
        HistoryState.from_rows(meta, [("a.py", "many", 1, 0.5)], pairs)


def test_incremental_equals_full_across_merges_on_the_first_parent_line(repo):
    commit_files(repo, ["a.py", "b.py"], "base")
    repo.branch("topic")
    repo.checkout("topic")
    commit_files(repo, ["b.py", "c.py"], "topic 1")
    repo.git("mv", "b.py", "renamed_b.py")
    repo.git("commit", "-q", "-m", "rename on topic")
    repo.checkout("main")
    commit_files(repo, ["a.py", "d.py"], "main work before the merge")
    checkpoint = repo.head()
    repo.git("merge", "-q", "--no-ff", "-m", "merge topic", "topic")
    commit_files(repo, ["renamed_b.py", "a.py"], "after")
    full = mine(repo)
    partial = mine(repo, head=checkpoint)
    assert "b.py" in partial.files
    incremental = mine(repo, previous=partial)
    assert_same_state(incremental, full)
    assert incremental.files["renamed_b.py"].commits == 4
    assert "b.py" not in incremental.files


# -- incremental == full, for random histories -------------------------------------------------

FILE_NAMES = [f"f{n}.py" for n in range(8)]
operation = st.tuples(
    st.sampled_from(["write", "delete", "rename"]), st.sampled_from(FILE_NAMES), st.sampled_from(FILE_NAMES)
)
history_strategy = st.lists(st.lists(operation, min_size=1, max_size=5), min_size=2, max_size=10)


def apply_operations(builder: RepoBuilder, operations, step: int) -> bool:
    existing = {p.name for p in builder.path.glob("f*.py")}
    changed = False
    for index, (kind, path, other) in enumerate(operations):
        if kind == "write":
            body = "".join(f"{path} line {n}\n" for n in range(12))
            builder.write(path, body + f"edit {step}.{index}\n")
            existing.add(path)
            changed = True
        elif kind == "delete" and path in existing:
            builder.delete(path)
            existing.discard(path)
            changed = True
        elif kind == "rename" and path in existing and other not in existing:
            builder.rename(path, other)
            existing.discard(path)
            existing.add(other)
            changed = True
    return changed


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=history_strategy, split=st.integers(min_value=1, max_value=9))
def test_incremental_mining_equals_full_mining(tmp_path_factory, history, split):
    builder = RepoBuilder(tmp_path_factory.mktemp("history"))
    heads = []
    for step, operations in enumerate(history):
        if apply_operations(builder, operations, step) or not heads:
            heads.append(builder.commit(f"step {step}"))
    params = HistoryParams(max_files_per_commit=3, half_life_days=0.002)
    git = GitRepo.open(builder.path)
    full = mine_history(git, heads[-1], params, None)
    partial = mine_history(git, heads[min(split, len(heads)) - 1], params, None)
    incremental = mine_history(git, heads[-1], params, partial)
    assert full.mined_commits == len(heads)
    assert_same_state(incremental, full)
    live = {e.path for e in git.tree_entries(heads[-1])}
    assert set(full.files) <= live
