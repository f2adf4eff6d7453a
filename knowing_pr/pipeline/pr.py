"""A change (base/head, or paths) → the ForPR pack; paths → the ForFiles pack; both recorded in the
store for replay.

``build_pr_pack`` in order: bring the index to the head commit, read the diff from the merge base,
start the parse of the base's versions of the changed files (``basedefs``: a fork, or the git
reader of a fresh ``pr``, parses them), read the history signals and what
the ranking reads whatever the change (meanwhile), seed from the hunks (and the callers of
deleted definitions, and the PR's own text), rank (``rank/candidates.py``), pack (``pack.py``),
record the manifest.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from knowing_pr.config import Settings
from knowing_pr.errors import RepoError, UsageError
from knowing_pr.git import FileDiff, is_utf8
from knowing_pr.index import index_commit
from knowing_pr.model import ChangeSummary, Definition, Node, Pack, Reviewer, ScoredSymbol, SymbolKind
from knowing_pr.pack import PackSpec, build_pack
from knowing_pr.pipeline.answer import ChangeFacts, change_facts, changes_code, head_files, reviewer_summary
from knowing_pr.pipeline.basedefs import start_base_definitions
from knowing_pr.pipeline.change import (
    change_start,
    deleted_names,
    deleted_sources,
    former_callers,
    not_indexed,
    removed_definitions,
    shown_files,
)
from knowing_pr.pipeline.reviewers import recent_commits, reviewer_evidence, score_evidence
from knowing_pr.pipeline.workspace import Workspace, ensure_fresh, normalize_paths
from knowing_pr.rank import RankQuery, load_adjacency, prepare_ranking, rank_candidates, read_history_signals
from knowing_pr.rank.files import with_file_weights
from knowing_pr.rank.seeds import ChangedFile, change_seeds, changed_modules
from knowing_pr.rank.signals import HistorySignals
from knowing_pr.replay import manifest_of, pr_request
from knowing_pr.store import Store
from knowing_pr.store.opening import open_store

__all__ = ["PrRequest", "build_files_pack", "build_pr_pack", "files_at"]

#: how much of a PR's title and body a pack shows (all of it feeds the ranking and the PackRoot)
TASK_SHOWN_CHARS = 300


@dataclass(frozen=True)
class PrRequest:
    """What ``knowing-pr pr`` was asked: a diff (``base``/``head``) or changed ``files``, plus the
    PR's own text (its title and body) as a weaker extra seed channel."""

    base: str | None = None
    head: str | None = None
    files: tuple[str, ...] = ()
    task: str | None = None
    fmt: str = "markdown"
    #: the PR's author (an e-mail address, a name or a GitHub login): never suggested as a reviewer
    author: str | None = None


def files_at(ws: Workspace, commit: str, paths: Sequence[str], *, option: str = "") -> list[str]:
    """The named paths (repository-relative) that are files of ``commit``; the others are named
    in a warning, or, when none is left, in a ``UsageError``. ``option`` prefixes the messages."""
    normalized = normalize_paths(paths)
    found = ws.repo.entries_at(commit, normalized)
    missing = [p for p in normalized if p not in found]
    prefix = f"{option}: " if option else ""
    if missing and len(missing) == len(normalized):
        raise UsageError(
            f"{prefix}no such file in {commit[:12]}: {_listed(missing)}",
            hint="paths are repository-relative files of the commit, e.g. src/app.py",
        )
    if missing:
        ws.warnings.append(f"{prefix}left out, no such file in {commit[:12]}: {_listed(missing)}")
    return [p for p in normalized if p in found]


def _listed(paths: Sequence[str], shown: int = 5) -> str:
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(repr(p) if not p.isprintable() else p for p in paths[:shown]) + more


def _no_base(ws: Workspace, head_sha: str) -> RepoError:
    """Why ``head_sha`` has no base: the start of a shallow clone, or a root commit."""
    if ws.repo.is_shallow_boundary(head_sha):
        return RepoError(
            f"no base to compare {head_sha[:12]} with: the clone is shallow and its parent was not fetched",
            hint="fetch more history (`git fetch --deepen=50` or `git fetch --unshallow`), or pass --base REV",
        )
    return RepoError(
        f"no base to compare {head_sha[:12]} with: it is a root commit",
        hint="pass --base REV, or --files PATH ... to name the change",
    )


def _nodes_by_path(store: Store, paths: Sequence[str]) -> dict[str, list[Node]]:
    by_path: dict[str, list[Node]] = {}
    for node in store.nodes_in_paths(paths):
        by_path.setdefault(node.path, []).append(node)
    return by_path


