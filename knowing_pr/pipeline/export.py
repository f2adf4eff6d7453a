"""A repository's store (caught up with HEAD) → the whole graph in an ``export`` format."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from knowing_pr.errors import UsageError
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
    target = _checked_output(out) if out else None
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
        return _write_atomically(target, lines)
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


def _checked_output(out: str) -> Path:
    """``out`` as a file path whose directory exists and is writable (a clear error otherwise)."""
    path = Path(out)
    if path.is_dir():
        raise UsageError(f"--out {out}: is a directory", hint="name a file, e.g. --out graph.jsonl")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"--out {out}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"--out {out}: cannot write to the directory {parent}")
    return path


def _write_atomically(path: Path, lines: Iterator[str]) -> int:
    count = 0
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            for line in lines:
                handle.write(line)
                count += 1
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count
