"""A change (a diff between two commits, or paths) → what the ranking starts from: where the change
starts, the files it touched, the definitions it deleted and who used them, and what a pack says
about the change's files (those shown, those the index skipped)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from knowing_pr.config import Settings
from knowing_pr.git import FileDiff, GitRepo
from knowing_pr.model import Definition, Node
from knowing_pr.pipeline.workspace import Workspace
from knowing_pr.store import Store

__all__ = [
    "base_definitions",
    "change_start",
    "deleted_names",
    "former_callers",
    "not_indexed",
    "removed_definitions",
    "shown_files",
]


def base_definitions(ws: Workspace, base: str, diffs: Sequence[FileDiff]) -> dict[str, list[Definition]]:
    """The definitions of each changed file at the base (old path → definitions), for the files
    the change removed lines from (no other can lose a definition or change a signature)."""
    from knowing_pr.parse import language_for_path
    from knowing_pr.parse.worker import parse_files

    wanted = [d for d in diffs if d.old_path and d.removed and language_for_path(d.old_path)]
    if not wanted:
        return {}
    entries = ws.repo.entries_at(base, [d.old_path for d in wanted if d.old_path])
    items = []
    for d in wanted:
        entry = entries.get(d.old_path or "")
        if entry is None or entry.size > ws.settings.index.max_file_bytes:
            continue
        items.append((entry.path, language_for_path(entry.path) or "", ws.repo.read_blob(entry.blob_id)))
    index = ws.settings.index
    out: dict[str, list[Definition]] = {}
    for path, parsed, _reason in parse_files(
        items, timeout_s=index.parse_timeout_s, memory_mb=index.parse_memory_mb, workers=1
    ):
        if parsed is not None:
            out[path] = parsed.definitions
    return out


def removed_definitions(
    diffs: Sequence[FileDiff],
    base_defs: Mapping[str, Sequence[Definition]],
    head_nodes: dict[str, list[Node]],
) -> dict[str, list[Definition]]:
    """Definitions the change removed, per old path: in a removed range and gone from the file."""
    out: dict[str, list[Definition]] = {}
    for diff in diffs:
        definitions = base_defs.get(diff.old_path or "")
        if not definitions:
            continue
        still_there = {n.name for n in head_nodes.get(diff.new_path or "", [])}
        gone = [
            d
            for d in definitions
            if any(s <= d.end_line and d.start_line <= e for s, e in diff.removed)
            and d.name not in still_there
        ]
        if gone:
            out[diff.old_path or ""] = gone
    return out


def deleted_names(removed: Mapping[str, Sequence[Definition]]) -> dict[str, set[str]]:
    """Names of the definitions the change removed, per old path."""
    return {path: {d.name for d in definitions} for path, definitions in removed.items()}


def former_callers(store: Store, names: set[str]) -> set[str]:
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


_NOT_INDEXED_SHOWN = 10


def shown_files(paths: Sequence[str], settings: Settings) -> dict[str, Any]:
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


def not_indexed(store: Store, paths: Sequence[str]) -> dict[str, Any]:
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


def change_start(repo: GitRepo, base_sha: str, head_sha: str) -> str:
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
