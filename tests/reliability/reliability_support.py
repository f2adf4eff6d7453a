"""Shared helpers for the reliability suite: a store path → the consistency oracle's verdict.

The oracle (RELIABILITY.md §2) is: ``quick_check`` ok, the FTS5 ``integrity-check`` ok, no
edge with a missing endpoint (``Store.integrity_problems``), and a logical dump equal to a
clean full index of the same commit into a scratch store. ``run_cli`` runs the real CLI in a
child process (``python -m knowing_pr``) so kills, signals and exit codes are real.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from knowing_pr.config import Settings
from knowing_pr.git import GitRepo
from knowing_pr.index import index_commit
from knowing_pr.store import Store

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])


POST_STAGES = ("post-commit", "post-checkout", "post-merge", "post-rewrite")

PRE_COMMIT_ENTRY = """      - id: knowing-pr-index
        name: knowing-pr index
        entry: {python} -m knowing_pr hook run
        language: system
        stages: [{stages}]
        always_run: true
        pass_filenames: false
"""


def pre_commit_config(python: str, stages: tuple[str, ...] = POST_STAGES, extra_hooks: str = "") -> str:
    """A ``.pre-commit-config.yaml`` whose local hook runs ``knowing-pr hook run`` (docs/hooks.md),
    followed by ``extra_hooks`` (more entries of the same local repo)."""
    entry = PRE_COMMIT_ENTRY.format(python=python, stages=", ".join(stages))
    return "repos:\n  - repo: local\n    hooks:\n" + entry + extra_hooks


def cli_env(**extra: str) -> dict[str, str]:
    """The environment a CLI child runs with: no outside GIT_* or store override."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "KNOWING_PR_"))}
    env["PYTHONPATH"] = PACKAGE_PARENT
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, LC_ALL="C")
    env.update(extra)
    return env


def cli_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "knowing_pr", *args]


def run_cli(
    *args: str, cwd: Path | str | None = None, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_command(*args),
        cwd=cwd,
        env=env or cli_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def logical_dump(db: Path) -> dict[str, Any]:
    """Everything a full index at a commit determines (row ids excluded)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        q = conn.execute
        return {
            "nodes": q(
                "SELECT id, path, name, qualified_name, kind, start_line, end_line, signature, doc,"
                " content_hash FROM nodes ORDER BY id"
            ).fetchall(),
            "edges": sorted(
                q(
                    "SELECT s.id, t.id, e.kind, e.confidence, coalesce(f.path, e.origin) FROM edges e"
                    " JOIN nodes s ON s.rowid = e.source JOIN nodes t ON t.rowid = e.target"
                    " LEFT JOIN files f ON f.fid = e.origin"
                ).fetchall()
            ),
            "files": q(
                "SELECT path, blob_id, language, status, reason, root, line_count FROM files ORDER BY path"
            ).fetchall(),
            "refs": q("SELECT f.path, r.data FROM refs r JOIN files f USING (fid) ORDER BY 1").fetchall(),
            "ref_names": q(
                "SELECT f.path, r.name FROM ref_names r JOIN files f USING (fid) ORDER BY 1, 2"
            ).fetchall(),
            "dirs": q("SELECT path, root FROM dirs ORDER BY path").fetchall(),
            "meta": q(
                "SELECT key, value FROM meta WHERE key IN ('graph_root', 'indexed_commit') ORDER BY key"
            ).fetchall(),
            "adjacency": q("SELECT tag, data FROM blobs WHERE name = 'adjacency'").fetchone(),
            "fts_rows": q("SELECT count(*) FROM nodes_fts").fetchone()[0],
        }
    finally:
        conn.close()


class Oracle:
    """Clean full-index dumps per commit (computed once), and the check of a store against them."""

    def __init__(self, repo_path: Path, scratch: Path) -> None:
        self.repo_path = repo_path
        self.scratch = scratch
        self._dumps: dict[str | None, dict[str, Any] | None] = {}

    def clean_dump(self, commit: str | None) -> dict[str, Any] | None:
        """The dump of a full index at ``commit`` (``None``: nothing indexed yet)."""
        if commit not in self._dumps:
            if commit is None:
                self._dumps[commit] = None
            else:
                self.scratch.mkdir(parents=True, exist_ok=True)
                db = self.scratch / f"clean-{commit}.sqlite"
                index_commit(GitRepo.open(str(self.repo_path)), Settings(), rev=commit, db_path=db, full=True)
                self._dumps[commit] = logical_dump(db)
        return self._dumps[commit]

    def problems(self, db: Path, allowed: tuple[str | None, ...]) -> list[str]:
        """Why the store at ``db`` is not a consistent index of one of the ``allowed`` commits."""
        if not db.exists() or db.stat().st_size == 0:
            return [] if None in allowed else ["the store is missing"]
        try:
            with Store.open(db) as store:
                problems = store.integrity_problems()
                commit = store.indexed_commit
        except Exception as exc:  # the verdict, not a crash of the test
            return [f"open: {type(exc).__name__}: {exc}"]
        if problems:
            return problems
        if commit not in allowed:
            return [f"indexed_commit {commit} is none of {allowed}"]
        expected = self.clean_dump(commit)
        if expected is None:
            empty = logical_dump(db)
            return [] if not empty["nodes"] and not empty["files"] else ["rows without an indexed commit"]
        actual = logical_dump(db)
        return [f"{key} differs from a clean full index" for key in expected if expected[key] != actual[key]]


def store_commit(db: Path) -> str | None:
    """The store's indexed commit as the hook reads it (None also while it is being created)."""
    from knowing_pr.hooks import read_indexed_commit

    try:
        return read_indexed_commit(str(db))
    except sqlite3.Error:
        return None


def sidecar_files(db: Path) -> list[str]:
    """Leftover marker / lock names next to a store (the -wal/-shm of WAL mode excluded)."""
    return sorted(p.name for p in db.parent.iterdir() if p.name.endswith((".writing", ".lock")))
