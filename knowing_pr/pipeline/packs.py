"""A change (diff or paths) → the ForPR / ForFiles pack, recorded in the store."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from knowing_pr.config import Settings
from knowing_pr.git import FileDiff, GitRepo
from knowing_pr.indexer import index_commit, open_store
from knowing_pr.model import Node, Pack
from knowing_pr.pipeline.workspace import Workspace, ensure_fresh, normalize_paths, workspace_for
from knowing_pr.store import Store

__all__ = ["build_files_pack", "build_pr_pack", "files_command", "pr_command"]


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
_NOT_INDEXED_SHOWN = 10


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


def _not_indexed(store: Store, paths: Sequence[str]) -> dict[str, Any]:
    """Changed source files the index skipped (too large, generated, minified, a parser crash…):
    none of their symbols can be in the pack, so the pack names them. Files in no supported
    language (docs, configuration) are expected to have no symbols and are not listed."""
    from knowing_pr.parse import language_for_path

    reasons = store.skip_reasons(p for p in paths if language_for_path(p) is not None)
    skipped = [{"path": path, "reason": reason} for path, reason in sorted(reasons.items())]
    if not skipped:
        return {}
    shown = {"not_indexed": skipped[:_NOT_INDEXED_SHOWN]}
    return shown | ({"not_indexed_total": len(skipped)} if len(skipped) > _NOT_INDEXED_SHOWN else {})


def _change_start(repo: GitRepo, base_sha: str, head_sha: str) -> str:
    """Where a change starts: the merge base of base and head, as ``git diff base...head`` and a
    pull request's "Files changed" read it. A base branch that moved on after the branch was cut
    must not bring its newer commits in as changes (reversed). Without shared history (unrelated
    roots, or a shallow clone that lacks it) the base itself."""
    from knowing_pr.errors import RepoError

    try:
        merge_base = repo.merge_base(base_sha, head_sha)
    except RepoError:
        return base_sha
    return merge_base or base_sha


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
    from knowing_pr.replay import manifest_of, pr_request

    repo = ws.repo
    head_sha = repo.resolve(head) if head else repo.head_commit()
    if head_sha is None:
        raise RepoError("the repository has no commits yet", hint="commit something first, or pass --head")
    index_commit(repo, ws.settings, rev=head_sha, db_path=ws.db_path)
    base_sha: str | None = None  # as given (the manifest records it)
    diff_base: str | None = None  # where the change starts: the merge base with base_sha
    diffs: list[FileDiff] = []
    if files:
        paths = normalize_paths(files)
        changes = [ChangedFile(p) for p in paths]
    else:
        base_sha = repo.resolve(base) if base else repo.default_base(head_sha)
        if base_sha is None:
            raise RepoError(
                f"no base to compare {head_sha[:12]} with: it is a root commit",
                hint="pass --base REV, or --files PATH ... to name the change",
            )
        diff_base = _change_start(repo, base_sha, head_sha)
        diffs = repo.diff_hunks(diff_base, head_sha)
        changes = [ChangedFile(d.new_path, tuple(d.added)) for d in diffs if d.new_path and d.status != "D"]
        paths = sorted({p for d in diffs for p in (d.old_path, d.new_path) if p})
    store, _ = open_store(ws.db_path)
    try:
        nodes_by_path: dict[str, list[Node]] = {}
        for node in store.nodes_in_paths(c.path for c in changes):
            nodes_by_path.setdefault(node.path, []).append(node)
        deleted = _deleted_names(ws, diff_base, diffs, nodes_by_path) if diff_base else {}
        callers = _former_callers(store, set().union(*deleted.values()) if deleted else set())
        seeds = change_seeds(changes, nodes_by_path, callers, ws.settings.rank)
        inputs: dict[str, Any] = {
            **_shown_files(paths, ws.settings),
            "base": diff_base,
            "head": head_sha,
            **_not_indexed(store, [c.path for c in changes]),
        }
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
                pr_request(
                    base=base_sha,
                    head=head_sha,
                    files=files or [],
                    budget=ws.settings.pack.budget_tokens,
                    fmt=fmt,
                    task=task_text,
                ),
            ),
        )
        return pack
    finally:
        store.close()


def pr_command(args: argparse.Namespace) -> str:
    from knowing_pr.render import render_pack

    ws = workspace_for(args, args.budget)
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
    normalized = normalize_paths(paths)
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

    ws = workspace_for(args, args.budget)
    return render_pack(build_files_pack(ws, args.paths, fmt=args.format), args.format)
