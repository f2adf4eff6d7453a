"""Git hook events → a store brought to HEAD in the background, without ever blocking git.

``install_hooks`` writes four small shell scripts (post-commit, post-merge, post-checkout,
post-rewrite) into the hooks directory git reports; a hook that was already there is kept as
``<name>.legacy`` and runs first. ``uninstall_hooks`` undoes that, ``hook_status`` reports it.

Each script calls ``run_hook``, which does O(1) work in the foreground and always returns 0:

* it reads the repository from the hook's environment, then drops every ``GIT_*`` variable
  (git exports ``GIT_DIR``/``GIT_INDEX_FILE`` to hooks) and sets ``GIT_OPTIONAL_LOCKS=0``;
* ``post-checkout`` with flag 0 (a file checkout) changes no commit: nothing to do;
* if the store already reflects HEAD (``meta.indexed_commit``), nothing to do;
* otherwise it takes ``<store dir>/index.lock`` (``flock``, non-blocking) and hands it to
  one detached worker process. If the lock is held, the holder catches up instead: a
  holder always re-checks HEAD after releasing the lock, so no event is lost and a storm
  of events (a rebase fires post-commit per pick) coalesces into one or a few index runs;
* during a rebase, cherry-pick or revert sequence, the worker waits for the sequence to end
  and indexes once; no index run happens on an intermediate commit.

``KNOWING_PR_HOOK_SYNC=1`` makes the hook wait for its worker (still exit 0; a rebase or
cherry-pick series is still caught up in the background, after it ends). Errors
and one line per index run go to ``<store dir>/hook.log`` (capped; one rotated copy).

Modules: ``params`` (``HookParams``), ``repo`` (scrubbed environment, git without
``subprocess``, ``RepoState``), ``files`` (store path, indexed commit, lock, log), ``run``
(``run_hook``, the worker, ``main``) and ``install`` (install, uninstall, status, script
rendering); ``python -m knowing_pr.hooks`` runs ``main`` through ``__main__``.

This package is the hook's start-up path, and every git command pays for it: at module level
its modules import only ``os``, ``sys``, ``time`` and ``contextlib`` (no ``subprocess``,
``pathlib``, ``dataclasses`` or ``knowing_pr.config``: ~15 ms of CPU together); paths are
plain strings and git is started with ``os.posix_spawnp``.
"""

from __future__ import annotations

from knowing_pr.hooks.files import append_log as append_log  # used by tests; not in __all__ (as before)
from knowing_pr.hooks.files import read_indexed_commit as read_indexed_commit  # used by tests and bench
from knowing_pr.hooks.files import store_path
from knowing_pr.hooks.install import (
    HOOK_MARKER,
    HOOK_NAMES,
    LEGACY_SUFFIX,
    hook_status,
    install_hooks,
    is_our_script,
    render_hook_script,
    uninstall_hooks,
)
from knowing_pr.hooks.params import HookParams
from knowing_pr.hooks.run import SYNC_ENV, main, run_hook
from knowing_pr.hooks.run import WAITER_PID_NAME as WAITER_PID_NAME  # used by tests and bench
from knowing_pr.hooks.run import hook_from_pre_commit_env as hook_from_pre_commit_env  # used by tests

__all__ = [
    "HOOK_MARKER",
    "HOOK_NAMES",
    "LEGACY_SUFFIX",
    "SYNC_ENV",
    "HookParams",
    "hook_status",
    "install_hooks",
    "is_our_script",
    "main",
    "render_hook_script",
    "run_hook",
    "store_path",
    "uninstall_hooks",
]
