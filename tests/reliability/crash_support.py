"""Crash-safety drivers shared by the F1/F2 tests and bench/reliability/crash.py.

``build_history`` makes a repository with two commits (C1: ``files`` source files in four
languages; C2: edits, renames, deletions and additions of about a fifth of them).
``kill_during`` starts ``knowing-pr index`` as a real child process and delivers a signal
after a delay, or when the store's ``.writing`` marker appears (inside the one write
transaction) or disappears (just after COMMIT); it returns what happened.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pygit2
from reliability_support import cli_command, cli_env

from knowing_pr.store import Store

SIGNATURE_TIME = 1_700_000_000


def _source(language: str, i: int, variant: int) -> tuple[str, str]:
    prev = max(i - 1, 0)
    if language == "py":
        body = (
            f"from m{prev} import f{prev}\n\n\ndef f{i}(x):\n    return f{prev}(x) + {variant}\n\n\n"
            f"class C{i}:\n    def run(self):\n        return f{i}({variant})\n"
        )
        return f"pkg{i % 7}/m{i}.py", body
    if language == "js":
        body = f"export function w{i}(a) {{ return a + {variant}; }}\n"
        return f"web{i % 5}/w{i}.js", body + f"export class W{i} {{ go() {{ return w{i}(1); }} }}\n"
    if language == "go":
        body = f"package svc\n\nfunc G{i}() int {{\n\treturn {variant}\n}}\n\ntype T{i} struct{{}}\n\n"
        return f"svc{i % 3}/g{i}.go", body + f"func (t T{i}) M() int {{ return G{i}() }}\n"
    return f"jv/J{i}.java", f"package jv;\n\npublic class J{i} {{\n  int f() {{ return {variant}; }}\n}}\n"


def _commit(repo: pygit2.Repository, files: dict[str, str], message: str, when: int) -> str:
    builder_index = pygit2.Index()
    for path, text in sorted(files.items()):
        blob = repo.create_blob(text.encode())
        builder_index.add(pygit2.IndexEntry(path, blob, pygit2.GIT_FILEMODE_BLOB))
    tree = builder_index.write_tree(repo)
    sig = pygit2.Signature("Knowing Tester", "tester@example.com", when, 0)
    parents = [] if repo.head_is_unborn else [repo.head.target]
    return str(repo.create_commit("HEAD", sig, sig, message, tree, parents))


def build_history(path: Path, files: int) -> tuple[str, str]:
    """A repository at ``path`` with commits C1 and C2 (HEAD); returns (C1, C2)."""
    repo = pygit2.init_repository(str(path), initial_head="main")
    languages = ("py", "py", "js", "go", "java")
    tree = dict(_source(languages[i % len(languages)], i, 0) for i in range(files))
    c1 = _commit(repo, tree, "C1", SIGNATURE_TIME)
    paths = sorted(tree)
    for n, p in enumerate(paths[::5]):
        text = tree.pop(p)
        if n % 3 == 0:
            tree[p] = text.replace("+ 0", "+ 1").replace("return 0", "return 2")
        elif n % 3 == 1:
            tree["moved/" + p] = text
    for i in range(files, files + files // 10):
        new_path, text = _source("py", i, 3)
        tree[new_path] = text
    c2 = _commit(repo, tree, "C2", SIGNATURE_TIME + 60)
    return c1, c2


@dataclass
class KillOutcome:
    returncode: int
    stderr: str
    delay_s: float
    finished_first: bool


def _marker(db: Path) -> Path:
    return db.with_name(db.name + ".writing")


def kill_during(
    repo: Path,
    db: Path,
    *,
    args: tuple[str, ...] = (),
    sig: int = signal.SIGKILL,
    delay_s: float | None = None,
    at: str | None = None,
    timeout_s: float = 60.0,
) -> KillOutcome:
    """Run ``knowing-pr index --db DB`` in ``repo`` and signal it after ``delay_s`` seconds, or
    ``at`` = "marker-appears" | "marker-gone" (polled every 0.5 ms)."""
    command = cli_command("index", "--quiet", "--db", str(db), *args)
    started = time.monotonic()
    proc = subprocess.Popen(
        command, cwd=repo, env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    finished_first = False
    try:
        if at is None:
            assert delay_s is not None
            try:
                proc.wait(timeout=delay_s)
                finished_first = True
            except subprocess.TimeoutExpired:
                proc.send_signal(sig)
        else:
            finished_first = not _wait_for_marker(proc, _marker(db), appear=at == "marker-appears")
            if not finished_first:
                proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=timeout_s)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return KillOutcome(proc.returncode, stderr or "", time.monotonic() - started, finished_first)


def _wait_for_marker(proc: subprocess.Popen[str], marker: Path, *, appear: bool) -> bool:
    """Poll until the marker appears (or, after appearing, is gone); False if the run ended."""
    seen = False
    while proc.poll() is None:
        exists = os.path.exists(marker)
        if appear and exists:
            return True
        if not appear:
            if exists:
                seen = True
            elif seen:
                return True
        time.sleep(0.0005)
    return False


def measure_index_seconds(
    repo: Path, db: Path, args: tuple[str, ...] = (), *, template: Path | None = None, runs: int = 3
) -> float:
    """Median CLI wall time of ``knowing-pr index`` from the store ``template`` (None: empty),
    after one unmeasured run: the first run of a new interpreter or of changed code also
    compiles the package's bytecode, which would stretch the range the kills are drawn from."""
    times = []
    for run in range(runs + 1):
        reset_store(template, db)
        started = time.monotonic()
        subprocess.run(
            cli_command("index", "--quiet", "--db", str(db), *args), cwd=repo, env=cli_env(), check=True
        )
        if run:
            times.append(time.monotonic() - started)
    return sorted(times)[len(times) // 2]


def reset_store(template: Path | None, db: Path) -> None:
    """Replace the store at ``db`` with a copy of ``template`` (closed, checkpointed) or with an
    empty store that has its schema (so the only write transaction left is the index run)."""
    for suffix in ("", "-wal", "-shm", ".writing"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    if template is not None:
        db.write_bytes(template.read_bytes())
    else:
        Store.open(db).close()


signal_names = {signal.SIGKILL: "SIGKILL", signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM"}
