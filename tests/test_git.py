"""knowing_pr.git against real repositories built with the make_repo fixture (and the git CLI as oracle)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from knowing_pr.errors import RepoError
from knowing_pr.git import CommitInfo, FileChange, FileDiff, GitRepo, TreeEntry

TEN_LINES = "".join(f"line {n}\n" for n in range(1, 11))


def build_tiny(builder) -> list[str]:
    builder.write("README.md", "# tiny\n")
    builder.write("src/app.py", "print('hi')\n")
    first = builder.commit("first")
    builder.write("src/app.py", "print('hello')\n")
    builder.delete("README.md")
    second = builder.commit("second")
    return [first, second]


# -- the fixture ------------------------------------------------------------------------------


def test_fixture_commit_ids_are_identical_in_two_directories(make_repo):
    left, right = make_repo("left"), make_repo("right")
    shas_left, shas_right = build_tiny(left), build_tiny(right)
    assert shas_left == shas_right
    assert shas_left[-1] == "f98fe27059f0a8ac5deb64c98d0f5df6c3d935d8"
    assert left.path != right.path


def test_fixture_history_is_valid_for_the_git_cli(repo):
    shas = build_tiny(repo)
    assert repo.git("rev-list", "HEAD").split() == shas[::-1]
    assert (
        repo.git("log", "-1", "--format=%an <%ae> %at %ct")
        == "Knowing Tester <tester@example.com> 1700000060 1700000060\n"
    )
    assert repo.git("ls-files") == "src/app.py\n"
    assert repo.git("status", "--porcelain") == ""
    repo.git("fsck", "--strict")
    assert repo.head() == shas[-1]
    assert repo.git("symbolic-ref", "HEAD") == "refs/heads/main\n"


def test_fixture_git_ignores_outside_git_environment(repo, monkeypatch, tmp_path):
    build_tiny(repo)
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Intruder")
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "other-index"))
    repo.write("new.txt", "n\n")
    repo.git("add", "new.txt")
    repo.git("commit", "-q", "-m", "by the cli")
    assert repo.git("log", "-1", "--format=%an %s") == "Knowing Tester by the cli\n"
    assert not (tmp_path / "elsewhere").exists()
    assert not (tmp_path / "other-index").exists()


def test_fixture_git_raises_with_stderr(repo):
    with pytest.raises(RuntimeError, match="failed \\(128\\): fatal: Needed a single revision"):
        repo.git("rev-parse", "--verify", "no-such-branch^{commit}")


def test_fixture_branch_checkout_and_paths(repo):
    base = build_tiny(repo)[-1]
    repo.branch("feature")
    repo.checkout("feature")
    repo.write("feature.txt", "f\n")
    repo.write("ignored-for-now.txt", "later\n")
    feature = repo.commit("feature work", paths=["feature.txt"])
    assert repo.git("symbolic-ref", "HEAD") == "refs/heads/feature\n"
    assert repo.git("ls-tree", "--name-only", "-r", "HEAD").split() == ["feature.txt", "src/app.py"]
    repo.checkout("main")
    assert repo.head() == base
    assert not (repo.path / "feature.txt").exists()
    assert repo.git("rev-parse", "feature") == feature + "\n"


def test_fixture_gitlink_can_be_added_and_removed(repo):
    repo.write("a.txt", "a\n")
    repo.add_gitlink("vendor/lib", "1" * 40)
    repo.commit("with gitlink")
    assert repo.git("ls-tree", "HEAD", "vendor/lib") == f"160000 commit {'1' * 40}\tvendor/lib\n"
    repo.write("b.txt", "b\n")
    repo.commit("gitlink kept")
    assert "vendor/lib" in repo.git("ls-tree", "-r", "--name-only", "HEAD").split()
    repo.delete("vendor/lib")
    repo.commit("gitlink removed")
    assert repo.git("ls-tree", "-r", "--name-only", "HEAD").split() == [".gitmodules", "a.txt", "b.txt"]


# -- opening ----------------------------------------------------------------------------------


def test_open_discovers_upward_and_reports_locations(repo):
    build_tiny(repo)
    git = GitRepo.open(repo.path / "src")
    assert Path(git.workdir or "") == repo.path
    assert Path(git.git_dir) == repo.path / ".git"
    assert Path(git.common_dir) == repo.path / ".git"
    assert not git.is_shallow
    assert not git.is_empty


def test_open_non_repository_raises_repo_error(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(RepoError, match="not a git repository") as caught:
        GitRepo.open(plain)
    assert caught.value.hint


def test_open_missing_directory_raises_repo_error(tmp_path):
    with pytest.raises(RepoError, match="no such directory"):
        GitRepo.open(tmp_path / "missing")


def test_unborn_head(repo):
    git = GitRepo.open(repo.path)
    assert git.is_empty
    assert git.head_commit() is None
    with pytest.raises(RepoError, match="unknown revision 'HEAD'"):
        git.resolve("HEAD")


def test_linked_worktree_has_its_own_git_dir(repo, tmp_path):
    shas = build_tiny(repo)
    repo.git("worktree", "add", "-q", "-b", "side", str(tmp_path / "wt"), shas[0])
    git = GitRepo.open(tmp_path / "wt")
    assert (tmp_path / "wt" / ".git").is_file()
    assert Path(git.git_dir) == repo.path / ".git" / "worktrees" / "wt"
    assert Path(git.common_dir) == repo.path / ".git"
    assert Path(git.workdir or "") == tmp_path / "wt"
    assert git.head_commit() == shas[0]
    assert git.resolve("main") == shas[1]


def test_submodule_checkout_opens_its_own_repository(make_repo):
    library = make_repo("library")
    library.write("lib.py", "x = 1\n")
    library_sha = library.commit("lib")
    app = make_repo("app")
    app.write("app.py", "import lib\n")
    app.commit("app")
    app.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library.path), "vendor/library")
    app.git("commit", "-q", "-m", "add submodule")
    git = GitRepo.open(app.path / "vendor" / "library")
    assert (app.path / "vendor" / "library" / ".git").is_file()
    assert git.head_commit() == library_sha
    assert Path(git.git_dir) == app.path / ".git" / "modules" / "vendor" / "library"
    outer = GitRepo.open(app.path)
    gitlink = [e for e in outer.tree_entries(outer.head_commit() or "") if e.path == "vendor/library"]
    assert gitlink == [TreeEntry("vendor/library", library_sha, 0o160000, 0)]


# -- revisions --------------------------------------------------------------------------------


def test_resolve_revision_syntaxes(repo):
    first, second = build_tiny(repo)
    repo.git("tag", "-a", "v1", "-m", "annotated", first)
    repo.git("tag", "light", second)
    repo.git("update-ref", "refs/remotes/origin/main", first)
    git = GitRepo.open(repo.path)
    assert git.resolve("HEAD") == second
    assert git.resolve("main") == second
    assert git.resolve("HEAD~1") == first
    assert git.resolve("main^") == first
    assert git.resolve(second[:10]) == second
    assert git.resolve(second) == second
    assert git.resolve("v1") == first  # annotated tag peeled to its commit
    assert git.resolve("light") == second
    assert git.resolve("origin/main") == first
    assert git.head_commit() == second
    assert git.parents(second) == [first]
    assert git.parents(first) == []
    assert git.commit_time(second) == 1_700_000_060
    assert git.has_commit(first)
    assert not git.has_commit("0" * 40)
    assert not git.has_commit("not-a-sha")
    tree_sha = repo.git("rev-parse", "HEAD^{tree}").strip()
    assert not git.has_commit(tree_sha)


@pytest.mark.parametrize(
    "rev", ["no-such-branch", "HEAD~5", "0123456789abcdef0123456789abcdef01234567", "--all"]
)
def test_unknown_revision_raises_repo_error(repo, rev):
    build_tiny(repo)
    git = GitRepo.open(repo.path)
    with pytest.raises(RepoError) as caught:
        git.resolve(rev)
    assert repr(rev) in caught.value.message
    assert caught.value.hint


def test_shallow_clone_is_reported_and_missing_history_explained(repo, tmp_path):
    for n in range(4):
        repo.write("f.txt", f"{n}\n")
        repo.commit(f"c{n}")
    repo.git("clone", "-q", "--depth", "2", f"file://{repo.path}", str(tmp_path / "shallow"))
    git = GitRepo.open(tmp_path / "shallow")
    assert git.is_shallow
    head = git.head_commit() or ""
    with pytest.raises(RepoError) as caught:
        git.resolve("HEAD~3")
    assert "shallow" in (caught.value.hint or "")
    commits = list(git.iter_commits(head, max_commits=10))
    assert [c.sha for c in commits] == [repo.head(), git.resolve("HEAD~1")]
    boundary = commits[-1]
    assert boundary.shallow_boundary
    assert boundary.changes == []
    assert commits[0].changes == [("M", "f.txt", "f.txt")]


# -- trees and blobs --------------------------------------------------------------------------


def ls_tree(builder, rev: str = "HEAD") -> list[TreeEntry]:
    """The git CLI's view of a tree, as TreeEntry records (the oracle)."""
    out = builder.git("ls-tree", "-r", "-l", "-z", rev)
    entries = []
    for record in out.split("\0"):
        if not record:
            continue
        meta, path = record.split("\t", 1)
        mode, kind, sha, size = meta.split()
        entries.append(TreeEntry(path, sha, int(mode, 8), 0 if size == "-" else int(size)))
    return sorted(entries, key=lambda e: e.path)


