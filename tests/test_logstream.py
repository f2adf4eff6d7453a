"""The history mine's streamed ``git log`` (knowing_pr/git/logstream.py) gives, commit for commit,
the records and the mined state the pygit2 walk gives: renames, deletions, merges, type and mode
changes, a submodule, paths with spaces and newlines; and falls back to the walk when git fails."""

from __future__ import annotations

import os
import threading
from contextlib import closing
from pathlib import Path

import pytest
from conftest import RepoBuilder

from knowing_pr.config import HistoryParams
from knowing_pr.git import GitRepo, walk
from knowing_pr.git.logstream import LogStreamError, stream_commits
from knowing_pr.history import HistoryState, mine_history

PARAMS = HistoryParams(max_files_per_commit=6, half_life_days=1.0)
ODD_NAMES = ("with space.py", "new\nline.py", "tab\there.py", "ünï.py")


def _touch(builder: RepoBuilder, path: str, text: str) -> None:
    previous = (builder.path / path).read_text() if (builder.path / path).exists() else ""
    builder.write(path, previous + text + "\n")


def _busy_history(builder: RepoBuilder) -> None:
    body = "".join(f"line {i} of a file long enough to be recognised after a move\n" for i in range(30))
    builder.write("pkg/core.py", body)
    builder.write("pkg/util.py", body.replace("line", "row"))
    builder.write("README", "readme\n")
    builder.commit("root")
    for name in ODD_NAMES:
        _touch(builder, name, "odd")
    _touch(builder, "pkg/core.py", "edit")
    builder.commit("odd names")
    builder.rename("pkg/util.py", "lib/util with space.py")
    _touch(builder, "pkg/core.py", "moved util")
    builder.commit("rename")
    builder.branch("side")
    builder.checkout("side")
    _touch(builder, "side.py", "side")
    _touch(builder, "new\nline.py", "side edit")
    builder.commit("side work")
    builder.rename("new\nline.py", "renamed\nline.py")
    builder.commit("side rename")
    builder.checkout("main")
    builder.delete("README")
    _touch(builder, "pkg/core.py", "main")
    builder.commit("delete readme")
    builder.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    builder.symlink("link", "pkg/core.py")
    builder.chmod("pkg/core.py", 0o755)
    builder.commit("symlink and mode")
    builder.delete("link")
    builder.write("link", "now a file\n")
    builder.add_gitlink("vendor/sub", "0" * 39 + "1")
    builder.commit("typechange and submodule")
    builder.rename("lib/util with space.py", "pkg/util.py")
    builder.delete("tab\there.py")
    builder.write("brand new.py", "fresh\n")
    builder.commit("rename back, delete, add\n  \nthe body after a line of spaces (not the subject)")
    for index in range(8):
        _touch(builder, f"bulk/f{index}.py", "bulk")
    builder.commit("too many files")


def _walked(repo: GitRepo) -> list:
    return list(repo.iter_commits("HEAD", max_commits=1000, merge_changes=False))


def _stream_must_serve(monkeypatch) -> list[int]:  # type: ignore[no-untyped-def]
    """The records' count of each streamed read that succeeded: a read that fails falls back to
    the pygit2 walk silently, so a test of the stream checks this list is not empty."""
    served: list[int] = []
    real = walk._streamed

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        served.append(0)
        for record in real(*args, **kwargs):
            served[-1] += 1
            yield record

    monkeypatch.setattr(walk, "_streamed", spy)
    return served


def test_streamed_records_equal_the_pygit2_walk(repo: RepoBuilder, monkeypatch) -> None:
    _busy_history(repo)
    git_repo = GitRepo.open(repo.path)
    walked = _walked(git_repo)
    assert any(c.is_merge for c in walked) and any(s == "R" for c in walked for s, _, _ in c.changes)
    served = _stream_must_serve(monkeypatch)
    assert git_repo.history_commits("HEAD", max_commits=1000) == walked
    assert served == [len(walked)]  # the stream gave them, not the fallback


def test_git_log_stream_gives_each_commits_paths_as_pygit2_does(repo: RepoBuilder) -> None:
    _busy_history(repo)
    git_repo = GitRepo.open(repo.path)
    simple = [c for c in _walked(git_repo) if not c.is_merge]
    streamed = {
        sha: changes for sha, _, changes, _ in stream_commits(git_repo.git_dir, [c.sha for c in simple])
    }
    assert list(streamed) == [c.sha for c in simple]
    for commit in simple:
        if not any(s == "R" for s, _, _ in commit.changes):
            assert streamed[commit.sha] == commit.changes, commit.sha
    paths = {p for changes in streamed.values() for _, old, new in changes for p in (old, new) if p}
    assert {*ODD_NAMES, "renamed\nline.py", "lib/util with space.py", "vendor/sub"} <= paths


