"""A change (a diff between two commits, or paths) → what the ranking starts from: where the change
starts, the files it touched, the definitions it deleted and who used them, and what a pack says
about the change's files (those shown, those the index skipped, the source files deleted)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from knowing_pr.config import Settings
from knowing_pr.git import FileDiff, GitRepo, is_utf8
from knowing_pr.model import Definition, Node
from knowing_pr.store import Store

__all__ = [
    "change_start",
    "deleted_names",
    "deleted_sources",
    "former_callers",
    "not_indexed",
    "readable_path",
    "removed_definitions",
    "shown_files",
]


def removed_definitions(
    diffs: Sequence[FileDiff],
    base_defs: Mapping[str, Sequence[Definition]],
    head_nodes: dict[str, list[Node]],
) -> dict[str, list[Definition]]:
    """Definitions the change removed, per old path: in a removed range and gone from the file.
    A file that is there at the head but was not indexed (skipped) removed nothing we know of."""
    out: dict[str, list[Definition]] = {}
    for diff in {d.old_path: d for d in diffs}.values():  # the last diff of each old path
        definitions = base_defs.get(diff.old_path or "")
        if not definitions:
            continue
        if diff.new_path and diff.new_path not in head_nodes:
            continue  # the file is there but not indexed (skipped): what it still defines is unknown
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


#: at most this many paths of a kind in a pack's inputs (the rest are counted)
_PATHS_SHOWN = 10


def shown_files(paths: Sequence[str], settings: Settings) -> dict[str, Any]:
    """The changed paths a pack lists: as many as fit a tenth of the budget, plus the total.
    A 2,000-file change must not push every symbol out of a JSON or XML pack; the PackRoot
    still covers every path."""
    room = settings.pack.budget_tokens * settings.pack.chars_per_token / 10
    shown: list[str] = []
    used = 0.0
    for path in map(readable_path, paths):
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

    sources = [p for p in paths if language_for_path(p) is not None]
    reasons = store.skip_reasons(p for p in sources if is_utf8(p))
    reasons.update({readable_path(p): "path-not-utf8" for p in sources if not is_utf8(p)})
    return _shown_list(
        "not_indexed", [{"path": path, "reason": reason} for path, reason in sorted(reasons.items())]
    )


def deleted_sources(diffs: Sequence[FileDiff]) -> dict[str, Any]:
    """Source files the change deleted: a file of module-level code alone leaves no symbol to
    report removed, and a pack that named nothing of it said it saw no change at all."""
    from knowing_pr.parse import language_for_path

    gone = sorted(
        readable_path(d.old_path)
        for d in diffs
        if d.status == "D" and d.old_path and language_for_path(d.old_path) is not None
    )
    return _shown_list("deleted", gone)


def _shown_list(key: str, items: Sequence[Any]) -> dict[str, Any]:
    """``items`` under ``key`` as a pack's inputs show them: the first ``_PATHS_SHOWN``, and their
    number under ``key_total`` when there are more; nothing for no items (no key: no PackRoot change)."""
    if not items:
        return {}
    shown: dict[str, Any] = {key: list(items[:_PATHS_SHOWN])}
    return shown | ({f"{key}_total": len(items)} if len(items) > _PATHS_SHOWN else {})


def readable_path(path: str) -> str:
    """A path as a pack shows it: bytes that are not UTF-8 (kept by git as surrogates) become
    U+FFFD, so the text can be printed and parsed anywhere (the PackRoot keeps the real path)."""
    return path if is_utf8(path) else path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


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
