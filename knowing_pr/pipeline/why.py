"""A task + a symbol query → why the symbol stands where it does in the task pack (seed 002's
ExplainSymbol), as a JSON-able dict: its rank, score and components, seed channels, RWR and HITS
— or where it dropped out (never seeded and not reached / below the cutoff / cut by the budget).
A symbol the index does not hold is an input error (``SymbolNotFound``, exit code 2). It reads
the trace of the one ranking the pack was built from.
"""

from __future__ import annotations

import re
from dataclasses import asdict
from typing import Any

from knowing_pr.errors import SymbolNotFound, UsageError
from knowing_pr.graph import is_test_path
from knowing_pr.model import Node, SymbolKind
from knowing_pr.pipeline.task import TaskRequest, TaskRun, check_task_request, index_head, pack_task
from knowing_pr.pipeline.workspace import Workspace
from knowing_pr.store import Store
from knowing_pr.store.opening import open_store
from knowing_pr.task.channels import escape_like

__all__ = ["explain_symbol", "resolve_symbol"]


def resolve_symbol(store: Store, query: str) -> list[Node]:
    """``path:line``, a qualified name (or a dotted suffix of one), or a plain name."""
    text = query.strip()
    located = re.fullmatch(r"(.+?):(\d+)", text)
    if located:
        path = located.group(1).replace("\\", "/").lstrip("./") if located.group(1) else ""
        line = int(located.group(2))
        nodes = store.nodes_in_paths([path])
        enclosing = [n for n in nodes if n.start_line <= line <= n.end_line and n.kind != SymbolKind.MODULE]
        return sorted(enclosing, key=lambda n: (n.end_line - n.start_line, n.id))[:1]
    dotted = text.replace("::", ".").replace("#", ".")
    if "." in dotted:
        exact = store.nodes_where_qualified_like(escape_like(dotted))
        if exact:
            return exact
        suffix = store.nodes_where_qualified_like("%." + escape_like(dotted))
        if suffix:
            return suffix
        leaf = dotted.rsplit(".", 1)[-1]
        return [n for n in store.nodes_named(leaf) if n.qualified_name.endswith(dotted)]
    return store.nodes_named(text)


def explain_symbol(ws: Workspace, request: TaskRequest, symbol: str) -> dict[str, Any]:
    """Rank, score, seed channels, RWR, HITS, components of ``symbol`` for the task; or where
    it dropped out."""
    if not symbol.strip():
        raise UsageError("the symbol is empty", hint="name one: a name, a qualified name or path:line")
    check_task_request(ws, request)
    head = index_head(ws)
    store, _ = open_store(ws.db_path)
    try:
        matches = resolve_symbol(store, symbol)
        if not matches:
            raise SymbolNotFound(
                f"symbol not found: no symbol in the index matches {symbol.strip()!r}",
                hint="name it as `name`, `Class.method`, a qualified name or `path:line`; "
                '`knowing-pr task "TEXT"` lists the symbols a task reaches',
            )
        run = pack_task(ws, store, head, request)
        return _explanation(run, matches, symbol)
    finally:
        store.close()


def _explanation(run: TaskRun, matches: list[Node], query: str) -> dict[str, Any]:
    ranking = run.ranking
    trace = ranking.trace
    by_id = {c.node.id: c for c in ranking.candidates}
    positions = {nid: (i, by_id[nid]) for i, (nid, _) in enumerate(ranking.display_order, 1)}
    fused_score = dict(ranking.display_order)
    packed = {s.node.id for s in run.pack.symbols}
    total = len(ranking.candidates)

    def position_key(node: Node) -> tuple[int, str]:
        found = positions.get(node.id)
        return (found[0] if found else total + 1, node.id)

    chosen_nodes = sorted(matches, key=position_key)
    base = _explanation_base(run, query, total)
    node = chosen_nodes[0]
    base["symbol"] = _node_dict(node)
    base["alternatives"] = [_node_dict(n) for n in chosen_nodes[1:10]]
    node_trace = trace.node(node.id)
    at = positions.get(node.id)
    analysis = run.analysis
    classes = sorted({c.via for c in analysis.contributions.get(node.id, []) if c.channel == "equivalence"})
    base.update(
        is_seed=node_trace.is_seed,
        restart_weight=analysis.seeds.get(node.id, 0.0),
        seed_rank=analysis.seed_rank(node.id),
        seed_channels=[asdict(c) for c in analysis.contributions.get(node.id, [])],
        seed_summary=analysis.seed_summary(node.id),
        equivalence_classes_of_symbol=classes,
        rwr=node_trace.rwr,
        rwr_normalised=round(node_trace.rwr_normalised, 6),
        reached=node_trace.reached,
        above_cutoff=node_trace.above_cutoff,
        in_hits=node_trace.in_hits,
        hops=node_trace.hops,
        cutoff=trace.cutoff,
        is_test=is_test_path(node.path),
    )
    if at is not None:
        _, candidate = at
        base.update(
            rank=at[0],
            score=fused_score[node.id],
            components={
                **dict(candidate.components),
                "walk_score": dict(candidate.components).get("walk_score", candidate.score),
                "seed_rank": float(analysis.seed_rank_in_order(node.id) or 0),
            },
            authority=candidate.authority,
            hub=candidate.hub,
            distance=candidate.distance,
            reason=candidate.reason,
        )
    base.update(_verdict(node, node_trace.in_graph, node_trace.reached, at, node.id in packed))
    return base


def _verdict(
    node: Node, in_graph: bool, reached: bool, at: tuple[int, Any] | None, in_pack: bool
) -> dict[str, Any]:
    if in_pack and at is not None:
        return {"status": "packed", "in_pack": True, "verdict": f"in the pack, ranked {at[0]}"}
    if node.kind == SymbolKind.MODULE:
        return {
            "status": "module",
            "in_pack": False,
            "verdict": "a file (module) node: it carries the walk but is never packed itself",
        }
    if at is not None:
        return {"status": "cut", "in_pack": False, "verdict": f"ranked {at[0]} but cut by the budget"}
    if not in_graph or not reached:
        return {
            "status": "not_reached",
            "in_pack": False,
            "verdict": "never seeded and not reached by the walk",
        }
    return {"status": "below_cutoff", "in_pack": False, "verdict": "reached but below the score cutoff"}


def _node_dict(node: Node) -> dict[str, Any]:
    return {
        "id": node.id,
        "name": node.name,
        "qualified_name": node.qualified_name,
        "kind": node.kind,
        "file": node.path,
        "start_line": node.start_line,
        "end_line": node.end_line,
    }


def _explanation_base(run: TaskRun, query: str, total: int) -> dict[str, Any]:
    analysis = run.analysis
    return {
        "task": analysis.task,
        "query": query,
        "pack_root": run.pack.pack_root,
        "commit": run.head,
        "symbol": None,
        "alternatives": [],
        "rank": None,
        "total_ranked": total,
        "packed_count": len(run.pack.symbols),
        "score": None,
        "components": {},
        "authority": None,
        "hub": None,
        "is_seed": False,
        "seed_channels": [],
        "change_type": analysis.change_type,
        "penalise_tests": not analysis.about_tests,
        "keywords": analysis.as_dict()["keywords"],
        "equivalence_classes": [
            {"name": m.cls.name, "phrases": list(m.phrases)} for m in analysis.equivalence
        ],
    }
