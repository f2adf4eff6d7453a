"""The walk's transition matrix ↔ the store blob ``walk_matrix``, tagged with what it was built from
(the graph root, the node count, the edge weights and the co-change share).

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

import numpy as np

from knowing_pr.errors import StoreError
from knowing_pr.model import EdgeKind
from knowing_pr.rank.sparse import CsrMatrix
from knowing_pr.store import Store

__all__ = ["WALK_BLOB", "keep_walk_matrix", "stored_walk_matrix", "walk_tag"]

WALK_BLOB = "walk_matrix"
#: the blob's layout: this header (with the CRC-32 of what follows), then indptr (int64),
#: indices (int64), data (float64)
_HEADER = struct.Struct("<4sIqqqI")
_MAGIC = b"KPWM"
_FORMAT = 1


def walk_tag(graph_root: str, node_count: int, edge_weights: Mapping[EdgeKind, float], share: float) -> str:
    """What a matrix was built from, as the blob's tag (weights and share exactly, as hex floats)."""
    weights = ",".join(f"{int(kind)}:{float(w).hex()}" for kind, w in sorted(edge_weights.items()))
    digest = hashlib.sha256(f"{weights}|{float(share).hex()}".encode()).hexdigest()[:32]
    return f"{graph_root}:{node_count}:{digest}"


def stored_walk_matrix(store: Store, tag: str) -> CsrMatrix | None:
    """The kept matrix built from ``tag``'s inputs; None when there is none or it does not decode."""
    found = store.get_blob(WALK_BLOB)
    if found is None or found[0] != tag:
        return None
    try:
        return _decode(found[1])
    except ValueError:
        return None


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
    return _HEADER.pack(_MAGIC, _FORMAT, rows, cols, matrix.nnz, zlib.crc32(body)) + body


def _decode(data: bytes) -> CsrMatrix:
    if len(data) < _HEADER.size:
        raise ValueError("too short for a walk matrix")
    magic, version, rows, cols, nnz, checksum = _HEADER.unpack_from(data)
    if magic != _MAGIC or version != _FORMAT or min(rows, cols, nnz) < 0:
        raise ValueError("not a walk matrix of this layout")
    if len(data) != _HEADER.size + 8 * (rows + 1) + 16 * nnz:
        raise ValueError("the walk matrix's arrays are cut short or too long")
    if zlib.crc32(memoryview(data)[_HEADER.size :]) != checksum:
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
    return CsrMatrix(indptr, indices, values, (rows, cols))
