"""The mined window of a history longer than ``history.max_commits``: a function of the head and
the parameters, whose start moves in steps of ``window_step`` commits, so a mine extends the
previous one bit for bit except at those steps (history/mine.py)."""

from __future__ import annotations

from conftest import RepoBuilder

from knowing_pr.config import HistoryParams
from knowing_pr.git import GitRepo
from knowing_pr.history import HistoryState, landing_order, mine_history
from knowing_pr.history.mine import window_start

PARAMS = HistoryParams(max_files_per_commit=4, max_commits=5, window_step=3)


def _edit(builder: RepoBuilder, paths: list[str], message: str) -> str:
    for path in paths:
        previous = (builder.path / path).read_text() if (builder.path / path).exists() else ""
        builder.write(path, previous + f"{message} {len(previous)}\n")
    return builder.commit(message)


def _grow(b: RepoBuilder) -> list[str]:
    """A history of 26 commits (merges, a rename, a deletion, an oversized commit) and the heads
    of main as it grew, oldest first: mostly one commit at a time, twice a merge that brings
    several at once."""
    heads = [_edit(b, ["a.py", "b.py"], "one"), _edit(b, ["b.py", "c.py"], "two")]
    b.branch("topic")
    b.checkout("topic")
    _edit(b, ["t.py", "d.py"], "topic one")
    b.rename("d.py", "e.py")
    b.commit("topic rename")
    _edit(b, ["e.py", "t.py"], "topic three")
    b.checkout("main")
    heads.append(_edit(b, ["a.py", "c.py"], "three"))
    b.git("merge", "-q", "--no-ff", "-m", "merge topic", "topic")  # 4 commits at once
    heads.append(b.head())
    for n in range(6):
        heads.append(_edit(b, ["a.py", f"n{n % 3}.py"], f"main {n}"))
    b.delete("b.py")
    heads.append(b.commit("delete b"))
    heads.append(_edit(b, [f"wide{n}.py" for n in range(6)], "oversized"))
    b.branch("long")
    b.checkout("long")
    for n in range(5):
        _edit(b, ["e.py", f"l{n}.py"], f"long {n}")
    b.checkout("main")
    heads.append(_edit(b, ["c.py"], "before the long merge"))
    b.git("merge", "-q", "--no-ff", "-m", "merge long", "long")  # 6 commits at once: past a step
    heads.append(b.head())
    for n in range(3):
        heads.append(_edit(b, ["a.py", "e.py"], f"late {n}"))
    return heads


def _expected_window(git: GitRepo, head: str, params: HistoryParams) -> list[str]:
    """The non-merge commits numbered from ``window_start`` on in the landing order of the
    whole history of ``head``."""
    everything = landing_order(git.history_commits(head, max_commits=1_000), head)
    start = window_start(len(everything), params)
    return [c.sha for c in everything[start:] if not c.is_merge]


def test_the_window_holds_max_commits_to_max_commits_plus_step_and_starts_at_a_step() -> None:
    assert [window_start(n, PARAMS) for n in (0, 5, 7, 8, 10, 11, 13, 14)] == [0, 0, 0, 3, 3, 6, 6, 9]
    for total in range(8, 60):
        assert 5 <= total - window_start(total, PARAMS) < 8


def test_mining_each_head_from_the_last_equals_a_full_mine_bit_for_bit(make_repo) -> None:
    b = make_repo()
    heads = _grow(b)
    git = GitRepo.open(b.path)
    state: HistoryState | None = None
    total_before = 0
    moves = extensions = 0
    for head in heads:
        total = int(b.git("rev-list", "--count", head))
        grown = mine_history(git, head, PARAMS, state)
        full = mine_history(git, head, PARAMS, None)
        assert grown.to_rows() == full.to_rows()  # the same floats, not just close ones
        assert [c.sha for c in full.applied] == _expected_window(git, head, PARAMS)
        assert grown.mined_commits == min(total, total - window_start(total, PARAMS))
        assert grown.mined_commits < PARAMS.max_commits + PARAMS.window_step
        moved = window_start(total, PARAMS) != window_start(total_before, PARAMS)
        assert grown.extended == (state is not None and not moved), head
        moves += state is not None and moved
        extensions += grown.extended
        state, total_before = grown, total
    assert moves >= 4 and extensions >= 9  # both paths were taken, the long merge among the moves


def test_a_history_within_the_window_is_mined_whole(make_repo) -> None:
    b = make_repo()
    for n in range(7):  # 7 < max_commits + window_step: no commit left out
        _edit(b, ["a.py", "b.py"], f"c{n}")
    state = mine_history(GitRepo.open(b.path), "HEAD", PARAMS, None)
    assert state.mined_commits == 7 and state.files["a.py"].commits == 7


