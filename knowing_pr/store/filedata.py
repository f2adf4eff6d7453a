"""The store → what the file ranking reads, as plain data (``history.filesignals``): the file
graph folded from the adjacency, the content sketches, and every known path. One read each;
the file ranking at rank time and the model's fit at index time share them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowing_pr.history.fileinputs import FileGraph, Sketches
from knowing_pr.parse.sketch import sketch_from_bytes
from knowing_pr.store.sketches import all_sketches

if TYPE_CHECKING:
    from knowing_pr.graph.adjacency import Adjacency
    from knowing_pr.store import Store

__all__ = ["MODEL_META", "file_graph", "known_paths", "sketches"]

#: meta key of the file model the index fitted (``index/filefit.py`` writes it, ranking reads it)
MODEL_META = "files_model"


def file_graph(store: Store, adjacency: Adjacency) -> FileGraph:
    """The adjacency folded onto files (``FileGraph.build``)."""
    if adjacency.node_count == 0:
        return FileGraph.empty()
    rows = store.conn.execute("SELECT id, path FROM nodes ORDER BY id").fetchall()
    ids = [str(nid) for nid, _ in rows]
    if ids == adjacency.node_ids:
        node_paths = [str(path) for _, path in rows]
    else:  # the blob lags the rows (cannot happen after an index run): map by id
        by_id = dict(zip(ids, (str(p) for _, p in rows), strict=True))
        node_paths = [by_id.get(nid, "") for nid in adjacency.node_ids]
    return FileGraph.build(node_paths, adjacency.indptr, adjacency.indices, adjacency.kinds)


def sketches(store: Store) -> Sketches:
    return Sketches.build(
        (path, sketch_from_bytes(data), generated) for path, data, generated in all_sketches(store)
    )


def known_paths(store: Store) -> list[str]:
    """Every path of the tree the store reflects (indexed or skipped) and every path with history."""
    paths = {str(p) for (p,) in store.conn.execute("SELECT path FROM files")}
    paths.update(str(p) for (p,) in store.conn.execute("SELECT path FROM hist_files"))
    return sorted(paths)
