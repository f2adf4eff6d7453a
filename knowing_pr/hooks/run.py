"""Hook event → at most one detached worker that brings the store to HEAD; always exit 0.

``run_hook`` is the foreground (see the package docstring for its O(1) steps);
``run_worker`` is the detached worker's body and ``catch_up`` its loop; ``main`` dispatches
the installed scripts' ``run NAME ...`` and the worker's ``worker ...`` command lines.

On the hook's start-up path: imports only ``os``, ``sys``, ``time`` and ``contextlib`` at
module level (``argparse`` only in a worker, the index pipeline only inside the worker's run).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from contextlib import suppress

from knowing_pr.gitenv import scrubbed_env
from knowing_pr.hooks.files import StoreFiles, append_log, read_indexed_commit, store_is_fresh, try_lock
from knowing_pr.hooks.params import HookParams
from knowing_pr.hooks.repo import (
    REPO_LOCATION_VARS,
    RepoState,
    read_head,
    read_repo_state,
    scrubbed_environ,
    sequence_in_progress,
)
from knowing_pr.writing import open_append, write_atomic

SYNC_ENV = "KNOWING_PR_HOOK_SYNC"
#: ``<git dir>/knowing-pr/<this>``: the pid of a worker waiting for a series to end, which lets
#: the shell script skip starting Python for each picked commit (the template names it too)
WAITER_PID_NAME = "sequence-worker.pid"
#: Python snippet that starts a knowing-pr entry point with the cwd (a repository, untrusted)
#: removed from sys.path
WORKER_BOOT = (
    "import sys\ndel sys.path[0]\nfrom knowing_pr.hooks import main\nraise SystemExit(main(sys.argv[1:]))"
)


# -- the worker: index until the store reflects HEAD ----------------------------------------------


def index_repository(work_tree: str, files: StoreFiles, head: str, params: HookParams) -> bool:
    """One incremental index run, in this (background) process; False when it failed."""
    started = time.monotonic()
    try:
        from knowing_pr.pipeline import update_index

        if _store_has_other_settings(work_tree, files, head):
            append_log(
                files.log,
                f"skipped {head[:12]}: the store was indexed with other settings than those "
                "committed at it (an uncommitted .knowing-pr.yml?); the next command catches it up "
                "with its own, so a commit never re-indexes the whole repository",
                params,
            )
            return True
        # the settings committed at the commit indexed: never a file followed from the work tree
        update_index(work_tree, rev=head, quiet=True, defer_refit=True, settings_at=head)
    except Exception as exc:  # the hook logs every failure and carries on
        hint = getattr(exc, "hint", None)
        detail = f"{type(exc).__name__}: {exc}" + (f" ({hint})" if hint else "")
        append_log(files.log, f"index failed: {detail}", params)
        return False
    append_log(files.log, f"indexed {head[:12]} in {time.monotonic() - started:.2f}s", params)
    return True


def _store_has_other_settings(work_tree: str, files: StoreFiles, head: str) -> bool:
    """Whether the store exists and was indexed with settings whose key differs from those
    committed at ``head`` (an index run would then rebuild it in full)."""
    if not os.path.exists(files.db):
        return False
    from knowing_pr.index.report import settings_key
    from knowing_pr.pipeline import open_workspace
    from knowing_pr.store import Store

    try:
        with Store.open(files.db, readonly=True) as store:
            stored = store.get_meta("settings_key")
    except Exception:  # an unreadable store is the index run's to move aside and rebuild
        return False
    if stored is None:
        return False
    return stored != settings_key(open_workspace(work_tree, settings_at=head).settings)


def refit_when_idle(work_tree: str, files: StoreFiles, params: HookParams) -> None:
    """The file model's refit the hook's index runs deferred, once the store reflects HEAD (a
    background worker only: a commit never waits for a fit)."""
    try:
        from knowing_pr.pipeline import refit_file_model

        report = refit_file_model(work_tree, settings_at=read_indexed_or_none(files) or "HEAD")
    except Exception as exc:  # the hook logs every failure and carries on
        append_log(files.log, f"refit failed: {type(exc).__name__}: {exc}", params)
        return
    if report.refitted:
        append_log(
            files.log, f"file model refitted on {report.tasks} tasks in {report.fit_ms:.0f} ms", params
        )


def wait_for_sequence_end(git_dir: str, params: HookParams) -> bool:
    """Poll until no rebase/cherry-pick series is running; False when it outlasted the wait."""
    deadline = time.monotonic() + params.sequence_wait_s
    while sequence_in_progress(git_dir):
        if time.monotonic() > deadline:
            return False
        time.sleep(params.poll_s)
    return True


def catch_up(
    state: RepoState, files: StoreFiles, lock_fd: int, params: HookParams, *, background: bool
) -> None:
    """Holding the lock: index while the store lags HEAD; release; re-check; repeat.

    The re-check after releasing is what makes a skipped event safe: a hook that found the
    lock held moved HEAD before it looked, so the holder's re-check sees that HEAD. Only a
    background worker waits out a rebase that started meanwhile; in the foreground that
    would deadlock against the rebase waiting for this very hook.
    """
    runs = 0
    fd: int | None = lock_fd
    while fd is not None:
        try:
            runs, healthy = index_while_stale(state, files, params, runs)
        finally:
            os.close(fd)
        fd = None
        if not healthy or runs >= params.max_index_runs:
            return
        if sequence_in_progress(state.git_dir) and not (
            background and wait_for_sequence_end(state.git_dir, params)
        ):
            return
        head = read_head(state.git_dir, os.environ)
        if head is not None and read_indexed_or_none(files) != head:
            fd = try_lock(files.lock)


def index_while_stale(state: RepoState, files: StoreFiles, params: HookParams, runs: int) -> tuple[int, bool]:
    """Index until the store reflects HEAD; returns (runs so far, False if a run failed or stalled)."""
    head = read_head(state.git_dir, os.environ)
    while head is not None and runs < params.max_index_runs:
        before = read_indexed_or_none(files)
        if before == head or (runs and sequence_in_progress(state.git_dir)):
            break
        runs += 1
        if (
            not index_repository(state.work_tree, files, head, params)
            or read_indexed_or_none(files) == before
        ):
            return runs, False  # failed, or made no progress: do not spin
        head = read_head(state.git_dir, os.environ)
    return runs, True


def read_indexed_or_none(files: StoreFiles) -> str | None:
    import sqlite3

    try:
        return read_indexed_commit(files.db)
    except sqlite3.DatabaseError:
        return None


def spawn_worker(
    state: RepoState, files: StoreFiles, lock_fd: int, env: Mapping[str, str], *, mode: str
) -> int:
    """Start one worker (own session, stdio on the log) that inherits the lock; returns its pid.

    ``mode``: "background", "after-sequence" (waits for a rebase/cherry-pick series to end
    first) or "foreground" (the hook waits for it; it never waits for a series, which would
    wait for this very hook). The worker is a full interpreter, with ``site``: it imports
    the index pipeline, which the lean hook process cannot.
    """
    child_lock_fd = 3
    argv = [sys.executable, "-c", WORKER_BOOT, "worker", "--git-dir", state.git_dir]
    argv += ["--work-tree", state.work_tree, "--lock-fd", str(child_lock_fd), "--mode", mode]
    os.set_inheritable(lock_fd, True)
    log_fd = open_append(files.log)  # a symbolic link there is refused, never followed
    file_actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, log_fd, 1),
        (os.POSIX_SPAWN_DUP2, 1, 2),
        (os.POSIX_SPAWN_DUP2, lock_fd, child_lock_fd),
    ]
    try:
        return os.posix_spawn(sys.executable, argv, dict(env), file_actions=file_actions, setsid=True)
    except NotImplementedError:  # no POSIX_SPAWN_SETSID: a new process group still escapes Ctrl-C
        return os.posix_spawn(sys.executable, argv, dict(env), file_actions=file_actions, setpgroup=0)
    finally:
        os.close(log_fd)


def waiter_pid_file(git_dir: str) -> str:
    return os.path.join(git_dir, "knowing-pr", WAITER_PID_NAME)


def announce_waiter(git_dir: str, pid: int) -> None:
    """Tell the hook scripts a worker waits for the series to end, so they skip Python."""
    pid_file = waiter_pid_file(git_dir)
    os.makedirs(os.path.dirname(pid_file), exist_ok=True)  # not the store's dir with KNOWING_PR_DB
    write_atomic(pid_file, [f"{pid}\n"])


def wait_out_sequence(git_dir: str, params: HookParams) -> bool:
    """``wait_for_sequence_end``, then withdraw the announcement ``announce_waiter`` made."""
    try:
        return wait_for_sequence_end(git_dir, params)
    finally:
        with suppress(FileNotFoundError):  # only the hook that spawned this waiter writes it
            os.unlink(waiter_pid_file(git_dir))


def run_worker(git_dir: str, work_tree: str, lock_fd: int, *, mode: str, params: HookParams) -> int:
    """The worker's body (see ``spawn_worker`` for ``mode``): catch the store up. Returns 0."""
    clean = scrubbed_env(os.environ)
    os.environ.clear()
    os.environ.update(clean)
    files = StoreFiles(git_dir, os.environ)
    try:
        if mode == "after-sequence" and not wait_out_sequence(git_dir, params):
            os.close(lock_fd)
            append_log(files.log, "a rebase/cherry-pick is still stopped; the next event catches up", params)
            return 0
        state = RepoState(git_dir, work_tree, None)
        catch_up(state, files, lock_fd, params, background=mode != "foreground")
        if mode != "foreground":
            refit_when_idle(work_tree, files, params)
    except BaseException as exc:  # a background worker must log, never raise
        append_log(files.log, f"worker failed: {type(exc).__name__}: {exc}", params)
    return 0


