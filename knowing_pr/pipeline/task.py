"""A task description (+ an error log, + a diff) → the ForTask pack (seed 002's ForTask), recorded for
replay; and the pack folder ``--out-dir`` writes.

In order: bring the index to HEAD, analyse the task into seeds (``task/``), rank
(``rank/candidates.py``; tests penalised unless the task is about tests, the candidates shown in
the fused order of the walk and the task's seed order), list its files (``task/files.py``, from
that order) and let the symbol order follow them (``follow_task_files``), pack (``pack.py``), record the manifest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowing_pr.config import Settings
from knowing_pr.errors import RepoError, UsageError
from knowing_pr.index import index_commit
from knowing_pr.model import Node, Pack
from knowing_pr.pack import PackSpec, build_pack
from knowing_pr.pipeline.workspace import Workspace
from knowing_pr.rank import Ranking, RankQuery, load_adjacency, rank_candidates, read_history_signals
from knowing_pr.rank.candidates import follow_task_files
from knowing_pr.rank.seeds import ChangedFile, change_seeds
from knowing_pr.replay import manifest_of
from knowing_pr.store import Store
from knowing_pr.store.opening import open_store
from knowing_pr.task import TaskAnalysis, analyse_task, normalise_task
from knowing_pr.task.files import task_files

__all__ = [
    "TaskRequest",
    "TaskRun",
    "build_task_pack",
    "check_task_request",
    "index_head",
    "pack_task",
    "symbol_paths",
    "task_query",
    "write_task_folder",
]


@dataclass(frozen=True)
class TaskRequest:
    """What ``knowing-pr task`` was asked."""

    description: str
    error_text: str | None = None
    #: also seed from the symbols ``diff_rev..HEAD`` changed
    diff_rev: str | None = None
    fmt: str = "markdown"
    #: the commit to pack at (default HEAD; a replay gives the recorded one)
    at: str | None = None


@dataclass
class TaskRun:
    """One packed task: the pack, the analysis that seeded it, the ranking behind it, its commit."""

    pack: Pack
    analysis: TaskAnalysis
    ranking: Ranking
    head: str


def check_task_request(ws: Workspace, request: TaskRequest) -> None:
    """Refuse an empty task or an unknown ``--diff`` revision before the store is touched."""
    if not request.description.strip() and not request.error_text:
        raise UsageError("the task description is empty", hint='describe the task, e.g. "fix the retry loop"')
    if request.diff_rev is not None:
        ws.repo.resolve(request.diff_rev)


def index_head(ws: Workspace, at: str | None = None) -> str:
    """Index HEAD (or the commit ``at``) if the store is behind; its commit id (``RepoError`` if
    there is none)."""
    report = index_commit(ws.repo, ws.settings, rev=at, db_path=ws.db_path)
    if report.commit is None:
        raise RepoError("the repository has no commits yet", hint="commit something first")
    return report.commit


def _identity(analysis: TaskAnalysis) -> dict[str, Any]:
    """The task's inputs as they enter the PackRoot (its settings enter as parameters)."""
    identity: dict[str, Any] = {"task": normalise_task(analysis.task), "error_sha256": analysis.error_sha256}
    if analysis.diff:
        identity["diff"] = list(analysis.diff)
    if analysis.limits_hit:  # a bound on hostile input changed what was read: the PackRoot says so
        identity["limits_hit"] = list(analysis.limits_hit)
    return identity


def _diff_seeds(ws: Workspace, store: Store, rev: str, head: str) -> tuple[dict[str, float], tuple[str, str]]:
    base = ws.repo.resolve(rev)
    diffs = ws.repo.diff_hunks(base, head)
    changes = [ChangedFile(d.new_path, tuple(d.added)) for d in diffs if d.new_path and d.status != "D"]
    by_path: dict[str, list[Node]] = {}
    for node in store.nodes_in_paths(c.path for c in changes):
        by_path.setdefault(node.path, []).append(node)
    return change_seeds(changes, by_path, (), ws.settings.rank), (base, head)


