"""F3 disk full (a real tiny tmpfs), F4 concurrent writers and a long reader, F6 read-only
directories and a missing HOME → clear errors, hooks exit 0, nothing locked surfaces, the
store stays consistent and the next run succeeds.

Read-only mounts and the tmpfs live in a private user + mount namespace (``unshare -rm``),
so the tests run unprivileged and leave nothing mounted; where namespaces are not
available they are skipped with that reason.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from crash_support import build_history, reset_store
from reliability_support import Oracle, cli_command, cli_env, run_cli, sidecar_files

from knowing_pr.config import Settings
from knowing_pr.git import GitRepo
from knowing_pr.index import index_commit

HERE = Path(__file__).resolve().parent


def _namespaces_work() -> bool:
    try:
        probe = subprocess.run(
            [
                "unshare",
                "-rm",
                "sh",
                "-c",
                "mount -t tmpfs -o size=64k tmpfs /mnt 2>/dev/null || mount -t tmpfs -o size=64k tmpfs /tmp",
            ],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


needs_namespaces = pytest.mark.skipif(
    not _namespaces_work(), reason="unshare -rm (user+mount namespace) unavailable"
)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("faults")
    repo = root / "repo"
    c1, c2 = build_history(repo, 40)
    template = root / "at-c1.sqlite"
    index_commit(GitRepo.open(str(repo)), Settings(), rev=c1, db_path=template)
    return {"repo": repo, "c1": c1, "c2": c2, "template": template, "oracle": Oracle(repo, root / "clean")}


# -- F3 -----------------------------------------------------------------------------------


@pytest.mark.slow
@needs_namespaces
def test_disk_full_fails_cleanly_keeps_the_store_and_recovers(
    history: dict[str, object], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    subprocess.run(
        [
            "unshare",
            "-rm",
            sys.executable,
            str(HERE / "diskfull_driver.py"),
            str(history["repo"]),
            str(out),
            "--base",
            str(history["c1"]),
            "--tmpfs-kb",
            "2048",
            "--leave-kb",
            "0",
            "48",
        ],
        check=True,
        timeout=300,
    )
    oracle: Oracle = history["oracle"]  # type: ignore[assignment]
    results = json.loads((out / "result.json").read_text())
    assert len(results) == 2
    for result in results:
        kb = result["leave_kb"]
        assert result["setup"]["code"] == 0, result["setup"]
        index = result["index"]
        assert index["code"] == 1, index
        assert index["stderr"].startswith("knowing-pr: error:") and "full" in index["stderr"], index
        assert "Traceback" not in index["stderr"]
        assert result["hook"]["code"] == 0
        assert result["markers"] == []
        # the store is unchanged: still the consistent index of C1
        assert oracle.problems(out / f"full-{kb}.sqlite", (history["c1"],)) == []
        assert result["recovered"]["code"] == 0, result["recovered"]
        assert oracle.problems(out / f"recovered-{kb}.sqlite", (history["c2"],)) == []


# -- F4 -----------------------------------------------------------------------------------

READER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], timeout=30)
conn.execute("BEGIN")
n = conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
time.sleep(float(sys.argv[2]))
m = conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
conn.execute("COMMIT")
print("stable" if n == m else "changed")
"""


@pytest.mark.slow
@pytest.mark.parametrize("writers", [2, 4, 8])
def test_concurrent_writers_and_a_long_reader_never_surface_a_lock(
    history: dict[str, object], tmp_path: Path, writers: int
) -> None:
    repo: Path = history["repo"]  # type: ignore[assignment]
    db = repo / ".git" / "knowing-pr" / "index.sqlite"
    db.parent.mkdir(parents=True, exist_ok=True)
    reset_store(history["template"], db)  # type: ignore[arg-type]
    for old in db.parent.glob("hook.log*"):
        old.unlink()
    env = cli_env(KNOWING_PR_HOOK_SYNC="1")
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(db), "3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.2)
    procs = []
    for i in range(writers):
        args = ("index", "--quiet") if i % 2 == 0 else ("hook", "run", "post-commit")
        procs.append(
            subprocess.Popen(
                cli_command(*args),
                cwd=repo,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    outputs = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    reader_out, reader_err = reader.communicate(timeout=60)
    log = "".join(p.read_text() for p in db.parent.glob("hook.log*"))
    everything = "".join(o + e for _, o, e in outputs) + reader_out + reader_err + log
    assert "locked" not in everything.lower(), everything
    assert "Traceback" not in everything
    assert [code for code, _, _ in outputs] == [0] * writers, outputs
    assert reader.returncode == 0 and reader_out.strip() == "stable"  # snapshot isolation for the reader
    oracle: Oracle = history["oracle"]  # type: ignore[assignment]
    assert oracle.problems(db, (history["c2"],)) == []
    assert sidecar_files(db) == [] or sidecar_files(db) == ["index.lock"]


# -- F6 -----------------------------------------------------------------------------------


def _in_read_only(
    directory: Path, command: list[str], cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` with ``directory`` bind-mounted read-only (private namespace)."""
    d = shlex.quote(str(directory))
    script = f"mount --bind {d} {d} && mount -o remount,bind,ro {d} && exec {shlex.join(command)}"
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@needs_namespaces
@pytest.mark.parametrize("where", [".git", "store-dir"])
def test_read_only_git_or_store_dir_gives_a_clear_error_and_the_hook_exits_0(
    history: dict[str, object], where: str
) -> None:
    repo: Path = history["repo"]  # type: ignore[assignment]
    db = repo / ".git" / "knowing-pr" / "index.sqlite"
    db.parent.mkdir(parents=True, exist_ok=True)
    reset_store(history["template"], db)  # type: ignore[arg-type]
    directory = repo / ".git" if where == ".git" else db.parent
    env = cli_env(KNOWING_PR_HOOK_SYNC="1")
    index = _in_read_only(directory, cli_command("index", "--quiet"), repo, env)
    assert "Traceback" not in index.stderr
    assert index.returncode == 1, index
    assert index.stderr.startswith("knowing-pr: error:"), index.stderr
    hook = _in_read_only(directory, cli_command("hook", "run", "post-commit"), repo, env)
    assert hook.returncode == 0 and "Traceback" not in hook.stderr, hook
    # the store is untouched and the next writable run catches up
    oracle: Oracle = history["oracle"]  # type: ignore[assignment]
    assert oracle.problems(db, (history["c1"],)) == []
    assert run_cli("index", "--quiet", cwd=repo).returncode == 0
    assert oracle.problems(db, (history["c2"],)) == []


def test_missing_home_still_indexes_and_hooks_exit_0(history: dict[str, object], tmp_path: Path) -> None:
    repo: Path = history["repo"]  # type: ignore[assignment]
    db = tmp_path / "index.sqlite"
    env = cli_env()
    env.pop("HOME", None)
    result = run_cli("index", "--quiet", "--db", str(db), cwd=repo, env=env)
    assert result.returncode == 0, result.stderr
    hook = run_cli("hook", "run", "post-commit", cwd=repo, env={**env, "KNOWING_PR_HOOK_SYNC": "1"})
    assert hook.returncode == 0 and "Traceback" not in hook.stderr
    oracle: Oracle = history["oracle"]  # type: ignore[assignment]
    assert oracle.problems(db, (history["c2"],)) == []
