"""One function per user operation, composing the stages (git → … → render → publish).

Every reader first compares the store's commit with HEAD and catches up (RELIABILITY.md
decision 1: hooks are hints, not the source of truth).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowing_pr.config import CONFIG_FILENAME, Settings, default_db_path, load_settings
from knowing_pr.git import FileDiff, GitRepo
from knowing_pr.indexer import IndexReport, index_commit, open_store, print_progress
from knowing_pr.model import Node, Pack
from knowing_pr.store import Store

__all__ = [
    "Workspace",
    "describe_index_report",
    "describe_stats",
    "open_workspace",
    "store_stats",
    "update_index",
]


@dataclass
class Workspace:
    """A repository, its settings and its store path, resolved once per command."""

    repo: GitRepo
    settings: Settings
    db_path: Path


def open_workspace(
    repo_path: str | os.PathLike[str], *, db: str | None = None, config: str | None = None
) -> Workspace:
    repo = GitRepo.open(repo_path)
    if config is not None:
        if not Path(config).is_file():
            from knowing_pr.errors import ConfigError

            raise ConfigError(f"config file not found: {config}")
        settings = load_settings(config)
    elif repo.workdir is not None:
        settings = load_settings(Path(repo.workdir) / CONFIG_FILENAME)
    else:
        settings = Settings()
    db_path = Path(db) if db else default_db_path(repo.git_dir)
    return Workspace(repo, settings, db_path)


def update_index(
    repo_path: str | os.PathLike[str] = ".",
    *,
    rev: str | None = None,
    full: bool = False,
    db: str | None = None,
    config: str | None = None,
    progress: bool = False,
    quiet: bool = True,
) -> IndexReport:
    """``knowing-pr index``: bring the store to ``rev`` (default HEAD)."""
    ws = open_workspace(repo_path, db=db, config=config)
    return index_commit(
        ws.repo,
        ws.settings,
        rev=rev,
        full=full,
        db_path=ws.db_path,
        progress=print_progress if progress else None,
    )


def ensure_fresh(ws: Workspace, rev: str | None = None) -> IndexReport:
    """Catch the store up with HEAD (or ``rev``) before reading it."""
    return index_commit(ws.repo, ws.settings, rev=rev, db_path=ws.db_path)


def describe_index_report(report: IndexReport) -> str:
    if report.mode == "up-to-date":
        return f"index is up to date at {(report.commit or 'an empty repository')[:12]}"
    skipped = ", ".join(f"{n} {reason}" for reason, n in sorted(report.skipped.items())) or "none"
    total_ms = report.timings_ms.get("total", 0.0)
    commit = (report.commit or "empty tree")[:12]
    return (
        f"{report.mode} index of {commit}: {report.files_parsed} files parsed, "
        f"{report.files_removed} removed, {report.files_affected} re-resolved; skipped: {skipped}; "
        f"{total_ms / 1000:.2f} s; graph root {report.graph_root[:12]}"
    )


def store_stats(
    repo_path: str | os.PathLike[str] = ".", *, db: str | None = None, config: str | None = None
) -> dict[str, Any]:
    """``knowing-pr stats``: catch up first, then report what the store holds."""
    import json

    ws = open_workspace(repo_path, db=db, config=config)
    head = ws.repo.head_commit()
    ensure_fresh(ws)
    store, _ = open_store(ws.db_path)
    try:
        counts = store.counts()
        commit = store.indexed_commit
        last_run = store.get_meta("last_run")
        stats: dict[str, Any] = {
            "commit": commit,
            "head": head,
            "fresh": commit == head,
            "graph_root": store.graph_root,
            "store_path": str(ws.db_path),
            "store_bytes": _store_bytes(ws.db_path),
            "last_run": json.loads(last_run) if last_run else None,
            "tool_version": store.get_meta("tool_version"),
            "grammar_version": store.get_meta("grammar_version"),
        }
        stats.update(counts)
        return stats
    finally:
        store.close()


def _store_bytes(path: Path) -> int:
    return sum(Path(str(path) + s).stat().st_size for s in ("", "-wal") if Path(str(path) + s).exists())


def describe_stats(stats: dict[str, Any]) -> str:
    lines = [
        f"commit      {stats['commit'] or '(empty)'} ({'fresh' if stats['fresh'] else 'STALE'})",
        f"graph root  {stats['graph_root']}",
        f"store       {stats['store_bytes'] / 1e6:.1f} MB",
        f"files       {stats['files']}  nodes {stats['nodes']}  edges {stats['edges']}",
        "languages   " + ", ".join(f"{k} {v}" for k, v in stats["files_by_language"].items()),
        "node kinds  " + ", ".join(f"{k} {v}" for k, v in stats["nodes_by_kind"].items()),
        "edge types  " + ", ".join(f"{k} {v}" for k, v in stats["edges_by_type"].items()),
        "skipped     " + (", ".join(f"{k} {v}" for k, v in stats["skipped_by_reason"].items()) or "none"),
    ]
    run = stats.get("last_run")
    if run:
        timings = ", ".join(f"{k} {v:.0f} ms" for k, v in run.get("timings_ms", {}).items())
        lines.append(f"last run    {run.get('mode')}: {timings}")
    return "\n".join(lines)


# -- packs --------------------------------------------------------------------------------------


def _workspace_for(args: argparse.Namespace, budget: int | None) -> Workspace:
    ws = open_workspace(args.repo, db=args.db, config=args.config)
    ws.settings = ws.settings.with_budget(budget)
    return ws


def _normalize_paths(paths: Sequence[str]) -> list[str]:
    """Repository-relative POSIX paths; refuses absolute paths and ``..`` escapes."""
    from knowing_pr.errors import UsageError

    out: set[str] = set()
    for raw in paths:
        path = raw.replace("\\", "/").strip()
        while path.startswith("./"):
            path = path[2:]
        if not path or path.startswith("/") or any(part == ".." for part in path.split("/")) or "\0" in path:
            raise UsageError(f"not a repository-relative path: {raw!r}")
        out.add(path)
    return sorted(out)


def _deleted_names(
    ws: Workspace, base: str, diffs: Sequence[FileDiff], head_nodes: dict[str, list[Node]]
) -> dict[str, set[str]]:
    """Names of definitions the change removed, per old path (parsed from the base blobs)."""
    from knowing_pr.parse import language_for_path
    from knowing_pr.parse.worker import parse_files

    wanted = [d for d in diffs if d.old_path and d.removed and language_for_path(d.old_path)]
    if not wanted:
        return {}
    entries = {e.path: e for e in ws.repo.tree_entries(base)}
    items = []
    for d in wanted:
        entry = entries.get(d.old_path or "")
        if entry is None or entry.size > ws.settings.index.max_file_bytes:
            continue
        items.append((entry.path, language_for_path(entry.path) or "", ws.repo.read_blob(entry.blob_id)))
    index = ws.settings.index
    removed_by_path = {d.old_path: d for d in wanted}
    out: dict[str, set[str]] = {}
    for path, parsed, _reason in parse_files(
        items, timeout_s=index.parse_timeout_s, memory_mb=index.parse_memory_mb, workers=1
    ):
        if parsed is None:
            continue
        diff = removed_by_path[path]
        still_there = {n.name for n in head_nodes.get(diff.new_path or "", [])}
        gone = {
            d.name
            for d in parsed.definitions
            if any(s <= d.end_line and d.start_line <= e for s, e in diff.removed)
            and d.name not in still_there
        }
        if gone:
            out[path] = gone
    return out


def _former_callers(store: Store, names: set[str]) -> set[str]:
    """Symbols whose references name a deleted definition: the blast radius of a deletion."""
    from knowing_pr.graph import decode_refs

    if not names:
        return set()
    paths = store.paths_referencing(names)
    nodes_by_path: dict[str, list[Node]] = {}
    for node in store.nodes_in_paths(paths):
        nodes_by_path.setdefault(node.path, []).append(node)
    callers: set[str] = set()
    for path, data in store.refs_for(paths).items():
        for ref in decode_refs(path, data).references:
            if ref.name not in names:
                continue
            enclosing = [n for n in nodes_by_path.get(path, []) if n.start_line <= ref.line <= n.end_line]
            if enclosing:
                callers.add(min(enclosing, key=lambda n: (n.end_line - n.start_line, n.id)).id)
    return callers


#: how much of a PR's title and body a pack shows (all of it feeds the ranking and the PackRoot)
_TASK_SHOWN_CHARS = 300


def _shown_files(paths: Sequence[str], settings: Settings) -> dict[str, Any]:
    """The changed paths a pack lists: as many as fit a tenth of the budget, plus the total.
    A 2,000-file change must not push every symbol out of a JSON or XML pack; the PackRoot
    still covers every path."""
    room = settings.pack.budget_tokens * settings.pack.chars_per_token / 10
    shown: list[str] = []
    used = 0.0
    for path in paths:
        used += len(path) + 8  # quotes, comma, indentation
        if used > room:
            break
        shown.append(path)
    return {"files": shown, "files_total": len(paths)}


def build_pr_pack(
    ws: Workspace,
    *,
    base: str | None = None,
    head: str | None = None,
    files: Sequence[str] | None = None,
    fmt: str = "markdown",
    task: str | None = None,
) -> Pack:
    """ForPR: the change (a diff or paths) → seeds → walk → pack, recorded in the store."""
    from knowing_pr.engine import PackRequest, build_pack
    from knowing_pr.errors import RepoError
    from knowing_pr.rank.seeds import ChangedFile, change_seeds, changed_modules
    from knowing_pr.replay import manifest_of

    repo = ws.repo
    head_sha = repo.resolve(head) if head else repo.head_commit()
    if head_sha is None:
        raise RepoError("the repository has no commits yet", hint="commit something first, or pass --head")
    index_commit(repo, ws.settings, rev=head_sha, db_path=ws.db_path)
    base_sha: str | None = None
    diffs: list[FileDiff] = []
    if files:
        paths = _normalize_paths(files)
        changes = [ChangedFile(p) for p in paths]
    else:
        base_sha = repo.resolve(base) if base else repo.default_base(head_sha)
        if base_sha is None:
            raise RepoError(
                f"no base to compare {head_sha[:12]} with: it is a root commit",
                hint="pass --base REV, or --files PATH ... to name the change",
            )
        diffs = repo.diff_hunks(base_sha, head_sha)
        changes = [ChangedFile(d.new_path, tuple(d.added)) for d in diffs if d.new_path and d.status != "D"]
        paths = sorted({p for d in diffs for p in (d.old_path, d.new_path) if p})
    store, _ = open_store(ws.db_path)
    try:
        nodes_by_path: dict[str, list[Node]] = {}
        for node in store.nodes_in_paths(c.path for c in changes):
            nodes_by_path.setdefault(node.path, []).append(node)
        deleted = _deleted_names(ws, base_sha, diffs, nodes_by_path) if base_sha else {}
        callers = _former_callers(store, set().union(*deleted.values()) if deleted else set())
        seeds = change_seeds(changes, nodes_by_path, callers, ws.settings.rank)
        inputs: dict[str, Any] = {**_shown_files(paths, ws.settings), "base": base_sha, "head": head_sha}
        identity: dict[str, Any] = {"files": paths}
        task_text = " ".join((task or "").split())
        if task_text:
            # the PR's title and body as a weaker extra channel: changed code stays the strongest seed
            from knowing_pr.task import task_seeds

            for node_id_, weight in task_seeds(store, ws.settings, task_text).items():
                seeds[node_id_] = max(seeds.get(node_id_, 0.0), weight)
            inputs["task"] = (
                task_text if len(task_text) <= _TASK_SHOWN_CHARS else task_text[:_TASK_SHOWN_CHARS] + "…"
            )
            identity["task"] = task_text.lower()
        from knowing_pr.cochange import cochange_evidence, recency_by_node  # history (cochange.py)

        request = PackRequest(
            mode="pr",
            seeds=seeds,
            identity_inputs=identity,
            inputs=inputs,
            fmt=fmt,
            commit=head_sha,
            test_share=ws.settings.pack.test_share,
            keep_modules=changed_modules(nodes_by_path, seeds, ws.settings.rank),
            changed=None
            if files
            else frozenset(
                n for n, w in seeds.items() if w >= ws.settings.rank.seed_weight_hunk and n not in callers
            ),
            recency=recency_by_node(store, ws.settings.history),
            cochange=cochange_evidence(store, paths, ws.settings.history),
        )
        pack = build_pack(store, ws.settings, request)
        store.save_pack(
            pack.pack_root,
            head_sha,
            manifest_of(
                pack,
                {
                    "mode": "pr",
                    "base": base_sha,
                    "head": head_sha,
                    "files": list(files or []),
                    "budget": ws.settings.pack.budget_tokens,
                    "format": fmt,
                    "task": task_text or None,
                },
            ),
        )
        return pack
    finally:
        store.close()


def pr_command(args: argparse.Namespace) -> str:
    from knowing_pr.render import render_pack

    ws = _workspace_for(args, args.budget)
    pack = build_pr_pack(
        ws, base=args.base, head=args.head, files=args.files, fmt=args.format, task=args.task
    )
    return render_pack(pack, args.format)


def build_files_pack(ws: Workspace, paths: Sequence[str], *, fmt: str = "markdown") -> Pack:
    """ForFiles: the symbols of these files plus their direct callers (seed 002)."""
    from knowing_pr.engine import PackRequest, build_pack
    from knowing_pr.rank.seeds import ChangedFile, change_seeds
    from knowing_pr.replay import manifest_of

    head_sha = ensure_fresh(ws).commit
    normalized = _normalize_paths(paths)
    store, _ = open_store(ws.db_path)
    try:
        nodes_by_path: dict[str, list[Node]] = {}
        for node in store.nodes_in_paths(normalized):
            nodes_by_path.setdefault(node.path, []).append(node)
        missing = [p for p in normalized if p not in nodes_by_path]
        if missing and len(missing) == len(normalized):
            from knowing_pr.errors import UsageError

            raise UsageError(
                f"no indexed symbols in {', '.join(missing[:5])}",
                hint="paths are repository-relative; 'knowing-pr stats' lists what is indexed and skipped",
            )
        seeds = change_seeds([ChangedFile(p) for p in normalized], nodes_by_path, (), ws.settings.rank)
        request = PackRequest(
            mode="files",
            seeds=seeds,
            identity_inputs={"files": normalized},
            inputs={**_shown_files(normalized, ws.settings), "base": None, "head": head_sha},
            fmt=fmt,
            commit=head_sha,
            keep=lambda s: s.is_seed or s.reason == "caller",
        )
        pack = build_pack(store, ws.settings, request)
        store.save_pack(
            pack.pack_root,
            head_sha,
            manifest_of(
                pack,
                {
                    "mode": "files",
                    "files": normalized,
                    "budget": ws.settings.pack.budget_tokens,
                    "format": fmt,
                    "head": head_sha,
                },
            ),
        )
        return pack
    finally:
        store.close()


def files_command(args: argparse.Namespace) -> str:
    from knowing_pr.render import render_pack

    ws = _workspace_for(args, args.budget)
    return render_pack(build_files_pack(ws, args.paths, fmt=args.format), args.format)


def replay_command(args: argparse.Namespace) -> tuple[int, str]:
    """Print a recorded pack; with ``--verify``, recompute it at its commit and compare."""
    from knowing_pr.errors import UsageError
    from knowing_pr.render import render_pack
    from knowing_pr.replay import (
        diff_symbols,
        pack_from_manifest,
        read_manifest_file,
        validate_pack_root,
    )

    pack_root = validate_pack_root(args.pack_root)
    ws = open_workspace(args.repo, db=args.db, config=args.config)
    if args.manifest:
        manifest = read_manifest_file(args.manifest)
    else:
        store, _ = open_store(ws.db_path)
        try:
            found = store.load_pack(pack_root)
        finally:
            store.close()
        if found is None:
            raise UsageError(
                f"no pack {pack_root[:12]}… is recorded in this clone's store",
                hint="pass --manifest FILE with the manifest the Action uploaded",
            )
        manifest = found
    recorded = pack_from_manifest(manifest)
    if recorded.pack_root != pack_root:
        raise UsageError(f"the manifest is for pack {recorded.pack_root[:12]}…, not {pack_root[:12]}…")
    if args.export:
        import json as _json

        Path(args.export).write_text(_json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if not args.verify:
        return 0, render_pack(recorded, args.format)
    recomputed = _recompute(ws, manifest)
    added, removed = diff_symbols(recorded, recomputed)
    if recomputed.pack_root == recorded.pack_root and not added and not removed:
        return (
            0,
            f"verified: {pack_root} (commit {str(recorded.commit)[:12]}, {len(recorded.symbols)} symbols)",
        )
    lines = [f"mismatch: recorded {pack_root}", f"          recomputed {recomputed.pack_root}"]
    lines += [f"+ {name}" for name in added] + [f"- {name}" for name in removed]
    if not added and not removed:
        lines.append("same symbols; the parameters or inputs differ")
    return 1, "\n".join(lines)


def _recompute(ws: Workspace, manifest: dict[str, Any]) -> Pack:
    """Rebuild the pack at its recorded commit in a scratch store (the working tree and the
    clone's own store are not touched)."""
    import tempfile

    from knowing_pr.config import settings_from_params

    request = manifest.get("request", {})
    settings = settings_from_params(ws.settings, manifest.get("params", {}))
    with tempfile.TemporaryDirectory(prefix="knowing-pr-verify-") as tmp:
        scratch = Workspace(ws.repo, settings, Path(tmp) / "index.sqlite")
        mode = request.get("mode", manifest.get("mode"))
        fmt = request.get("format", "markdown")
        if mode == "pr":
            return build_pr_pack(
                scratch,
                base=request.get("base"),
                head=request.get("head"),
                files=request.get("files") or None,
                fmt=fmt,
                task=request.get("task"),
            )
        if mode == "files":
            index_commit(scratch.repo, settings, rev=request.get("head"), db_path=scratch.db_path)
            return build_files_pack(scratch, request.get("files", []), fmt=fmt)
        from knowing_pr.errors import UsageError

        raise UsageError(f"cannot verify a pack of mode {mode!r}")


def task_command(args: argparse.Namespace) -> str:
    """ForTask: the pack for a task description (+ --error-file, --diff); --out-dir writes the
    PACK.md/TASK.md/FILES.md/GRAPH.md/excerpts/ctx.json/ctx.tgz folder too."""
    from knowing_pr.render import render_pack
    from knowing_pr.task import build_task_pack, read_error_file, write_task_folder

    ws = _workspace_for(args, args.budget)
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

    ws = _workspace_for(args, args.budget)
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
