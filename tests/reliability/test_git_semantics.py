"""G1: everyday history changes × hook modes → the store reaches HEAD and passes the oracle.

Each row of the table below is a git command that moves (or does not move) HEAD. The hooks
are installed in one of three modes:

- ``plain``: ``knowing-pr hook install`` writes the scripts into ``.git/hooks``;
- ``pre-commit``: the pre-commit tool installs its scripts for the four stages, from a
  ``.pre-commit-config.yaml`` entry that runs ``knowing-pr hook run`` (docs/hooks.md);
- ``config``: git ≥ 2.54's configuration-based hooks (``hook.<name>.command``/``.event``).

A recorder hook runs beside ours in every mode (chained as the ``.legacy`` script, a second
pre-commit entry, a second configured hook): it writes each event git fires, so each row also
checks which hooks git ran. After each row: the store is at HEAD (a reader, ``knowing-pr
stats``, catches up the rows that fire no hook), the git command exited 0 and printed nothing
of ours, the work tree is clean and nothing is staged, no ``index.lock`` is left. After the
table: the consistency oracle at HEAD.

The git on PATH is the git under test; ``bench/reliability/git_matrix.py`` runs this file
with other git builds.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from reliability_support import PACKAGE_PARENT, POST_STAGES, Oracle, pre_commit_config, store_commit

from knowing_pr.config import default_db_path
from knowing_pr.hooks import install_hooks

HOOKS = POST_STAGES

RECORDER = """import os, sys
event = sys.argv[1] if len(sys.argv) > 1 else "?"
with open(os.environ["G1_EVENTS"], "a") as out:
    out.write(" ".join([event, *sys.argv[2:]]) + "\\n")
"""

PRE_COMMIT_RECORDER = """      - id: record-{event}
        name: record {event}
        entry: {python} {recorder} {event}
        language: system
        stages: [{event}]
        always_run: true
        pass_filenames: false
