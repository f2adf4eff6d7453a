"""A history mine run ahead in a child process (knowing_pr/index/historyahead.py) is the mine in
process, bit for bit: the state (its mappings in the same order), every applied commit, the recent
ones and the subjects' rows; a full index that takes it writes the store an index that mines in
process writes; and a child that fails, or was asked for something else, leaves the mine to the
index, which then gives the same store."""

from __future__ import annotations

import dataclasses
import inspect
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import RepoBuilder
from test_logstream import PARAMS, _busy_history

from knowing_pr.config import HistoryParams, load_settings
from knowing_pr.git import GitRepo
from knowing_pr.history import mine_history
from knowing_pr.index.historyahead import MineAhead, start_mine_ahead
from knowing_pr.pipeline import update_index
from knowing_pr.store.commitwords import CommitRows

KEEP = 4


def _in_process(repo: GitRepo, head: str, params: HistoryParams, keep: int):  # type: ignore[no-untyped-def]
    built = CommitRows()
    state = mine_history(
        repo, head, params, None, keep_recent=keep, on_applied=built.add, idle=built.build_some
    )
    return state, built.rows()


def test_a_mine_run_ahead_is_the_mine_in_process(repo: RepoBuilder) -> None:
    _busy_history(repo)
    git_repo = GitRepo.open(repo.path)
    head = git_repo.resolve("HEAD")
    ahead = start_mine_ahead(git_repo.git_dir, head, PARAMS, KEEP)
    assert ahead is not None
    taken = ahead.take(head, PARAMS, KEEP)
    state, rows = _in_process(git_repo, head, PARAMS, KEEP)
    assert taken is not None
    assert taken.state == state and taken.state.to_rows() == state.to_rows()
    # the same mappings in the same order: nothing downstream can tell the two apart
    assert list(taken.state.files.items()) == list(state.files.items())
    assert list(taken.state.pairs.items()) == list(state.pairs.items())
    assert taken.state.applied == state.applied and len(state.applied) > KEEP
    assert taken.state.recent == state.recent and len(state.recent) == KEEP
    assert taken.state.extended is state.extended is False
    assert taken.rows == rows and rows
    # the history holds what makes a mine hard: renames, a commit over max_files, odd paths
    assert any(c.touched == () for c in state.applied)
    assert "pkg/util.py" in state.files and "ünï.py" in state.files
    assert taken.seconds > 0


def test_a_mine_asked_for_another_head_or_settings_is_not_taken(repo: RepoBuilder) -> None:
    _busy_history(repo)
    git_repo = GitRepo.open(repo.path)
    head = git_repo.resolve("HEAD")
    parent = git_repo.resolve("HEAD~1")
    for asked in ((parent, PARAMS, KEEP), (head, HistoryParams(), KEEP), (head, PARAMS, KEEP + 1)):
        ahead = start_mine_ahead(git_repo.git_dir, head, PARAMS, KEEP)
        assert ahead is not None
        assert ahead.take(*asked) is None
        assert ahead.process.poll() is not None  # stopped, not left running


def test_a_child_that_fails_gives_nothing_to_take(repo: RepoBuilder, tmp_path: Path) -> None:
    _busy_history(repo)
    git_repo = GitRepo.open(repo.path)
    head = git_repo.resolve("HEAD")
    missing = start_mine_ahead(str(tmp_path / "no-such-repository"), head, PARAMS, KEEP)
    assert missing is not None and missing.take(head, PARAMS, KEEP) is None
    garbled = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'\\x10' + b'\\0' * 7 + b'{]')"],
        stdout=subprocess.PIPE,
    )
    assert MineAhead(garbled, head, PARAMS, KEEP).take(head, PARAMS, KEEP) is None


