"""A workspace + the base and head revisions → those commits present locally (shallow checkouts).

``actions/checkout`` fetches one commit by default; the pack needs both ends of the change,
so missing ones are fetched by id, and the clone is unshallowed only if that is not enough.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from knowing_pr.errors import RepoError
from knowing_pr.git.revisions import revision_problem

__all__ = ["ensure_commits", "ensure_merge_base", "fetch_missing"]

log = logging.getLogger("knowing_pr.action")


def ensure_commits(workspace: Path, revisions: Sequence[str], *, depth: int, env: Mapping[str, str]) -> None:
    """Fetch (then unshallow) until every revision is a local commit, or raise ``RepoError``."""
    git_env = {**env, "GIT_TERMINAL_PROMPT": "0"}
    missing = sorted(fetch_missing(workspace, revisions, depth=depth, env=env), key=list(revisions).index)
    if missing and _git(workspace, ["rev-parse", "--is-shallow-repository"], git_env).strip() == "true":
        log.info("deepening the shallow checkout")
        _git(workspace, ["fetch", "--no-tags", "--unshallow", "origin"], git_env)
        missing = [r for r in missing if not _has_commit(workspace, r, git_env)]
    if missing:
        raise RepoError(
            f"commit {missing[0][:40]} is not in the checkout and could not be fetched",
            hint="set `fetch-depth: 0` on actions/checkout so the base and head commits are present",
        )


def fetch_missing(workspace: Path, shas: Sequence[str], *, depth: int, env: Mapping[str, str]) -> set[str]:
    """Fetch the commits the checkout lacks (once, never unshallowing; ``depth`` commits deep only
    in a shallow checkout: a depth would make a full clone shallow); those still missing. Each
    revision is checked before it meets git's command line."""
    git_env = {**env, "GIT_TERMINAL_PROMPT": "0"}
    _refuse_options(shas)
    missing = [sha for sha in shas if not _has_commit(workspace, sha, git_env)]
    if missing:
        log.info("fetching %d commit(s) missing from the checkout", len(missing))
        shallow = _git(workspace, ["rev-parse", "--is-shallow-repository"], git_env).strip() == "true"
        deep = [f"--depth={depth}"] if shallow else []
        _git(workspace, ["fetch", "--no-tags", *deep, "--end-of-options", "origin", *missing], git_env)
    return {sha for sha in missing if not _has_commit(workspace, sha, git_env)}


def ensure_merge_base(
    workspace: Path, base: str, head: str, *, deepen: int, rounds: int, env: Mapping[str, str]
) -> bool:
    """In a shallow checkout, deepen until base and head share an ancestor (the pack's change
    starts at their merge base), then unshallow as the last resort. False when none is found
    (unrelated histories): the pack then compares with the base itself."""
    git_env = {**env, "GIT_TERMINAL_PROMPT": "0"}
    _refuse_options([base, head])
    for attempt in range(rounds + 1):
        if _merge_base_found(workspace, base, head, git_env):
            return True
        if _git(workspace, ["rev-parse", "--is-shallow-repository"], git_env).strip() != "true":
            return False
        if attempt < rounds:
            log.info("deepening the checkout by %d commits to find where the change starts", deepen)
            _git(
                workspace,
                ["fetch", "--no-tags", f"--deepen={deepen}", "--end-of-options", "origin", base, head],
                git_env,
            )
        else:
            log.info("unshallowing the checkout to find where the change starts")
            _git(workspace, ["fetch", "--no-tags", "--unshallow", "origin"], git_env)
    return _merge_base_found(workspace, base, head, git_env)


def _refuse_options(revisions: Sequence[str]) -> None:
    """Every revision is checked again here, where it meets git's command line."""
    for revision in revisions:
        problem = revision_problem(revision)
        if problem is not None:
            raise RepoError(f"not a commit or ref name: {str(revision)[:40]!r} ({problem})")


def _merge_base_found(workspace: Path, base: str, head: str, env: Mapping[str, str]) -> bool:
    return bool(_git(workspace, ["merge-base", "--end-of-options", base, head], env).strip())


def _has_commit(workspace: Path, revision: str, env: Mapping[str, str]) -> bool:
    result = subprocess.run(
        ["git", "-C", str(workspace), "cat-file", "-e", "--end-of-options", f"{revision}^{{commit}}"],
        env=dict(env),
        capture_output=True,
        check=False,
        timeout=60,
    )
    return result.returncode == 0


def _git(workspace: Path, args: list[str], env: Mapping[str, str]) -> str:
    """Run git; a failure is logged at debug level and yields "" (the caller re-checks)."""
    try:
        result = subprocess.run(
            ["git", "-C", str(workspace), *args],
            env=dict(env),
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.debug("git %s failed: %s", args[0], exc)
        return ""
    if result.returncode != 0:
        log.debug("git %s exited %d: %s", args[0], result.returncode, result.stderr.strip()[:500])
        return ""
    return result.stdout
