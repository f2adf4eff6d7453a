"""Adjacency cache: CSR construction, the bytes blob round trip, corruption detection."""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest

from knowing_pr.errors import StoreCorrupt, StoreError
from knowing_pr.graph.adjacency import (
    ADJACENCY_MAGIC,
    Adjacency,
    csr_with_origins,
    patch_with_origins,
    read_sections,
)
from knowing_pr.model import Edge, EdgeKind, node_id

IDS = sorted(node_id("a.py", name, "function") for name in ("f", "g", "h", "k"))
A, B, C, D = IDS


def sample_edges() -> list[Edge]:
    return [
        Edge(A, C, EdgeKind.CALLS, 0.7),
        Edge(A, B, EdgeKind.IMPORTS, 0.5),
        Edge(A, B, EdgeKind.CALLS, 0.6),
        Edge(A, B, EdgeKind.CALLS, 0.9),  # duplicate triple: the higher confidence wins
        Edge(C, A, EdgeKind.REFERENCES, 0.4),
        Edge(D, "f" * 32, EdgeKind.CALLS, 1.0),  # unknown target: dropped
        Edge("e" * 32, A, EdgeKind.CALLS, 1.0),  # unknown source: dropped
    ]


def sample() -> Adjacency:
    return Adjacency.from_edges(reversed(IDS), sample_edges())


def test_from_edges_builds_sorted_deduplicated_csr() -> None:
    adj = sample()
    assert adj.node_ids == IDS
    assert adj.node_count == 4
    assert adj.edge_count == 4
    assert adj.indptr.tolist() == [0, 3, 3, 4, 4]
    # row A sorted by (target, kind): B calls, B imports, C calls
    assert adj.indices.tolist() == [1, 1, 2, 0]
    assert adj.kinds.tolist() == [EdgeKind.CALLS, EdgeKind.IMPORTS, EdgeKind.CALLS, EdgeKind.REFERENCES]
    assert adj.confidence.tolist() == pytest.approx([0.9, 0.5, 0.7, 0.4])
    assert adj.indices.dtype == np.int32 and adj.indptr.dtype == np.int64
    assert adj.kinds.dtype == np.uint8 and adj.confidence.dtype == np.float32
    assert adj.sources().tolist() == [0, 0, 0, 2]


def test_index_of() -> None:
    adj = sample()
    assert [adj.index_of(i) for i in IDS] == [0, 1, 2, 3]
    assert adj.index_of("0" * 32) is None


def test_edge_order_does_not_change_the_bytes() -> None:
    edges = sample_edges()
    shuffled = edges[:]
    random.Random(7).shuffle(shuffled)
    assert Adjacency.from_edges(IDS, edges).to_bytes() == Adjacency.from_edges(IDS, shuffled).to_bytes()
    assert Adjacency.from_edges(IDS, edges).digest() == Adjacency.from_edges(IDS, shuffled).digest()


def test_bytes_round_trip() -> None:
    adj = sample()
    blob = adj.to_bytes()
    assert blob[:8] == ADJACENCY_MAGIC
    assert len(blob) == 32 + 16 * 4 + 8 * 5 + 9 * 4
    loaded = Adjacency.from_bytes(blob)
    assert loaded.node_ids == adj.node_ids
    for name in ("indptr", "indices", "kinds", "confidence"):
        assert np.array_equal(getattr(loaded, name), getattr(adj, name)), name
    assert loaded.to_bytes() == blob
    assert loaded.digest() == adj.digest()
    assert len(adj.digest()) == 64


def test_from_bytes_does_not_copy_the_arrays() -> None:
    loaded = Adjacency.from_bytes(sample().to_bytes())
    for name in ("indptr", "indices", "kinds", "confidence"):
        assert not getattr(loaded, name).flags.owndata, name


def test_empty_and_edgeless_graphs_round_trip() -> None:
    empty = Adjacency.from_edges([], [])
    assert Adjacency.from_bytes(empty.to_bytes()).node_ids == []
    lonely = Adjacency.from_edges(IDS, [])
    loaded = Adjacency.from_bytes(lonely.to_bytes())
    assert loaded.node_ids == IDS
    assert loaded.indptr.tolist() == [0, 0, 0, 0, 0]
    assert loaded.edge_count == 0


def test_digest_changes_with_content() -> None:
    edges = sample_edges()
    changed = [*edges[:-1], Edge(B, D, EdgeKind.CALLS, 1.0)]
    assert Adjacency.from_edges(IDS, edges).digest() != Adjacency.from_edges(IDS, changed).digest()


@pytest.mark.parametrize("bad_id", ["ABC", "A" * 32, "g" * 32, "0" * 31])
def test_from_edges_rejects_malformed_ids(bad_id: str) -> None:
    with pytest.raises(StoreError, match="32 lowercase hex"):
        Adjacency.from_edges([bad_id], [])


