"""The history's own rename measure (knowing_pr/git/renames.py), on real repositories: exact renames
by blob id, similar files above the threshold, a pair below it, binary files, the bound on the
number of candidate pairs; the streamed log and the pygit2 walk give the same renames."""

from __future__ import annotations

from conftest import RepoBuilder

from knowing_pr.git import CommitInfo, GitRepo, renames
from knowing_pr.git.renames import RenameRule, apply_renames

LONG = "".join(f"statement number {i} of a body long enough to be measured\n" for i in range(40))


def _changes(repo: RepoBuilder, rule: RenameRule | None = None) -> list[CommitInfo]:
    """HEAD's record as the history mine reads it (streamed, renames found), and as the pygit2 walk
    gives it: both must agree."""
    git_repo = GitRepo.open(repo.path)
    streamed = git_repo.history_commits("HEAD", max_commits=1, defer_renames=True, renames=rule)
    assert streamed[0].renames_pending  # read from the streamed log (a fallback walk pairs at once)
    undeferred = git_repo.history_commits("HEAD", max_commits=1, renames=rule)
    mined = [git_repo.with_renames(commit, rule) for commit in streamed]
    walked = list(git_repo.iter_commits("HEAD", max_commits=1, merge_changes=False, renames=rule))
    assert mined == walked == undeferred
    return mined


def _renames(repo: RepoBuilder, rule: RenameRule | None = None) -> set[tuple[str | None, str | None]]:
    (commit,) = _changes(repo, rule)
    return {(old, new) for status, old, new in commit.changes if status == "R"}


def test_an_exact_move_is_a_rename_without_reading_a_blob(make_repo, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    repo: RepoBuilder = make_repo()
    repo.write("a/one.py", LONG)
    repo.write("a/two.py", LONG.replace("statement", "clause"))
    repo.commit("root")
    repo.rename("a/one.py", "b/one.py")
    repo.rename("a/two.py", "b/moved.py")
    repo.commit("move")
    read: list[str] = []
    real = renames._lines
    monkeypatch.setattr(renames, "_lines", lambda data: read.append("x") or real(data))
    assert _renames(repo) == {("a/one.py", "b/one.py"), ("a/two.py", "b/moved.py")}
    assert read == []  # blob ids alone paired them


def test_a_file_moved_and_edited_is_a_rename_above_the_threshold(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo: RepoBuilder = make_repo()
    repo.write("src/engine.py", LONG)
    repo.write("src/other.py", "something else entirely\n" * 3)
    repo.commit("root")
    repo.delete("src/engine.py")
    lines = LONG.splitlines(keepends=True)
    repo.write("core/engine.py", "".join(lines[:30]) + "new tail\n" * 5)  # 30 of 40 lines kept
    repo.commit("move and edit")
    assert _renames(repo) == {("src/engine.py", "core/engine.py")}


def test_a_pair_below_the_threshold_stays_a_deletion_and_an_addition(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo: RepoBuilder = make_repo()
    repo.write("src/engine.py", LONG)
    repo.commit("root")
    repo.delete("src/engine.py")
    lines = LONG.splitlines(keepends=True)
    repo.write("core/engine.py", "".join(lines[:12]) + "".join(f"rewritten {i}\n" for i in range(60)))
    repo.commit("rewrite")
    (commit,) = _changes(repo)
    assert sorted(commit.changes, key=str) == sorted(
        [("D", "src/engine.py", None), ("A", None, "core/engine.py")], key=str
    )


def test_binary_files_pair_only_when_identical(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo: RepoBuilder = make_repo()
    blob = bytes(range(256)) * 40
    repo.write("img/logo.bin", blob)
    repo.write("img/icon.bin", blob[::-1])
    repo.commit("root")
    repo.rename("img/logo.bin", "assets/logo.bin")  # the same bytes: a rename
    repo.delete("img/icon.bin")
    repo.write(
        "assets/icon.bin", blob[::-1][:-16] + b"\0" * 16
    )  # almost the same bytes: binary, not measured
    repo.commit("move images")
    assert _renames(repo) == {("img/logo.bin", "assets/logo.bin")}


def test_the_most_similar_partner_wins_and_each_file_pairs_once(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo: RepoBuilder = make_repo()
    repo.write("old/a.py", LONG)
    repo.commit("root")
    lines = LONG.splitlines(keepends=True)
    repo.delete("old/a.py")
    repo.write("new/close.py", "".join(lines[:38]) + "x\n")
    repo.write("new/far.py", "".join(lines[:25]) + "y\n" * 10)
    repo.commit("split")
    assert _renames(repo) == {("old/a.py", "new/close.py")}


def test_empty_files_and_submodules_are_never_renames(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo: RepoBuilder = make_repo()
    repo.write("a/__init__.py", "")
    repo.write("a/keep.py", LONG)
    repo.commit("root")
    repo.delete("a/__init__.py")
    repo.write("b/__init__.py", "")
    repo.add_gitlink("vendor/sub", "0" * 39 + "1")
    repo.commit("move the empty file")
    assert _renames(repo) == set()


def test_many_candidates_are_bounded_to_exact_renames(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo: RepoBuilder = make_repo()
    for index in range(6):
        repo.write(f"old/f{index}.py", LONG.replace("number", f"n{index}"))
    repo.commit("root")
    for index in range(6):
        repo.delete(f"old/f{index}.py")
        body = LONG.replace("number", f"n{index}")
        repo.write(f"new/f{index}.py", body if index == 0 else body + "edited\n")
    repo.commit("move and edit six")
    assert len(_renames(repo)) == 6
    assert _renames(repo, RenameRule(max_pairs=24)) == {("old/f0.py", "new/f0.py")}  # 5 × 5 left
    assert len(_renames(repo, RenameRule(max_pairs=25))) == 6
    assert _renames(repo, RenameRule(max_bytes=100)) == {("old/f0.py", "new/f0.py")}  # ids only
    assert _renames(repo, RenameRule(threshold=100)) == {("old/f0.py", "new/f0.py")}  # edited: < 100%


def test_apply_renames_keeps_the_other_changes_in_place() -> None:
    changes = [("A", None, "b.py"), ("D", "a.py", None), ("M", "c.py", "c.py"), ("D", "d.py", None)]
    assert apply_renames(changes, [("a.py", "b.py")]) == [
        ("R", "a.py", "b.py"),
        ("M", "c.py", "c.py"),
        ("D", "d.py", None),
    ]


def test_identical_blobs_pair_by_base_name_first_then_in_path_order() -> None:
    from knowing_pr.git.renames import _exact_pairs

    blob, mode = "a" * 40, 0o100644
    deleted = [(p, blob, mode) for p in ("old/x.py", "old/y.py", "old/z.py", "old/w.py")]
    added = [(p, blob, mode) for p in ("new/y.py", "new/b.py", "new/x.py", "new/a.py", "other/x.py")]
    # x and y find their namesakes (the first in path order); z and w take what is left, in order
    assert _exact_pairs(deleted, added) == [
        ("old/x.py", "new/x.py"),
        ("old/y.py", "new/y.py"),
        ("old/w.py", "new/a.py"),
        ("old/z.py", "new/b.py"),
    ]
    many = [(f"old/a{i}.py", blob, mode) for i in range(3000)]  # a mass move renaming every file
    pairs = _exact_pairs(many, [(f"new/z{i}.txt", blob, mode) for i in range(3000)])
    assert len(pairs) == 3000 and len({new for _, new in pairs}) == 3000
