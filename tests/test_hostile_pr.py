"""Hostile pull requests, commenters, hosts and inputs against the Action and ``replay --pr``
(issue 25): real repositories in tmp_path, the stand-in GitHub API, a TLS listener on 127.0.0.1.
Each test is one attack that worked on 99a3a56."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_github import FakeGitHub
from test_action import PR, TOKEN, FakeBuilder, Run

from knowing_pr.action.checkout import ensure_commits
from knowing_pr.errors import RepoError


@pytest.fixture
def run(tmp_path: Path, repo: Any) -> Iterator[Run]:
    """One prepared Action run (test_action.Run) against the stand-in API, an Actions token."""
    with FakeGitHub(token=TOKEN, user_login=None) as server:
        yield Run(tmp_path, repo, server)


# -- item 7: a revision from outside never reaches git as an option -------------------------------


def _dispatch_event(run: Run, base: str, head: str) -> None:
    event = {"inputs": {"pr": str(PR), "base": base, "head": head}}
    run.event_path.write_text(json.dumps(event), encoding="utf-8")


def test_a_dispatch_base_that_is_a_git_option_runs_nothing(
    run: Run, repo: Any, tmp_path: Path, make_repo: Any
) -> None:
    origin = make_repo("origin")
    origin.write("README", "origin\n")
    origin.commit("origin")
    repo.git("remote", "add", "origin", str(origin.path))
    ran = tmp_path / "upload-pack-ran"
    _dispatch_event(run, f"--upload-pack=touch {ran};", run.head)
    builder = FakeBuilder()

    status = run(builder, GITHUB_EVENT_NAME="workflow_dispatch", KNOWING_PR_FAIL_ON_ERROR="true")

    assert status == 1
    assert not ran.exists()
    assert builder.calls == []
    assert "workflow_dispatch input 'base' is not a commit or ref name" in run.out.getvalue()


def test_git_command_lines_end_their_options_before_a_revision(run: Run, tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    try:
        ensure_commits(
            Path(run.env["GITHUB_WORKSPACE"]),
            [f"--upload-pack=touch {ran};"],
            depth=1,
            env={"PATH": os.environ.get("PATH", "")},
        )
    except RepoError as exc:
        assert "not a commit or ref name" in exc.message
    else:  # pragma: no cover - the revision must be refused
        raise AssertionError("an option was accepted as a revision")
    assert not ran.exists()