def test_two_runs_over_the_halves_read_as_one(repo: RepoBuilder) -> None:
    _busy_history(repo)
    git_repo = GitRepo.open(repo.path)
    shas = [c.sha for c in _walked(git_repo) if not c.is_merge]
    one = list(stream_commits(git_repo.git_dir, shas))
    for parts in (2, 3, len(shas)):
        assert list(stream_commits(git_repo.git_dir, shas, parts=parts)) == one
    # a commit git cannot read in the second run fails the whole stream, as in one run
    missing = "0" * 40
    with pytest.raises(LogStreamError):
        list(stream_commits(git_repo.git_dir, [*shas, missing], parts=2))
    # a reader that stops after the first record leaves no git running and no thread waiting
    children, threads = set(_children()), set(threading.enumerate())  # other tests' may linger
    stream = stream_commits(git_repo.git_dir, shas, parts=2)
    assert next(stream) == one[0]
    runs = set(_children()) - children
    started = set(threading.enumerate()) - threads
    assert len(runs) == 2  # both runs started at once, neither reaped yet
    stream.close()
    assert not runs & set(_children()) and not [t for t in started if t.is_alive()]


def _children() -> list[str]:
    """This process's children not reaped yet, running or not (Linux: each ``/proc/<pid>/stat``
    names its parent)."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc here")
    found = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[1] == str(os.getpid()):
            found.append(entry.name)
    return found


def _mined_by_the_pygit2_walk(repo: RepoBuilder, monkeypatch, after: int = 0) -> HistoryState:  # type: ignore[no-untyped-def]
    """The history mined with every commit after the first ``after`` diffed by pygit2 instead of
    read from the streamed log (the log fails there, as when git stops understood)."""
    real = walk.stream_commits

    def failing(*args, **kwargs):  # type: ignore[no-untyped-def]
        with closing(real(*args, **kwargs)) as records:  # its git stopped where it is made to fail
            for given, record in enumerate(records):
                if given >= after:
                    raise LogStreamError("made to fail")
                yield record

    monkeypatch.setattr(walk, "stream_commits", failing)
    return mine_history(GitRepo.open(repo.path), "HEAD", PARAMS)


def test_streamed_mine_equals_the_pygit2_mine_bit_for_bit(repo: RepoBuilder, monkeypatch) -> None:
    _busy_history(repo)
    served = _stream_must_serve(monkeypatch)
    streamed = mine_history(GitRepo.open(repo.path), "HEAD", PARAMS)
    assert served, "the mine read the streamed log"
    walked = _mined_by_the_pygit2_walk(repo, monkeypatch)
    assert streamed.to_rows() == walked.to_rows()
    assert streamed.files and streamed.pairs
    assert [(c.sha, c.subject) for c in walked.applied] == [(c.sha, c.subject) for c in streamed.applied]


def test_a_stream_that_fails_halfway_is_finished_by_pygit2(repo: RepoBuilder, monkeypatch) -> None:
    """The mine applies each record as it is read: where the log stops being understood after some
    commits were applied, pygit2 diffs the rest, and the state is the one either source gives."""
    _busy_history(repo)
    whole = mine_history(GitRepo.open(repo.path), "HEAD", PARAMS)
    served = _stream_must_serve(monkeypatch)
    for after in (1, 3, 6):
        with monkeypatch.context() as patched:
            halfway = _mined_by_the_pygit2_walk(repo, patched, after=after)
        # the stream gave the records up to its failure (merges need none of its output), pygit2 the rest
        assert after <= served[-1] < whole.mined_commits
        assert halfway.to_rows() == whole.to_rows()
        assert halfway.applied == whole.applied
        # subjects are not part of a commit's equality: git's and pygit2's must be the same too
        assert [c.subject for c in halfway.applied] == [c.subject for c in whole.applied]


def test_without_git_the_pygit2_walk_gives_the_same_records(repo: RepoBuilder, monkeypatch, tmp_path) -> None:
    _busy_history(repo)
    git_repo = GitRepo.open(repo.path)
    walked = _walked(git_repo)
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    with pytest.raises(LogStreamError):
        list(stream_commits(git_repo.git_dir, [walked[0].sha]))
    assert git_repo.history_commits("HEAD", max_commits=1000) == walked


def test_only_full_object_ids_reach_git(repo: RepoBuilder) -> None:
    repo.write("a.py", "a\n")
    repo.commit("a")
    with pytest.raises(LogStreamError, match="not a full object id"):
        list(stream_commits(GitRepo.open(repo.path).git_dir, ["--output=x"]))


def test_a_mine_from_scratch_diffs_for_renames_only_where_they_can_change_the_counts(
    repo: RepoBuilder, monkeypatch
) -> None:
    body = "".join(f"line {i} of a file long enough to be recognised after a move\n" for i in range(30))
    for index in range(8):  # more than max_files_per_commit: no file gets stats
        repo.write(f"vendor/v{index}.py", body + f"v{index}\n")
    repo.write("core.py", body)
    subjects = {repo.commit(): "vendored drop"}
    for index in range(8):  # a move of files without stats, over the limit either way: no diff
        repo.rename(f"vendor/v{index}.py", f"third_party/v{index}.py")
    subjects[repo.commit()] = "move the vendored tree"
    for index in range(4):  # 8 changes as adds and deletes, 4 as renames: the limit decides
        repo.rename(f"third_party/v{index}.py", f"lib/v{index}.py")
    subjects[repo.commit()] = "move some of it"
    _touch(repo, "core.py", "edit")
    subjects[repo.commit()] = "core.py gets stats"
    repo.rename("core.py", "core2.py")  # the deleted path has stats: diffed
    subjects[repo.commit()] = "rename core"
    git_repo = GitRepo.open(repo.path)
    diffed: list[str] = []
    real = GitRepo.with_renames

    def spy(self: GitRepo, commit, renames=None):  # type: ignore[no-untyped-def]
        diffed.append(subjects[commit.sha])
        return real(self, commit, renames)

    monkeypatch.setattr(GitRepo, "with_renames", spy)
    served = _stream_must_serve(monkeypatch)
    streamed = mine_history(git_repo, "HEAD", PARAMS)
    assert served
    assert sorted(diffed) == ["move some of it", "rename core"]
    walked = _mined_by_the_pygit2_walk(repo, monkeypatch)
    assert streamed.to_rows() == walked.to_rows()
    assert "core2.py" in streamed.files and streamed.files["core2.py"].commits == 2


def test_a_mine_from_scratch_applies_each_commit_before_the_next_is_read(
    repo: RepoBuilder, monkeypatch
) -> None:
    """No list of every record is built first: the n-th commit is counted while the log has been
    read up to it (memory bounded by git's read-ahead, and the counts run while git diffs)."""
    from knowing_pr.history import mine

    _busy_history(repo)
    served = _stream_must_serve(monkeypatch)
    read_when_applied: list[int] = []
    real_apply = mine._Accumulator.apply

    def apply(self, commit):  # type: ignore[no-untyped-def]
        read_when_applied.append(served[-1])
        real_apply(self, commit)

    monkeypatch.setattr(mine._Accumulator, "apply", apply)
    state = mine_history(GitRepo.open(repo.path), "HEAD", PARAMS)
    assert read_when_applied == list(range(1, state.mined_commits + 1))


def test_a_git_that_dies_inside_the_last_commit_never_has_that_commit_counted(
    repo: RepoBuilder, monkeypatch, tmp_path
) -> None:
    """git printing part of the last commit's changes and then failing: the records are counted as
    they are read, so that commit must not be given out before git's exit says it is whole; the
    state is then the one pygit2's diff gives."""
    import shutil
    import sys

    repo.write("a.py", "a\n")
    repo.write("b.py", "b\n")
    repo.commit("root")
    for n in range(3):
        _touch(repo, "a.py", f"a{n}")
        _touch(repo, "b.py", f"b{n}")
        repo.commit(f"both {n}")
    whole = _mined_by_the_pygit2_walk(repo, monkeypatch)
    monkeypatch.undo()
    real_git = shutil.which("git")
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    # the real git's log output with its last change (status field and path) cut off, then a failure
    fake.write_text(
        f"#!{sys.executable}\n"
        "import subprocess, sys\n"
        f"out = subprocess.run([{real_git!r}, *sys.argv[1:]], stdin=sys.stdin, capture_output=True).stdout\n"
        "fields = out.rstrip(b'\\0').split(b'\\0')\n"
        "sys.stdout.buffer.write(b'\\0'.join(fields[:-2]) + b'\\0')\n"
        "sys.exit(1)\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{Path(real_git or '').parent}")
    served = _stream_must_serve(monkeypatch)
    cut = mine_history(GitRepo.open(repo.path), "HEAD", PARAMS)
    assert served and served[-1] == 3  # the three whole commits came from the cut stream
    assert cut.to_rows() == whole.to_rows()
    assert cut.pair("a.py", "b.py") is not None and cut.pair("a.py", "b.py").count == 4  # type: ignore[union-attr]


def test_a_stream_dropped_unread_leaves_no_git_running(repo: RepoBuilder) -> None:
    """git starts when ``stream_commits`` returns: a stream dropped before its first read, never
    closed, stops it all the same, with no cycle collection needed (an index run pauses it)."""
    import gc

    _busy_history(repo)
    git_repo = GitRepo.open(repo.path)
    shas = [c.sha for c in reversed(_walked(git_repo)) if not c.is_merge]
    children = set(_children())  # other tests' may linger
    gc.disable()
    try:
        stream = stream_commits(git_repo.git_dir, shas, parts=2)
        assert len(set(_children()) - children) == 2
        del stream
        assert not set(_children()) - children
    finally:
        gc.enable()
