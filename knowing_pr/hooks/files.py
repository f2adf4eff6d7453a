"""Git dir → the store next to it, its indexed commit, the worker lock and the hook log.

On the hook's start-up path: imports only ``os`` and ``time`` at module level (``sqlite3`` and
``fcntl`` when first needed); paths are plain strings. The log and the lock are opened with
``knowing_pr/writing.py``: a symbolic link at either name is refused (the event is skipped,
never a write through the link), and log lines carry no control character.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping

from knowing_pr.hooks.params import HookParams
from knowing_pr.writing import open_append, open_lock

#: same variable as knowing_pr.config.STORE_ENV (not imported: ~30 ms on the hook path)
STORE_ENV = "KNOWING_PR_DB"
LOCK_NAME = "index.lock"
LOG_NAME = "hook.log"


def store_path(git_dir: str | os.PathLike[str], environ: Mapping[str, str] | None = None) -> str:
    """The store of a git dir; the same rule as ``knowing_pr.config.default_db_path``."""
    override = (os.environ if environ is None else environ).get(STORE_ENV)
    if override:
        return override
    return os.path.join(os.fspath(git_dir), "knowing-pr", "index.sqlite")


def read_indexed_commit(db_path: str | os.PathLike[str]) -> str | None:
    """``meta.indexed_commit`` of a store, read-only (None: no store or no commit yet).

    Deliberately not ``Store.open``: that runs ``quick_check`` over the whole file, which a
    hook cannot afford. Raises ``sqlite3.DatabaseError`` when the file is not a usable store.
    """
    import sqlite3

    path = os.path.abspath(db_path)
    if not os.path.isfile(path):
        return None
    escaped = path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    conn = sqlite3.connect(f"file://{escaped}?mode=ro", uri=True, timeout=0.5, isolation_level=None)
    try:
        conn.execute("PRAGMA trusted_schema=OFF")
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'indexed_commit'").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return None  # created, not yet initialised
            raise
    finally:
        conn.close()
    return str(row[0]) if row and row[0] else None


def append_log(log_path: str, message: str, params: HookParams) -> None:
    """Append one line to the hook log, rotating it to ``hook.log.1`` past the cap."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if not message.isprintable():  # an exception's text can quote a path or a config value
        from knowing_pr.visible import visible

        message = visible(message)
    line = f"{stamp} pid={os.getpid()} {message}\n"
    try:
        if os.path.isfile(log_path) and os.path.getsize(log_path) > params.log_cap_bytes:
            os.replace(log_path, log_path + ".1")
        with os.fdopen(open_append(log_path), "a", encoding="utf-8", errors="replace") as log:
            log.write(line)
    except OSError:
        pass  # a read-only or full disk must not turn into a failing git command


def try_lock(lock_path: str) -> int | None:
    """Take the exclusive worker lock without waiting; the fd holds it (None: held elsewhere).

    Raises ``OSError`` (``ELOOP``) when the lock's name is a symbolic link."""
    import fcntl

    fd = open_lock(lock_path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def lock_is_held(lock_path: str) -> bool:
    if not os.path.isfile(lock_path) or os.path.islink(lock_path):
        return False
    fd = try_lock(lock_path)
    if fd is None:
        return True
    os.close(fd)
    return False


class StoreFiles:
    """The store of one git dir and the lock and log that live next to it."""

    __slots__ = ("db", "dir", "lock", "log")

    def __init__(self, git_dir: str, environ: Mapping[str, str]) -> None:
        self.db = store_path(git_dir, environ)
        self.dir = os.path.dirname(self.db)
        self.lock = os.path.join(self.dir, LOCK_NAME)
        self.log = os.path.join(self.dir, LOG_NAME)


def store_is_fresh(files: StoreFiles, head: str, hook_name: str, params: HookParams) -> bool:
    import sqlite3

    try:
        return read_indexed_commit(files.db) == head
    except sqlite3.DatabaseError as exc:
        append_log(files.log, f"{hook_name}: store unreadable ({exc}); the index run rebuilds it", params)
        return False