def test_from_arrays_rejects_out_of_range_endpoints() -> None:
    with pytest.raises(StoreError, match="not a known node"):
        Adjacency.from_arrays(IDS, [0], [4], [1], [1.0])
    with pytest.raises(StoreError, match="unknown EdgeKind"):
        Adjacency.from_arrays(IDS, [0], [1], [99], [1.0])


# -- corruption -------------------------------------------------------------------------------


def patched(blob: bytes, offset: int, data: bytes) -> bytes:
    return blob[:offset] + data + blob[offset + len(data) :]


def offsets(n: int, m: int) -> dict[str, int]:
    ids = 32
    indptr = ids + 16 * n
    indices = indptr + 8 * (n + 1)
    confidence = indices + 4 * m
    kinds = confidence + 4 * m
    return {"ids": ids, "indptr": indptr, "indices": indices, "confidence": confidence, "kinds": kinds}


@pytest.mark.parametrize("cut", [0, 7, 31, 32, 100, -9, -1])
def test_truncated_blob_raises_store_corrupt(cut: int) -> None:
    blob = sample().to_bytes()
    with pytest.raises(StoreCorrupt):
        Adjacency.from_bytes(blob[:cut])


def test_trailing_bytes_raise_store_corrupt() -> None:
    with pytest.raises(StoreCorrupt, match="expected"):
        Adjacency.from_bytes(sample().to_bytes() + b"\0")


def test_wrong_magic_and_version_raise_store_corrupt() -> None:
    blob = sample().to_bytes()
    with pytest.raises(StoreCorrupt, match="magic"):
        Adjacency.from_bytes(patched(blob, 0, b"KPRADJ2\0"))
    with pytest.raises(StoreCorrupt, match="version"):
        Adjacency.from_bytes(patched(blob, 8, struct.pack("<I", 2)))


def test_inconsistent_counts_raise_store_corrupt() -> None:
    blob = sample().to_bytes()
    with pytest.raises(StoreCorrupt):
        Adjacency.from_bytes(patched(blob, 24, struct.pack("<Q", 5)))


def test_target_out_of_range_raises_store_corrupt() -> None:
    blob = sample().to_bytes()
    at = offsets(4, 4)["indices"]
    with pytest.raises(StoreCorrupt, match="outside"):
        Adjacency.from_bytes(patched(blob, at, struct.pack("<i", 4)))
    with pytest.raises(StoreCorrupt, match="outside"):
        Adjacency.from_bytes(patched(blob, at, struct.pack("<i", -1)))


def test_bad_row_offsets_raise_store_corrupt() -> None:
    blob = sample().to_bytes()
    at = offsets(4, 4)["indptr"]
    with pytest.raises(StoreCorrupt, match="decrease"):
        Adjacency.from_bytes(patched(blob, at + 8, struct.pack("<q", 4)))  # [0, 4, 3, 4, 4]
    with pytest.raises(StoreCorrupt, match="row offsets run"):
        Adjacency.from_bytes(patched(blob, at, struct.pack("<q", 1)))


def test_unsorted_ids_unknown_kind_and_bad_confidence_raise_store_corrupt() -> None:
    blob = sample().to_bytes()
    at = offsets(4, 4)
    with pytest.raises(StoreCorrupt, match="ascending"):
        Adjacency.from_bytes(patched(blob, at["ids"] + 16, bytes.fromhex(A)))
    with pytest.raises(StoreCorrupt, match="edge kind"):
        Adjacency.from_bytes(patched(blob, at["kinds"], b"\x63"))
    with pytest.raises(StoreCorrupt, match="confidence"):
        Adjacency.from_bytes(patched(blob, at["confidence"], struct.pack("<f", float("nan"))))


def test_large_graph_round_trip() -> None:
    rng = np.random.default_rng(3)
    ids = sorted({rng.bytes(16).hex() for _ in range(5000)})
    n, m = len(ids), 20000
    adj = Adjacency.from_arrays(
        ids, rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 11, m), rng.random(m)
    )
    loaded = Adjacency.from_bytes(adj.to_bytes())
    assert loaded.node_ids == ids
    assert np.array_equal(loaded.indices, adj.indices)
    assert loaded.digest() == adj.digest()
    assert adj.edge_count <= m and np.all(np.diff(adj.indptr) >= 0)


# -- patching a blob with per-edge origins ------------------------------------------------------


def _random_edge_set(rng: np.random.Generator, ids: list[str], m: int, origins: int) -> list[tuple[int, ...]]:
    """(source id index, target id index, kind, confidence in basis points, origin) rows."""
    n = len(ids)
    return sorted(
        {
            (int(s), int(t), int(k), int(c), int(o))
            for s, t, k, c, o in zip(
                rng.integers(0, n, m),
                rng.integers(0, n, m),
                rng.integers(1, 11, m),
                rng.integers(0, 10001, m),
                rng.integers(-1, origins, m),
                strict=True,
            )
        }
    )