"""


def git_version() -> tuple[int, ...]:
    out = subprocess.run(["git", "--version"], capture_output=True, text=True, check=True).stdout
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", out)
    assert match is not None, out
    return tuple(int(part or 0) for part in match.groups())


MODES = [
    "plain",
    pytest.param(
        "pre-commit",
        marks=pytest.mark.skipif(shutil.which("pre-commit") is None, reason="pre-commit is not installed"),
    ),
    pytest.param(
        "config",
        marks=pytest.mark.skipif(git_version() < (2, 54), reason="configuration-based hooks need git ≥ 2.54"),
    ),
]


@dataclass
class HookedRepo:
    path: Path
    events_file: Path
    env: dict[str, str]
    clock: int = 1_700_000_000
    outputs: list[str] = field(default_factory=list)

    def git(self, *args: str) -> str:
        """Run git as a user would; the command must succeed and print nothing of ours."""
        self.clock += 60
        env = {
            **self.env,
            "GIT_AUTHOR_DATE": f"@{self.clock} +0000",
            "GIT_COMMITTER_DATE": f"@{self.clock} +0000",
        }
        done = subprocess.run(
            ["git", *args], cwd=self.path, env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, (
            f"git {' '.join(args)} exited {done.returncode}: {done.stderr}{done.stdout}"
        )
        self.outputs.append(done.stdout + done.stderr)
        return done.stdout

    def write(self, name: str, text: str) -> None:
        (self.path / name).write_text(text)

    def commit_file(self, name: str, text: str, message: str) -> str:
        self.write(name, text)
        self.git("add", name)
        self.git("commit", "-q", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def take_events(self) -> list[str]:
        if not self.events_file.exists():
            return []
        events = self.events_file.read_text().splitlines()
        self.events_file.unlink()
        return [line.split()[0] for line in events]


def base_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "KNOWING_PR_", "PRE_COMMIT"))}
    env.update(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        LC_ALL="C",
        KNOWING_PR_HOOK_SYNC="1",  # each hook indexes before git returns: rows are checked at once
        PYTHONPATH=PACKAGE_PARENT,
        G1_EVENTS=str(tmp_path / "events.txt"),
        PRE_COMMIT_HOME=str(Path(os.environ.get("TMPDIR", "/tmp")) / f"pre-commit-home-{os.getpid()}"),
    )
    return env


def install(mode: str, repo: HookedRepo, recorder: Path) -> None:
    python = sys.executable
    if mode == "plain":
        hooks_dir = repo.path / ".git" / "hooks"
        for event in HOOKS:  # the recorder first: `hook install` keeps it as <event>.legacy
            script = hooks_dir / event
            script.write_text(f'#!/bin/sh\nexec "{python}" "{recorder}" {event} "$@"\n')
            script.chmod(0o755)
        install_hooks(str(repo.path))
        assert all((hooks_dir / f"{event}.legacy").exists() for event in HOOKS)
    elif mode == "pre-commit":
        recorders = "".join(
            PRE_COMMIT_RECORDER.format(event=e, python=python, recorder=recorder) for e in HOOKS
        )
        repo.write(".pre-commit-config.yaml", pre_commit_config(python, HOOKS, recorders))
        repo.git("add", ".pre-commit-config.yaml")
        repo.git("commit", "-q", "-m", "pre-commit config")
        args = [arg for event in HOOKS for arg in ("--hook-type", event)]
        done = subprocess.run(
            ["pre-commit", "install", *args], cwd=repo.path, env=repo.env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr + done.stdout
    else:
        for event in HOOKS:  # ours, then the recorder, as two configured hooks per event
            repo.git(
                "config", f"hook.knowing-pr-{event}.command", f'"{python}" -m knowing_pr hook run {event}'
            )
            repo.git("config", "--add", f"hook.knowing-pr-{event}.event", event)
            repo.git("config", f"hook.record-{event}.command", f'"{python}" "{recorder}" {event}')
            repo.git("config", "--add", f"hook.record-{event}.event", event)


def wait_for_store(db: Path, head: str, seconds: float = 30) -> str | None:
    """The hooks index in the foreground, except mid-sequence (a rebase): a worker that waited
    for the sequence to end catches up right after git returns."""
    deadline = time.monotonic() + seconds
    while store_commit(db) != head and time.monotonic() < deadline:
        time.sleep(0.05)
    return store_commit(db)


def reader_catches_up(repo: HookedRepo) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "knowing_pr", "stats", "--json"],
        cwd=repo.path,
        env=repo.env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


# -- the table ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    name: str
    action: Callable[[HookedRepo], None]
    fires: tuple[str, ...]  # the events git must fire (the recorder's view)
    must_not_fire: tuple[str, ...] = ()

    @property
    def moves_without_hook(self) -> bool:
        return not self.fires


def _amend(repo: HookedRepo) -> None:
    repo.write("a.py", "def a():\n    return 'amended'\n")
    repo.git("commit", "-q", "-a", "--amend", "-m", "a, amended")


def _amend_no_rewrite(repo: HookedRepo) -> None:
    repo.write("a.py", "def a():\n    return 'amended twice'\n")
    repo.git("commit", "-q", "-a", "--amend", "--no-post-rewrite", "-m", "a, amended twice")


def _side_commit(repo: HookedRepo) -> None:
    repo.commit_file("side.py", "from a import a\n\n\ndef side():\n    return a()\n", "side")


def _merge_no_ff(repo: HookedRepo) -> None:
    repo.git("merge", "-q", "--no-ff", "--no-edit", "side")


def _merge_fast_forward(repo: HookedRepo) -> None:
    repo.git("checkout", "-q", "-b", "ahead")
    repo.commit_file("ahead.py", "def ahead():\n    return 1\n", "ahead")
    repo.git("checkout", "-q", "main")
    repo.take_events()  # only the merge's events count for this row
    repo.git("merge", "-q", "--ff-only", "ahead")


def _cherry_pick(repo: HookedRepo) -> None:
    repo.git("checkout", "-q", "-b", "pickme", "main~1")
    picked = repo.commit_file("picked.py", "def picked():\n    return 2\n", "picked")
    repo.git("checkout", "-q", "main")
    repo.take_events()
    repo.git("cherry-pick", picked)


def _revert(repo: HookedRepo) -> None:
    repo.git("revert", "--no-edit", "HEAD")


def _rebase(repo: HookedRepo) -> None:
    repo.git("checkout", "-q", "-b", "topic", "main~2")
    repo.commit_file("topic1.py", "def topic1():\n    return 1\n", "topic 1")
    repo.commit_file(
        "topic2.py", "from topic1 import topic1\n\n\ndef topic2():\n    return topic1()\n", "topic 2"
    )
    repo.take_events()
    repo.git("rebase", "-q", "main")


def _pull(repo: HookedRepo) -> None:
    other = repo.path.parent / "upstream"
    repo.git("clone", "-q", str(repo.path), str(other))
    (other / "up.py").write_text("def up():\n    return 3\n")
    for args in (["add", "up.py"], ["commit", "-q", "-m", "upstream file"]):
        done = subprocess.run(["git", "-C", str(other), *args], env=repo.env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    repo.take_events()
    repo.git("pull", "-q", "--no-rebase", "--no-edit", str(other), "topic")


def _file_checkout(repo: HookedRepo) -> None:
    repo.write("a.py", "def a():\n    return 'dirty'\n")
    repo.git("checkout", "--", "a.py")


def _reset_hard(repo: HookedRepo) -> None:
    repo.git("reset", "-q", "--hard", "HEAD~1")


def _plumbing_commit(repo: HookedRepo) -> None:
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=repo.path,
        env=repo.env,
        input="def plumbed():\n    return 4\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    repo.git("update-index", "--add", "--cacheinfo", f"100644,{blob},plumbed.py")
    tree = repo.git("write-tree").strip()
    commit = repo.git("commit-tree", tree, "-p", "HEAD", "-m", "plumbing").strip()
    repo.git("update-ref", "refs/heads/topic", commit)
    repo.git("reset", "-q", "--hard")  # the index now matches HEAD again


def _commit(repo: HookedRepo) -> None:
    repo.commit_file("a.py", "def a():\n    return 'a'\n", "a")


def _branch_at_parent(repo: HookedRepo) -> None:
    repo.git("checkout", "-q", "-b", "side", "HEAD~1")


def _switch_back(repo: HookedRepo) -> None:
    repo.git("switch", "-q", "main")


def _detach(repo: HookedRepo) -> None:
    repo.git("switch", "-q", "--detach", "HEAD~1")


ROWS = (
    Row("commit", _commit, ("post-commit",)),
    Row("commit --amend", _amend, ("post-commit", "post-rewrite")),
    Row("commit --amend --no-post-rewrite", _amend_no_rewrite, ("post-commit",), ("post-rewrite",)),
    Row("checkout -b (at HEAD~1)", _branch_at_parent, ("post-checkout",)),
    Row("commit on a branch", _side_commit, ("post-commit",)),
    Row("switch back", _switch_back, ("post-checkout",)),
    Row("merge --no-ff", _merge_no_ff, ("post-merge",)),
    Row("merge, fast-forward", _merge_fast_forward, ("post-merge",)),
    Row("cherry-pick", _cherry_pick, ("post-commit",)),
    Row("revert", _revert, ("post-commit",)),
    Row("rebase", _rebase, ("post-rewrite",)),
    Row("pull (fetch + merge)", _pull, ("post-merge",)),
    Row("checkout -- file (HEAD stays)", _file_checkout, ("post-checkout",)),
    Row("reset --hard (no hook)", _reset_hard, ()),
    Row("commit-tree + update-ref (no hook)", _plumbing_commit, ()),
    Row("switch --detach", _detach, ("post-checkout",)),
)


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_g1_everyday_commands_keep_the_store_at_head(mode: str, tmp_path: Path) -> None:
    recorder = tmp_path / "record.py"
    recorder.write_text(RECORDER)
    path = tmp_path / "repo"
    path.mkdir()
    repo = HookedRepo(path, tmp_path / "events.txt", base_env(tmp_path))
    repo.git("init", "-q", "-b", "main")
    repo.commit_file("a.py", "def a():\n    return 1\n", "one")
    repo.commit_file("b.py", "from a import a\n\n\ndef b():\n    return a()\n", "two")
    repo.commit_file("c.py", "from b import b\n\n\ndef c():\n    return b()\n", "three")
    install(mode, repo, recorder)
    repo.take_events()
    db = default_db_path(path / ".git")

    for row in ROWS:
        started = time.monotonic()
        row.action(repo)
        events = repo.take_events()
        for event in row.fires:
            assert event in events, f"{mode}/{row.name}: git did not fire {event} (fired: {events})"
        for event in row.must_not_fire:
            assert event not in events, f"{mode}/{row.name}: git fired {event}"
        if row.moves_without_hook:
            assert not events, f"{mode}/{row.name}: unexpected hooks {events}"
            reader_catches_up(repo)
        head = repo.head()
        assert wait_for_store(db, head) == head, (
            f"{mode}/{row.name}: store not at HEAD after {time.monotonic() - started:.1f}s"
        )
        assert repo.git("status", "--porcelain", "--untracked-files=no") == "", (
            f"{mode}/{row.name}: tree changed"
        )
        assert repo.git("diff", "--cached", "--name-only") == "", f"{mode}/{row.name}: something was staged"
        assert not (path / ".git" / "index.lock").exists()

    assert not [out for out in repo.outputs if "knowing-pr:" in out or "Traceback" in out]
    log = (db.parent / "hook.log").read_text() if (db.parent / "hook.log").exists() else ""
    assert "failed" not in log, log
    assert Oracle(path, tmp_path / "oracle").problems(db, (repo.head(),)) == []


def _rebase_that_stops_on_a_conflict(tmp_path: Path) -> tuple[HookedRepo, Path, str]:
    """A feature branch of 5 commits whose 3rd conflicts with main; hooks installed; the rebase
    onto main is started and stops at the conflict. Returns (repo, store, feature's old head)."""
    path = tmp_path / "repo"
    path.mkdir()
    repo = HookedRepo(path, tmp_path / "events.txt", base_env(tmp_path))
    repo.git("init", "-q", "-b", "main")
    repo.commit_file("shared.py", "def shared():\n    return 0\n", "base")
    repo.git("checkout", "-q", "-b", "feature")
    for n in range(5):
        if n == 2:
            repo.commit_file("shared.py", "def shared():\n    return 'feature'\n", "feature edits shared")
        else:
            repo.commit_file(f"f{n}.py", f"def f{n}():\n    return {n}\n", f"feature {n}")
    old_head = repo.head()
    repo.git("checkout", "-q", "main")
    repo.commit_file("shared.py", "def shared():\n    return 'main'\n", "main edits shared")
    repo.git("checkout", "-q", "feature")
    install_hooks(str(path))
    db = default_db_path(path / ".git")
    reader_catches_up(repo)
    assert store_commit(db) == old_head
    env = {**repo.env, "GIT_EDITOR": "true"}
    stopped = subprocess.run(["git", "rebase", "main"], cwd=path, env=env, capture_output=True, text=True)
    assert stopped.returncode != 0 and "CONFLICT" in stopped.stdout + stopped.stderr
    assert (path / ".git" / "rebase-merge").is_dir() or (path / ".git" / "rebase-apply").is_dir()
    return repo, db, old_head


@pytest.mark.slow
def test_g2_rebase_stopped_on_a_conflict_then_continued_catches_up_once(tmp_path: Path) -> None:
    repo, db, _ = _rebase_that_stops_on_a_conflict(tmp_path)
    waiter = db.parent / "sequence-worker.pid"
    assert waiter.exists(), "the picks before the stop left a worker waiting for the rebase to end"
    runs_before = (db.parent / "hook.log").read_text().count(" indexed ")

    repo.write("shared.py", "def shared():\n    return 'both'\n")
    repo.git("add", "shared.py")
    done = subprocess.run(
        ["git", "rebase", "--continue"],
        cwd=repo.path,
        env={**repo.env, "GIT_EDITOR": "true"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    head = repo.head()
    assert wait_for_store(db, head) == head
    deadline = time.monotonic() + 30
    while waiter.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not waiter.exists(), "the waiter withdrew its announcement"
    # the worker logs its run once the store has it: the line may trail the store by a moment
    log = (db.parent / "hook.log").read_text()
    while log.count(" indexed ") == runs_before and time.monotonic() < deadline:
        time.sleep(0.05)
        log = (db.parent / "hook.log").read_text()
    runs = log.count(" indexed ") - runs_before
    assert 1 <= runs <= 2, f"{runs} index runs for one rebase; the hook log:\n{log}"
    assert Oracle(repo.path, tmp_path / "oracle").problems(db, (head,)) == []


@pytest.mark.slow
def test_g2_rebase_stopped_on_a_conflict_then_aborted_keeps_the_old_head(tmp_path: Path) -> None:
    repo, db, old_head = _rebase_that_stops_on_a_conflict(tmp_path)
    repo.git("rebase", "--abort")
    assert repo.head() == old_head
    waiter = db.parent / "sequence-worker.pid"
    deadline = time.monotonic() + 30
    while waiter.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not waiter.exists(), "the waiter saw the rebase end and left"
    reader_catches_up(repo)  # whatever a mid-rebase reader did, the next reader is at HEAD
    assert store_commit(db) == old_head
    assert Oracle(repo.path, tmp_path / "oracle").problems(db, (old_head,)) == []


@pytest.mark.slow
def test_g9_clone_with_hooks_from_a_template_indexes_in_the_background(tmp_path: Path) -> None:
    """Hooks copied from a template directory fire post-checkout at the end of ``git clone``:
    the full index of the new clone runs in the background and reaches HEAD; the clone exits 0
    and prints nothing of ours."""
    source_path = tmp_path / "source"
    source_path.mkdir()
    source = HookedRepo(source_path, tmp_path / "events.txt", base_env(tmp_path))
    source.git("init", "-q", "-b", "main")
    for n in range(30):
        source.write(
            f"m{n}.py", f"from m{(n + 1) % 30} import f{(n + 1) % 30}\n\n\ndef f{n}():\n    return {n}\n"
        )
    source.git("add", ".")
    source.git("commit", "-q", "-m", "thirty modules")
    install_hooks(str(source_path))
    template = tmp_path / "template"
    (template / "hooks").mkdir(parents=True)
    for event in HOOKS:
        shutil.copy2(source_path / ".git" / "hooks" / event, template / "hooks" / event)

    clone = tmp_path / "clone"
    env = {k: v for k, v in source.env.items() if k != "KNOWING_PR_HOOK_SYNC"}  # as a user clones
    done = subprocess.run(
        ["git", "clone", "-q", f"--template={template}", str(source_path), str(clone)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and "knowing-pr" not in done.stdout + done.stderr, done.stderr
    assert (clone / ".git" / "hooks" / "post-checkout").exists()
    head = subprocess.run(
        ["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True, env=env
    ).stdout.strip()
    db = default_db_path(clone / ".git")
    assert wait_for_store(db, head) == head, "the background worker indexed the new clone"
    assert Oracle(clone, tmp_path / "oracle").problems(db, (head,)) == []
