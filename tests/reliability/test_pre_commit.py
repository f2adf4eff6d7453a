"""G5 under the real pre-commit tool: the hook runs from `.pre-commit-config.yaml` at the
post-commit and post-checkout stages, the store reaches HEAD, and the user's working tree
(unstaged edits, intent-to-add files) is byte-identical afterwards with no stash left."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability_support import pre_commit_config, store_commit

from knowing_pr.config import default_db_path

pytestmark = pytest.mark.skipif(shutil.which("pre-commit") is None, reason="pre-commit is not installed")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        KNOWING_PR_HOOK_SYNC="1",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        PRE_COMMIT_HOME=str(Path(env.get("TMPDIR", "/tmp")) / f"pre-commit-home-{os.getpid()}"),
    )
    return env


def _run(repo: Path, *args: str) -> str:
    done = subprocess.run(args, cwd=repo, env=_env(), capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


def _wait_for(db: Path, commit: str) -> str | None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if store_commit(db) == commit:
            return commit
        time.sleep(0.05)
    return store_commit(db)


@pytest.mark.slow
def test_pre_commit_post_commit_and_checkout_keep_the_store_at_head(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _run(repo, "git", "init", "-q", "-b", "main")
    (repo / ".pre-commit-config.yaml").write_text(
        pre_commit_config(sys.executable, ("post-commit", "post-checkout"))
    )
    (repo / "a.py").write_text("def a():\n    return 1\n")
    _run(repo, "git", "add", ".")
    _run(repo, "git", "commit", "-q", "-m", "one")
    _run(repo, "pre-commit", "install", "--hook-type", "post-commit", "--hook-type", "post-checkout")

    # a commit with unstaged edits and an intent-to-add file around it
    (repo / "b.py").write_text("from a import a\n\n\ndef b():\n    return a()\n")
    _run(repo, "git", "add", "b.py")
    (repo / "a.py").write_text("def a():\n    return 2  # not staged\n")
    (repo / "c.py").write_text("def c():\n    return 3\n")
    _run(repo, "git", "add", "-N", "c.py")
    before = {p.name: p.read_bytes() for p in repo.glob("*.py")}
    _run(repo, "git", "commit", "-q", "-m", "two")
    head = _run(repo, "git", "rev-parse", "HEAD").strip()
    db = default_db_path(repo / ".git")
    assert _wait_for(db, head) == head
    assert {p.name: p.read_bytes() for p in repo.glob("*.py")} == before
    assert _run(repo, "git", "stash", "list").strip() == ""

    # a branch checkout through pre-commit's post-checkout stage
    _run(repo, "git", "reset", "-q", "--hard")
    _run(repo, "git", "clean", "-qfd")
    _run(repo, "git", "checkout", "-q", "-b", "side", "HEAD~1")
    side = _run(repo, "git", "rev-parse", "HEAD").strip()
    assert _wait_for(db, side) == side