def _with_change(symbol: ScoredSymbol, facts: ChangeFacts) -> ScoredSymbol:
    """A candidate with what the change did to it: new, or its signature's changes."""
    node_id = symbol.node.id
    if node_id in facts.signatures:
        what, before = facts.signatures[node_id]
        return dataclasses.replace(symbol, signature_changes=what, signature_before=before)
    if node_id in facts.new:
        return dataclasses.replace(symbol, is_new=True)
    return symbol


def build_pr_pack(ws: Workspace, request: PrRequest) -> Pack:
    """ForPR: the change → seeds → ranking → pack, recorded in the store."""
    repo = ws.repo
    settings = ws.settings
    head_sha = repo.resolve(request.head) if request.head else repo.head_commit()
    if head_sha is None:
        raise RepoError("the repository has no commits yet", hint="commit something first, or pass --head")
    # every input is checked before the store is touched
    base_sha: str | None = None  # as given (the manifest records it)
    files: list[str] = []
    if request.files:
        files = files_at(ws, head_sha, request.files, option="--files")
    else:
        base_sha = repo.resolve(request.base) if request.base else repo.default_base(head_sha)
        if base_sha is None:
            raise _no_base(ws, head_sha)
    index_commit(repo, settings, rev=head_sha, db_path=ws.db_path, progress=ws.progress)
    if ws.progress is not None:  # counted (0 of 1): no ticker thread runs while the base is parsed in a fork
        ws.progress("pack", 0, 1)
    diff_base: str | None = None  # where the change starts: the merge base with base_sha
    diffs: list[FileDiff] = []
    if request.files:
        paths = files
        changes = [ChangedFile(p) for p in paths]
    else:
        assert base_sha is not None
        diff_base = change_start(repo, base_sha, head_sha)
        diffs = repo.diff_hunks(diff_base, head_sha)
        changes = [ChangedFile(d.new_path, tuple(d.added)) for d in diffs if d.new_path and d.status != "D"]
        paths = sorted({p for d in diffs for p in (d.old_path, d.new_path) if p})
    # a fork parses the base's versions of the changed files while the store is read
    pending_base_defs = start_base_definitions(ws.repo, settings, diff_base, diffs)
    store, _ = open_store(ws.db_path)
    try:
        # the file model's weights in use (pinned by a replay, fitted, or the prior) enter the PackRoot
        settings = with_file_weights(store, settings)
        # a path that is not UTF-8 was never indexed: it is named in the pack, never looked up
        storable = [c for c in changes if is_utf8(c.path)]
        nodes_by_path = _nodes_by_path(store, [c.path for c in storable])
        adjacency = load_adjacency(store)
        if changes_code(paths):
            history = read_history_signals(store, settings, paths, with_recency=True, with_cochange=True)
            prepare_ranking(store, adjacency, settings, history)
        else:
            history = HistorySignals()
        base_defs = pending_base_defs()
        removed = removed_definitions(diffs, base_defs, nodes_by_path)
        deleted = deleted_names(removed)
        callers = former_callers(store, set().union(*deleted.values()) if deleted else set())
        head_tree = head_files(repo, head_sha, settings.index.max_file_bytes)
        facts = change_facts(
            diffs=diffs,
            changed_paths=paths,
            nodes_by_path=nodes_by_path,
            base_defs=base_defs,
            removed=removed,
            files=head_tree,
        )
        own = None if request.files else facts.changed
        seeds = change_seeds(storable, nodes_by_path, callers, settings.rank, own) if facts.has_code else {}
        inputs: dict[str, Any] = {
            **shown_files(paths, settings),
            "base": diff_base,
            "head": head_sha,
            **not_indexed(store, [c.path for c in changes]),
            **deleted_sources(diffs),
        }
        identity: dict[str, Any] = {"files": paths}
        task_text = " ".join((request.task or "").split())
        if task_text:
            # the PR's title and body as a weaker extra channel: changed code stays the strongest seed
            from knowing_pr.task import task_seeds

            if facts.has_code:
                for node_id_, weight in task_seeds(store, settings, task_text).items():
                    seeds[node_id_] = max(seeds.get(node_id_, 0.0), weight)
            shown = task_text if len(task_text) <= TASK_SHOWN_CHARS else task_text[:TASK_SHOWN_CHARS] + "…"
            inputs["task"] = shown
            identity["task"] = task_text.lower()
        module_ids = {n.id for nodes in nodes_by_path.values() for n in nodes if n.kind == SymbolKind.MODULE}
        keep = (
            changed_modules(nodes_by_path, seeds, settings.rank)
            if request.files
            else frozenset(module_ids.intersection(facts.changed))
        )
        query = RankQuery(
            mode="pr",
            seeds=seeds,
            changed=None if request.files else frozenset(facts.changed),
            former_callers=frozenset(callers),
            keep_modules=keep,
            changed_paths=tuple(paths),
        )
        ranking = rank_candidates(store, adjacency, settings, query, history)
        ranking.candidates = [_with_change(c, facts) for c in ranking.candidates]
        if ranking.limits_hit:  # a bound on hostile input changed the ranking: the PackRoot says so
            identity["limits_hit"] = inputs["limits_hit"] = list(ranking.limits_hit)
            ws.warnings.extend(ranking.limits_hit)
        summary = reviewer_summary(
            store,
            adjacency,
            settings,
            facts,
            files=head_tree,
            cochange=history.evidence,
            cochange_with=history.evidence_with,
        )
        if diff_base is not None and _suggests_reviewers(ws.settings):
            summary.reviewers = _reviewers(ws, store, request, diff_base, head_sha, diffs, base_defs, summary)
            if summary.reviewers:  # history and CODEOWNERS decide them: the PackRoot names them
                identity["reviewers"] = [[r.key, r.reason] for r in summary.reviewers]
            # the author only leaves a reviewer out: with no suggestion made they change nothing
            if request.author:
                identity["author"] = inputs["author"] = request.author
        spec = PackSpec(
            mode="pr",
            identity_inputs=identity,
            inputs=inputs,
            fmt=request.fmt,
            commit=head_sha,
            graph_root=store.graph_root or "",
            test_share=settings.pack.test_share,
            cochange=history.evidence,
            summary=summary,
        )
        pack = build_pack(ranking, spec, settings)
        manifest = manifest_of(
            pack,
            pr_request(
                base=base_sha,
                head=head_sha,
                files=files,
                budget=settings.pack.budget_tokens,
                fmt=request.fmt,
                task=task_text,
                author=request.author,
            ),
        )
        store.save_pack(pack.pack_root, head_sha, manifest)
        if ws.progress is not None:
            ws.progress("pack", 1, 1)
        return pack
    finally:
        store.close()


