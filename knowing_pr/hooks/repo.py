"""Hook environment → a scrubbed environment, git run without ``subprocess``, repository state.

On the hook's start-up path: imports only ``os`` and ``contextlib`` at module level; git is
started with ``os.posix_spawnp`` (importing ``subprocess`` costs about as much CPU as the git
command itself).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from knowing_pr.gitenv import scrubbed_env

#: per-worktree directories that exist while git replays a series of commits
SEQUENCE_DIRS = ("rebase-merge", "rebase-apply", "sequencer")
#: variables that tell git which repository the hook belongs to (read, then dropped)
REPO_LOCATION_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES")


@contextmanager
def scrubbed_environ() -> Iterator[dict[str, str]]:
    """Drop ``GIT_*`` from this process's environment for the block; yields the original."""
    original = dict(os.environ)
    os.environ.clear()
    os.environ.update(scrubbed_env(original))
    try:
        yield original
    finally:
        os.environ.clear()
        os.environ.update(original)


def run_git(args: list[str], *, cwd: str | None, env: Mapping[str, str]) -> tuple[int, str]:
    """Run ``git [-C cwd] args``; returns (exit status, stdout). Never raises for a git failure.

    ``os.posix_spawnp`` and a pipe rather than ``subprocess``, whose import alone costs the
    hook about as much CPU as the git command itself.
    """
    argv = ["git", *(["-C", cwd] if cwd is not None else []), *args]
    read_end, write_end = os.pipe()
    null = os.open(os.devnull, os.O_RDWR)
    actions = [
        (os.POSIX_SPAWN_DUP2, null, 0),
        (os.POSIX_SPAWN_DUP2, write_end, 1),
        (os.POSIX_SPAWN_DUP2, null, 2),
    ]
    try:
        pid = os.posix_spawnp("git", argv, dict(env), file_actions=actions)
    except OSError:
        for fd in (read_end, write_end, null):
            os.close(fd)
        return 127, ""
    os.close(write_end)
    os.close(null)
    with open(read_end, "rb") as out:
        output = out.read()
    _, wait_status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(wait_status), output.decode("utf-8", "surrogateescape")


class RepoState:
    """Where a repository's per-worktree git dir and work tree are, and its HEAD commit."""

    __slots__ = ("git_dir", "head", "work_tree")

    def __init__(self, git_dir: str, work_tree: str, head: str | None) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.head = head


def read_repo_state(cwd: str | None, env: Mapping[str, str]) -> RepoState | None:
    """One ``git rev-parse`` for git dir, work tree and HEAD (None: no work tree here).

    git prints one value a line, unquoted: a path that holds a newline (``/srv/a\\nb/repo``)
    would split into pieces, the first of them a directory outside the repository where the
    log and the lock would go. When the output has more lines than values, each value is
    asked for alone and only git's own final newline is removed.
    """
    args = ["rev-parse", "--absolute-git-dir", "--show-toplevel", "--verify", "-q", "HEAD"]
    status, out = run_git(args, cwd=cwd, env=env)
    lines = out.split("\n")
    if lines[-1:] == [""]:
        lines.pop()
    if len(lines) < 2:
        return None
    if len(lines) > (3 if status == 0 else 2):
        return _read_repo_state_one_by_one(cwd, env)
    head = lines[2] if status == 0 and len(lines) > 2 else None  # unborn HEAD: no commit yet
    return RepoState(lines[0], lines[1], head)


def _read_one(args: list[str], cwd: str | None, env: Mapping[str, str]) -> str | None:
    status, out = run_git(args, cwd=cwd, env=env)
    value = out[:-1] if out.endswith("\n") else out
    return value if status == 0 and value else None


def _read_repo_state_one_by_one(cwd: str | None, env: Mapping[str, str]) -> RepoState | None:
    git_dir = _read_one(["rev-parse", "--absolute-git-dir"], cwd, env)
    work_tree = _read_one(["rev-parse", "--show-toplevel"], cwd, env)
    if git_dir is None or work_tree is None or not os.path.isdir(git_dir):
        return None
    head = _read_one(["rev-parse", "--verify", "-q", "HEAD"], cwd, env)
    return RepoState(git_dir, work_tree, head)


def read_head(git_dir: str, env: Mapping[str, str]) -> str | None:
    status, out = run_git(["--git-dir", git_dir, "rev-parse", "--verify", "-q", "HEAD"], cwd=None, env=env)
    return out.strip() or None if status == 0 else None


def sequence_in_progress(git_dir: str) -> bool:
    """True while a rebase, am, cherry-pick or revert series is replaying commits."""
    return any(os.path.exists(os.path.join(git_dir, name)) for name in SEQUENCE_DIRS)
