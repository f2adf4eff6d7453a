"""Workspace + task description (+ error log, + diff base) → ``Pack`` and ``TaskAnalysis``
(seed 002's ForTask; seed 001's score → compose).

``build_task_pack`` indexes if stale, analyses the task (``analysis.py``), then runs
``engine.build_pack`` (RWR, HITS, scoring, knapsack, PackRoot) with the test penalty unless
the task is about tests; the packed symbols are re-ordered by ``fusion.py`` (RRF of the
walk's order and the seed order) and the manifest is recorded for replay.
``write_task_folder`` composes the pack folder (``folder.py``). ``task_seeds`` gives another
mode (a PR pack) the task channels' restart weights for extra text such as a PR title and body.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knowing_pr.config import Settings
from knowing_pr.errors import RepoError, UsageError
from knowing_pr.model import Node, Pack, ScoredSymbol
from knowing_pr.store import Store
from knowing_pr.task.analysis import TaskAnalysis, analyse_task
from knowing_pr.task.channels import TaskParams, restart_weights
from knowing_pr.task.fusion import fuse_orders, fuse_symbols

if TYPE_CHECKING:
    from knowing_pr.pipeline import Workspace

__all__ = [
    "TaskRun",
    "build_task_pack",
    "final_order",
    "index_head",
    "normalise_task",
    "pack_task",
    "task_seeds",
    "write_task_folder",
]


def normalise_task(text: str) -> str:
    """Lowercased, whitespace collapsed: the task text that enters the PackRoot."""
    return " ".join(text.lower().split())


def task_seeds(
    store: Store,
    settings: Settings,
    text: str,
    *,
    scale: float = 0.25,
    max_seeds: int | None = None,
    params: TaskParams | None = None,
) -> dict[str, float]:
    """Restart weights for extra task text (a PR title + body), scaled to stay weaker than a change.

    The task channels' best seeds get ``scale * (1.0 → 0.4)`` by fused rank (at most
    ``max_seeds``, default ``settings.rank.max_seeds``); path supplements are left out.
    Merge into change seeds with ``max`` so changed symbols keep their own weight.
    """
    if not text.strip():
        return {}
    analysis = analyse_task(store, settings, text, params=params)
    limit = settings.rank.max_seeds if max_seeds is None else max_seeds
    weights = restart_weights(analysis.fused, limit, params or settings.task)
    return {nid: round(w * scale, 6) for nid, w in weights.items()}


def final_order(walk: Sequence[str], analysis: TaskAnalysis, params: TaskParams) -> list[tuple[str, float]]:
    """The walk's node order fused with the task's seed order: what ``task`` ranks by."""
    return fuse_orders(
        walk,
        analysis.seed_order(),
        seed_weight=params.fusion_seed_weight,
        walk_weight=params.fusion_walk_weight,
        k=params.fusion_k,
    )


# -- the whole pipeline ------------------------------------------------------------------------


@dataclass
class TaskRun:
    """One packed task: the pack, the analysis that seeded it, the commit it was built at."""

    pack: Pack
    analysis: TaskAnalysis
    head: str


def _identity(analysis: TaskAnalysis, params: TaskParams, settings: Settings) -> dict[str, Any]:
    seeding = hashlib.sha256(
        repr((params.canonical(), [dict(c) for c in settings.equivalence_classes])).encode()
    ).hexdigest()[:16]
    identity: dict[str, Any] = {
        "task": normalise_task(analysis.task),
        "error_sha256": analysis.error_sha256,
        "seeding": seeding,
    }
    if analysis.diff:
        identity["diff"] = list(analysis.diff)
    return identity


def _diff_seeds(ws: Workspace, store: Store, rev: str, head: str) -> tuple[dict[str, float], tuple[str, str]]:
    from knowing_pr.rank.seeds import ChangedFile, change_seeds

    base = ws.repo.resolve(rev)
    diffs = ws.repo.diff_hunks(base, head)
    changes = [ChangedFile(d.new_path, tuple(d.added)) for d in diffs if d.new_path and d.status != "D"]
    by_path: dict[str, list[Node]] = {}
    for node in store.nodes_in_paths(c.path for c in changes):
        by_path.setdefault(node.path, []).append(node)
    return change_seeds(changes, by_path, (), ws.settings.rank), (base, head)


def index_head(ws: Workspace) -> str:
    """Index HEAD if the store is stale; its commit id (``RepoError`` if there is none)."""
    from knowing_pr.indexer import index_commit

    report = index_commit(ws.repo, ws.settings, db_path=ws.db_path)
    if report.commit is None:
        raise RepoError("the repository has no commits yet", hint="commit something first")
    return report.commit


def pack_task(
    ws: Workspace,
    store: Store,
    head: str,
    description: str,
    *,
    fmt: str,
    error_text: str | None,
    diff_rev: str | None,
    params: TaskParams,
) -> TaskRun:
    """Analyse the task at ``head`` and pack it (not recorded): the shared core of ``task``
    and ``why``; ``UsageError`` if there is neither a description nor an error text."""
    from knowing_pr import render
    from knowing_pr.engine import PackRequest, build_pack

    if not description.strip() and not error_text:
        raise UsageError("the task description is empty", hint='describe the task, e.g. "fix the retry loop"')
    diff_seeds, diff = _diff_seeds(ws, store, diff_rev, head) if diff_rev else ({}, None)
    analysis = analyse_task(
        store,
        ws.settings,
        description,
        error_text=error_text,
        diff_seeds=diff_seeds,
        diff=diff,
        params=params,
    )
    walk: list[str] = []

    def record(symbol: ScoredSymbol) -> bool:
        """Keeps every candidate; notes the walk's order (the engine offers them best first)."""
        walk.append(symbol.node.id)
        return True

    inputs: dict[str, Any] = {
        "task": description,
        "base": diff[0] if diff else None,
        "head": head,
        "error_sha256": analysis.error_sha256,
        "change_type": analysis.change_type,
        "confidence": analysis.confidence.score,
    }
    request = PackRequest(
        mode="task",
        seeds=analysis.seeds,
        identity_inputs=_identity(analysis, params, ws.settings),
        inputs=inputs,
        fmt=fmt,
        commit=head,
        penalise_tests=not analysis.about_tests,
        keep=record,
    )
    pack = build_pack(store, ws.settings, request)
    # the walk's order fused with the seed order, so centrality cannot bury the best match
    fused = fuse_symbols(
        pack.symbols,
        walk,
        analysis.seed_order(),
        seed_weight=params.fusion_seed_weight,
        walk_weight=params.fusion_walk_weight,
        k=params.fusion_k,
    )
    # a task has no "changed" symbols: seeds are the ones that matched the task
    pack.symbols = [replace(s, reason="match") if s.is_seed else s for s in fused]
    pack.tokens_used = math.ceil(len(render.render_pack(pack, fmt)) / ws.settings.pack.chars_per_token)
    return TaskRun(pack, analysis, head)