def task_query(analysis: TaskAnalysis, settings: Settings) -> RankQuery:
    """What the recipe ranks a task from: its seeds and seed order, whether tests are penalised,
    the directories it is not about, the symbols it names, its words."""
    return RankQuery(
        mode="task",
        seeds=analysis.seeds,
        penalise_tests=not analysis.about_tests,
        seed_order=tuple(analysis.seed_order()),
        demoted_segments=analysis.demoted_segments(settings.task.demoted_segments),
        pinned=analysis.explicit,
        task_words=analysis.task_words(),
    )


def symbol_paths(ranking: Ranking) -> list[tuple[str, str]]:
    """(path, qualified name) of the task's candidates in their final order."""
    by_id = {c.node.id: c.node for c in ranking.candidates}
    order = [nid for nid, _ in ranking.display_order] or list(by_id)
    return [(by_id[nid].path, by_id[nid].qualified_name) for nid in order if nid in by_id]


def pack_task(ws: Workspace, store: Store, head: str, request: TaskRequest) -> TaskRun:
    """Analyse the task at ``head``, rank and pack it (not recorded): the shared core of ``task``
    and ``why``; ``UsageError`` if there is neither a description nor an error text."""
    if not request.description.strip() and not request.error_text:
        raise UsageError("the task description is empty", hint='describe the task, e.g. "fix the retry loop"')
    settings = ws.settings
    diff_seeds, diff = _diff_seeds(ws, store, request.diff_rev, head) if request.diff_rev else ({}, None)
    analysis = analyse_task(
        store, settings, request.description, error_text=request.error_text, diff_seeds=diff_seeds, diff=diff
    )
    query = task_query(analysis, settings)
    ranking = rank_candidates(
        store, load_adjacency(store), settings, query, read_history_signals(store, settings)
    )
    files = task_files(store, analysis, symbol_paths(ranking), settings.task)
    ranking = follow_task_files(ranking, files, settings, query)
    inputs: dict[str, Any] = {
        "task": analysis.task,
        "base": diff[0] if diff else None,
        "head": head,
        "error_sha256": analysis.error_sha256,
        "change_type": analysis.change_type,
        "confidence": analysis.confidence.score,
    }
    if analysis.limits_hit:
        inputs["limits_hit"] = list(analysis.limits_hit)
        ws.warnings.extend(analysis.limits_hit)
    spec = PackSpec(
        mode="task",
        identity_inputs=_identity(analysis),
        inputs=inputs,
        fmt=request.fmt,
        commit=head,
        graph_root=store.graph_root or "",
        penalise_tests=query.penalise_tests,
    )
    return TaskRun(build_pack(ranking, spec, settings), analysis, ranking, head)


def build_task_pack(ws: Workspace, request: TaskRequest) -> TaskRun:
    """ForTask: index if stale, seed from the task, rank, pack; the manifest is recorded for replay."""
    check_task_request(ws, request)
    head = index_head(ws, request.at)
    store, _ = open_store(ws.db_path)
    try:
        run = pack_task(ws, store, head, request)
        recorded = {
            "mode": "task",
            "task": request.description,
            "error_sha256": run.analysis.error_sha256,
            "diff": run.analysis.diff[0] if run.analysis.diff else None,  # resolved: replayable
            "budget": ws.settings.pack.budget_tokens,
            "format": request.fmt,
            "head": head,
        }
        store.save_pack(run.pack.pack_root, head, manifest_of(run.pack, recorded))
        return run
    finally:
        store.close()


def write_task_folder(ws: Workspace, run: TaskRun, out_dir: str | Path) -> list[str]:
    """``--out-dir``: PACK.md, TASK.md, FILES.md, GRAPH.md, excerpts/, ctx.json, ctx.tgz (each
    file written atomically)."""
    from knowing_pr.pipeline.folder import write_pack_folder
    from knowing_pr.pipeline.output import check_output_dir, write_error

    target = check_output_dir("--out-dir", str(out_dir))
    store, _ = open_store(ws.db_path)
    try:
        return write_pack_folder(ws.repo, store, run.pack, run.analysis, target)
    except OSError as exc:
        raise write_error("--out-dir", str(out_dir), exc) from None
    finally:
        store.close()
