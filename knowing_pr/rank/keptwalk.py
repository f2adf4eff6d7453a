"""The walk's transition matrix ↔ the store blob ``walk_matrix``, tagged with what it was built from:
a digest of the adjacency's arrays (the graph's edges and the co-change edges the history wrote,
with their kinds and confidences), the edge weights and the co-change share.

Building the matrix folds every edge of the graph (sorts, sums, normalises): on a large
repository it was one of the largest parts of a fresh ``pr`` (bench/pr_profile.py). It depends only
on the store state and the settings, so it is kept: the index command and the hook's idle worker
write it for the store's new graph root, and a ranking that finds no copy for its state writes
the one it built. The stored arrays are the built ones, byte for byte, so a ranking from the copy
equals one from a fresh build. A copy that does not decode, or fails its CRC-32 (a flipped byte),
is ignored (and replaced). The arrays are laid out as ``store/arrays.py`` lays out any.
"""

from __future__ import annotations

import hashlib
import sqlite3
import struct
from collections.abc import Mapping

import numpy as np

from knowing_pr.errors import StoreError
from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.model import EdgeKind
from knowing_pr.rank.sparse import CsrMatrix
from knowing_pr.store import Store
from knowing_pr.store.arrays import pack_arrays, unpack_arrays

__all__ = ["WALK_BLOB", "keep_walk_matrix", "stored_walk_matrix", "walk_tag"]

WALK_BLOB = "walk_matrix"
#: the blob's layout (``store/arrays.py``): shape, indptr, indices, data; 1–3 were drafts of a
#: layout of its own (such a copy is rebuilt and replaced)
_MAGIC = b"KPWM"
_FORMAT = 4


def walk_tag(adjacency: Adjacency, edge_weights: Mapping[EdgeKind, float], share: float) -> str:
    """What a matrix is built from, as the blob's tag: the SHA-256 of the adjacency's arrays, the
    edge weights and the share (exactly, as hex floats). The graph root is not enough: an index
    run that rewrites the co-change edges may keep it."""
    digest = hashlib.sha256(struct.pack("<q", adjacency.node_count))
    for array in (adjacency.indptr, adjacency.indices, adjacency.kinds, adjacency.confidence):
        raw = np.ascontiguousarray(array)
        digest.update(raw.dtype.str.encode() + struct.pack("<q", raw.size))
        digest.update(raw.data.cast("B"))
    weights = ",".join(f"{int(kind)}:{float(w).hex()}" for kind, w in sorted(edge_weights.items()))
    digest.update(f"|{weights}|{float(share).hex()}".encode())
    return digest.hexdigest()


def stored_walk_matrix(store: Store, tag: str, node_count: int) -> CsrMatrix | None:
    """The kept matrix built from ``tag``'s inputs, ``node_count`` square; None when there is none
    or it does not decode."""
    found = store.get_blob(WALK_BLOB)
    if found is None or found[0] != tag:
        return None
    try:
        matrix = _decode(found[1])
    except (ValueError, KeyError):
        return None
    return matrix if matrix.shape == (node_count, node_count) else None


def keep_walk_matrix(store: Store, tag: str, matrix: CsrMatrix) -> None:
    """Keep ``matrix`` as the copy for ``tag``, in a transaction of its own; a store that is busy or
    read-only keeps none (the next ranking builds the matrix again)."""
    try:
        with store.transaction():
            store.put_blob(WALK_BLOB, tag, _encode(matrix))
    except (StoreError, sqlite3.Error):
        pass


def _encode(matrix: CsrMatrix) -> bytes:
    arrays = {
        "shape": np.array(matrix.shape, dtype=np.int64),
        "indptr": matrix.indptr,
        "indices": matrix.indices,
        "data": matrix.data,
    }
    return pack_arrays(arrays, magic=_MAGIC, version=_FORMAT)


def _decode(data: bytes) -> CsrMatrix:
    arrays = unpack_arrays(data, magic=_MAGIC, version=_FORMAT)
    rows, cols = (int(n) for n in arrays["shape"])
    indptr, indices, values = arrays["indptr"], arrays["indices"], arrays["data"]
    nnz = len(values)
    if len(indptr) != rows + 1 or len(indices) != nnz:
        raise ValueError("the walk matrix's arrays do not match its shape")
    if indptr[0] != 0 or indptr[-1] != nnz or bool(np.any(np.diff(indptr) < 0)):
        raise ValueError("the walk matrix's row offsets are not a partition of its entries")
    if nnz and (int(indices.min()) < 0 or int(indices.max()) >= cols):
        raise ValueError("the walk matrix names a column outside it")
    return CsrMatrix(indptr, indices, values, (rows, cols))
