"""A repository (index caught up with HEAD) + a profile (+ a query) → CONTEXT.md, the ranked
repository map (codectx's map, seed 000): ``rank/tiers.py`` ranks, ``render/context_map.py`` writes."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from knowing_pr.model import Node, SymbolKind
from knowing_pr.pipeline.workspace import Workspace, ensure_fresh
from knowing_pr.rank.tiers import import_graph, profile_weights, rank_files
from knowing_pr.render.context_map import render_context, summarise_file
from knowing_pr.store import Store
from knowing_pr.store.opening import open_store

__all__ = ["MapRequest", "build_context_map", "build_map", "repository_name"]


@dataclass(frozen=True)
class MapRequest:
    """What ``knowing-pr map`` was asked."""

    profile: str = "default"
    query: str | None = None
    budget_tokens: int | None = None  # None: the configured pack budget


def build_map(ws: Workspace, request: MapRequest) -> str:
    """``knowing-pr map``: CONTEXT.md for the repository at HEAD."""
    profile_weights(request.profile)  # an unknown profile is refused before any work
    commit = ensure_fresh(ws).commit
    entries = {e.path: e.blob_id for e in ws.repo.tree_entries(commit)} if commit else {}

    def read_source(path: str) -> str:
        blob = entries.get(path)
        return ws.repo.read_blob(blob).decode("utf-8", "replace") if blob else ""

    title = repository_name(ws.repo.remote_url("origin"), ws.repo.workdir or ws.repo.git_dir)
    store, _ = open_store(ws.db_path)
    try:
        return build_context_map(
            store, ws, request, read_source, title=f"CONTEXT.md — {title}", commit=commit
        )
    finally:
        store.close()


def repository_name(origin_url: str | None, directory: str) -> str:
    """The repository's name: the last part of the origin remote's path (``…/starlette.git`` →
    ``starlette``), else the directory's name (a clone may sit in any directory)."""
    if origin_url:
        last = re.split(r"[/:\\]", origin_url.strip().rstrip("/\\"))[-1].removesuffix(".git")
        if last:
            return last
    return Path(directory).resolve().name


def build_context_map(
    store: Store,
    ws: Workspace,
    request: MapRequest,
    read_source: Callable[[str], str],
    *,
    title: str,
    commit: str | None,
) -> str:
    """Rank, summarise tiers 1 and 2 (``read_source(path)`` gives a file's text), render."""
    ranks = rank_files(store, ws.settings, profile=request.profile, query=request.query)
    shown = [r for r in ranks if r.tier in (1, 2)]
    nodes_by_path: dict[str, list[Node]] = {}
    for node in store.nodes_in_paths(r.path for r in shown):
        if node.kind != SymbolKind.MODULE and "." not in node.qualified_name.removeprefix(
            _module_prefix(node)
        ):
            nodes_by_path.setdefault(node.path, []).append(node)
    module_path = {n.id: n.path for n in store.all_nodes() if n.kind == SymbolKind.MODULE}
    path_of = {r[0]: r[1] for r in store.symbol_rows()}
    graph = import_graph(store, module_path, path_of)
    summaries = {
        r.path: summarise_file(
            r, nodes_by_path.get(r.path, []), graph.get(r.path, set()), read_source(r.path)
        )
        for r in shown
    }
    return render_context(
        title,
        ranks,
        summaries,
        profile=request.profile,
        query=request.query,
        budget_tokens=request.budget_tokens or ws.settings.pack.budget_tokens,
        chars_per_token=ws.settings.pack.chars_per_token,
        commit=commit,
    )


def _module_prefix(node: Node) -> str:
    """``pkg.mod.`` for a node of ``pkg/mod.py``: what is left of its qualified name is in-file."""
    from knowing_pr.graph import module_name

    return module_name(node.path) + "."
