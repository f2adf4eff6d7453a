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
from knowing_pr.errors import KnowingPRError, UsageError

__all__ = ["main"]

FORMATS = ("markdown", "json", "xml")
MIN_BUDGET = 500


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"knowing-pr: error: {message}\n")
        raise SystemExit(2)


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
    p.add_argument("--repo", default=".", help="repository path (default: the current directory)")
    p.add_argument("--db", default=None, help="store file (default: <git dir>/knowing-pr/index.sqlite)")
    p.add_argument("--config", default=None, help="config file (default: .knowing-pr.yml in the repository)")


def _pack_options(p: argparse.ArgumentParser, *, budget_default: int | None = None) -> None:
    p.add_argument("--budget", type=_budget, default=budget_default, help="token budget (default 8000)")
    p.add_argument("--format", choices=FORMATS, default="markdown")
    p.add_argument("--out", default=None, help="write the pack to this file instead of stdout")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="knowing-pr", description="The code a pull request touches, in a budget.")
    parser.add_argument("--version", action="version", version=f"knowing-pr {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("index", help="index the repository (incremental unless --full)")
    _common(p)
    p.add_argument("--rev", default=None, help="commit to index (default HEAD)")
    p.add_argument("--full", action="store_true", help="rebuild from scratch")
    p.add_argument("--quiet", action="store_true", help="no progress or summary output")
    p.add_argument("--json", action="store_true", help="print the run report as JSON")

    p = sub.add_parser("stats", help="what the store holds and whether it is fresh")
    _common(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("pr", help="pack what a change touches")
    _common(p)
    p.add_argument("--base", default=None, help="base revision (default: merge-base with the default branch)")
    p.add_argument("--head", default=None, help="head revision (default HEAD)")
    p.add_argument("--files", nargs="+", default=None, metavar="PATH", help="changed paths instead of a diff")
    p.add_argument("--task", default=None, help="extra task text (e.g. the PR title and body)")
    _pack_options(p)

    p = sub.add_parser("files", help="symbols of these files plus their direct callers")
    p.add_argument("paths", nargs="+", metavar="PATH")
    _common(p)
    _pack_options(p)

    p = sub.add_parser("task", help="pack the code a task description needs")
    p.add_argument("description")
    _common(p)
    _pack_options(p)
    p.add_argument("--error-file", default=None, help="a log with a stack trace to seed from")
    p.add_argument("--diff", default=None, metavar="REV", help="also seed from the symbols REV..HEAD changed")
    p.add_argument(
        "--out-dir", default=None, help="write PACK.md, TASK.md, FILES.md, GRAPH.md, excerpts/, ctx.*"
    )

    p = sub.add_parser("why", help="explain a symbol's rank for a task (or a file's for a change)")
    p.add_argument("symbol", help="a symbol; with --change, a file")
    p.add_argument("--task", default=None)
    p.add_argument(
        "--change",
        action="extend",
        nargs="+",
        default=[],
        metavar="PATH",
        help="the changed files: explain SYMBOL's place in their ranked file list",
    )
    _common(p)
    p.add_argument("--budget", type=_budget, default=None)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("replay", help="print or verify a recorded pack")
    p.add_argument("pack_root", metavar="PACKROOT")
    _common(p)
    p.add_argument("--verify", action="store_true", help="recompute at the recorded commit and compare")
    p.add_argument("--manifest", default=None, help="a manifest file exported from another clone")
    p.add_argument("--format", choices=FORMATS, default="markdown")
    p.add_argument("--export", default=None, metavar="FILE", help="write the manifest to FILE")

    p = sub.add_parser("map", help="a ranked repository map (CONTEXT.md)")
    _common(p)
    p.add_argument(
        "--profile", choices=("default", "debug", "feature", "architecture", "refactor"), default="default"
    )
    p.add_argument("--query", default=None)
    p.add_argument("--budget", type=_budget, default=None)
    p.add_argument("--out", default=None)

    p = sub.add_parser("export", help="the whole graph: nodes and edges (jsonl, graphml or dot)")
    _common(p)
    p.add_argument("--format", choices=("jsonl", "graphml", "dot"), default="jsonl")
    p.add_argument("--out", default=None, help="write to this file instead of stdout")

    p = sub.add_parser("hook", help="git hooks that keep the index current")
    p.add_argument("action", choices=("install", "uninstall", "run", "status"))
    p.add_argument("hook_args", nargs="*", help=argparse.SUPPRESS)
    p.add_argument("--repo", default=".")
    p.add_argument("--hooks-path-ok", action="store_true", help="install into core.hooksPath")

    sub.add_parser("action", help="GitHub Action entry point (reads the GITHUB_* environment)")
    return parser


def _emit(text: str, out: str | None) -> None:
    if out:
        from pathlib import Path

        Path(out).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


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

    from knowing_pr import pipeline
    from knowing_pr.render import render_pack

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
        _emit(render_pack(pipeline.build_pr_pack(ws, request), args.format), args.out)
        return 0
    if command == "files":
        _emit(render_pack(pipeline.build_files_pack(ws, args.paths, fmt=args.format), args.format), args.out)
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
        from knowing_pr.render.whyfile import describe_file_explanation

        if args.change:
            data = pipeline.explain_file(ws, args.change, args.symbol)
            print(
                json.dumps(data, indent=2, sort_keys=True) if args.json else describe_file_explanation(data)
            )
            return 0
        if args.task is None:
            raise UsageError("why needs --task TEXT (a symbol's rank) or --change PATH (a file's)")
        data = pipeline.explain_symbol(ws, pipeline.TaskRequest(args.task), args.symbol)
        print(json.dumps(data, indent=2, sort_keys=True) if args.json else describe_explanation(data))
        return 0
    if command == "replay":
        request_ = pipeline.ReplayRequest(
            args.pack_root, args.verify, args.manifest, args.export, args.format
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
        sys.stderr.write(f"knowing-pr: error: {exc.message}\n")
        if exc.hint:
            sys.stderr.write(f"hint: {exc.hint}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        return _interrupted()
    except sqlite3.Error as exc:  # e.g. SQLITE_FULL or an I/O error in the middle of a statement
        sys.stderr.write(f"knowing-pr: error: the store failed: {exc}\n")
        sys.stderr.write("hint: the last complete index is kept; fix the cause (disk space?) and re-run\n")
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


#: what each command imports first (the rest of the pipeline is loaded by these)
_MODULES_OF_COMMAND = {"hook": "knowing_pr.hooks", "action": "knowing_pr.action"}


def _preload(command: str) -> None:
    import importlib

    importlib.import_module(_MODULES_OF_COMMAND.get(command, "knowing_pr.pipeline"))


def _interrupted() -> int:
    sys.stderr.write("knowing-pr: interrupted; the store keeps its last complete index\n")
    return 130


if __name__ == "__main__":
    raise SystemExit(main())
