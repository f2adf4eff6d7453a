"""Node ids + typed edges → compact CSR arrays (and one self-checking bytes blob).

The adjacency cache holds the whole edge set of a graph root as five arrays, so the rank
stage never reads edge rows from SQLite (DESIGN.md, "Adjacency cache"): row ``i`` of the
CSR lists the targets of node ``i``, where nodes are numbered by their position in the
ascending list of 32-hex-character ids.

Blob layout (version 1; every integer little-endian, every section 8-byte aligned)::

    offset  size        field
    0       8           magic b"KPRADJ1\\0"
    8       4           version (uint32) = 1
    12      4           reserved (uint32) = 0
    16      8           node_count n (uint64)
    24      8           edge_count m (uint64)
    32      16 * n      node ids, 16 raw bytes each (bytes.fromhex of the hex id), ascending
    ...     8 * (n + 1) indptr      <i8   row offsets, indptr[0] = 0, indptr[n] = m
    ...     4 * m       indices     <i4   target of each edge, in [0, n)
    ...     4 * m       confidence  <f4   resolution confidence of each edge, in [0, 1]
    ...     m           kinds       u1    ``EdgeKind`` value of each edge

``from_bytes`` maps the arrays with ``numpy.frombuffer`` (no copy) and validates every
length, offset and range; any inconsistency raises ``StoreCorrupt``. Never pickled.

One module for the blob (over the style's ~400 lines): the format, its validation and the
incremental patch must keep giving the same bytes as a rebuild, so they stay side by side.
"""

from __future__ import annotations

import bisect
import hashlib
import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from knowing_pr.errors import StoreCorrupt, StoreError
from knowing_pr.model import Edge, EdgeKind

__all__ = [
    "ADJACENCY_BLOB",
    "ADJACENCY_MAGIC",
    "ADJACENCY_VERSION",
    "Adjacency",
    "CsrSections",
    "csr_with_origins",
    "merge_sorted_edges",
    "patch_with_origins",
    "raw_ids_of",
    "read_sections",
]

#: the store blob the adjacency is kept in, tagged with the graph root it was built for
ADJACENCY_BLOB = "adjacency"
ADJACENCY_MAGIC = b"KPRADJ1\0"
ADJACENCY_VERSION = 1

_HEADER = struct.Struct("<8sIIQQ")
_ID_BYTES = 16
_HEX_ID = re.compile(r"[0-9a-f]{32}")
_REPAIR_HINT = "delete the store's adjacency cache (or run `knowing-pr index --full`) to rebuild it"


def _corrupt(what: str) -> StoreCorrupt:
    return StoreCorrupt(f"adjacency blob is corrupt: {what}", hint=_REPAIR_HINT)


def _known_kinds() -> npt.NDArray[np.uint8]:
    return np.array(sorted(int(k) for k in EdgeKind), dtype=np.uint8)


