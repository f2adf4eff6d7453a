"""The renames a mine needs, paired by a fork from the newest back while the mine goes forwards
(knowing_pr/history/renamesahead.py): the same records as pairing them here, whether the fork
answers, is killed, or is not made; a mine with the fork gives the rows of a mine without it."""

from __future__ import annotations

import gc
import os
import signal
import time

import pytest
from conftest import RepoBuilder

from knowing_pr.config import HistoryParams
from knowing_pr.git import CommitInfo, GitRepo
from knowing_pr.history import mine, renamesahead
from knowing_pr.history.renamesahead import RenamesAhead

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the fork pairs only where fork exists")

PARAMS = HistoryParams()


def _body(tag: str, lines: int = 30) -> str:
    return "".join(f"{tag} statement {i} of a body long enough to be measured\n" for i in range(lines))


def _moving_history(repo: RepoBuilder, moves: int = 6) -> None:
    """A history of directory moves with edits (similar pairs) and exact moves, each commit
    both deleting and adding files, some of them counted before (their renames matter)."""
    for index in range(4):
        repo.write(f"src/m{index}.py", _body(f"m{index}"))
    repo.write("vendor/big.txt", _body("vendored", 60))
    repo.commit("root")
    for step in range(moves):
        for index in range(4):
            old, new = f"src{step or ''}/m{index}.py", f"src{step + 1}/m{index}.py"
            repo.delete(old)
            repo.write(new, _body(f"m{index}") + f"edited in step {step}\n")
        if step % 2 == 0:
            repo.rename(f"vendor{step or ''}/big.txt", f"vendor{step + 2}/big.txt")
        repo.commit(f"move step {step}")
        repo.write(f"src{step + 1}/m0.py", _body("m0") + f"touched after step {step}\n")
        repo.commit(f"touch after step {step}")


def _pending(repo: RepoBuilder) -> tuple[GitRepo, list[CommitInfo]]:
    git_repo = GitRepo.open(repo.path)
    walked = git_repo.history_commits("HEAD", max_commits=1000, defer_renames=True)
    head = git_repo.resolve("HEAD")
    pending = [c for c in mine.landing_order(walked, head) if c.renames_pending]
    return git_repo, pending


def test_the_fork_gives_the_records_pairing_here_gives(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo: RepoBuilder = make_repo()
    _moving_history(repo)
    git_repo, pending = _pending(repo)
    assert len(pending) == 6
    expected = [git_repo.with_renames(commit) for commit in pending]
    assert any(status == "R" for record in expected for status, _, _ in record.changes)
    with RenamesAhead(pending, git_repo.rename_pairs, min_sides=0) as ahead:
        assert ahead.ahead
        deadline = time.monotonic() + 60
        while len(ahead._answers) < len(pending) and time.monotonic() < deadline:
            time.sleep(0.01)  # let the fork answer every record before the mine asks
        assert sorted(ahead._answers) == list(range(len(pending)))
        assert gc.get_freeze_count() > 0  # what the fork shares is out of the collector's view
        got = [ahead.renamed(commit) for commit in pending]
        assert ahead._answers == {}  # each record came from the fork's answer
    assert got == expected
    assert gc.get_freeze_count() == 0  # and back in it once the fork has ended


def test_records_passed_by_are_not_waited_for_and_the_rest_still_pair(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo: RepoBuilder = make_repo()
    _moving_history(repo)
    git_repo, pending = _pending(repo)
    with RenamesAhead(pending, git_repo.rename_pairs, min_sides=0) as ahead:
        got = []
        for number, commit in enumerate(pending):
            if number % 2:
                ahead.passed(commit)
            else:
                got.append(ahead.renamed(commit))
    assert got == [git_repo.with_renames(commit) for commit in pending[::2]]


def test_a_killed_fork_leaves_the_pairing_to_the_mine(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo: RepoBuilder = make_repo()
    _moving_history(repo)
    git_repo, pending = _pending(repo)
    with RenamesAhead(pending, git_repo.rename_pairs, min_sides=0) as ahead:
        assert ahead.ahead
        os.kill(ahead._pid, signal.SIGKILL)  # dies at once or after some answers: the same records
        got = [ahead.renamed(commit) for commit in pending]
    assert got == [git_repo.with_renames(commit) for commit in pending]


def test_few_files_are_paired_here_without_a_fork(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo: RepoBuilder = make_repo()
    _moving_history(repo, moves=1)
    git_repo, pending = _pending(repo)
    with RenamesAhead(pending, git_repo.rename_pairs) as ahead:
        assert not ahead.ahead  # under MIN_AHEAD_SIDES
        assert [ahead.renamed(c) for c in pending] == [git_repo.with_renames(c) for c in pending]


def test_a_mine_with_the_fork_gives_the_rows_of_one_without(make_repo, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    repo: RepoBuilder = make_repo()
    _moving_history(repo)
    git_repo = GitRepo.open(repo.path)
    without = mine.mine_history(git_repo, "HEAD", PARAMS)
    forked: list[bool] = []
    real_init = RenamesAhead.__init__

    def forcing(self, pending, pair, *, min_sides=0):  # type: ignore[no-untyped-def]
        real_init(self, pending, pair, min_sides=0)
        forked.append(self.ahead)

    monkeypatch.setattr(renamesahead.RenamesAhead, "__init__", forcing)
    with_fork = mine.mine_history(git_repo, "HEAD", PARAMS)
    assert forked == [True]
    assert with_fork.to_rows() == without.to_rows()
    assert [c.touched for c in with_fork.applied] == [c.touched for c in without.applied]
    assert "src6/m0.py" in with_fork.files and with_fork.files["src6/m0.py"].commits == 13