def test_tree_entries_cover_every_kind_of_entry(make_repo):
    library = make_repo("library")
    library.write("lib.py", "x = 1\n")
    library_sha = library.commit("lib")
    repo = make_repo("app")
    repo.write("src/pkg/deep/module.py", "def f():\n    return 1\n")
    repo.write("src/pkg/__init__.py", "")
    repo.write("bin/run.sh", "#!/bin/sh\necho run\n")
    repo.chmod("bin/run.sh", 0o755)
    repo.symlink("link-to-module", "src/pkg/deep/module.py")
    repo.symlink("dangling", "../../outside/the/repo")
    repo.write("docs/naïve café.md", "ünïcödé\n")
    repo.write("with space/file name.txt", "spaces\n")
    repo.write("data/blob.bin", bytes(range(256)) * 4)
    repo.add_gitlink("vendor/library", library_sha)
    head = repo.commit("everything")
    entries = GitRepo.open(repo.path).tree_entries(head)
    assert entries == ls_tree(repo)
    by_path = {e.path: e for e in entries}
    assert by_path["bin/run.sh"].mode == 0o100755
    assert by_path["src/pkg/__init__.py"].mode == 0o100644
    assert by_path["src/pkg/__init__.py"].size == 0
    assert by_path["link-to-module"] == TreeEntry(
        "link-to-module", by_path["link-to-module"].blob_id, 0o120000, len("src/pkg/deep/module.py")
    )
    assert by_path["dangling"].size == len("../../outside/the/repo")
    assert by_path["docs/naïve café.md"].size == len("ünïcödé\n".encode())
    assert by_path["data/blob.bin"].size == 1024
    assert by_path["vendor/library"] == TreeEntry("vendor/library", library_sha, 0o160000, 0)
    assert ".gitmodules" in by_path
    assert [e.path for e in entries] == sorted(by_path)


