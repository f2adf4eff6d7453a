"""A large index's peak memory (issue 29): the parse results are freed once the store holds them,
before the history mine, and the resolve step's reference cycles collected; libgit2 keeps a
bounded part of the packs mapped, not whole packs."""

from __future__ import annotations

import gc
from pathlib import Path

import pygit2
from conftest import RepoBuilder

from knowing_pr.config import Settings
from knowing_pr.git import GitRepo
from knowing_pr.git.repo import configure_object_reads
from knowing_pr.index import run as index_run
from knowing_pr.index.commit import index_commit
from knowing_pr.model import ParsedFile


def test_the_parse_results_are_freed_before_the_history_mine(
    repo: RepoBuilder, monkeypatch, tmp_path: Path
) -> None:
    for i in range(4):
        repo.write(f"pkg/m{i}.py", f"def f{i}():\n    return {i}\n\n\ndef g{i}():\n    f{i}()\n")
    repo.commit("modules")
    alive_at_history: list[int] = []
    cycles_at_history: list[int] = []  # unreachable objects a collection would free
    real = index_run.update_history

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        alive_at_history.append(sum(isinstance(o, ParsedFile) for o in gc.get_objects()))
        cycles_at_history.append(gc.collect())
        return real(*args, **kwargs)

    monkeypatch.setattr(index_run, "update_history", spy)
    monkeypatch.setattr(index_run, "COLLECT_AFTER_FILES", 4)  # a run of this many files collects
    report = index_commit(GitRepo.open(repo.path), Settings(), full=True, db_path=tmp_path / "s.sqlite")
    assert report.files_parsed == 4
    assert alive_at_history == [0]
    assert cycles_at_history == [0]  # the resolve step's reference cycles were collected
    # a smaller run leaves them to the collector (a full collection costs a long-lived process's
    # whole heap), and stores the same
    monkeypatch.setattr(index_run, "COLLECT_AFTER_FILES", 5)
    gc.disable()  # the collector's own runs come when allocations say so: none may free them first
    try:
        small = index_commit(GitRepo.open(repo.path), Settings(), full=True, db_path=tmp_path / "t.sqlite")
    finally:
        gc.enable()
    assert cycles_at_history[1] > 0 and small.graph_root == report.graph_root


def test_opening_a_repository_bounds_the_pack_memory_libgit2_keeps_mapped(repo: RepoBuilder) -> None:
    repo.write("a.py", "a = 1\n")
    repo.commit("a")
    # the settings are the process's: put libgit2's own defaults back first, so only this open can
    # lower them (an earlier test's open would otherwise make the check pass on its own)
    pygit2.settings.mwindow_mapped_limit = 8 << 30
    pygit2.settings.mwindow_size = 1 << 30
    configure_object_reads.cache_clear()  # applied once per process: let this open apply it again
    GitRepo.open(repo.path)
    assert pygit2.settings.mwindow_mapped_limit <= 128 << 20
    assert pygit2.settings.mwindow_size <= pygit2.settings.mwindow_mapped_limit
