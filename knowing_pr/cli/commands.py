"""A parsed command line → the pipeline function it names → the exit code (what each subcommand
does, and nothing about errors or signals: ``cli/__init__.py`` handles those)."""

from __future__ import annotations

import argparse
import json
import sys

from knowing_pr.cli.say import say as _say

__all__ = ["run_command"]


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
    if getattr(args, "manifest_out", None) is not None:
        check_output_file("--manifest", args.manifest_out, example="manifest.json")
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
            print(
                json.dumps(data, indent=2, sort_keys=True) if args.json else describe_file_explanation(data)
            )
            return 0
        if args.task is None:
            from knowing_pr.errors import UsageError

            raise UsageError("why needs --task TEXT (a symbol's rank) or --change PATH (a file's)")
        data = pipeline.explain_symbol(ws, pipeline.TaskRequest(args.task), args.symbol)
        print(json.dumps(data, indent=2, sort_keys=True) if args.json else describe_explanation(data))
        return 0
    if command == "replay":
        request_ = pipeline.ReplayRequest(
            args.pack_root, args.verify, args.manifest, args.export, args.format, args.pr, args.quiet
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
