"""Workspace + task + symbol query → why the symbol stands where it does in the task pack
(seed 002's ExplainSymbol), as a JSON-able dict and as ``why``'s human text.

``explain_symbol`` reruns the task pipeline (``pack.pack_task``) with the rank trace and
reports the symbol's rank, score and components, seed channels, RWR, HITS; or where it
dropped out: not in the index / never seeded and not reached / below the cutoff / cut by
the budget.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from knowing_pr.config import Settings
from knowing_pr.graph import is_test_path
from knowing_pr.model import Node, SymbolKind
from knowing_pr.store import Store
from knowing_pr.task.channels import TaskParams, escape_like
from knowing_pr.task.pack import TaskRun, final_order, index_head, pack_task

if TYPE_CHECKING:
    import scipy.sparse as sp

    from knowing_pr.graph.adjacency import Adjacency
    from knowing_pr.pipeline import Workspace

__all__ = ["describe_explanation", "explain_symbol", "load_walk_matrix"]


def _resolve_symbol(store: Store, query: str) -> list[Node]:
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


def explain_symbol(
    ws: Workspace,
    description: str,
    symbol: str,
    *,
    error_text: str | None = None,
    diff_rev: str | None = None,
    params: TaskParams | None = None,
) -> dict[str, Any]:
    """Rank, score, seed channels, RWR, HITS, components of ``symbol`` for the task; or where
    it dropped out: not in the index / never seeded and not reached / below the cutoff / cut
    by the budget."""
    from knowing_pr.engine import MAX_CANDIDATES, load_adjacency
    from knowing_pr.indexer import open_store
    from knowing_pr.rank import rank_with_trace

    head = index_head(ws)
    store, _ = open_store(ws.db_path)
    try:
        run = pack_task(
            ws,
            store,
            head,
            description,
            fmt="markdown",
            error_text=error_text,
            diff_rev=diff_rev,
            params=params or ws.settings.task,
        )
        candidates = _resolve_symbol(store, symbol)
        adjacency = load_adjacency(store)
        matrix = load_walk_matrix(store, ws.settings, adjacency)
        all_nodes: dict[str, Node | None] = {}

        def node_of(node_id: str) -> Node | None:
            if node_id not in all_nodes:
                all_nodes[node_id] = store.nodes_by_ids([node_id]).get(node_id)
            return all_nodes[node_id]

        def is_test(node_id: str) -> bool:
            node = node_of(node_id)
            return node is not None and is_test_path(node.path)

        ranked, trace = rank_with_trace(
            adjacency,
            matrix,
            run.analysis.seeds,
            ws.settings.rank,
            is_test=is_test,
            penalise_tests=not run.analysis.about_tests,
        )
        kinds = {n.id: n.kind for n in store.nodes_by_ids([r.node_id for r in ranked]).values()}
        ordered = [r for r in ranked if r.node_id in kinds and kinds[r.node_id] != SymbolKind.MODULE]
        ordered = ordered[:MAX_CANDIDATES]
        chosen_params = params or ws.settings.task
        by_id = {r.node_id: r for r in ordered}
        fused_order = final_order([r.node_id for r in ordered], run.analysis, chosen_params)
        fused_score = dict(fused_order)
        positions = {nid: (i, by_id[nid]) for i, (nid, _) in enumerate(fused_order, 1)}
        packed = {s.node.id for s in run.pack.symbols}

        def position_key(node: Node) -> tuple[int, str]:
            found = positions.get(node.id)
            return (found[0] if found else len(ordered) + 1, node.id)

        chosen_nodes = sorted(candidates, key=position_key)
        base = _explanation_base(run, symbol, len(ordered))
        if not chosen_nodes:
            base.update(
                status="not_in_index",
                verdict=f"not in the index: no symbol matches {symbol!r}",
            )
            return base
        node = chosen_nodes[0]
        base["symbol"] = _node_dict(node)
        base["alternatives"] = [_node_dict(n) for n in chosen_nodes[1:10]]
        node_trace = trace.node(node.id)
        at = positions.get(node.id)
        classes = sorted(
            {c.via for c in run.analysis.contributions.get(node.id, []) if c.channel == "equivalence"}
        )
        base.update(
            is_seed=node_trace.is_seed,
            restart_weight=run.analysis.seeds.get(node.id, 0.0),
            seed_rank=run.analysis.seed_rank(node.id),
            seed_channels=[asdict(c) for c in run.analysis.contributions.get(node.id, [])],
            seed_summary=run.analysis.seed_summary(node.id),
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
            _, ranked_node = at
            base.update(
                rank=at[0],
                score=fused_score[node.id],
                components={
                    **dict(ranked_node.components),
                    "walk_score": ranked_node.score,
                    "seed_rank": float(run.analysis.seed_rank_in_order(node.id) or 0),
                },
                authority=ranked_node.authority,
                hub=ranked_node.hub,
                distance=ranked_node.distance,
                reason=ranked_node.reason if not ranked_node.is_seed else "match",
            )
        base.update(_verdict(node, node_trace.in_graph, node_trace.reached, at, node.id in packed))
        return base
    finally:
        store.close()


def load_walk_matrix(store: Store, settings: Settings, adjacency: Adjacency) -> sp.csr_matrix:
    """The transition matrix the engine walks (with co-change mixing when that module exists)."""
    try:
        from knowing_pr.cochange import cochange_share, walk_matrix
    except ImportError:  # pragma: no cover - older layout
        from knowing_pr.rank import transition_matrix

        return transition_matrix(adjacency, settings.rank.edge_weights)
    return walk_matrix(adjacency, settings, cochange_share(store, settings))


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


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "-" if value is None else str(value)


def describe_explanation(data: Mapping[str, Any]) -> str:
    """``why``'s human text."""
    lines = [f"task      {data['task'].strip()[:200]}"]
    symbol = data.get("symbol")
    if symbol:
        lines.append(
            f"symbol    {symbol['qualified_name']} ({symbol['kind']}) "
            f"{symbol['file']}:{symbol['start_line']}-{symbol['end_line']}"
        )
    else:
        lines.append(f"symbol    {data['query']}")
    lines.append(f"verdict   {data['verdict']}")
    if data.get("rank") is not None:
        lines.append(
            f"rank      {data['rank']} of {data['total_ranked']} ranked ({data['packed_count']} packed)"
        )
        lines.append(f"score     {_fmt(data['score'])}")
        for name, value in data.get("components", {}).items():
            lines.append(f"  {name:<14}{_fmt(value)}")
    if symbol:
        seed = "yes" if data.get("is_seed") else "no"
        lines.append(f"seed      {seed} (restart weight {_fmt(data.get('restart_weight'))})")
        if data.get("seed_summary"):
            lines.append(f"  found by {data['seed_summary']} (fused rank {_fmt(data.get('seed_rank'))})")
        lines.append(
            f"walk      RWR {_fmt(data.get('rwr'))} (normalised {_fmt(data.get('rwr_normalised'))}, "
            f"cutoff {_fmt(data.get('cutoff'))}), hops {_fmt(data.get('hops'))}"
        )
        lines.append(
            f"HITS      authority {_fmt(data.get('authority'))}, hub {_fmt(data.get('hub'))}"
            + ("" if data.get("in_hits") else " (outside the HITS subgraph)")
        )
        if data.get("equivalence_classes_of_symbol"):
            lines.append("classes   " + ", ".join(data["equivalence_classes_of_symbol"]))
        if data.get("is_test") and data.get("penalise_tests"):
            lines.append("note      a test symbol: its score is multiplied by the test penalty")
    keywords = data.get("keywords", {})
    lines.append(
        "keywords  "
        + "; ".join(
            f"{tier}: {', '.join(keywords.get(tier, [])) or '-'}"
            for tier in ("exact", "compounds", "components")
        )
    )
    if data.get("equivalence_classes"):
        lines.append("matched   " + ", ".join(m["name"] for m in data["equivalence_classes"]))
    if data.get("alternatives"):
        lines.append("also      " + ", ".join(a["qualified_name"] for a in data["alternatives"]))
    lines.append(f"pack      {data['pack_root']}")
    return "\n".join(lines)