def test_no_window_with_max_commits_zero(make_repo) -> None:
    b = make_repo()
    first = _edit(b, ["a.py"], "one")
    git = GitRepo.open(b.path)
    params = HistoryParams(max_commits=0, window_step=3)
    empty = mine_history(git, first, params, None)
    _edit(b, ["a.py"], "two")
    later = mine_history(git, "HEAD", params, empty)
    assert (later.mined_commits, later.files, later.extended) == (0, {}, False)


def _side_branch_merged_late(b: RepoBuilder) -> list[str]:
    """Two commits, a side branch of three (the oldest commit times) merged after ten more on
    main: the side branch's shas."""
    _edit(b, ["a.py"], "root")
    _edit(b, ["a.py"], "two")
    b.branch("old")
    b.checkout("old")
    side = [_edit(b, ["s.py", "a.py"], f"side {n}") for n in range(3)]
    b.checkout("main")
    for n in range(10):
        _edit(b, ["m.py"], f"main {n}")
    b.git("merge", "-q", "--no-ff", "-m", "merge old", "old")
    return side


def test_a_window_the_newest_commits_do_not_hold_is_still_exact(make_repo) -> None:
    """A side branch written early and merged late lands in the window, while a walk by commit
    time from the head reaches its commits only after ``max_commits + window_step`` newer ones."""
    b = make_repo()
    side = _side_branch_merged_late(b)
    head = b.head()
    git = GitRepo.open(b.path)
    cap = PARAMS.max_commits + PARAMS.window_step
    newest = {c.sha for c in git.history_commits(head, max_commits=cap)}
    assert not set(side) & newest  # the first walk does not hold the window
    state = mine_history(git, head, PARAMS, None)
    assert [c.sha for c in state.applied] == _expected_window(git, head, PARAMS)
    assert set(side) <= {c.sha for c in state.applied}
    assert state.files["s.py"].commits == 3


def _streamed_shas(monkeypatch) -> list[list[str]]:  # type: ignore[no-untyped-def]
    """The shas of each ``git log`` stream the walks start (the real stream runs)."""
    from knowing_pr.git import walk

    runs: list[list[str]] = []
    real = walk.stream_commits

    def spy(git_dir, shas, **kwargs):  # type: ignore[no-untyped-def]
        runs.append(list(shas))
        return real(git_dir, shas, **kwargs)

    monkeypatch.setattr(walk, "stream_commits", spy)
    return runs


def _mined_from_scratch(b: RepoBuilder, monkeypatch) -> tuple[list[str], list[list[str]], HistoryState]:  # type: ignore[no-untyped-def]
    """HEAD's window as expected, the shas of each ``git log`` a mine from scratch then started,
    and the mined state (its commits checked to be that window)."""
    git = GitRepo.open(b.path)
    head = b.head()
    window = _expected_window(git, head, PARAMS)
    runs = _streamed_shas(monkeypatch)
    state = mine_history(git, head, PARAMS, None)
    assert [c.sha for c in state.applied] == window
    return window, runs, state


def test_only_the_windows_commits_are_read_from_git_once(make_repo, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    b = make_repo()
    for n in range(14):  # 14 commits: past max_commits + window_step (8), the walk holds the window
        _edit(b, ["a.py", "b.py"] if n % 2 else ["a.py"], f"edit {n}")
    window, runs, _ = _mined_from_scratch(b, monkeypatch)
    assert len(runs) == 1 and sorted(runs[0]) == sorted(window)  # the walk's older commits: not read


def test_a_window_the_first_commits_miss_reads_each_of_its_commits_once(make_repo, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    b = make_repo()
    _side_branch_merged_late(b)
    _, runs, state = _mined_from_scratch(b, monkeypatch)
    streamed = [sha for run in runs for sha in run]
    assert len(streamed) == len(set(streamed)) == len(state.applied)  # one walk, the window alone read


def test_where_pygit2_alone_reads_only_the_windows_commits_are_diffed(make_repo, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from knowing_pr.git import walk

    b = make_repo()
    for n in range(14):
        _edit(b, ["a.py", "b.py"] if n % 2 else ["a.py"], f"edit {n}")
    b.git("config", "remote.origin.promisor", "true")  # a partial clone: git log is not asked
    git = GitRepo.open(b.path)
    head = b.head()
    window = _expected_window(git, head, PARAMS)
    diffed: list[str] = []
    real = walk.commit_info

    def spy(commit, *args, **kwargs):  # type: ignore[no-untyped-def]
        diffed.append(str(commit.id))
        return real(commit, *args, **kwargs)

    monkeypatch.setattr(walk, "commit_info", spy)
    runs = _streamed_shas(monkeypatch)
    state = mine_history(git, head, PARAMS, None)
    assert [c.sha for c in state.applied] == window
    assert runs == [] and sorted(diffed) == sorted(window)  # the 6 commits before the window: not diffed
