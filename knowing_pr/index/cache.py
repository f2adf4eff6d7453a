"""The edge rows of the store → the adjacency blob the walk reads (and its per-edge origins):
patched after an incremental run (the edges of re-resolved origins dropped, node indices
remapped, the new edges merged), rebuilt otherwise; both give the same bytes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from knowing_pr.graph.adjacency import ADJACENCY_BLOB
from knowing_pr.store import Store

__all__ = ["ORIGINS_BLOB", "AdjacencyDelta", "write_adjacency"]

ORIGINS_BLOB = "adjacency_origins"


@dataclass
class AdjacencyDelta:
    """What an incremental run changed, for patching the adjacency instead of rebuilding it."""

    dirty_origin_ids: list[int]
    vanished_ids: set[str]
    added_ids: set[str]


def write_adjacency(store: Store, graph_root: str, delta: AdjacencyDelta | None) -> str:
    """Bring the adjacency blob (and its per-edge origins) up to date; returns "patched" or
    "rebuilt". Patching drops the edges of re-resolved origins, remaps node indices and
    merges the new edges; it gives the same bytes as a rebuild from the edge rows."""
    import numpy as np

    from knowing_pr.graph.adjacency import csr_with_origins

    patched = _patched_adjacency(store, delta) if delta is not None else None
    how = "patched"
    if patched is None:
        node_ids, src, dst, kinds, conf, origins = store.edge_arrays()
        adjacency, origins = csr_with_origins(node_ids, src, dst, kinds, conf, origins)
        patched = adjacency.to_bytes(), origins
        how = "rebuilt"
    blob, origins = patched
    store.put_blob(ADJACENCY_BLOB, graph_root, blob)
    store.put_blob(ORIGINS_BLOB, graph_root, np.ascontiguousarray(origins, dtype="<i4").tobytes())
    return how


def _patched_adjacency(store: Store, delta: AdjacencyDelta) -> tuple[bytes, Any] | None:
    import numpy as np

    from knowing_pr.errors import StoreCorrupt
    from knowing_pr.graph.adjacency import patch_with_origins

    old_blob = store.get_blob(ADJACENCY_BLOB)
    old_origins_blob = store.get_blob(ORIGINS_BLOB)
    previous_root = store.graph_root
    if old_blob is None or old_origins_blob is None or old_blob[0] != previous_root:
        return None
    if len(old_origins_blob[1]) % 4:
        return None
    old_origins = np.frombuffer(old_origins_blob[1], dtype="<i4")
    fresh = store.edge_arrays(delta.dirty_origin_ids)
    try:
        return patch_with_origins(
            old_blob[1], old_origins, delta.dirty_origin_ids, delta.vanished_ids, delta.added_ids, fresh
        )
    except StoreCorrupt:
        return None
