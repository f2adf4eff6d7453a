"""A parsed command line → the pipeline function it names → the exit code (what each subcommand
does, and nothing about errors or signals: ``cli/__init__.py`` handles those)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from knowing_pr.cli.say import say as _say

if TYPE_CHECKING:
    from knowing_pr.pipeline import Workspace

__all__ = ["run_command"]


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse an output path that cannot be written before any work (nothing is stored then)."""
    from knowing_pr.pipeline.output import check_output_dir, check_output_file

    example = (
        "graph.jsonl"
        if args.command == "export"
        else "CONTEXT.md"
        if args.command == "map"
        else "diff.md"
        if args.command == "diff"
        else "pack.md"
    )
    if getattr(args, "out", None) is not None:
        check_output_file("--out", args.out, example=example)
    if getattr(args, "export", None) is not None:
        check_output_file("--export", args.export, example="manifest.json")
    if getattr(args, "manifest_out", None) is not None:
        check_output_file("--manifest", args.manifest_out, example="manifest.json")
    if getattr(args, "out_dir", None) is not None:
        check_output_dir("--out-dir", args.out_dir)


def _emit(text: str, out: str | None) -> None:
    """``text`` to ``--out`` (atomically) or to standard output."""
    if out is None:
        _show(text)
        return
    from knowing_pr.pipeline.output import check_output_file, write_text

    write_text("--out", check_output_file("--out", out), text)


def _show(text: str) -> None:
    """``text`` on standard output with no control or invisible character from a repository
    left raw (``knowing_pr/visible.py``): renderers escape them already, this is the last word."""
    from knowing_pr.visible import terminal_text

    shown = terminal_text(text)
    sys.stdout.write(shown if shown.endswith("\n") else shown + "\n")


def _warn(warnings: list[str]) -> None:
    for warning in warnings:
        _say(f"knowing-pr: warning: {warning}")


def _warn_of_settings(ws: Workspace) -> None:
    """A warning per removed setting the settings file still sets (it is ignored)."""
    from knowing_pr.config import removed_setting_warnings

    _warn(removed_setting_warnings(ws.settings))


def run_command(args: argparse.Namespace) -> int:
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
                _show(line)
            return 0
        if args.action == "uninstall":
            for line in hooks.uninstall_hooks(args.repo):
                _show(line)
            return 0
        print(json.dumps(hooks.hook_status(args.repo), indent=2, sort_keys=True, default=str))
        return 0
    if command == "action":
        from knowing_pr.action import main as action_main

        return action_main()
    from knowing_pr import pipeline

    if command == "mcp":
        from knowing_pr.mcp.server import serve  # the SDK is imported when serving only

        return serve(args.repo, db=args.db, config=args.config, warn=_warn)

    _check_outputs(args)
    if command == "why":
        _why_target(args)
    if command == "index":
        report = pipeline.update_index(
            args.repo,
            rev=args.rev,
            full=args.full,
            db=args.db,
            config=args.config,
            quiet=args.quiet,
            warn=_warn,
        )
        if args.json:
            _show(json.dumps(report.as_dict(), indent=2, sort_keys=True))
        elif not args.quiet:
            _show(pipeline.describe_index_report(report))
        return 0
    if command == "stats":
        stats = pipeline.store_stats(args.repo, db=args.db, config=args.config, warn=_warn)
        _show(json.dumps(stats, indent=2, sort_keys=True) if args.json else pipeline.describe_stats(stats))
        return 0
    ws = pipeline.open_workspace(
        args.repo, db=args.db, config=args.config, budget=getattr(args, "budget", None)
    )
    _warn_of_settings(ws)
    if command in ("pr", "files", "task") and not args.quiet:
        ws.show_progress()  # a first run indexes the repository: minutes on a large one
    try:
        return _run_on_workspace(command, args, ws)
    finally:
        ws.end_progress()


def _run_on_workspace(command: str, args: argparse.Namespace, ws: Workspace) -> int:
    from knowing_pr import pipeline
    from knowing_pr.render import render_pack

    if command == "pr":
        request = pipeline.PrRequest(
            base=args.base,
            head=args.head,
            files=tuple(args.files or ()),
            task=args.task,
            fmt=args.format,
            author=args.author,
        )
        pack = pipeline.build_pr_pack(ws, request)
        _warn(ws.warnings)
        _emit(render_pack(pack, args.format), args.out)
        if args.record or args.manifest_out:
            pipeline.record_pack(
                ws, pack.pack_root, note=args.record == "note", manifest_path=args.manifest_out
            )
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
        _warn(ws.warnings)
        if args.out_dir:
            pipeline.write_task_folder(ws, run, args.out_dir)
        _emit(render_pack(run.pack, args.format), args.out)
        return 0
    if command == "why":
        from knowing_pr.render.why import describe_explanation

        if args.change:
            from knowing_pr.render.whyfile import describe_file_explanation

            data = pipeline.explain_file(ws, args.change, args.symbol)
            _warn(ws.warnings)
            _show(
                json.dumps(data, indent=2, sort_keys=True) if args.json else describe_file_explanation(data)
            )
            return 0
        if args.task is None:
            from knowing_pr.errors import UsageError

            raise UsageError("why needs --task TEXT (a symbol's rank) or --change PATH (a file's)")
        data = pipeline.explain_symbol(ws, pipeline.TaskRequest(args.task), args.symbol)
        _show(json.dumps(data, indent=2, sort_keys=True) if args.json else describe_explanation(data))
        return 0
    if command == "replay":
        request_ = pipeline.ReplayRequest(
            args.pack_root, args.verify, args.manifest, args.export, args.format, args.pr, args.quiet
        )
        code, text = pipeline.replay(ws, request_)
        _warn(ws.warnings)
        _emit(text, None)
        return code
    if command == "diff":
        diff = pipeline.DiffRequest(args.before, args.after, args.format, args.pr)
        comparison = pipeline.diff_packs(ws, diff)
        _warn(ws.warnings)
        _emit(pipeline.render_diff(comparison, args.format), args.out)
        return 0
    if command == "map":
        _emit(pipeline.build_map(ws, pipeline.MapRequest(args.profile, args.query)), args.out)
        return 0
    if command == "export":
        pipeline.export_graph(ws, args.format, args.out)
        return 0
    raise AssertionError(command)


def _why_target(args: argparse.Namespace) -> None:
    """``why --change A B FILE``, as the README writes it: ``--change`` took every path, so the
    last is the FILE to explain (``why FILE --change A B`` says the same)."""
    if args.symbol is not None:
        return
    if len(args.change) >= 2:
        args.symbol = args.change.pop()
        return
    from knowing_pr.errors import UsageError

    raise UsageError(
        "why needs a SYMBOL (with --task) or a FILE (after the --change paths)",
        hint='knowing-pr why --task "TEXT" SYMBOL, or knowing-pr why --change PATH... FILE',
    )
