"""Installed git hooks → real git commands in temporary repositories → store at HEAD, exit 0.

Every test drives the real ``git`` CLI through the scripts ``install_hooks`` writes. The
end-to-end tests run the real index (``knowing_pr.pipeline``); ``KNOWING_PR_HOOK_SYNC=1``
makes a hook index in the foreground, and a rebase or cherry-pick series is always caught
up by a background worker, so those tests poll the store.
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from knowing_pr import config
from knowing_pr.errors import RepoError
from knowing_pr.hooks import (
    HOOK_MARKER,
    HOOK_NAMES,
    SYNC_ENV,
    WAITER_PID_NAME,
    HookParams,
    append_log,
    hook_from_pre_commit_env,
    hook_status,
    install_hooks,
    read_indexed_commit,
    render_hook_script,
    run_hook,
    store_path,
    uninstall_hooks,
)
from tests.conftest import RepoBuilder

MakeRepo = Callable[..., RepoBuilder]

needs_pipeline = pytest.mark.skipif(
    importlib.util.find_spec("knowing_pr.pipeline") is None,
    reason="knowing_pr.pipeline (the index command) is not written yet",
)

HOOK_ENTRY = (
    "import sys\ndel sys.path[0]\nfrom knowing_pr.hooks import main\nraise SystemExit(main(sys.argv[1:]))"
)


# -- helpers -------------------------------------------------------------------------------------


def seeded(make_repo: MakeRepo, name: str = "repo", commits: int = 1) -> RepoBuilder:
    builder = make_repo(name)
    for n in range(commits):
        builder.write(f"src/m{n}.py", f"def f{n}():\n    return {n}\n")
        builder.commit(f"add m{n}")
    return builder


def git_status(builder: RepoBuilder, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run git without raising: the exit status is what some tests assert."""
    return subprocess.run(
        ["git", *args], cwd=cwd or builder.path, env=builder.git_env(), capture_output=True, text=True
    )


def git_dir(builder: RepoBuilder, cwd: Path | None = None) -> Path:
    return Path(builder.git("-C", str(cwd or builder.path), "rev-parse", "--absolute-git-dir").strip())


def head(builder: RepoBuilder, cwd: Path | None = None) -> str:
    return builder.git("-C", str(cwd or builder.path), "rev-parse", "HEAD").strip()


def db_of(builder: RepoBuilder, cwd: Path | None = None) -> Path:
    return Path(store_path(git_dir(builder, cwd)))


def wait_for(condition: Callable[[], bool], timeout_s: float) -> None:
    """Poll ``condition`` until it holds, at most ``timeout_s`` (a bound no loaded machine reaches)."""
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def wait_for_store(db: Path, commit: str, timeout_s: float = 120.0) -> str | None:
    """Poll until the store reflects ``commit`` (a background worker may still be running)."""
    deadline = time.monotonic() + timeout_s
    indexed = None
    while time.monotonic() < deadline:
        try:
            indexed = read_indexed_commit(db)
        except sqlite3.DatabaseError:
            indexed = None
        if indexed == commit:
            return indexed
        time.sleep(0.1)
    return indexed