# -- the foreground hook ------------------------------------------------------------------------


def hook_from_pre_commit_env(environ: Mapping[str, str]) -> tuple[str, list[str]]:
    """Which hook pre-commit is running us as (it passes no hook name, only variables)."""
    if "PRE_COMMIT_CHECKOUT_TYPE" in environ:
        refs = [environ.get("PRE_COMMIT_FROM_REF", ""), environ.get("PRE_COMMIT_TO_REF", "")]
        return "post-checkout", [*refs, environ["PRE_COMMIT_CHECKOUT_TYPE"]]
    if "PRE_COMMIT_REWRITE_COMMAND" in environ:
        return "post-rewrite", [environ["PRE_COMMIT_REWRITE_COMMAND"]]
    if "PRE_COMMIT_IS_SQUASH_MERGE" in environ:
        return "post-merge", [environ["PRE_COMMIT_IS_SQUASH_MERGE"]]
    return "post-commit", []


def run_hook(
    hook_name: str, argv: list[str], *, repo_path: str | None = None, params: HookParams | None = None
) -> int:
    """Handle one git hook event (``hook_name`` "" = infer it from pre-commit's variables).

    Always returns 0: nothing here may fail, slow down or change the git command that fired.
    """
    params = params or HookParams()
    try:
        with scrubbed_environ() as original:
            handle_event(hook_name, argv, repo_path, original, params)
    except BaseException as exc:  # includes Ctrl-C: the commit already happened
        log_unexpected(repo_path, exc, params)
    return 0