@dataclass(eq=False)
class Adjacency:
    """The edge set as CSR arrays; index ``i`` is the node ``node_ids[i]``."""

    node_ids: list[str]
    indptr: npt.NDArray[np.int64]
    indices: npt.NDArray[np.int32]
    kinds: npt.NDArray[np.uint8]
    confidence: npt.NDArray[np.float32]

    @property
    def node_count(self) -> int:
        return len(self.node_ids)

    @property
    def edge_count(self) -> int:
        return int(self.indices.shape[0])

    def index_of(self, node_id: str) -> int | None:
        """Position of ``node_id`` in ``node_ids`` (``None`` when the graph has no such node):
        a binary search of the ascending ids, so a ranking that looks up a few nodes does not
        first build a map of all of them."""
        position = bisect.bisect_left(self.node_ids, node_id)
        if position < len(self.node_ids) and self.node_ids[position] == node_id:
            return position
        return None

    def sources(self) -> npt.NDArray[np.int64]:
        """The source index of every edge (the CSR row expanded to one entry per edge)."""
        return np.repeat(np.arange(self.node_count, dtype=np.int64), np.diff(self.indptr))

    def of_kinds(self, kinds: Iterable[int]) -> npt.NDArray[np.bool_]:
        """Whether each edge is of one of ``kinds`` (a table lookup: ``numpy.isin`` sorts)."""
        table = np.zeros(256, dtype=bool)
        table[[int(kind) for kind in kinds]] = True
        return np.asarray(table[self.kinds], dtype=np.bool_)

    def into(self, targets: Iterable[int]) -> npt.NDArray[np.bool_]:
        """Whether each edge ends at one of the node positions ``targets``."""
        member = np.zeros(self.node_count, dtype=bool)
        member[list(targets)] = True
        return np.asarray(member[self.indices], dtype=np.bool_)

    # -- building -------------------------------------------------------------------------

    @classmethod
    def from_edges(cls, node_ids: Iterable[str], edges: Iterable[Edge]) -> Adjacency:
        """Build from graph records; edges with an unknown endpoint are dropped."""
        ids = sorted(set(node_ids))
        position = {nid: i for i, nid in enumerate(ids)}
        src: list[int] = []
        dst: list[int] = []
        kinds: list[int] = []
        conf: list[float] = []
        for edge in edges:
            s = position.get(edge.source)
            t = position.get(edge.target)
            if s is None or t is None:
                continue
            src.append(s)
            dst.append(t)
            kinds.append(int(edge.kind))
            conf.append(edge.confidence)
        return cls.from_arrays(
            ids,
            np.array(src, dtype=np.int64),
            np.array(dst, dtype=np.int64),
            np.array(kinds, dtype=np.uint8),
            np.array(conf, dtype=np.float32),
        )

    @classmethod
    def from_arrays(
        cls,
        node_ids: list[str],
        sources: npt.ArrayLike,
        targets: npt.ArrayLike,
        kinds: npt.ArrayLike,
        confidence: npt.ArrayLike,
    ) -> Adjacency:
        """Build from ascending unique ids and parallel edge arrays (indices into ``node_ids``).

        Duplicate ``(source, target, kind)`` triples keep their highest confidence; each row
        is sorted by ``(target, kind)`` so equal inputs always give equal bytes.
        """
        _check_ids(node_ids)
        n = len(node_ids)
        src = np.asarray(sources, dtype=np.int64)
        dst = np.asarray(targets, dtype=np.int64)
        kind = np.asarray(kinds, dtype=np.uint8)
        conf = np.asarray(confidence, dtype=np.float32)
        if not (src.shape == dst.shape == kind.shape == conf.shape) or src.ndim != 1:
            raise StoreError("adjacency: edge arrays must be one-dimensional and of equal length")
        if src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
            raise StoreError("adjacency: an edge endpoint is not a known node index")
        if not np.isin(kind, _known_kinds()).all():
            raise StoreError("adjacency: an edge has an unknown EdgeKind value")
        # sort by (source, target, kind, confidence descending): the first of each triple wins
        order = np.lexsort((-conf, kind, dst, src))
        src, dst, kind, conf = src[order], dst[order], kind[order], conf[order]
        first = np.ones(src.shape[0], dtype=bool)
        first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1]) | (kind[1:] != kind[:-1])
        src, dst, kind, conf = src[first], dst[first], kind[first], conf[first]
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
        return cls(
            node_ids=list(node_ids),
            indptr=indptr,
            indices=dst.astype(np.int32),
            kinds=kind,
            confidence=conf,
        )

    # -- the blob -------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """Serialise to the versioned little-endian layout in the module docstring."""
        raw_ids = np.frombuffer(bytes.fromhex("".join(self.node_ids)), dtype=_RAW_ID)
        return _blob(CsrSections(raw_ids, self.indptr, self.indices, self.confidence, self.kinds))

    @classmethod
    def from_bytes(cls, data: bytes) -> Adjacency:
        """Load a blob written by ``to_bytes``; raise ``StoreCorrupt`` on any inconsistency."""
        sections = read_sections(data)
        hex_ids = sections.raw_ids.tobytes().hex()
        node_ids = [hex_ids[i : i + 32] for i in range(0, len(hex_ids), 32)]
        return cls(
            node_ids=node_ids,
            indptr=sections.indptr,
            indices=sections.indices,
            kinds=sections.kinds,
            confidence=sections.confidence,
        )

    def digest(self) -> str:
        """sha256 hex of ``to_bytes()`` (the store compares it in consistency checks)."""
        return hashlib.sha256(self.to_bytes()).hexdigest()