def _built(ids: list[str], rows: list[tuple[str, str, int, int, int]]) -> tuple[bytes, np.ndarray]:
    """csr_with_origins over rows given by node id: the rebuild a patch must equal."""
    position = {nid: i for i, nid in enumerate(ids)}
    src = np.array([position[r[0]] for r in rows], dtype=np.int64)
    dst = np.array([position[r[1]] for r in rows], dtype=np.int64)
    kinds = np.array([r[2] for r in rows], dtype=np.uint8)
    conf = (np.array([r[3] for r in rows], dtype=np.int64) / 10000.0).astype(np.float32)
    origins = np.array([r[4] for r in rows], dtype=np.int32)
    adjacency, per_edge = csr_with_origins(ids, src, dst, kinds, conf, origins)
    return adjacency.to_bytes(), per_edge


@pytest.mark.parametrize("seed", range(12))
def test_patch_equals_a_rebuild_of_the_resulting_edge_set(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ids = sorted({rng.bytes(16).hex() for _ in range(int(rng.integers(1, 300)))})
    old_rows = [
        (ids[s], ids[t], k, c, o)
        for s, t, k, c, o in _random_edge_set(rng, ids, int(rng.integers(0, 900)), 12)
    ]
    old_blob, old_origins = _built(ids, old_rows)
    dirty = sorted({int(o) for o in rng.integers(-1, 12, int(rng.integers(0, 4)))})
    kept_rows = [r for r in old_rows if r[4] not in dirty]
    used = {r[0] for r in kept_rows} | {r[1] for r in kept_rows}
    vanished = {nid for nid in ids if nid not in used and rng.random() < 0.5}
    added = {rng.bytes(16).hex() for _ in range(int(rng.integers(0, 40)))}
    new_ids = sorted((set(ids) - vanished) | added)
    fresh_rows = [
        (new_ids[s], new_ids[t], k, c, o)
        for s, t, k, c, o in _random_edge_set(rng, new_ids, int(rng.integers(0, 200)), 12)
        if o in dirty
    ]
    fresh_ids = sorted({r[0] for r in fresh_rows} | {r[1] for r in fresh_rows})
    at = {nid: i for i, nid in enumerate(fresh_ids)}
    fresh = (
        fresh_ids,
        np.array([at[r[0]] for r in fresh_rows], dtype=np.int64),
        np.array([at[r[1]] for r in fresh_rows], dtype=np.int64),
        np.array([r[2] for r in fresh_rows], dtype=np.uint8),
        (np.array([r[3] for r in fresh_rows], dtype=np.int64) / 10000.0).astype(np.float32),
        np.array([r[4] for r in fresh_rows], dtype=np.int32),
    )
    # an id that is already there counts once, as after a concurrent writer's identical patch
    patched = patch_with_origins(
        old_blob, old_origins, dirty, vanished, added | set(ids[:1]) - vanished, fresh
    )
    assert patched is not None
    expected_blob, expected_origins = _built(new_ids, kept_rows + fresh_rows)
    assert patched[0] == expected_blob
    assert patched[1].tolist() == expected_origins.tolist()


def test_patch_refuses_when_a_kept_edge_points_at_a_vanished_node() -> None:
    blob, origins = _built(IDS, [(A, B, int(EdgeKind.CALLS), 5000, 1), (C, D, int(EdgeKind.CALLS), 5000, 2)])
    empty = (
        [],
        np.zeros(0, np.int64),
        np.zeros(0, np.int64),
        np.zeros(0, np.uint8),
        np.zeros(0, np.float32),
        np.zeros(0, np.int32),
    )
    assert patch_with_origins(blob, origins, [2], {B}, set(), empty) is None  # origin 1 still needs B
    patched = patch_with_origins(blob, origins, [2], {D}, set(), empty)
    assert patched is not None
    assert patched[0] == _built([A, B, C], [(A, B, int(EdgeKind.CALLS), 5000, 1)])[0]


def test_patch_refuses_a_fresh_edge_to_an_unknown_node() -> None:
    blob, origins = _built(IDS, [(A, B, int(EdgeKind.CALLS), 5000, 1)])
    unknown = "0" * 32
    fresh = (
        sorted([A, unknown]),
        np.array([1], np.int64),
        np.array([0], np.int64),
        np.array([int(EdgeKind.CALLS)], np.uint8),
        np.array([1.0], np.float32),
        np.array([3], np.int32),
    )
    assert patch_with_origins(blob, origins, [3], set(), set(), fresh) is None


def test_read_sections_matches_from_bytes() -> None:
    adj = sample()
    sections = read_sections(adj.to_bytes())
    assert sections.raw_ids.tobytes().hex() == "".join(adj.node_ids)
    assert sections.indptr.tolist() == adj.indptr.tolist()
    assert sections.indices.tolist() == adj.indices.tolist()
