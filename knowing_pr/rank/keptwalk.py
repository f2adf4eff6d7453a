"""The walk's transition matrix ↔ the store blob ``walk_matrix``, tagged with what it was built from:
a digest of the adjacency's arrays (the graph's edges and the co-change edges the history wrote,
with their kinds and confidences), the edge weights and the co-change share.

Building the matrix folds every edge of the graph (sorts, sums, normalises): on a large
repository it was one of the largest parts of a fresh ``pr`` (bench/pr_profile.py). It depends only
on the store state and the settings, so it is kept: the index command and the hook's idle worker
write it for the store's new graph root, and a ranking that finds no copy for its state writes
the one it built. The stored arrays are the built ones, byte for byte, so a ranking from the copy
equals one from a fresh build. A copy that does not decode, or fails its CRC-32 (a flipped byte),
is ignored (and replaced).
"""

from __future__ import annotations

import hashlib
import sqlite3
import struct
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from knowing_pr.errors import StoreError
from knowing_pr.graph.adjacency import Adjacency
from knowing_pr.model import EdgeKind
from knowing_pr.rank.sparse import CsrMatrix
from knowing_pr.store import Store

__all__ = ["WALK_BLOB", "keep_walk_matrix", "stored_walk_matrix", "walk_tag"]

WALK_BLOB = "walk_matrix"
#: the blob's layout: this header (40 bytes, so the arrays after it are 8-byte aligned), then
#: indptr (int64), indices (int64), data (float64); the CRC-32 covers the header's other fields
#: and the arrays
_HEADER = struct.Struct("<4sIqqqI4x")
_COVERED = struct.Struct("<Iqqq")
_MAGIC = b"KPWM"
#: 1 and 2 were drafts (the CRC left the header out; the arrays were not aligned): such a copy
#: is rebuilt and replaced
_FORMAT = 3


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
    except (ValueError, struct.error):
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
    rows, cols = matrix.shape
    body = b"".join(
        (
            matrix.indptr.astype("<i8").tobytes(),
            matrix.indices.astype("<i8").tobytes(),
            matrix.data.astype("<f8").tobytes(),
        )
    )
    checksum = zlib.crc32(body, zlib.crc32(_COVERED.pack(_FORMAT, rows, cols, matrix.nnz)))
    return _HEADER.pack(_MAGIC, _FORMAT, rows, cols, matrix.nnz, checksum) + body


def _decode(data: bytes) -> CsrMatrix:
    if len(data) < _HEADER.size:
        raise ValueError("too short for a walk matrix")
    magic, version, rows, cols, nnz, checksum = _HEADER.unpack_from(data)
    if magic != _MAGIC or version != _FORMAT or min(rows, cols, nnz) < 0:
        raise ValueError("not a walk matrix of this layout")
    if len(data) != _HEADER.size + 8 * (rows + 1) + 16 * nnz:
        raise ValueError("the walk matrix's arrays are cut short or too long")
    covered = zlib.crc32(_COVERED.pack(version, rows, cols, nnz))
    if zlib.crc32(memoryview(data)[_HEADER.size :], covered) != checksum:
        raise ValueError("the walk matrix fails its checksum")
    offset = _HEADER.size
    indptr = np.frombuffer(data, dtype="<i8", count=rows + 1, offset=offset)
    offset += 8 * (rows + 1)
    indices = np.frombuffer(data, dtype="<i8", count=nnz, offset=offset)
    values = np.frombuffer(data, dtype="<f8", count=nnz, offset=offset + 8 * nnz)
    if indptr[0] != 0 or indptr[-1] != nnz or bool(np.any(np.diff(indptr) < 0)):
        raise ValueError("the walk matrix's row offsets are not a partition of its entries")
    if nnz and (int(indices.min()) < 0 or int(indices.max()) >= cols):
        raise ValueError("the walk matrix names a column outside it")
    return CsrMatrix(_owned(indptr), _owned(indices), _owned(values), (rows, cols))


def _owned(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """A writeable copy of a view of the blob's bytes (numpy copies a read-only array in every
    ``bincount`` of the walk, so copying once is cheaper)."""
    return np.array(array, copy=True)
