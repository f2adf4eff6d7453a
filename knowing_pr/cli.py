"""argv → one user operation → exit code (0 success, 1 runtime failure, 2 usage or input error).

The only module that prints errors: ``knowing-pr: error: …`` then ``hint: …``, never a
traceback. Heavy modules are imported inside the command that needs them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from knowing_pr import __version__
from knowing_pr.errors import KnowingPRError

__all__ = ["main"]

FORMATS = ("markdown", "json", "xml")
MIN_BUDGET = 500


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        """One error line and one hint line, like every other input error (no usage block)."""
        _say(f"knowing-pr: error: {' '.join(message.split())}")
        _say(f"hint: see '{self.prog} --help'")
        raise SystemExit(2)


def _say(line: str) -> None:
    """One line on stderr; bytes of a path or argument that are not UTF-8 shown escaped (``\\udcff``)
    whatever stderr's own error handler is."""
    sys.stderr.write(line.encode("utf-8", "backslashreplace").decode("utf-8") + "\n")


def _path(value: str) -> str:
    """A file or directory path: any bytes the OS allows, but not nothing."""
    if not value:
        raise argparse.ArgumentTypeError("the path is empty")
    return value


def _revision(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError("the revision is empty")
    return value


def _text(value: str) -> str:
    """Free text (a task, a query, a symbol): it is searched and printed, so it must be UTF-8."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise argparse.ArgumentTypeError(
            f"not valid UTF-8 text: {value.encode('utf-8', 'surrogateescape')[:60]!r}"
        ) from None
    return value


def _budget(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"budget must be a whole number of tokens, got {value!r}") from None
    if number < MIN_BUDGET or number > 10_000_000:
        raise argparse.ArgumentTypeError(
            f"budget must be between {MIN_BUDGET:,} and 10,000,000 tokens, got {number:,}"
            " (a pack's header, edges and PackRoot alone take a few hundred tokens)"
        )
    return number


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repo", type=_path, default=".", help="repository path (default: the current directory)")
    p.add_argument(
        "--db", type=_path, default=None, help="store file (default: <git dir>/knowing-pr/index.sqlite)"
    )
    p.add_argument(
        "--config", type=_path, default=None, help="config file (default: .knowing-pr.yml in the repository)"
    )


def _pack_options(p: argparse.ArgumentParser, *, budget_default: int | None = None) -> None:
    p.add_argument("--budget", type=_budget, default=budget_default, help="token budget (default 8000)")
    p.add_argument("--format", choices=FORMATS, default="markdown")
    p.add_argument("--out", type=_path, default=None, help="write the pack to this file instead of stdout")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="knowing-pr", description="The code a pull request touches, in a budget.")
    parser.add_argument("--version", action="version", version=f"knowing-pr {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("index", help="index the repository (incremental unless --full)")
    _common(p)
    p.add_argument("--rev", type=_revision, default=None, help="commit to index (default HEAD)")
    p.add_argument("--full", action="store_true", help="rebuild from scratch")
    p.add_argument("--quiet", action="store_true", help="no progress or summary output")
    p.add_argument("--json", action="store_true", help="print the run report as JSON")

    p = sub.add_parser("stats", help="what the store holds and whether it is fresh")
    _common(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("pr", help="pack what a change touches")
    _common(p)
    p.add_argument(
        "--base",
        type=_revision,
        default=None,
        help="base revision (default: merge-base with the default branch)",
    )
    p.add_argument("--head", type=_revision, default=None, help="head revision (default HEAD)")
    p.add_argument("--files", nargs="+", default=None, metavar="PATH", help="changed paths instead of a diff")
    p.add_argument("--task", type=_text, default=None, help="extra task text (e.g. the PR title and body)")
    _pack_options(p)

    p = sub.add_parser("files", help="symbols of these files plus their direct callers")
    p.add_argument("paths", nargs="+", metavar="PATH")
    _common(p)
    _pack_options(p)

    p = sub.add_parser("task", help="pack the code a task description needs")
    p.add_argument("description", type=_text)
    _common(p)
    _pack_options(p)
    p.add_argument("--error-file", type=_path, default=None, help="a log with a stack trace to seed from")
    p.add_argument(
        "--diff",
        type=_revision,
        default=None,
        metavar="REV",
        help="also seed from the symbols REV..HEAD changed",
    )
    p.add_argument(
        "--out-dir",
        type=_path,
        default=None,
        help="write PACK.md, TASK.md, FILES.md, GRAPH.md, excerpts/, ctx.*",
    )

    p = sub.add_parser("why", help="explain a symbol's rank for a task")
    p.add_argument("symbol", type=_text)
    p.add_argument("--task", type=_text, required=True)
    _common(p)
    p.add_argument("--budget", type=_budget, default=None)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("replay", help="print or verify a recorded pack")
    p.add_argument("pack_root", metavar="PACKROOT")
    _common(p)
    p.add_argument("--verify", action="store_true", help="recompute at the recorded commit and compare")
    p.add_argument("--manifest", type=_path, default=None, help="a manifest file exported from another clone")
    p.add_argument("--format", choices=FORMATS, default="markdown")
    p.add_argument("--export", type=_path, default=None, metavar="FILE", help="write the manifest to FILE")
    p.add_argument(
        "--pr",
        default=None,
        metavar="N|URL",
        help="also look in this pull request's comments (a number, with GITHUB_REPOSITORY or the "
        "origin remote naming the repository, or the pull request's URL)",
    )

    p = sub.add_parser("map", help="a ranked repository map (CONTEXT.md)")
    _common(p)
    p.add_argument(
        "--profile", choices=("default", "debug", "feature", "architecture", "refactor"), default="default"
    )
    p.add_argument("--query", type=_text, default=None)
    p.add_argument("--budget", type=_budget, default=None)
    p.add_argument("--out", type=_path, default=None)

    p = sub.add_parser("export", help="the whole graph: nodes and edges (jsonl, graphml or dot)")
    _common(p)
    p.add_argument("--format", choices=("jsonl", "graphml", "dot"), default="jsonl")
    p.add_argument("--out", type=_path, default=None, help="write to this file instead of stdout")

    p = sub.add_parser("hook", help="git hooks that keep the index current")
    p.add_argument("action", choices=("install", "uninstall", "run", "status"))
    p.add_argument("hook_args", nargs="*", help=argparse.SUPPRESS)
    p.add_argument("--repo", type=_path, default=".")
    p.add_argument("--hooks-path-ok", action="store_true", help="install into core.hooksPath")

    sub.add_parser("action", help="GitHub Action entry point (reads the GITHUB_* environment)")

    p = sub.add_parser("mcp", help="a Model Context Protocol server over stdio (tools for agents)")
    _common(p)
    return parser


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse an output path that cannot be written before any work (nothing is stored then)."""
    from knowing_pr.pipeline.output import check_output_dir, check_output_file

    example = (
        "graph.jsonl" if args.command == "export" else "CONTEXT.md" if args.command == "map" else "pack.md"
    )
    if getattr(args, "out", None) is not None:
        check_output_file("--out", args.out, example=example)
    if getattr(args, "export", None) is not None:
        check_output_file("--export", args.export, example="manifest.json")
    if getattr(args, "out_dir", None) is not None:
        check_output_dir("--out-dir", args.out_dir)


def _emit(text: str, out: str | None) -> None:
    """``text`` to ``--out`` (atomically) or to standard output."""
    if out is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    from knowing_pr.pipeline.output import check_output_file, write_text

    write_text("--out", check_output_file("--out", out), text)


def _warn(warnings: list[str]) -> None:
    for warning in warnings:
        _say(f"knowing-pr: warning: {warning}")


def _run(args: argparse.Namespace) -> int:
    command = args.command
    if command == "hook":
        from knowing_pr import hooks

        if args.action == "run":
            return hooks.run_hook(
                args.hook_args[0] if args.hook_args else "",  # "": pre-commit says which hook
                args.hook_args[1:],
                repo_path=args.repo,
            )
        if args.action == "install":
            for line in hooks.install_hooks(args.repo, allow_hooks_path=args.hooks_path_ok):
                print(line)
            return 0
        if args.action == "uninstall":
            for line in hooks.uninstall_hooks(args.repo):
                print(line)
            return 0
        print(json.dumps(hooks.hook_status(args.repo), indent=2, sort_keys=True, default=str))
        return 0
    if command == "action":
        from knowing_pr.action import main as action_main

        return action_main()
    if command == "mcp":
        from knowing_pr.mcp import serve

        return serve(args.repo, db=args.db, config=args.config)

    from knowing_pr import pipeline
    from knowing_pr.render import render_pack

    _check_outputs(args)
    if command == "index":
        report = pipeline.update_index(
            args.repo,
            rev=args.rev,
            full=args.full,
            db=args.db,
            config=args.config,
            progress=_print_progress if not args.quiet and sys.stderr.isatty() else None,
        )
        if args.json:
            print(json.dumps(report.as_dict(), indent=2, sort_keys=True))
        elif not args.quiet:
            print(pipeline.describe_index_report(report))
        return 0
    if command == "stats":
        stats = pipeline.store_stats(args.repo, db=args.db, config=args.config)
        print(json.dumps(stats, indent=2, sort_keys=True) if args.json else pipeline.describe_stats(stats))
        return 0
    ws = pipeline.open_workspace(
        args.repo, db=args.db, config=args.config, budget=getattr(args, "budget", None)
    )
    if command == "pr":
        request = pipeline.PrRequest(
            base=args.base, head=args.head, files=tuple(args.files or ()), task=args.task, fmt=args.format
        )
        pack = pipeline.build_pr_pack(ws, request)
        _warn(ws.warnings)
        _emit(render_pack(pack, args.format), args.out)
        return 0
    if command == "files":
        pack = pipeline.build_files_pack(ws, args.paths, fmt=args.format)
        _warn(ws.warnings)
        _emit(render_pack(pack, args.format), args.out)
        return 0
    if command == "task":
        from knowing_pr.task import read_error_file

        error_text = read_error_file(args.error_file) if args.error_file else None
        run = pipeline.build_task_pack(
            ws, pipeline.TaskRequest(args.description, error_text, args.diff, args.format)
        )
        if args.out_dir:
            pipeline.write_task_folder(ws, run, args.out_dir)
        _emit(render_pack(run.pack, args.format), args.out)
        return 0
    if command == "why":
        from knowing_pr.render.why import describe_explanation

        data = pipeline.explain_symbol(ws, pipeline.TaskRequest(args.task), args.symbol)
        print(json.dumps(data, indent=2, sort_keys=True) if args.json else describe_explanation(data))
        return 0
    if command == "replay":
        request_ = pipeline.ReplayRequest(
            args.pack_root, args.verify, args.manifest, args.export, args.format, args.pr
        )
        code, text = pipeline.replay(ws, request_)
        _emit(text, None)
        return code
    if command == "map":
        _emit(pipeline.build_map(ws, pipeline.MapRequest(args.profile, args.query)), args.out)
        return 0
    if command == "export":
        pipeline.export_graph(ws, args.format, args.out)
        return 0
    raise AssertionError(command)


def _print_progress(done: int, total: int) -> None:
    """A progress bar on stderr while an index run parses files."""
    if done == total or done % 25 == 0:
        width = 30
        filled = int(width * done / max(total, 1))
        sys.stderr.write(f"\rindexing [{'#' * filled}{'.' * (width - filled)}] {done}/{total} files")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()


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


def main(argv: Sequence[str] | None = None) -> int:
    import contextlib
    import signal
    import sqlite3

    parser = build_parser()
    args = parser.parse_args(argv)
    previous: dict[int, Any] = {}
    _received_signals.clear()  # in-process callers run main() more than once
    try:
        with contextlib.suppress(ValueError):  # not the main thread: leave signals alone
            # Until the command's modules are imported a signal just ends the process: nothing
            # is open yet. An interrupt raised inside an extension's import surfaces as an
            # ImportError, and inside pygit2's cffi set-up it even makes Python exit by SIGINT
            # after a clean 130.
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.SIG_DFL)
        _preload(args.command)
        with contextlib.suppress(ValueError):
            # Then SIGTERM unwinds like Ctrl-C: the open transaction rolls back and its marker
            # is removed. Installed inside the ``try``, so a signal right after it is caught too.
            for signum in (signal.SIGTERM, signal.SIGINT):
                replaced = signal.signal(signum, _interrupt)
                previous.setdefault(signum, replaced)  # SIGINT's is the one before SIG_DFL
        sys.unraisablehook = _quiet_unraisable
        return _run(args)
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
    except Exception:
        if _received_signals:
            return _interrupted()
        raise
    finally:
        # a signal landing here, after the work ended, raises inside this block: the result
        # stands, and the unwinding it asked for has already happened
        with contextlib.suppress(KeyboardInterrupt):
            for number, handler in previous.items():
                signal.signal(number, handler)


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
    "map": "knowing_pr.pipeline.map",
    "export": "knowing_pr.pipeline.export",
}


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
