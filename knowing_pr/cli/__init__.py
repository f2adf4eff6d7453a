"""argv → one user operation → exit code (0 success, 1 runtime failure, 2 usage or input error,
130 interrupted).

The only place that prints errors: ``knowing-pr: error: …`` then ``hint: …``, never a traceback.
``args.py`` is the grammar, ``commands.py`` runs the subcommand through the pipeline, this module
turns errors and signals into exit codes. Heavy modules are imported inside the command that
needs them.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from typing import Any

from knowing_pr.cli.args import build_parser
from knowing_pr.cli.commands import run_command
from knowing_pr.cli.say import say as _say
from knowing_pr.errors import KnowingPRError

__all__ = ["build_parser", "main", "run"]

#: signals this process received: any failure that follows one is that interruption (an
#: interrupt inside an extension module's import, for one, surfaces as an ImportError)
_received_signals: list[int] = []


def _interrupt(signum: int, frame: object) -> None:
    """SIGINT/SIGTERM → KeyboardInterrupt, which unwinds the run (the open transaction rolls
    back and its marker is removed)."""
    import signal

    _received_signals.append(signum)
    if signum == signal.SIGTERM:
        signal.signal(signum, signal.SIG_IGN)  # one request to stop unwinds; a second must not cut that short
    raise KeyboardInterrupt


def _quiet_unraisable(unraisable: sys.UnraisableHookArgs) -> None:
    """An interrupt that lands inside a finaliser (``__del__``, a generator's close) is reported
    by Python as "Exception ignored … Traceback"; the unwinding already says what happened."""
    if not isinstance(unraisable.exc_value, KeyboardInterrupt):
        sys.__unraisablehook__(unraisable)


def main(argv: Sequence[str] | None = None, *, fresh_process: bool = False) -> int:
    """Run one command; ``fresh_process`` (the console script): this process does nothing else,
    so a ``pr`` may fork a git reader first (``knowing_pr.git.served``)."""
    import contextlib
    import gc
    import signal
    import sqlite3

    words = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(words).parse_args(words)
    previous: dict[int, Any] = {}
    _received_signals.clear()  # in-process callers run main() more than once
    collecting, froze = gc.isenabled(), False
    # A command runs for a moment and makes little cyclic garbage, while the cycle collector's
    # passes walk every imported module and the run's records; reference counting still frees
    # everything. The server stays without it too, the imported modules frozen out of every
    # pass: its toolbox collects after every ``mcp.tools.COLLECT_EVERY`` answers (what a fresh
    # ``pr`` takes now: bench/pr_start.py; what an answer leaves: bench/mcp_garbage.py).
    gc.disable()
    try:
        with contextlib.suppress(ValueError):  # not the main thread: leave signals alone
            # Until the command's modules are imported a signal just ends the process: nothing
            # is open yet (a git reader it started ends too). An interrupt raised inside an
            # extension's import surfaces as an ImportError, and inside pygit2's cffi set-up it
            # even makes Python exit by SIGINT after a clean 130.
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.SIG_DFL)
        if fresh_process and args.command == "pr":
            _start_git_reader(args)
        _preload(args.command)
        if args.command in _LONG_RUNNING and not gc.get_freeze_count():
            gc.freeze()
            froze = True
        with contextlib.suppress(ValueError):
            # Then SIGTERM unwinds like Ctrl-C: the open transaction rolls back and its marker
            # is removed. Installed inside the ``try``, so a signal right after it is caught too.
            for signum in (signal.SIGTERM, signal.SIGINT):
                replaced = signal.signal(signum, _interrupt)
                previous.setdefault(signum, replaced)  # SIGINT's is the one before SIG_DFL
        sys.unraisablehook = _quiet_unraisable
        return run_command(args)
    except KnowingPRError as exc:
        _say(f"knowing-pr: error: {exc.message}")
        if exc.hint:
            _say(f"hint: {exc.hint}")
        return exc.exit_code
    except KeyboardInterrupt:
        return _interrupted()
    except sqlite3.Error as exc:  # e.g. SQLITE_FULL or an I/O error in the middle of a statement
        _say(f"knowing-pr: error: the store failed: {exc}")
        _say(f"hint: {_store_failure_hint(exc)}")
        return 1
    except BrokenPipeError:
        return 1
    except OSError as exc:  # the system refused something: the output's disk is full, say
        if _received_signals:
            return _interrupted()
        where = f" ({exc.filename})" if exc.filename else ""
        _say(f"knowing-pr: error: {exc.strerror or exc}{where}")
        return 1
    except Exception:
        if _received_signals:
            return _interrupted()
        raise
    finally:
        # a signal landing here, after the work ended, raises inside these blocks: the result
        # stands, and the unwinding it asked for has already happened
        with contextlib.suppress(KeyboardInterrupt):
            for number, handler in previous.items():
                signal.signal(number, handler)
        with contextlib.suppress(KeyboardInterrupt):  # an in-process caller's collector as it was
            if froze:
                gc.unfreeze()
            # a fresh process ends next (``run``): its collector stays off, or its first pass,
            # due at once, would walk every object the imports and the run made (12 ms of
            # collector passes on fastapi's change before, 1 ms after: bench/pr_profile.py)
            if collecting and not fresh_process:
                gc.enable()


#: what each command imports first, before the signal handlers are installed (the pipeline's
#: names load their own module on first use, so each command imports only what it runs)
_MODULES_OF_COMMAND = {
    "hook": "knowing_pr.hooks",
    "action": "knowing_pr.action",
    "mcp": "knowing_pr.mcp",
    "index": "knowing_pr.pipeline.workspace",
    "stats": "knowing_pr.pipeline.workspace",
    "pr": "knowing_pr.pipeline.pr",
    "files": "knowing_pr.pipeline.pr",
    "task": "knowing_pr.pipeline.task",
    "why": "knowing_pr.pipeline.why",
    "replay": "knowing_pr.pipeline.verify",
    "diff": "knowing_pr.pipeline.packdiff",
    "map": "knowing_pr.pipeline.map",
    "export": "knowing_pr.pipeline.export",
}


def run() -> int:
    """The console script (and ``python -m knowing_pr``): ``main`` in a process that ends right
    after it (a ``pr`` may fork a git reader first, stopped here). The process then ends as
    ``_end_process`` says. From then on SIGINT and SIGTERM are ignored: the result stands, and a
    signal landing at exit printed a traceback."""
    _open_closed_standard_streams()
    try:
        code = main(fresh_process=True)
    finally:
        _after_the_work()
    _end_process(code)
    return code


def _open_closed_standard_streams() -> None:
    """A process started with a standard descriptor closed (``>&-``) would give that number to
    the next file it opens (the store, say), where a stray write to the stream would land, and
    Python leaves the stream None, which the output code does not expect. Such a descriptor is
    opened on the null device first: what is written there is dropped, as ``print`` drops it."""
    import os

    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            if getattr(sys, name) is None:
                setattr(sys, name, open(fd, mode, encoding="utf-8", closefd=False))  # noqa: SIM115


def _end_process(code: int) -> None:
    """End the process with ``code`` the way the interpreter ends it, less the teardown of every
    module and object one by one, which nothing needs here: the store is closed, and what a
    command writes goes through the standard streams, flushed here (a failed flush ends with
    120, as the interpreter's own exit does). The exit handlers run. Returns (and the
    interpreter exits as usual) while a thread other than a daemon is still running."""
    import atexit
    import os

    threading = sys.modules.get("threading")
    if threading is not None and any(
        t.is_alive() and not t.daemon and t is not threading.main_thread() for t in threading.enumerate()
    ):
        return
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):  # never None: ``_open_closed_standard_streams``
        try:
            stream.flush()
        except (OSError, ValueError):
            code = 120
    os._exit(code)


def _after_the_work() -> None:
    import gc
    import signal

    try:
        # the work is done and its result stands: a signal from here on changes nothing
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_IGN)
    except (KeyboardInterrupt, ValueError):  # ValueError: not the main thread
        pass
    with contextlib.suppress(KeyboardInterrupt):  # one that landed before the signals were ignored
        _stop_git_reader()  # killed, not waited for: the process ends next and the system reaps it
        # what the run made is frozen out of the cycle collector: should the interpreter exit as
        # usual (``_end_process``), its last collection would walk every module and record
        gc.freeze()


def _start_git_reader(args: Any) -> None:
    """A reader process opens the repository and works out the change's diff (pygit2 and the
    diff) while this process imports the ranking (``knowing_pr.git.served``)."""
    from knowing_pr.git.served import start_reader

    diff = not args.files
    start_reader(
        args.repo,
        base=args.base if diff else None,
        head=args.head,
        with_diff=diff,
        # the base's definitions of the changed files (``knowing_pr.pipeline.basedefs``)
        preparation=("knowing_pr.pipeline.basedefs", "prepare_in_reader", (args.config,)),
    )


def _stop_git_reader() -> None:
    if "knowing_pr.git.served" in sys.modules:
        from knowing_pr.git.served import stop_reader

        stop_reader(reap=False)


#: commands that serve until stopped: what the imports made is frozen out of their collections
_LONG_RUNNING = frozenset({"mcp"})


def _preload(command: str) -> None:
    import importlib
    import os

    # knowing-pr does no dense linear algebra: one BLAS thread, not a pool started (and its
    # buffers allocated) for every core at numpy's import, which costs a fresh process ~25 ms
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    importlib.import_module(_MODULES_OF_COMMAND.get(command, "knowing_pr.pipeline"))


def _store_failure_hint(exc: BaseException) -> str:
    """What to do about a store that failed in the middle of a statement, by its cause."""
    text = str(exc).lower()
    if "readonly" in text or "read-only" in text:
        return (
            "the store is read-only: make it and its directory writable, or point --db or "
            "KNOWING_PR_DB at a writable place"
        )
    if "full" in text:
        return "the disk is full: the last complete index is kept; free some space and re-run"
    return "the last complete index is kept; fix the cause and re-run"


def _interrupted() -> int:
    sys.stderr.write("knowing-pr: interrupted; the store keeps its last complete index\n")
    return 130


if __name__ == "__main__":
    raise SystemExit(main())