def _tables(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the store but the run's own report (meta ``last_run``: its timings) and the FTS
    tables' shadow rows (their content is the rows they index)."""
    with sqlite3.connect(db) as conn:
        names = [
            name
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not any(part in name for part in ("fts", "words"))
        ]
        out = {name: sorted(conn.execute(f"SELECT * FROM {name}"), key=repr) for name in names}  # noqa: S608
    out["meta"] = [row for row in out["meta"] if row[0] != "last_run"]
    return out


def _config(tmp_path: Path, least: int) -> str:
    path = tmp_path / f"ahead-{least}.yml"
    path.write_text(f"index:\n  mine_ahead_min_files: {least}\n")
    return str(path)


def _index(work_tree: Path, db: Path, config: str) -> dict[str, float]:
    report = update_index(str(work_tree), db=str(db), config=config, full=True)
    return dict(report.timings_ms)


def test_a_full_index_that_takes_the_mine_ahead_writes_the_same_store(
    repo: RepoBuilder, tmp_path: Path
) -> None:
    _busy_history(repo)
    for index in range(3):
        repo.write(f"pkg/mod{index}.py", f"def f{index}():\n    return {index}\n")
    repo.commit("modules")
    ahead_db, here_db = tmp_path / "ahead.sqlite", tmp_path / "here.sqlite"
    with_ahead = _index(repo.path, ahead_db, _config(tmp_path, 1))
    in_process = _index(repo.path, here_db, _config(tmp_path, 0))
    assert "history_wait" in with_ahead and "history_wait" not in in_process
    assert _tables(ahead_db) == _tables(here_db)


def test_a_linked_worktree_takes_the_mine_ahead(repo: RepoBuilder, tmp_path: Path) -> None:
    _busy_history(repo)
    repo.git("worktree", "add", "-q", "--detach", str(tmp_path / "linked"), "HEAD~1")
    linked = tmp_path / "linked"
    ahead_db, here_db = tmp_path / "ahead.sqlite", tmp_path / "here.sqlite"
    assert "history_wait" in _index(linked, ahead_db, _config(tmp_path, 1))
    _index(linked, here_db, _config(tmp_path, 0))
    assert _tables(ahead_db) == _tables(here_db)
    with sqlite3.connect(ahead_db) as conn:
        (mined,) = conn.execute("SELECT value FROM meta WHERE key = 'history_mined_head'").fetchone()
    assert mined == repo.git("rev-parse", "HEAD~1").strip()  # the worktree's head, not the main one's


def test_a_failed_mine_ahead_is_mined_in_process(repo: RepoBuilder, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import knowing_pr.index.history as history

    _busy_history(repo)
    started: list[MineAhead] = []

    def failing(git_dir: str, head: str, params: HistoryParams, keep: int) -> MineAhead:
        child = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"], stdout=subprocess.PIPE)
        started.append(MineAhead(child, head, params, keep))
        return started[-1]

    monkeypatch.setattr(history, "start_mine_ahead", failing)
    failed_db, here_db = tmp_path / "failed.sqlite", tmp_path / "here.sqlite"
    timings = _index(repo.path, failed_db, _config(tmp_path, 1))
    assert started and started[0].process.returncode == 3
    assert "history_wait" not in timings
    _index(repo.path, here_db, _config(tmp_path, 0))
    assert _tables(failed_db) == _tables(here_db)


def test_the_setting_changes_neither_the_index_nor_a_pack(tmp_path: Path) -> None:
    from knowing_pr.index.report import settings_key

    default, never = load_settings(None), load_settings(_config(tmp_path, 0))
    assert never.index.mine_ahead_min_files == 0 != default.index.mine_ahead_min_files
    assert settings_key(never) == settings_key(default)  # no re-index for it
    assert never.index.canonical() == default.index.canonical()  # in no PackRoot


def test_only_a_mine_from_scratch_of_enough_files_runs_ahead(repo: RepoBuilder, tmp_path: Path) -> None:
    _busy_history(repo)
    db = tmp_path / "index.sqlite"
    first = update_index(str(repo.path), db=str(db), config=_config(tmp_path, 1))  # the store's first
    assert "history_wait" in first.timings_ms
    repo.write("pkg/later.py", "LATER = 1\n")
    repo.commit("one more commit")
    extended = update_index(str(repo.path), db=str(db), config=_config(tmp_path, 1))
    assert "history" in extended.timings_ms and "history_wait" not in extended.timings_ms
    too_few = update_index(
        str(repo.path), db=str(tmp_path / "small.sqlite"), config=_config(tmp_path, 10_000)
    )
    assert "history_wait" not in too_few.timings_ms


# -- below the threshold: git alone runs ahead, its records read in process ---------------------


def test_below_the_threshold_git_starts_before_resolve_and_the_store_is_the_same(
    repo: RepoBuilder, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from knowing_pr.git import walk
    from knowing_pr.index.run import IndexRun

    _busy_history(repo)
    events: list[str] = []
    real_stream, real_resolve = walk.stream_commits, IndexRun._resolve

    def stream(*args, **kwargs):  # type: ignore[no-untyped-def]
        events.append("git log")
        return real_stream(*args, **kwargs)

    def resolve(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        events.append("resolve")
        return real_resolve(self, *args, **kwargs)

    monkeypatch.setattr(walk, "stream_commits", stream)
    monkeypatch.setattr(IndexRun, "_resolve", resolve)
    ahead = _index(repo.path, tmp_path / "ahead.sqlite", _config(tmp_path, 10_000))
    # one git log, started before resolve: the history step read it, and started none of its own
    assert events == ["git log", "resolve"]
    assert "history_start" in ahead and "history_wait" not in ahead
    events.clear()
    here = _index(repo.path, tmp_path / "here.sqlite", _config(tmp_path, 0))  # 0: nothing ahead
    assert events == ["resolve", "git log"] and "history_start" not in here
    assert _tables(tmp_path / "ahead.sqlite") == _tables(tmp_path / "here.sqlite")


def test_a_window_started_for_another_head_or_settings_is_stopped_unread(repo: RepoBuilder) -> None:
    from test_logstream import _children

    from knowing_pr.history.mine import start_window

    _busy_history(repo)
    git_repo = GitRepo.open(repo.path)
    head = git_repo.resolve("HEAD")
    state, _ = _in_process(git_repo, head, PARAMS, KEEP)
    shorter = dataclasses.replace(PARAMS, max_commits=2, window_step=1)  # another window
    assert _in_process(git_repo, head, shorter, KEEP)[0].applied != state.applied
    before = set(_children())  # other tests' may linger
    for started_for in ((git_repo.resolve("HEAD~1"), PARAMS), (head, shorter)):
        window = start_window(git_repo, *started_for)
        assert set(_children()) - before  # its git runs
        mined = mine_history(git_repo, head, PARAMS, None, keep_recent=KEEP, window=window)
        assert not set(_children()) - before  # stopped, and this mine's own git finished
        assert inspect.getgeneratorstate(window.records.records) == inspect.GEN_CLOSED
        assert mined.to_rows() == state.to_rows() and mined.applied == state.applied
    window = start_window(git_repo, head, PARAMS)
    mined = mine_history(git_repo, head, PARAMS, None, keep_recent=KEEP, window=window)
    assert list(mined.pairs.items()) == list(state.pairs.items()) and mined.recent == state.recent
    assert not set(_children()) - before


def test_git_started_ahead_is_stopped_when_the_run_fails(
    repo: RepoBuilder, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from test_logstream import _children

    from knowing_pr.index.run import IndexRun

    _busy_history(repo)
    before = set(_children())  # other tests' may linger

    def broken(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        assert set(_children()) - before, "git runs while the index resolves"
        raise KeyboardInterrupt

    monkeypatch.setattr(IndexRun, "_resolve", broken)
    with pytest.raises(KeyboardInterrupt):
        _index(repo.path, tmp_path / "broken.sqlite", _config(tmp_path, 10_000))
    assert not set(_children()) - before


def test_what_was_started_ahead_stops_before_a_mine_that_does_not_read_it(
    repo: RepoBuilder, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """A run that extends a stored history after all (no mine from scratch) stops the child, or
    the git started ahead, before its own mine starts."""
    from test_logstream import _children

    import knowing_pr.index.history as history
    from knowing_pr.history.mine import start_window
    from knowing_pr.index.history import WindowAhead, update_history
    from knowing_pr.store import Store

    _busy_history(repo)
    db = tmp_path / "index.sqlite"
    update_index(str(repo.path), db=str(db), config=_config(tmp_path, 0))
    repo.write("pkg/later.py", "LATER = 1\n")
    repo.commit("one more commit")
    git_repo = GitRepo.open(repo.path)
    head = git_repo.resolve("HEAD")
    settings = load_settings(None)
    real_mine = history.mine_history
    running_at_mine: list[set[str]] = []

    def mine(*args, **kwargs):  # type: ignore[no-untyped-def]
        running_at_mine.append(set(_children()) - before)
        return real_mine(*args, **kwargs)

    monkeypatch.setattr(history, "mine_history", mine)
    before = set(_children())  # other tests' may linger
    starts = [
        lambda: start_mine_ahead(git_repo.git_dir, head, settings.history, 0),
        lambda: WindowAhead(start_window(git_repo, head, settings.history), CommitRows()),
    ]
    for start in starts:
        ahead = start()
        assert ahead is not None and set(_children()) - before
        with Store.open(db) as store, store.transaction():
            update = update_history(git_repo, store, settings, head, full=False, ahead=ahead)
        assert update.extended_from is not None  # extended: the stored history was this one's base
        assert running_at_mine[-1] == set()
    assert len(running_at_mine) == 2 and not set(_children()) - before


def test_a_child_whose_index_is_gone_mines_nothing(repo: RepoBuilder) -> None:
    """The child stops with its index (``die_with_parent``): told another parent than its own, as it
    is once the index is gone, it ends at once with no answer, not after a whole mine."""
    import json
    import os

    from knowing_pr.parse.worker import isolated_python

    _busy_history(repo)
    git_repo = GitRepo.open(repo.path)
    request = {
        "git_dir": git_repo.git_dir,
        "head": git_repo.resolve("HEAD"),
        "params": dataclasses.asdict(PARAMS),
        "keep": KEEP,
    }
    command = isolated_python("from knowing_pr.index.historyahead import serve; serve(sys.argv[2:])", "")
    answers = {}
    for parent in (os.getpid(), os.getppid()):  # its own parent; another process, as an orphan sees
        command[-1] = json.dumps({**request, "parent": parent})
        done = subprocess.run(command, capture_output=True, check=True, timeout=120)
        answers[parent] = done.stdout
    assert answers[os.getpid()] and answers[os.getppid()] == b""


def test_a_first_pr_through_the_served_reader_runs_ahead_as_any_index(
    repo: RepoBuilder, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """A first ``pr`` reads the repository through its reader process (``git/served.py``): its
    full index mines ahead in a child, or starts git ahead, as an index in process does, and
    writes the store an index with nothing ahead writes."""
    import knowing_pr.index.run as run
    from knowing_pr.git.served import ServedRepo, start_reader, stop_reader

    _busy_history(repo)
    read_through: list[type] = []
    real = run.start_mine_from_scratch

    def start(repo, *args, **kwargs):  # type: ignore[no-untyped-def]
        read_through.append(type(repo))
        return real(repo, *args, **kwargs)

    monkeypatch.setattr(run, "start_mine_from_scratch", start)
    timings = {}
    for least in (1, 10_000, 0):
        try:
            start_reader(str(repo.path))  # handed out once: one reader for each run
            timings[least] = _index(repo.path, tmp_path / f"served-{least}.sqlite", _config(tmp_path, least))
        finally:
            stop_reader()
    assert read_through == [ServedRepo, ServedRepo]  # setting 0 starts nothing
    assert "history_wait" in timings[1]  # the child's mine, taken
    assert "history_start" in timings[10_000] and "history_wait" not in timings[10_000]
    assert "history_start" not in timings[0]
    assert _tables(tmp_path / "served-1.sqlite") == _tables(tmp_path / "served-0.sqlite")
    assert _tables(tmp_path / "served-10000.sqlite") == _tables(tmp_path / "served-0.sqlite")