def handle_event(
    hook_name: str, argv: list[str], repo_path: str | None, original: Mapping[str, str], params: HookParams
) -> None:
    if not hook_name or (original.get("PRE_COMMIT") == "1" and not argv):
        hook_name, argv = hook_from_pre_commit_env(original)
    if hook_name == "post-checkout" and len(argv) >= 3 and argv[2] == "0":
        return  # a file checkout: HEAD did not move
    # the repository git runs the hook for: GIT_DIR/GIT_WORK_TREE decide, as they do for git
    state = read_repo_state(repo_path, scrubbed_env(original, keep=REPO_LOCATION_VARS))
    if state is None or state.head is None:
        return
    files = StoreFiles(state.git_dir, os.environ)
    os.makedirs(files.dir, exist_ok=True)
    in_sequence = hook_name != "post-rewrite" and sequence_in_progress(state.git_dir)
    if not in_sequence and store_is_fresh(files, state.head, hook_name, params):
        return
    lock_fd = try_lock(files.lock)
    if lock_fd is None:
        return  # the holder re-checks HEAD after releasing, so it catches this event up
    sync = original.get(SYNC_ENV) == "1" and not in_sequence
    mode = "after-sequence" if in_sequence else "foreground" if sync else "background"
    try:
        pid = spawn_worker(state, files, lock_fd, os.environ, mode=mode)
    finally:
        os.close(lock_fd)
    if in_sequence:
        announce_waiter(state.git_dir, pid)
    elif sync:
        os.waitpid(pid, 0)


def log_unexpected(repo_path: str | None, exc: BaseException, params: HookParams) -> None:
    try:
        state = read_repo_state(repo_path, scrubbed_env(os.environ, keep=REPO_LOCATION_VARS))
        if state is not None:
            files = StoreFiles(state.git_dir, os.environ)
            append_log(files.log, f"hook failed: {type(exc).__name__}: {exc}", params)
    except Exception:  # noqa: S110 - last resort of a hook that must exit 0
        pass


# -- entry point --------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    """``run NAME [ARGS...]`` (the installed scripts) or ``worker ...`` (the detached worker)."""
    if argv[:1] == ["run"]:
        name = argv[1] if len(argv) > 1 else ""
        if os.environ.get(SYNC_ENV) != "1":  # the script left it running detached: stay out of git's way
            with suppress(OSError):
                os.nice(HookParams().background_nice)
        return run_hook(name, argv[2:])
    if argv[:1] == ["worker"]:
        import argparse

        parser = argparse.ArgumentParser(prog="knowing_pr.hooks worker")
        parser.add_argument("--git-dir", required=True)
        parser.add_argument("--work-tree", required=True)
        parser.add_argument("--lock-fd", required=True, type=int)
        parser.add_argument("--mode", choices=("background", "after-sequence", "foreground"), required=True)
        args = parser.parse_args(argv[1:])
        return run_worker(args.git_dir, args.work_tree, args.lock_fd, mode=args.mode, params=HookParams())
    return 2