#: a node id as its 16 raw bytes; numpy orders these like the hex strings
_RAW_ID = np.dtype(f"S{_ID_BYTES}")


@dataclass(frozen=True, eq=False)
class CsrSections:
    """The blob's arrays as they are stored: node ids as raw 16-byte values (ascending)."""

    raw_ids: Any
    indptr: Any
    indices: Any
    confidence: Any
    kinds: Any


def read_sections(data: bytes) -> CsrSections:
    """A blob's arrays without copying them (and without a string per node); raises
    ``StoreCorrupt`` on any inconsistency."""
    buffer = memoryview(data)
    if len(buffer) < _HEADER.size:
        raise _corrupt(f"{len(buffer)} bytes is shorter than the {_HEADER.size}-byte header")
    magic, version, _reserved, n, m = _HEADER.unpack_from(buffer, 0)
    if magic != ADJACENCY_MAGIC:
        raise _corrupt(f"wrong magic {magic!r}")
    if version != ADJACENCY_VERSION:
        raise _corrupt(f"unsupported version {version} (this build reads {ADJACENCY_VERSION})")
    expected = _HEADER.size + _ID_BYTES * n + 8 * (n + 1) + 9 * m
    if len(buffer) != expected:
        raise _corrupt(f"{len(buffer)} bytes for {n} nodes and {m} edges (expected {expected})")
    offset = _HEADER.size
    raw_ids = np.frombuffer(data, dtype=_RAW_ID, count=n, offset=offset)
    offset += _ID_BYTES * n
    indptr = np.frombuffer(data, dtype="<i8", count=n + 1, offset=offset)
    offset += 8 * (n + 1)
    indices = np.frombuffer(data, dtype="<i4", count=m, offset=offset)
    offset += 4 * m
    confidence = np.frombuffer(data, dtype="<f4", count=m, offset=offset)
    offset += 4 * m
    kinds = np.frombuffer(data, dtype="u1", count=m, offset=offset)
    _validate_ids(raw_ids)
    _validate_arrays(n, m, indptr, indices, confidence, kinds)
    return CsrSections(raw_ids, indptr, indices, confidence, kinds)


def _blob(sections: CsrSections) -> bytes:
    n, m = int(sections.raw_ids.shape[0]), int(sections.indices.shape[0])
    parts = [
        _HEADER.pack(ADJACENCY_MAGIC, ADJACENCY_VERSION, 0, n, m),
        np.ascontiguousarray(sections.raw_ids, dtype=_RAW_ID).tobytes(),
        np.ascontiguousarray(sections.indptr, dtype="<i8").tobytes(),
        np.ascontiguousarray(sections.indices, dtype="<i4").tobytes(),
        np.ascontiguousarray(sections.confidence, dtype="<f4").tobytes(),
        np.ascontiguousarray(sections.kinds, dtype="u1").tobytes(),
    ]
    return b"".join(parts)


def raw_ids_of(hex_ids: Iterable[str]) -> Any:
    """Hex node ids → a sorted array of unique raw 16-byte ids."""
    return np.unique(np.frombuffer(bytes.fromhex("".join(hex_ids)), dtype=_RAW_ID))


def _check_ids(node_ids: list[str]) -> None:
    for nid in node_ids:
        if not _HEX_ID.fullmatch(nid):
            raise StoreError(f"adjacency: node id {nid!r} is not 32 lowercase hex characters")
    if any(a >= b for a, b in zip(node_ids, node_ids[1:], strict=False)):
        raise StoreError("adjacency: node ids must be unique and in ascending order")


def _validate_ids(ids: Any) -> None:
    if ids.shape[0] < 2:
        return
    if not bool((ids[1:] > ids[:-1]).all()):
        raise _corrupt("node ids are not unique and ascending")


