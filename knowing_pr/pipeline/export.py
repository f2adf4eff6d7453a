"""A repository's store (caught up with HEAD) → the whole graph in an ``export`` format."""

from __future__ import annotations

import sys
from collections.abc import Iterator

from knowing_pr.errors import UsageError
from knowing_pr.pipeline.output import check_output_file, write_lines
from knowing_pr.pipeline.workspace import Workspace, ensure_fresh
from knowing_pr.store import Store
from knowing_pr.store.opening import open_store

__all__ = ["export_graph"]


def export_graph(ws: Workspace, fmt: str, out: str | None = None) -> int:
    """Write the graph in ``fmt`` to ``out`` (atomically: a failure leaves no partial file) or
    to standard output; returns the number of lines written."""
    from knowing_pr.render.export import EXPORT_FORMATS

    if fmt not in EXPORT_FORMATS:
        raise UsageError(f"unknown export format {fmt!r}", hint="formats: " + ", ".join(EXPORT_FORMATS))
    target = check_output_file("--out", out, example="graph.jsonl") if out is not None else None
    ensure_fresh(ws)
    store, _ = open_store(ws.db_path)
    try:
        lines = _graph_lines(ws, store, fmt)
        if target is None:
            count = 0
            for line in lines:
                sys.stdout.write(line)
                count += 1
            return count
        return write_lines("--out", target, lines)
    finally:
        store.close()


def _graph_lines(ws: Workspace, store: Store, fmt: str) -> Iterator[str]:
    from knowing_pr.render.export import ExportEdge, export_lines

    nodes = sorted(store.all_nodes(), key=lambda n: n.id)
    edges = sorted(
        (
            ExportEdge(e.source, e.target, e.kind.label, e.confidence, e.rule or "unknown")
            for e in store.all_edges()
        ),
        key=lambda e: (e.source, e.target, e.kind),
    )
    return export_lines(fmt, nodes, edges)