def test_tree_entries_decode_non_utf8_paths_with_surrogateescape(repo):
    raw_name = b"latin1-\xe9t\xe9.txt"
    (repo.path / os.fsdecode(raw_name)).write_bytes(b"bytes\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "latin-1 name")
    git = GitRepo.open(repo.path)
    [entry] = git.tree_entries(git.resolve("HEAD"))
    assert entry.path.encode("utf-8", "surrogateescape") == raw_name
    assert git.read_blob(entry.blob_id) == b"bytes\n"


def test_read_blob_returns_raw_bytes_without_filters(repo):
    repo.write(".gitattributes", "*.txt text eol=crlf\n*.txt filter=boom\n")
    repo.write("a.txt", "one\ntwo\n")
    repo.write("b.dat", b"\x00\x01\r\n\xff")
    head = repo.commit("attrs")
    git = GitRepo.open(repo.path)
    blobs = {e.path: e.blob_id for e in git.tree_entries(head)}
    assert git.read_blob(blobs["a.txt"]) == b"one\ntwo\n"
    assert git.read_blob(blobs["b.dat"]) == b"\x00\x01\r\n\xff"
    with pytest.raises(RepoError, match="not found"):
        git.read_blob("1" * 40)
    tree_sha = repo.git("rev-parse", "HEAD^{tree}").strip()
    with pytest.raises(RepoError, match="not a blob"):
        git.read_blob(tree_sha)


def test_a_blob_is_read_as_git_reads_it_without_hashing_it_again(repo):
    """An object whose bytes do not hash to its id (a loose object file swapped for another's) is
    read as ``git cat-file`` reads it: libgit2's strict verification, which re-hashed every read,
    is off once a repository opens (``configure_object_reads``)."""
    import pygit2

    from knowing_pr.git.repo import configure_object_reads

    repo.write("a.txt", "one\n")
    repo.write("b.txt", "two\n")
    head = repo.commit("two files")
    blob_a, blob_b = (repo.git("rev-parse", f"{head}:{name}").strip() for name in ("a.txt", "b.txt"))
    loose = {blob: repo.path / ".git" / "objects" / blob[:2] / blob[2:] for blob in (blob_a, blob_b)}
    loose[blob_a].chmod(0o644)
    loose[blob_a].write_bytes(loose[blob_b].read_bytes())
    assert repo.git("cat-file", "blob", blob_a) == "two\n"  # git does not check the id on a read
    # the setting is the process's: put libgit2's default back, so only this open can change it
    pygit2.settings.enable_strict_hash_verification(True)
    configure_object_reads.cache_clear()
    with pytest.raises(pygit2.GitError, match="hash mismatch"):
        pygit2.Repository(str(repo.path))[blob_a].read_raw()
    git = GitRepo.open(repo.path)
    assert git.read_blob(blob_a) == b"two\n"


# -- diffs ------------------------------------------------------------------------------------


def test_diff_trees_add_modify_delete_rename_typechange(repo):
    repo.write("keep.py", TEN_LINES)
    repo.write("edit.py", "a = 1\n")
    repo.write("gone.py", "bye\n")
    repo.write("old/name.py", TEN_LINES + "unique content for the rename\n")
    repo.write("becomes_link", "plain file\n")
    base = repo.commit("base")
    repo.write("edit.py", "a = 2\n")
    repo.delete("gone.py")
    repo.write("new.py", "fresh\n")
    repo.rename("old/name.py", "new/name.py")
    repo.delete("becomes_link")
    repo.symlink("becomes_link", "keep.py")
    head = repo.commit("changes")
    git = GitRepo.open(repo.path)
    changes = sorted(git.diff_trees(base, head), key=lambda c: c.new_path or c.old_path or "")
    blob = {e.path: e.blob_id for e in git.tree_entries(head)}
    old_blob = {e.path: e.blob_id for e in git.tree_entries(base)}
    assert changes == [
        FileChange(
            "T", "becomes_link", "becomes_link", old_blob["becomes_link"], blob["becomes_link"], 0o120000
        ),
        FileChange("M", "edit.py", "edit.py", old_blob["edit.py"], blob["edit.py"], 0o100644),
        FileChange("D", "gone.py", None, old_blob["gone.py"], None, None),
        FileChange("A", None, "new.py", None, blob["new.py"], 0o100644),
        FileChange("R", "old/name.py", "new/name.py", old_blob["old/name.py"], blob["new/name.py"], 0o100644),
    ]


def test_diff_trees_from_the_empty_tree_lists_every_file(repo):
    repo.write("a.py", "a\n")
    repo.write("pkg/b.py", "b\n")
    head = repo.commit()
    changes = GitRepo.open(repo.path).diff_trees(None, head)
    assert [(c.status, c.old_path, c.new_path) for c in changes] == [
        ("A", None, "a.py"),
        ("A", None, "pkg/b.py"),
    ]


def test_diff_trees_of_identical_commits_is_empty(repo):
    head = build_tiny(repo)[-1]
    assert GitRepo.open(repo.path).diff_trees(head, head) == []


def numbered(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def test_diff_hunks_line_ranges(repo):
    original = [f"line {n}" for n in range(1, 21)]
    repo.write("middle.py", numbered(original))
    repo.write("append.py", numbered(original))
    repo.write("shrink.py", numbered(original))
    repo.write("moved/before.py", numbered(original + ["a distinctive tail that keeps the rename similar"]))
    repo.write("image.png", b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(200))
    base = repo.commit("base")
    edited = list(original)
    edited[9] = "line 10 edited"
    edited[10] = "line 11 edited"
    repo.write("middle.py", numbered(edited))
    repo.write("append.py", numbered([*original, "extra 1", "extra 2"]))
    repo.write("shrink.py", numbered(original[:4] + original[7:]))
    repo.delete("moved/before.py")
    renamed = list(original)
    renamed[2] = "line 3 edited"
    renamed.insert(15, "inserted after line 15")
    repo.write("moved/after.py", numbered(renamed + ["a distinctive tail that keeps the rename similar"]))
    repo.write("image.png", b"\x89PNG\r\n\x1a\n\x00\x01" + bytes(200))
    head = repo.commit("edits")
    diffs = {d.new_path or d.old_path: d for d in GitRepo.open(repo.path).diff_hunks(base, head)}
    assert diffs["middle.py"] == FileDiff("M", "middle.py", "middle.py", [(10, 11)], [(10, 11)])
    assert diffs["append.py"] == FileDiff("M", "append.py", "append.py", [(21, 22)], [])
    assert diffs["shrink.py"] == FileDiff("M", "shrink.py", "shrink.py", [], [(5, 7)])
    assert diffs["moved/after.py"] == FileDiff(
        "R", "moved/before.py", "moved/after.py", [(3, 3), (16, 16)], [(3, 3)]
    )
    assert diffs["image.png"] == FileDiff("M", "image.png", "image.png", [], [])
    assert set(diffs) == {"middle.py", "append.py", "shrink.py", "moved/after.py", "image.png"}
    # the gap the deletion left, after line 4 of the head, and the base lines it took
    assert (diffs["shrink.py"].deleted_at, diffs["shrink.py"].deleted_ranges) == ([4], [(5, 7)])


def test_a_deletion_of_blank_lines_alone_leaves_no_gap(repo):
    repo.write("a.py", "x = 1\n\n\n\ny = 2\nz = 3\n")
    base = repo.commit("base")
    repo.write("a.py", "x = 1\n\ny = 2\n")
    head = repo.commit("two blank lines and z gone")
    [diff] = GitRepo.open(repo.path).diff_hunks(base, head)
    assert diff.removed == [(3, 4), (6, 6)]
    assert (diff.deleted_at, diff.deleted_ranges) == ([3], [(6, 6)])


def test_diff_hunks_added_and_deleted_files(repo):
    repo.write("old.py", "a\nb\nc\n")
    base = repo.commit()
    repo.delete("old.py")
    repo.write("brand_new.py", "x\ny\n")
    repo.write("empty.py", "")
    head = repo.commit()
    diffs = sorted(
        GitRepo.open(repo.path).diff_hunks(base, head), key=lambda d: d.new_path or d.old_path or ""
    )
    assert diffs == [
        FileDiff("A", None, "brand_new.py", [(1, 2)], []),
        FileDiff("A", None, "empty.py", [], []),
        FileDiff("D", "old.py", None, [], [(1, 3)]),
    ]


# -- bases ------------------------------------------------------------------------------------


def branchy_repo(builder) -> dict[str, str]:
    """main: m1 - m2 - m3; feature from m1: f1 - f2."""
    shas = {}
    for name in ("m1", "m2"):
        builder.write("main.txt", name + "\n")
        shas[name] = builder.commit(name)
    builder.branch("feature", at=shas["m1"])
    builder.write("main.txt", "m3\n")
    shas["m3"] = builder.commit("m3")
    builder.checkout("feature")
    for name in ("f1", "f2"):
        builder.write("feature.txt", name + "\n")
        shas[name] = builder.commit(name)
    return shas


def test_default_base_uses_the_remote_tracking_default_branch(repo):
    shas = branchy_repo(repo)
    repo.git("update-ref", "refs/remotes/origin/main", shas["m2"])
    git = GitRepo.open(repo.path)
    assert git.default_base(shas["f2"]) == shas["m1"]
    assert git.merge_base(shas["f2"], shas["m3"]) == shas["m1"]
    assert git.is_ancestor(shas["m1"], shas["f2"])
    assert not git.is_ancestor(shas["m2"], shas["f2"])


def test_default_base_follows_origin_head(repo):
    shas = branchy_repo(repo)
    repo.branch("trunk-base", at=shas["f1"])
    repo.git("update-ref", "refs/remotes/origin/trunk", shas["f1"])
    repo.git("update-ref", "refs/remotes/origin/main", shas["m2"])
    repo.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
    git = GitRepo.open(repo.path)
    assert git.default_base(shas["f2"]) == shas["f1"]


def test_default_base_falls_back_to_local_main_then_first_parent(repo):
    shas = branchy_repo(repo)
    git = GitRepo.open(repo.path)
    assert git.default_base(shas["f2"]) == shas["m1"]  # local main, head not on it
    assert git.default_base(shas["m3"]) == shas["m2"]  # head is on main: first parent
    assert git.default_base(shas["m1"]) is None  # root commit


def test_merge_base_of_unrelated_histories_is_none(repo):
    repo.write("a.txt", "a\n")
    first = repo.commit()
    repo.git("checkout", "-q", "--orphan", "other")
    repo.git("rm", "-q", "-rf", ".")
    repo.write("b.txt", "b\n")
    repo.git("add", "b.txt")
    repo.git("commit", "-q", "-m", "orphan")
    git = GitRepo.open(repo.path)
    orphan = git.resolve("other")
    assert git.merge_base(first, orphan) is None
    assert git.default_base(orphan) is None  # unrelated to main and a root commit


# -- history ----------------------------------------------------------------------------------


def test_iter_commits_walks_all_parents_newest_first(repo):
    shas = branchy_repo(repo)
    repo.checkout("main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    merge = repo.head()
    git = GitRepo.open(repo.path)
    commits = list(git.iter_commits(merge, max_commits=100))
    order = [c.sha for c in commits]
    assert order[0] == merge
    assert set(order) == {merge, *shas.values()}
    for index, commit in enumerate(commits):  # topological: children before parents
        assert all(order.index(p) > index for p in commit.parents)
    first = commits[0]
    assert first.is_merge
    assert first.parents == [shas["m3"], shas["f2"]]
    assert first.changes == [("A", None, "feature.txt")]  # against the first parent
    assert next(c for c in commits if c.sha == shas["m1"]).changes == [("A", None, "main.txt")]
    no_merge_diffs = list(git.iter_commits(merge, max_commits=100, merge_changes=False))
    assert no_merge_diffs[0].changes == []
    assert [c.sha for c in git.iter_commits(merge, max_commits=2)] == order[:2]


def test_iter_commits_stops_at_and_excludes_ancestors(repo):
    shas = branchy_repo(repo)
    git = GitRepo.open(repo.path)
    walked = [c.sha for c in git.iter_commits(shas["f2"], stop_at=[shas["m1"]], max_commits=100)]
    assert walked == [shas["f2"], shas["f1"]]
    walked = [c.sha for c in git.iter_commits(shas["m3"], stop_at=[shas["f2"], "f" * 40], max_commits=100)]
    assert walked == [shas["m3"], shas["m2"]]


def test_iter_commits_detects_renames_only_with_adds_and_deletes(repo):
    repo.write("a.py", TEN_LINES)
    root = repo.commit()
    repo.git("mv", "a.py", "b.py")
    repo.git("commit", "-q", "-m", "git mv")
    renamed = repo.git("rev-parse", "HEAD").strip()
    repo.write("b.py", TEN_LINES + "more\n")
    edit = repo.commit()
    git = GitRepo.open(repo.path)
    infos = {c.sha: c for c in git.iter_commits(edit, max_commits=10)}
    assert infos[root] == CommitInfo(root, 1_700_000_000, [], [("A", None, "a.py")], subject="change")
    assert infos[renamed].changes == [("R", "a.py", "b.py")]
    assert infos[edit].changes == [("M", "b.py", "b.py")]


def test_reads_never_touch_index_refs_or_work_tree(repo):
    shas = branchy_repo(repo)
    repo.git("update-ref", "refs/remotes/origin/main", shas["m2"])
    git_dir = repo.path / ".git"

    def snapshot() -> dict[str, tuple[int, int]]:
        return {
            str(p.relative_to(repo.path)): (p.stat().st_mtime_ns, p.stat().st_size)
            for p in repo.path.rglob("*")
            if p.is_file()
        }

    before = snapshot()
    git = GitRepo.open(repo.path)
    head = git.head_commit() or ""
    git.tree_entries(head)
    git.diff_trees(shas["m1"], head)
    git.diff_hunks(shas["m1"], head)
    git.default_base(head)
    list(git.iter_commits(head, max_commits=10))
    assert snapshot() == before
    assert not (git_dir / "index.lock").exists()


# -- the package's surface ----------------------------------------------------------------------


def test_public_surface_is_the_records_and_git_repo():
    import knowing_pr.git as git_package

    assert sorted(git_package.__all__) == sorted(
        ["CommitInfo", "FileChange", "FileDiff", "GitRepo", "LineRange", "TreeEntry", "open_repo"]
        + ["MODE_BLOB", "MODE_EXECUTABLE", "MODE_GITLINK", "MODE_SYMLINK", "MODE_TREE", "is_utf8"]
    )
    assert all(getattr(git_package, name) is not None for name in git_package.__all__)


def test_pygit2_is_imported_only_inside_the_git_package():
    package = Path(__file__).resolve().parents[1] / "knowing_pr"
    importers = {
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if any(
            line.lstrip().startswith(("import pygit2", "from pygit2"))
            for line in path.read_text(encoding="utf-8").splitlines()
        )
    }
    assert importers
    assert all(name.startswith("git/") for name in importers), sorted(importers)