def wait_for_worker(db: Path, timeout_s: float = 120.0) -> None:
    """Poll until no worker holds the lock (so the log is complete)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and hook_lock_held(db):
        time.sleep(0.1)


def hook_lock_held(db: Path) -> bool:
    import fcntl

    lock = db.parent / "index.lock"
    if not lock.exists():
        return False
    with open(lock) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
    return False


def index_runs(db: Path) -> int:
    log = db.parent / "hook.log"
    return sum(" indexed " in line for line in log.read_text().splitlines()) if log.exists() else 0


def write_hook(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


@pytest.fixture
def sync_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SYNC_ENV, "1")


# -- install / uninstall ---------------------------------------------------------------------------


def test_install_writes_four_executable_scripts_with_marker_and_interpreter(make_repo: MakeRepo) -> None:
    builder = seeded(make_repo)
    messages = install_hooks(str(builder.path))
    hooks = builder.path / ".git" / "hooks"
    assert len(messages) == 4
    for name in HOOK_NAMES:
        text = (hooks / name).read_text()
        assert HOOK_MARKER in text
        assert f"KNOWING_PR_PYTHON={sys.executable}\n" in text
        assert os.access(hooks / name, os.X_OK)
    status = hook_status(str(builder.path))
    assert status["hooks"] == {name: {"state": "ours", "legacy": False} for name in HOOK_NAMES}
    assert status["core_hooks_path"] is None
    assert status["indexed_commit"] is None and status["fresh"] is False


def test_reinstall_is_idempotent(make_repo: MakeRepo) -> None:
    builder = seeded(make_repo)
    install_hooks(str(builder.path))
    hooks = builder.path / ".git" / "hooks"
    first = {name: (hooks / name).read_text() for name in HOOK_NAMES}
    messages = install_hooks(str(builder.path))
    assert all("already installed" in m for m in messages)
    assert {name: (hooks / name).read_text() for name in HOOK_NAMES} == first
    assert not list(hooks.glob("*.legacy"))


def test_foreign_hook_keeps_running_and_is_restored_by_uninstall(make_repo: MakeRepo, tmp_path: Path) -> None:
    builder = seeded(make_repo)
    hooks = builder.path / ".git" / "hooks"
    marker = tmp_path / "foreign-ran"
    original = f'echo "post-commit $#" >> "{marker}"\n'
    write_hook(hooks / "post-commit", original)

    messages = install_hooks(str(builder.path))
    assert any("post-commit.legacy" in m for m in messages)
    assert (hooks / "post-commit.legacy").read_text() == "#!/bin/sh\n" + original
    builder.write("src/new.py", "x = 1\n")
    builder.git("add", "src/new.py")
    builder.git("commit", "-q", "-m", "new")
    assert marker.read_text() == "post-commit 0\n"
    assert hook_status(str(builder.path))["hooks"]["post-commit"] == {"state": "ours", "legacy": True}  # type: ignore[index]

    uninstall_hooks(str(builder.path))
    assert (hooks / "post-commit").read_text() == "#!/bin/sh\n" + original
    assert not (hooks / "post-commit.legacy").exists()
    for name in ("post-merge", "post-checkout", "post-rewrite"):
        assert not (hooks / name).exists()


def test_legacy_post_rewrite_still_reads_the_rewritten_list_on_stdin(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    builder = seeded(make_repo)
    seen = tmp_path / "rewritten"
    write_hook(builder.path / ".git" / "hooks" / "post-rewrite", f'echo "$1" > "{seen}"; cat >> "{seen}"\n')
    install_hooks(str(builder.path))
    before = head(builder)
    builder.git("commit", "-q", "--amend", "-m", "amended")
    assert seen.read_text() == f"amend\n{before} {head(builder)}\n"


def test_post_checkout_keeps_the_legacy_exit_status(make_repo: MakeRepo) -> None:
    builder = seeded(make_repo)
    builder.branch("other")
    write_hook(builder.path / ".git" / "hooks" / "post-checkout", "exit 3\n")
    without_us = git_status(builder, "checkout", "-q", "other").returncode
    assert without_us != 0  # git turns a failing post-checkout into a failing checkout
    git_status(builder, "checkout", "-q", "main")  # the hook fails again; the checkout happened
    install_hooks(str(builder.path))
    assert git_status(builder, "checkout", "-q", "other").returncode == without_us
    write_hook(builder.path / ".git" / "hooks" / "post-checkout.legacy", "exit 0\n")
    assert git_status(builder, "checkout", "-q", "main").returncode == 0


def test_core_hooks_path_is_refused_unless_allowed(make_repo: MakeRepo) -> None:
    builder = seeded(make_repo)
    builder.git("config", "core.hooksPath", ".husky/_")
    with pytest.raises(RepoError) as refused:
        install_hooks(str(builder.path))
    assert "core.hooksPath" in refused.value.message
    assert refused.value.hint is not None
    assert "--hooks-path-ok" in refused.value.hint
    assert 'knowing-pr hook run "$(basename "$0")" "$@" || true' in refused.value.hint
    assert not (builder.path / ".husky").exists()
    assert not (builder.path / ".git" / "hooks" / "post-commit").exists()

    install_hooks(str(builder.path), allow_hooks_path=True)
    assert HOOK_MARKER in (builder.path / ".husky" / "_" / "post-commit").read_text()
    assert hook_status(str(builder.path))["core_hooks_path"] == ".husky/_"


def test_install_refuses_to_clobber_a_legacy_file_or_a_pre_commit_script(make_repo: MakeRepo) -> None:
    builder = seeded(make_repo)
    hooks = builder.path / ".git" / "hooks"
    write_hook(hooks / "post-merge", "echo mine\n")
    write_hook(hooks / "post-merge.legacy", "echo older\n")
    with pytest.raises(RepoError, match="post-merge.legacy"):
        install_hooks(str(builder.path))
    assert not (hooks / "post-commit").exists()  # nothing written

    (hooks / "post-merge.legacy").unlink()
    write_hook(hooks / "post-checkout", "# File generated by pre-commit: https://pre-commit.com\n")
    with pytest.raises(RepoError, match="pre-commit"):
        install_hooks(str(builder.path))
    assert (hooks / "post-merge").read_text() == "#!/bin/sh\necho mine\n"


def test_install_outside_a_repository_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RepoError, match="not inside a git repository"):
        install_hooks(str(tmp_path))


def test_store_path_agrees_with_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(config.STORE_ENV, raising=False)
    assert Path(store_path(tmp_path / ".git")) == config.default_db_path(tmp_path / ".git")
    monkeypatch.setenv(config.STORE_ENV, str(tmp_path / "elsewhere.sqlite"))
    assert Path(store_path(tmp_path / ".git")) == config.default_db_path(tmp_path / ".git")


def test_pre_commit_variables_name_the_hook() -> None:
    assert hook_from_pre_commit_env({"PRE_COMMIT": "1"}) == ("post-commit", [])
    checkout = {"PRE_COMMIT_CHECKOUT_TYPE": "0", "PRE_COMMIT_FROM_REF": "a", "PRE_COMMIT_TO_REF": "b"}
    assert hook_from_pre_commit_env(checkout) == ("post-checkout", ["a", "b", "0"])
    assert hook_from_pre_commit_env({"PRE_COMMIT_REWRITE_COMMAND": "rebase"}) == ("post-rewrite", ["rebase"])
    assert hook_from_pre_commit_env({"PRE_COMMIT_IS_SQUASH_MERGE": "0"}) == ("post-merge", ["0"])


# -- exit 0 whatever happens ---------------------------------------------------------------------------


def test_file_checkout_does_nothing(make_repo: MakeRepo) -> None:
    builder = seeded(make_repo)
    install_hooks(str(builder.path))
    builder.write("src/m0.py", "changed\n")
    assert git_status(builder, "checkout", "--", "src/m0.py").returncode == 0
    assert not (builder.path / ".git" / "knowing-pr").exists()


def test_missing_interpreter_and_missing_package_still_exit_0(make_repo: MakeRepo, tmp_path: Path) -> None:
    builder = seeded(make_repo)
    builder.branch("other")
    install_hooks(str(builder.path))
    no_cli_path = os.pathsep.join(  # no knowing-pr on PATH either (another venv's included)
        p
        for p in os.environ["PATH"].split(os.pathsep)
        if p != str(Path(sys.executable).parent) and not (Path(p) / "knowing-pr").exists()
    )
    hooks = builder.path / ".git" / "hooks"
    for name in HOOK_NAMES:  # the interpreter that installed the hooks is gone
        (hooks / name).write_text(render_hook_script(str(tmp_path / "gone" / "python")))
    env = {**builder.git_env(), "PATH": no_cli_path}
    env.pop("PYTHONPATH", None)  # a checkout run with PYTHONPATH at its code would still find it
    result = subprocess.run(
        ["git", "checkout", "-q", "other"], cwd=builder.path, env=env, capture_output=True
    )
    assert (result.returncode, result.stderr) == (0, b"")

    # the interpreter is there, knowing-pr is not (uninstalled from the venv)
    (tmp_path / "site-packages").mkdir()
    for name in HOOK_NAMES:
        (hooks / name).write_text(render_hook_script(sys.executable, str(tmp_path / "site-packages")))
    result = subprocess.run(["git", "checkout", "-q", "main"], cwd=builder.path, env=env, capture_output=True)
    assert (result.returncode, result.stderr) == (0, b"")
    assert not (builder.path / ".git" / "knowing-pr").exists()


def test_corrupt_store_exits_0_and_is_logged(make_repo: MakeRepo, sync_hooks: None) -> None:
    builder = seeded(make_repo)
    install_hooks(str(builder.path))
    db = db_of(builder)
    db.parent.mkdir(parents=True)
    db.write_bytes(os.urandom(8192))
    builder.write("src/x.py", "def x():\n    return 1\n")
    builder.git("add", "-A")
    result = git_status(builder, "commit", "-q", "-m", "x")
    assert (result.returncode, result.stderr) == (0, "")
    log = (db.parent / "hook.log").read_text()
    assert "post-commit: store unreadable (file is not a database)" in log
    if importlib.util.find_spec("knowing_pr.pipeline") is not None:
        assert read_indexed_commit(db) == head(builder)  # the index run moved it aside and rebuilt
        assert list(db.parent.glob("index.sqlite.corrupt-*"))


def test_run_hook_returns_0_outside_a_repository(tmp_path: Path) -> None:
    assert run_hook("post-commit", [], repo_path=str(tmp_path)) == 0
    assert run_hook("post-checkout", ["0" * 40, "1" * 40, "1"], repo_path=str(tmp_path / "missing")) == 0


def test_unborn_head_is_a_no_op(make_repo: MakeRepo) -> None:
    builder = make_repo()
    assert run_hook("post-checkout", ["0" * 40, "0" * 40, "1"], repo_path=str(builder.path)) == 0
    assert not (builder.path / ".git" / "knowing-pr").exists()


def test_log_is_capped_with_one_rotated_copy(tmp_path: Path) -> None:
    log = str(tmp_path / "hook.log")
    params = HookParams(log_cap_bytes=200)
    for n in range(20):
        append_log(log, f"line {n:02d} " + "x" * 40, params)
    current = Path(log).read_text().splitlines()
    rotated = Path(log + ".1").read_text().splitlines()
    assert current[-1].endswith("line 19 " + "x" * 40)
    assert len(Path(log).read_bytes()) <= 200 + len(current[-1]) + 1
    assert rotated and all(" line " in line for line in rotated)
    assert not Path(log + ".2").exists()


def test_hook_start_up_imports_no_heavy_library(make_repo: MakeRepo) -> None:
    builder = seeded(make_repo)
    install_hooks(str(builder.path))
    script = (builder.path / ".git" / "hooks" / "post-merge").read_text()
    package_parent = script.split("KNOWING_PR_PATH=", 1)[1].split("\n", 1)[0]
    probe = (
        f"import sys\ndel sys.path[0]\nsys.path.append({package_parent!r})\n"
        "from knowing_pr.hooks import main\nmain(['run', 'post-merge', '0'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {"
        "'pygit2', 'numpy', 'scipy', 'networkx', 'jinja2', 'github', 'tree_sitter', 'yaml', "
        "'subprocess', 'pathlib', 'dataclasses', 'typing'}))"
    )
    out = subprocess.run(  # exactly as the installed script starts it: -S, no site
        [sys.executable, "-S", "-c", probe],
        cwd=builder.path,
        env=builder.git_env(),
        capture_output=True,
        text=True,
    )
    assert out.stdout.strip() == "[]", out.stderr


def test_mid_sequence_the_script_skips_python_while_a_waiter_lives(make_repo: MakeRepo) -> None:
    builder = seeded(make_repo)
    install_hooks(str(builder.path))
    git_directory = builder.path / ".git"
    (git_directory / "rebase-merge").mkdir()
    pid_file = git_directory / "knowing-pr" / WAITER_PID_NAME
    pid_file.parent.mkdir()
    hook = [str(git_directory / "hooks" / "post-commit")]
    waiter = subprocess.Popen(["sleep", "30"])
    try:
        pid_file.write_text(f"{waiter.pid}\n")
        assert subprocess.run(hook, cwd=builder.path, env=builder.git_env()).returncode == 0
        assert sorted(p.name for p in pid_file.parent.iterdir()) == [WAITER_PID_NAME]  # no Python ran
    finally:
        waiter.kill()
        waiter.wait()
    # the waiter is gone: the hook starts Python, which starts a real waiter (pid file, log)
    assert subprocess.run(hook, cwd=builder.path, env=builder.git_env()).returncode == 0
    deadline = time.monotonic() + 20
    while pid_file.read_text() == f"{waiter.pid}\n" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pid_file.read_text() != f"{waiter.pid}\n"
    (git_directory / "rebase-merge").rmdir()  # the series ends: the waiter indexes and leaves
    db = db_of(builder)
    if importlib.util.find_spec("knowing_pr.pipeline") is not None:
        assert wait_for_store(db, head(builder)) == head(builder)
    wait_for_worker(db)
    assert not pid_file.exists()


# -- end to end: the store follows HEAD --------------------------------------------------------------


@needs_pipeline
def test_environment_leak_touches_the_right_repository_and_not_its_index(
    make_repo: MakeRepo, sync_hooks: None
) -> None:
    target = seeded(make_repo, "target")
    bystander = seeded(make_repo, "bystander")
    install_hooks(str(target.path))
    (bystander.path / "deep" / "sub").mkdir(parents=True)
    (target.path / "src" / "sub").mkdir()
    target_git = target.path / ".git"
    env = {
        **target.git_env(),
        "GIT_DIR": str(target_git),
        "GIT_WORK_TREE": str(target.path),
        "GIT_INDEX_FILE": str(target_git / "index"),
    }
    hook = str(target_git / "hooks" / "post-commit")
    result = subprocess.run([hook], cwd=target.path / "src" / "sub", env=env, capture_output=True, text=True)
    assert result.returncode == 0
    assert read_indexed_commit(db_of(target)) == head(target)
    # same variables, but run from inside another repository: git's variables win
    (db_of(target)).unlink()
    result = subprocess.run(
        [hook], cwd=bystander.path / "deep" / "sub", env=env, capture_output=True, text=True
    )
    assert result.returncode == 0
    assert read_indexed_commit(db_of(target)) == head(target)
    assert not (bystander.path / ".git" / "knowing-pr").exists()
    for repo in (target, bystander):
        assert repo.git("diff", "--cached", "--name-only") == ""
        assert not (repo.path / ".git" / "index.lock").exists()


@needs_pipeline
def test_store_follows_head_through_everyday_commands(make_repo: MakeRepo, sync_hooks: None) -> None:
    builder = seeded(make_repo, commits=2)
    install_hooks(str(builder.path))
    db = db_of(builder)

    builder.write("src/a.py", "def a():\n    return 'a'\n")
    builder.git("add", "-A")
    builder.git("commit", "-q", "-m", "a")
    assert read_indexed_commit(db) == head(builder), "commit"

    builder.write("src/a.py", "def a():\n    return 'amended'\n")
    builder.git("commit", "-q", "-a", "--amend", "-m", "a2")
    assert read_indexed_commit(db) == head(builder), "commit --amend"

    builder.git("checkout", "-q", "-b", "side", "HEAD~1")
    assert read_indexed_commit(db) == head(builder), "checkout -b"
    builder.write("src/side.py", "def side():\n    return 2\n")
    builder.git("add", "-A")
    builder.git("commit", "-q", "-m", "side")
    side = head(builder)
    builder.git("checkout", "-q", "main")
    assert read_indexed_commit(db) == head(builder), "checkout"
    builder.git("merge", "-q", "--no-edit", "side")
    assert read_indexed_commit(db) == head(builder), "merge"

    builder.git("checkout", "-q", "-b", "pick", "HEAD~1")
    builder.git("cherry-pick", side)
    assert read_indexed_commit(db) == head(builder), "cherry-pick"

    builder.git("reset", "-q", "--hard", "main~1")  # fires no hook
    assert read_indexed_commit(db) != head(builder)
    from knowing_pr.pipeline import update_index  # a reader catches up

    update_index(str(builder.path))
    assert read_indexed_commit(db) == head(builder), "reset --hard, then a reader"


@needs_pipeline
def test_rebase_of_50_commits_coalesces_into_few_index_runs(make_repo: MakeRepo, sync_hooks: None) -> None:
    builder = seeded(make_repo)
    builder.branch("feature")
    builder.checkout("feature")
    for n in range(50):
        builder.write(f"src/f{n % 7}.py", f"def f{n % 7}():\n    return {n}\n")
        builder.commit(f"feature {n}")
    builder.checkout("main")
    builder.write("src/base.py", "def base():\n    return 0\n")
    builder.commit("base moves")
    builder.checkout("feature")
    install_hooks(str(builder.path))
    db = db_of(builder)

    env = {**builder.git_env(), "GIT_SEQUENCE_EDITOR": "true"}
    rebase = subprocess.run(
        ["git", "rebase", "-q", "-i", "main"], cwd=builder.path, env=env, capture_output=True, text=True
    )
    assert rebase.returncode == 0, rebase.stderr
    assert builder.git("rev-list", "--count", "main..HEAD").strip() == "50"
    assert wait_for_store(db, head(builder)) == head(builder)
    wait_for_worker(db)
    assert 1 <= index_runs(db) <= 3
    assert not (db.parent / "sequence-worker.pid").exists()

    for n in range(3):
        builder.write(f"src/p{n}.py", f"def p{n}():\n    return {n}\n")
        builder.commit(f"pick me {n}")
    picks = builder.git("rev-list", "--reverse", "HEAD~3..HEAD").split()
    builder.git("checkout", "-q", "-b", "picked", "main")
    builder.git("cherry-pick", *picks)  # a range: the sequencer runs, no post-rewrite fires
    assert wait_for_store(db, head(builder)) == head(builder)
    wait_for_worker(db)


@needs_pipeline
def test_linked_worktree_has_its_own_store(make_repo: MakeRepo, tmp_path: Path, sync_hooks: None) -> None:
    builder = seeded(make_repo)
    install_hooks(str(builder.path))
    worktree = tmp_path / "wt"
    builder.git("worktree", "add", "-q", "-b", "feature", str(worktree))
    assert install_hooks(str(worktree))[0].startswith("post-commit: already installed")  # hooks are shared
    wt_db = db_of(builder, worktree)
    assert wt_db != db_of(builder)
    assert read_indexed_commit(wt_db) == head(builder, worktree), "post-checkout of worktree add"

    (worktree / "src" / "wt.py").write_text("def wt():\n    return 1\n")
    builder.git("-C", str(worktree), "add", "-A")
    builder.git("-C", str(worktree), "commit", "-q", "-m", "in worktree")
    assert read_indexed_commit(wt_db) == head(builder, worktree)
    assert not db_of(builder).exists()  # the main worktree never moved: no store there


@needs_pipeline
def test_pre_commit_entry_reads_the_stage_from_its_variables(make_repo: MakeRepo, sync_hooks: None) -> None:
    builder = seeded(make_repo)
    db = db_of(builder)
    sha = head(builder)
    env = {
        **builder.git_env(),
        "PRE_COMMIT": "1",
        "PRE_COMMIT_FROM_REF": sha,
        "PRE_COMMIT_TO_REF": sha,
        "PRE_COMMIT_CHECKOUT_TYPE": "0",
    }
    entry = [sys.executable, "-m", "knowing_pr", "hook", "run"]  # .pre-commit-hooks.yaml's entry
    assert subprocess.run(entry, cwd=builder.path, env=env).returncode == 0
    assert not db.parent.exists()  # a file checkout (e.g. pre-commit restoring its stash): ignored
    env["PRE_COMMIT_CHECKOUT_TYPE"] = "1"
    assert subprocess.run(entry, cwd=builder.path, env=env).returncode == 0
    assert read_indexed_commit(db) == sha


@needs_pipeline
def test_concurrent_hooks_never_surface_a_locked_database(make_repo: MakeRepo) -> None:
    builder = seeded(make_repo, commits=3)
    db = db_of(builder)
    env = {**builder.git_env(), SYNC_ENV: "1"}
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", HOOK_ENTRY, "run", "post-commit"],
            cwd=builder.path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=60)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0]
    assert wait_for_store(db, head(builder)) == head(builder)
    wait_for_worker(db)
    log = (db.parent / "hook.log").read_text()
    assert not any("locked" in text for text in [*outputs, log])
    assert index_runs(db) == 1  # the second hook found the lock held and left it to the holder


# -- odd states: each gets a clear answer, never an exception ------------------------------------


def test_status_reports_an_unreadable_store_instead_of_failing(make_repo: MakeRepo) -> None:
    builder = seeded(make_repo)
    db = db_of(builder)
    db.parent.mkdir(parents=True)
    db.write_bytes(b"not a database at all" * 400)
    status = hook_status(str(builder.path))
    assert status["store_exists"] is True and status["indexed_commit"] is None
    assert "not a database" in str(status["store_error"])
    assert status["fresh"] is False


def test_a_store_created_but_not_initialised_has_no_commit(tmp_path: Path) -> None:
    db = tmp_path / "index.sqlite"
    sqlite3.connect(db).close()  # an empty database file: no meta table yet
    assert read_indexed_commit(str(db)) is None


def test_uninstall_leaves_a_foreign_hook_that_replaced_ours(make_repo: MakeRepo) -> None:
    builder = seeded(make_repo)
    install_hooks(str(builder.path))
    foreign = builder.path / ".git" / "hooks" / "post-merge"
    foreign.write_text("#!/bin/sh\necho someone else's\n")
    messages = uninstall_hooks(str(builder.path))
    assert "post-merge: not ours, left alone" in messages
    assert foreign.read_text() == "#!/bin/sh\necho someone else's\n"
    assert not (builder.path / ".git" / "hooks" / "post-commit").exists()


def test_git_missing_from_path_is_an_answer_not_an_exception(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from knowing_pr.hooks.repo import run_git

    monkeypatch.setenv("PATH", str(tmp_path))  # posix_spawnp searches this process's PATH
    assert run_git(["rev-parse", "HEAD"], cwd=str(tmp_path), env={"PATH": str(tmp_path)}) == (127, "")


def test_module_entry_point_runs_a_hook_and_exits_0(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "knowing_pr.hooks", "run", "post-commit"],
        cwd=tmp_path,  # not a repository: nothing to do
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_worker_waiting_on_a_stopped_rebase_gives_up_logs_and_releases_the_lock(
    make_repo: MakeRepo,
) -> None:
    from knowing_pr.hooks.files import StoreFiles, lock_is_held, try_lock
    from knowing_pr.hooks.run import run_worker

    builder = seeded(make_repo)
    git_dir = str(builder.path / ".git")
    (builder.path / ".git" / "rebase-merge").mkdir()  # a rebase stopped (a conflict) and never resumed
    files = StoreFiles(git_dir, os.environ)
    os.makedirs(files.dir, exist_ok=True)
    lock_fd = try_lock(files.lock)
    assert lock_fd is not None
    params = HookParams(sequence_wait_s=0.2, poll_s=0.02)

    assert run_worker(git_dir, str(builder.path), lock_fd, mode="after-sequence", params=params) == 0

    assert "a rebase/cherry-pick is still stopped; the next event catches up" in Path(files.log).read_text()
    assert not lock_is_held(files.lock)
    assert read_indexed_commit(files.db) is None  # nothing indexed mid-rebase


def test_git_commit_does_not_wait_for_the_hooks_interpreter(make_repo: MakeRepo, tmp_path: Path) -> None:
    """The script leaves its work running detached: ``git commit`` returns while the (stand-in)
    interpreter is still blocked on a gate file; ``KNOWING_PR_HOOK_SYNC=1`` waits for it. No
    assertion reads a clock: the gate, not the machine's speed, orders the events."""
    builder = seeded(make_repo)
    install_hooks(str(builder.path))
    marker, gate, started = tmp_path / "ran", tmp_path / "go", tmp_path / "started"
    slow = tmp_path / "slow-python"
    slow.write_text(
        f'#!/bin/sh\necho >> "{started}"\nn=0\n'
        f'while [ ! -e "{gate}" ] && [ $n -lt 2400 ]; do sleep 0.05; n=$((n+1)); done\n'
        f'echo "$@" >> "{marker}"\n'
    )
    slow.chmod(0o755)
    (builder.path / ".git" / "hooks" / "post-commit").write_text(render_hook_script(str(slow)))
    builder.write("src/m0.py", "x = 2\n")

    builder.git("commit", "-q", "-a", "-m", "detached")  # returns with the interpreter blocked
    assert not marker.exists()
    gate.touch()
    wait_for(marker.exists, 120)
    assert "run post-commit" in marker.read_text()  # it did run, after git returned

    gate.unlink()
    started.unlink()
    builder.write("src/m0.py", "x = 3\n")
    waited = subprocess.Popen(
        ["git", "commit", "-q", "-a", "-m", "waited"],
        cwd=builder.path,
        env={**builder.git_env(), SYNC_ENV: "1"},
    )
    wait_for(started.exists, 120)
    assert waited.poll() is None  # the interpreter is blocked on the gate, so git still waits
    gate.touch()
    assert waited.wait(timeout=120) == 0
    assert marker.read_text().count("run post-commit") == 2