def _validate_arrays(
    n: int,
    m: int,
    indptr: npt.NDArray[np.int64],
    indices: npt.NDArray[np.int32],
    confidence: npt.NDArray[np.float32],
    kinds: npt.NDArray[np.uint8],
) -> None:
    if indptr[0] != 0 or indptr[-1] != m:
        raise _corrupt(f"row offsets run from {indptr[0]} to {indptr[-1]}, expected 0 to {m}")
    if n and bool((np.diff(indptr) < 0).any()):
        raise _corrupt("row offsets decrease")
    if m:
        if int(indices.min()) < 0 or int(indices.max()) >= n:
            raise _corrupt(f"an edge target is outside the {n} nodes")
        if not bool(((confidence >= 0.0) & (confidence <= 1.0)).all()):
            raise _corrupt("an edge confidence is outside [0, 1]")
        known = np.zeros(256, dtype=bool)
        known[_known_kinds()] = True
        if not bool(known[kinds].all()):
            raise _corrupt("an edge has an unknown edge kind")


# -- building from edge arrays that carry their origin (the indexer keeps both in step) ----


def _assembled(
    node_ids: list[str], src: Any, dst: Any, kinds: Any, conf: Any, origins: Any
) -> tuple[Adjacency, Any]:
    """Edge arrays already in row order → the CSR ``Adjacency`` and the per-edge origins."""
    n = len(node_ids)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    adjacency = Adjacency(
        node_ids=node_ids,
        indptr=indptr,
        indices=dst.astype(np.int32),
        kinds=kinds.astype(np.uint8),
        confidence=conf.astype(np.float32),
    )
    return adjacency, origins.astype(np.int32)


def csr_with_origins(
    node_ids: list[str], src: Any, dst: Any, kinds: Any, conf: Any, origins: Any
) -> tuple[Adjacency, Any]:
    """(Adjacency, per-edge origin ids) with rows sorted by (source, target, kind, origin);
    duplicates are kept (each origin's copy), so dropping an origin later is exact."""

    # (source, target, kind, origin) order with two stable radix sorts on int64 keys: the same
    # order as a lexsort, several times faster on a Django-sized edge set
    if len(node_ids) < (1 << 23):
        key = (src.astype(np.int64) << 40) | (dst.astype(np.int64) << 8) | kinds.astype(np.int64)
        order = np.argsort(origins, kind="stable")
        order = order[np.argsort(key[order], kind="stable")]
    else:  # the packed key would overflow
        order = np.lexsort((origins, kinds, dst, src))
    src, dst, kinds, conf, origins = src[order], dst[order], kinds[order], conf[order], origins[order]
    return _assembled(node_ids, src, dst, kinds, conf, origins)


def merge_sorted_edges(
    node_ids: list[str], kept: tuple[Any, ...], fresh: tuple[Any, ...]
) -> tuple[Adjacency, Any]:
    """Like ``csr_with_origins`` when ``kept`` is already in (source, target, kind, origin) order (the old
    blob's order survives a monotonic index remap): only the few fresh edges are sorted and
    inserted, instead of re-sorting every edge."""
    return _assembled(node_ids, *_merged_columns(len(node_ids), kept, fresh))