def build_task_pack(
    ws: Workspace,
    description: str,
    *,
    fmt: str = "markdown",
    error_text: str | None = None,
    diff_rev: str | None = None,
    params: TaskParams | None = None,
) -> tuple[Pack, TaskAnalysis]:
    """ForTask: index if stale, seed from the task, pack; the manifest is recorded for replay."""
    from knowing_pr.indexer import open_store
    from knowing_pr.replay import manifest_of

    head = index_head(ws)
    store, _ = open_store(ws.db_path)
    try:
        run = pack_task(
            ws,
            store,
            head,
            description,
            fmt=fmt,
            error_text=error_text,
            diff_rev=diff_rev,
            params=params or ws.settings.task,
        )
        request = {
            "mode": "task",
            "task": description,
            "error_sha256": run.analysis.error_sha256,
            "diff": diff_rev,
            "budget": ws.settings.pack.budget_tokens,
            "format": fmt,
            "head": head,
        }
        store.save_pack(run.pack.pack_root, head, manifest_of(run.pack, request))
        return run.pack, run.analysis
    finally:
        store.close()


def write_task_folder(ws: Workspace, pack: Pack, analysis: TaskAnalysis, out_dir: str | Path) -> list[str]:
    """``--out-dir``: PACK.md, TASK.md, FILES.md, GRAPH.md, excerpts/, ctx.json, ctx.tgz."""
    from knowing_pr.indexer import open_store
    from knowing_pr.task.folder import write_pack_folder

    store, _ = open_store(ws.db_path)
    try:
        return write_pack_folder(ws.repo, store, pack, analysis, out_dir)
    finally:
        store.close()
