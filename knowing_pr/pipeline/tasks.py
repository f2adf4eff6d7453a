"""Task text → ``task`` packs, ``why`` explanations and the ``map``."""

from __future__ import annotations

import argparse
from pathlib import Path

from knowing_pr.indexer import open_store
from knowing_pr.pipeline.workspace import ensure_fresh, open_workspace, workspace_for

__all__ = ["map_command", "task_command", "why_command"]


def task_command(args: argparse.Namespace) -> str:
    """ForTask: the pack for a task description (+ --error-file, --diff); --out-dir writes the
    PACK.md/TASK.md/FILES.md/GRAPH.md/excerpts/ctx.json/ctx.tgz folder too."""
    from knowing_pr.render import render_pack
    from knowing_pr.task import build_task_pack, read_error_file, write_task_folder

    ws = workspace_for(args, args.budget)
    error_text = read_error_file(args.error_file) if args.error_file else None
    pack, analysis = build_task_pack(
        ws, args.description, fmt=args.format, error_text=error_text, diff_rev=args.diff
    )
    if args.out_dir:
        write_task_folder(ws, pack, analysis, args.out_dir)
    return render_pack(pack, args.format)


def why_command(args: argparse.Namespace) -> str:
    """Why a symbol ranks where it does for a task (or where it dropped out); --json for data."""
    import json

    from knowing_pr.task import describe_explanation, explain_symbol

    ws = workspace_for(args, args.budget)
    data = explain_symbol(ws, args.task, args.symbol)
    return json.dumps(data, indent=2, sort_keys=True) if args.json else describe_explanation(data)


def map_command(args: argparse.Namespace) -> str:
    """``knowing-pr map``: the ranked repository map as CONTEXT.md (knowing_pr/repomap.py)."""
    from knowing_pr.repomap import MapParams, build_context_map

    ws = open_workspace(args.repo, db=args.db, config=args.config)
    commit = ensure_fresh(ws).commit
    entries = {e.path: e.blob_id for e in ws.repo.tree_entries(commit)} if commit else {}

    def read_source(path: str) -> str:
        blob = entries.get(path)
        return ws.repo.read_blob(blob).decode("utf-8", "replace") if blob else ""

    params = MapParams(
        profile=args.profile,
        query=args.query,
        budget_tokens=args.budget or ws.settings.pack.budget_tokens,
        chars_per_token=ws.settings.pack.chars_per_token,
    )
    title = Path(ws.repo.workdir or ws.repo.git_dir).resolve().name
    store, _ = open_store(ws.db_path)
    try:
        return build_context_map(
            store, ws.settings.history, params, read_source, title=f"CONTEXT.md — {title}", commit=commit
        )
    finally:
        store.close()