def patch_with_origins(
    old_blob: bytes,
    old_origins: Any,
    dirty_origins: Sequence[int],
    vanished_ids: Iterable[str],
    added_ids: Iterable[str],
    fresh: tuple[list[str], Any, Any, Any, Any, Any],
) -> tuple[bytes, Any] | None:
    """The blob (and per-edge origins) after dropping the edges of ``dirty_origins``, the
    ``vanished_ids`` nodes, adding the ``added_ids`` nodes and the ``fresh`` edges (node ids,
    then source, target, kind, confidence and origin arrays indexing them): the same bytes
    as ``csr_with_origins`` over the resulting edge set, in passes over whole arrays (no
    object per node or edge). ``None`` when the old blob cannot be patched (an edge that
    stays points at a vanished node, a fresh edge at an unknown one): rebuild instead."""
    old = read_sections(old_blob)
    n_old = int(old.raw_ids.shape[0])
    if old_origins.shape[0] != old.indices.shape[0]:
        return None
    keep_node = np.ones(n_old, dtype=bool)
    gone = raw_ids_of(vanished_ids)
    if n_old and gone.shape[0]:
        at = np.minimum(np.searchsorted(old.raw_ids, gone), n_old - 1)
        keep_node[at[old.raw_ids[at] == gone]] = False
    added = raw_ids_of(added_ids)
    if n_old and added.shape[0]:
        at = np.minimum(np.searchsorted(old.raw_ids, added), n_old - 1)
        added = added[~((old.raw_ids[at] == added) & keep_node[at])]
    kept_ids = old.raw_ids[keep_node]
    new_ids = np.insert(kept_ids, np.searchsorted(kept_ids, added), added)
    # an old node's new index: the kept nodes before it plus the added ones sorting before it
    remap = np.cumsum(keep_node) - 1 + np.searchsorted(added, old.raw_ids)
    keep_edge = ~np.isin(old_origins, np.asarray(dirty_origins, dtype=np.int32))
    src_old = np.repeat(np.arange(n_old, dtype=np.int64), np.diff(old.indptr))[keep_edge]
    dst_old = old.indices[keep_edge]
    if not (keep_node[src_old].all() and keep_node[dst_old].all()):
        return None
    fresh_ids, fsrc, fdst, fkinds, fconf, forigins = fresh
    n_new = int(new_ids.shape[0])
    fresh_raw = np.frombuffer(bytes.fromhex("".join(fresh_ids)), dtype=_RAW_ID)
    where = np.searchsorted(new_ids, fresh_raw)
    if fresh_raw.shape[0] and (
        bool((where >= n_new).any()) or not bool((new_ids[np.minimum(where, n_new - 1)] == fresh_raw).all())
    ):
        return None
    fsrc = where[np.asarray(fsrc, dtype=np.int64)] if len(fsrc) else np.zeros(0, dtype=np.int64)
    fdst = where[np.asarray(fdst, dtype=np.int64)] if len(fdst) else np.zeros(0, dtype=np.int64)
    kept = (
        remap[src_old],
        remap[dst_old],
        old.kinds[keep_edge],
        old.confidence[keep_edge],
        old_origins[keep_edge],
    )
    src, dst, kinds, conf, origins = _merged_columns(n_new, kept, (fsrc, fdst, fkinds, fconf, forigins))
    indptr = np.zeros(n_new + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n_new), out=indptr[1:])
    blob = _blob(CsrSections(new_ids, indptr, dst, conf, kinds))
    return blob, np.asarray(origins, dtype=np.int32)


def _merged_columns(n: int, kept: tuple[Any, ...], fresh: tuple[Any, ...]) -> tuple[Any, ...]:
    """``kept`` (in row order) with ``fresh`` inserted where ``csr_with_origins`` would put them."""
    kept = tuple(np.asarray(c) for c in kept)
    fresh = tuple(np.asarray(c) for c in fresh)
    if n >= (1 << 23):  # the packed key would overflow: sort everything
        src, dst, kinds, conf, origins = (np.concatenate([a, b]) for a, b in zip(kept, fresh, strict=True))
        order = np.lexsort((origins, kinds, dst, src))
        return src[order], dst[order], kinds[order], conf[order], origins[order]

    def packed(src: Any, dst: Any, kinds: Any) -> Any:
        return (src.astype(np.int64) << 40) | (dst.astype(np.int64) << 8) | kinds.astype(np.int64)

    kept_key = packed(kept[0], kept[1], kept[2])
    fresh_key = packed(fresh[0], fresh[1], fresh[2])
    order = np.lexsort((fresh[4], fresh_key))
    fresh = tuple(column[order] for column in fresh)
    fresh_key = fresh_key[order]
    positions = np.searchsorted(kept_key, fresh_key, side="left")
    if len(kept_key):
        clipped = np.minimum(positions, len(kept_key) - 1)
        ties = np.flatnonzero((positions < len(kept_key)) & (kept_key[clipped] == fresh_key))
    else:
        ties = np.zeros(0, dtype=np.int64)
    kept_origins = kept[4]
    for i in ties.tolist():  # the same (source, target, kind) from two origins: rare
        at = int(positions[i])
        while at < len(kept_key) and kept_key[at] == fresh_key[i] and kept_origins[at] < fresh[4][i]:
            at += 1
        positions[i] = at
    return tuple(
        np.insert(old_column, positions, new_column)
        for old_column, new_column in zip(kept, fresh, strict=True)
    )
