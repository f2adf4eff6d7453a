"""Shared fixtures: real git repositories built in ``tmp_path`` with deterministic commit ids.

``make_repo`` is a factory; call it once per repository a test needs::

    def test_something(make_repo):
        builder = make_repo()                     # tmp_path/repo, branch "main", empty
        builder.write("src/a.py", "x = 1\\n")
        first = builder.commit("add a")           # 40-hex sha, same on every run
        builder.branch("feature")
        builder.checkout("feature")
        builder.write("src/a.py", "x = 2\\n")
        builder.delete("old.txt")
        builder.rename("b.py", "lib/b.py")
        builder.symlink("link", "src/a.py")
        second = builder.commit("edit")
        builder.git("update-ref", "refs/remotes/origin/main", first)   # the real git CLI
        other = make_repo("fork")                 # a second repository in tmp_path/fork

``RepoBuilder.commit`` stages every change of the work tree (adds, edits, deletions, symlinks;
or only ``paths=``) through pygit2's index and commits on the current branch (or detached
HEAD) with a fixed signature ("Knowing Tester <tester@example.com>") at a time that starts at
1,700,000,000 and grows by 60 s per commit, so commit ids are identical on every run and
on every machine. ``RepoBuilder.git`` runs the ``git`` CLI with a scrubbed environment
(no outside ``GIT_*`` variables, no system or global config, the same fixed identity and the
builder's clock as author and committer date) and returns stdout; it raises
``GitCommandError`` with stderr when git fails. ``add_gitlink`` records a submodule gitlink
(mode 160000) in the index, the way ``git submodule add`` does, without cloning anything
(``delete`` removes it again); ``chmod`` sets file modes (0o755 commits an executable);
``repo`` is the underlying ``pygit2.Repository`` for anything else.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileStatus

AUTHOR_NAME = "Knowing Tester"
AUTHOR_EMAIL = "tester@example.com"
FIRST_COMMIT_TIME = 1_700_000_000
COMMIT_TIME_STEP_S = 60
GITLINK_MODE = 0o160000


class GitCommandError(RuntimeError):
    """The git CLI exited with a non-zero status; the message carries its stderr."""


class RepoBuilder:
    """Builds one real repository: edit the work tree, then commit through pygit2."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.repo = pygit2.init_repository(str(path), initial_head="main")
        self.repo.config["user.name"] = AUTHOR_NAME
        self.repo.config["user.email"] = AUTHOR_EMAIL
        self._commits_made = 0
        self._gitlinks: dict[str, str] = {}
        self._removed_gitlinks: set[str] = set()

    # -- work tree ----------------------------------------------------------------------------

    def _work_path(self, path: str) -> Path:
        target = self.path / path
        if ".git" in Path(path).parts:
            raise ValueError(f"refusing to touch {path!r} inside .git")
        return target

    def write(self, path: str, content: str | bytes) -> Path:
        """Write a file of the work tree (parents created); str is written as UTF-8 as is."""
        target = self._work_path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        data = content.encode("utf-8") if isinstance(content, str) else content
        target.write_bytes(data)
        return target

    def delete(self, path: str) -> None:
        """Remove a file, symlink, directory or gitlink from the work tree (staged at commit)."""
        target = self._work_path(path)
        if path in self._gitlinks:
            del self._gitlinks[path]
            self._removed_gitlinks.add(path)
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink()

    def rename(self, old: str, new: str) -> None:
        destination = self._work_path(new)
        destination.parent.mkdir(parents=True, exist_ok=True)
        self._work_path(old).rename(destination)

    def symlink(self, path: str, target: str) -> None:
        """Create a symlink whose link text is ``target`` (need not exist)."""
        link = self._work_path(path)
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() or link.exists():
            link.unlink()
        os.symlink(target, link)

    def chmod(self, path: str, mode: int) -> None:
        self._work_path(path).chmod(mode)

    def add_gitlink(self, path: str, commit_sha: str, url: str | None = None) -> None:
        """Stage a submodule gitlink at ``path`` pointing to ``commit_sha`` (+ a .gitmodules entry)."""
        self._gitlinks[path] = commit_sha
        (self.path / path).mkdir(parents=True, exist_ok=True)
        section = f'[submodule "{path}"]\n\tpath = {path}\n\turl = {url or "https://example.com/" + path}\n'
        gitmodules = self.path / ".gitmodules"
        existing = gitmodules.read_text() if gitmodules.exists() else ""
        if section not in existing:
            gitmodules.write_text(existing + section)

    # -- commits ------------------------------------------------------------------------------

    def _next_time(self) -> int:
        when = FIRST_COMMIT_TIME + COMMIT_TIME_STEP_S * self._commits_made
        self._commits_made += 1
        return when

    def _stage(self, paths: Iterable[str] | None) -> None:
        index = self.repo.index
        index.read()
        if paths is None:
            # add_all stages deletions too (like `git add -A`); the loop is a safety net
            index.add_all()
            for path, flags in self.repo.status().items():
                if flags & FileStatus.WT_DELETED and path not in self._gitlinks and path in index:
                    index.remove(path)
        else:
            for path in paths:
                target = self.path / path
                if target.exists() or target.is_symlink():
                    index.add(path)
                elif path in index:
                    index.remove(path)
        for path, sha in self._gitlinks.items():
            index.add(pygit2.IndexEntry(path, pygit2.Oid(hex=sha), GITLINK_MODE))
        for path in self._removed_gitlinks:
            if path in index:
                index.remove(path)
        self._removed_gitlinks.clear()
        index.write()

    def commit(
        self,
        message: str = "change",
        *,
        paths: Iterable[str] | None = None,
        author: tuple[str, str] | None = None,
    ) -> str:
        """Stage the work tree's changes (all, or ``paths``) and commit as ``author`` (name,
        e-mail; default the fixed tester); returns the new sha."""
        self._stage(paths)
        tree = self.repo.index.write_tree()
        name, email = author or (AUTHOR_NAME, AUTHOR_EMAIL)
        signature = pygit2.Signature(name, email, self._next_time(), 0)
        parents = [] if self.repo.head_is_unborn else [self.repo.head.target]
        oid = self.repo.create_commit("HEAD", signature, signature, message, tree, parents)
        return str(oid)

    def branch(self, name: str, at: str | None = None) -> None:
        """Create branch ``name`` at ``at`` (a sha or revision; default HEAD) without switching."""
        commit = self.repo.revparse_single(at or "HEAD").peel(pygit2.Commit)
        self.repo.create_branch(name, commit)

    def checkout(self, name: str) -> None:
        """Switch HEAD and the work tree to branch ``name`` (or detach at a sha)."""
        ref_name = f"refs/heads/{name}"
        if ref_name in self.repo.references:
            self.repo.checkout(ref_name)
            return
        commit = self.repo.revparse_single(name).peel(pygit2.Commit)
        self.repo.checkout_tree(commit.tree)
        self.repo.set_head(commit.id)

    def head(self) -> str:
        return str(self.repo.head.target)

    # -- the real git CLI ---------------------------------------------------------------------

    def git_env(self) -> dict[str, str]:
        """The environment ``git`` runs with: no outside GIT_*, fixed identity and date."""
        env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        date = f"@{FIRST_COMMIT_TIME + COMMIT_TIME_STEP_S * self._commits_made} +0000"
        env.update(
            GIT_AUTHOR_NAME=AUTHOR_NAME,
            GIT_AUTHOR_EMAIL=AUTHOR_EMAIL,
            GIT_COMMITTER_NAME=AUTHOR_NAME,
            GIT_COMMITTER_EMAIL=AUTHOR_EMAIL,
            GIT_AUTHOR_DATE=date,
            GIT_COMMITTER_DATE=date,
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_TERMINAL_PROMPT="0",
            GIT_OPTIONAL_LOCKS="0",
            LC_ALL="C",
        )
        return env

    def git(self, *args: str) -> str:
        """Run ``git <args>`` in the work tree; returns stdout, raises GitCommandError on failure.

        Each call uses (and advances) the builder's clock, so commits made by git are
        deterministic too.
        """
        env = self.git_env()
        self._commits_made += 1
        result = subprocess.run(
            ["git", *args], cwd=self.path, env=env, capture_output=True, text=True, check=False
        )
        if result.returncode != 0:
            output = f"{result.stderr.strip()}\n{result.stdout.strip()}".strip()
            raise GitCommandError(f"git {' '.join(args)} failed ({result.returncode}): {output}")
        return result.stdout


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., RepoBuilder]:
    """Factory fixture: ``make_repo(name="repo")`` → a new empty ``RepoBuilder`` in tmp_path/name."""

    def build(name: str = "repo") -> RepoBuilder:
        path = tmp_path / name
        if path.exists():
            raise ValueError(f"repository {name!r} already exists in this test")
        path.mkdir(parents=True)
        return RepoBuilder(path)

    return build


@pytest.fixture
def repo(make_repo: Callable[..., RepoBuilder]) -> RepoBuilder:
    """One empty repository on branch main."""
    return make_repo()


def assert_budget_holds(pack, fmt: str) -> None:
    """The contract of a pack's size (README, "The budget governs code"): ``tokens_used`` is its
    own text's tokens; it is within ``token_budget`` unless the lists that JSON and XML keep whole
    pass it, and then the pack holds nothing but the best changed symbol, in a line."""
    import math

    from knowing_pr.render import render_pack

    text = render_pack(pack, fmt)
    assert pack.tokens_used == math.ceil(len(text) / 4), fmt
    if pack.tokens_used > pack.token_budget:
        assert fmt != "markdown", "a markdown pack counts what it cannot show"
        assert [(s.reason, s.brief) for s in pack.symbols] == [("changed", True)], (fmt, pack.tokens_used)
