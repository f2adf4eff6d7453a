#!/bin/sh
# knowing-pr-hook v1
# Keeps the knowing-pr index current after commits, merges, checkouts and rewrites.
# Written by `knowing-pr hook install`; `knowing-pr hook uninstall` removes it and restores
# the hook it replaced, which is kept next to it as <name>.legacy and runs first.
#
# It never fails a git command: the exit status is the replaced hook's (0 without one).
# Git only heeds it for post-checkout, where it becomes the status of `git checkout`.

# start templated
KNOWING_PR_PYTHON=''
KNOWING_PR_PATH=''
# end templated

hook_name=${0##*/}
status=0
if [ -x "$0.legacy" ]; then
    # the replaced hook gets the arguments and stdin (post-rewrite's old/new list) unchanged
    "$0.legacy" "$@"
    status=$?
fi

# The work below runs detached: git waits for this script, not for what it leaves behind, so
# `git commit` returns as soon as the replaced hook has (a few ms of shell, no interpreter).
# KNOWING_PR_HOOK_SYNC=1 runs it in the foreground instead (tests, benchmarks).
run_knowing_pr() {
    # Mid-rebase (or a cherry-pick/revert series) with a worker already waiting for it to end,
    # there is nothing to do: skip starting an interpreter for every picked commit.
    if [ "$hook_name" != post-rewrite ]; then
        git_dir=$(git rev-parse --absolute-git-dir 2>/dev/null)
        waiter_pid_file="$git_dir/knowing-pr/sequence-worker.pid"
        if [ -n "$git_dir" ] && [ -f "$waiter_pid_file" ] &&
            { [ -d "$git_dir/rebase-merge" ] || [ -d "$git_dir/rebase-apply" ] || [ -d "$git_dir/sequencer" ]; } &&
            read -r waiter <"$waiter_pid_file" && kill -0 "$waiter" 2>/dev/null; then
            return 0
        fi
    fi

    # The interpreter starts without `site` (-S, ~20 ms saved): the hook path needs only the
    # standard library and the directory that holds `knowing_pr`, which is appended after the
    # standard library. The cwd (the repository, untrusted) is removed from sys.path, so a
    # `knowing_pr/` directory in the repository is never imported.
    # Exit 3 means knowing-pr is not there any more (uninstalled): try the one on PATH.
    boot='import sys
del sys.path[0]
sys.path.append(sys.argv.pop(1))
try:
    from knowing_pr.hooks import main
except ImportError:
    raise SystemExit(3)
raise SystemExit(main(sys.argv[1:]))'

    found=3
    if [ -n "$KNOWING_PR_PYTHON" ] && [ -x "$KNOWING_PR_PYTHON" ]; then
        "$KNOWING_PR_PYTHON" -S -c "$boot" "$KNOWING_PR_PATH" run "$hook_name" "$@"
        found=$?
    fi
    if [ "$found" -eq 3 ] && command -v knowing-pr >/dev/null 2>&1; then
        knowing-pr hook run "$hook_name" "$@"
    fi
}

# `exec` redirects the subshell's own descriptors: a redirection on a function call would keep
# copies of git's pipe open (the shell saves them to restore later), and git waits for the pipe.
if [ "${KNOWING_PR_HOOK_SYNC:-}" = 1 ]; then
    (exec </dev/null >/dev/null 2>&1; run_knowing_pr "$@")
else
    (exec </dev/null >/dev/null 2>&1; run_knowing_pr "$@") &
fi
exit $status