def _suggests_reviewers(settings: Settings) -> bool:
    """Whether a pack with a base suggests reviewers (``reviewers.enabled``, at least one)."""
    return settings.reviewers.enabled and settings.reviewers.max_reviewers > 0


def _reviewers(
    ws: Workspace,
    store: Store,
    request: PrRequest,
    base: str,
    head: str,
    diffs: Sequence[FileDiff],
    base_defs: Mapping[str, Sequence[Definition]],
    summary: ChangeSummary,
) -> list[Reviewer]:
    """Who should review the change (``pipeline/reviewers.py``)."""
    params = ws.settings.reviewers
    evidence = reviewer_evidence(
        ws.repo,
        params,
        base=base,
        head=head,
        diffs=diffs,
        base_defs=base_defs,
        history=recent_commits(store, head, ws.settings.files),
        caller_paths=[site.path for site in summary.call_sites if not site.in_change],
        author=request.author,
        not_blamed=ws.settings.index.is_excluded,
    )
    return score_evidence(evidence, params)


def build_files_pack(
    ws: Workspace, paths: Sequence[str], *, fmt: str = "markdown", at: str | None = None
) -> Pack:
    """ForFiles: the symbols of these files plus their direct callers (seed 002), at HEAD or at the
    commit ``at`` (a replay rebuilds a pack at its recorded commit)."""
    head = ws.repo.resolve(at) if at else ws.repo.head_commit()
    if head is None:
        raise RepoError("the repository has no commits yet", hint="commit something first")
    normalized = files_at(ws, head, paths)
    head_sha = ensure_fresh(ws, head).commit
    store, _ = open_store(ws.db_path)
    try:
        nodes_by_path = _nodes_by_path(store, normalized)
        missing = [p for p in normalized if p not in nodes_by_path]
        if missing and len(missing) == len(normalized):
            raise UsageError(
                f"no indexed symbols in {', '.join(missing[:5])}",
                hint="paths are repository-relative; 'knowing-pr stats' lists what is indexed and skipped",
            )
        seeds = change_seeds([ChangedFile(p) for p in normalized], nodes_by_path, (), ws.settings.rank)
        query = RankQuery(mode="files", seeds=seeds, seeds_and_callers_only=True)
        history = read_history_signals(store, ws.settings)
        ranking = rank_candidates(store, load_adjacency(store), ws.settings, query, history)
        spec = PackSpec(
            mode="files",
            identity_inputs={"files": normalized},
            inputs={**shown_files(normalized, ws.settings), "base": None, "head": head_sha},
            fmt=fmt,
            commit=head_sha,
            graph_root=store.graph_root or "",
        )
        pack = build_pack(ranking, spec, ws.settings)
        request = {
            "mode": "files",
            "files": normalized,
            "budget": ws.settings.pack.budget_tokens,
            "format": fmt,
            "head": head_sha,
        }
        store.save_pack(pack.pack_root, head_sha, manifest_of(pack, request))
        return pack
    finally:
        store.close()
