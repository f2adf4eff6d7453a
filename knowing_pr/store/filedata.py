"""The store → what the file ranking reads, as plain data (``history.filesignals``): the file
graph folded from the adjacency, the content sketches, and every known path. The index run keeps
two copies of all three: the file model's training copy (``files_inputs``, which may be a few
runs old) and the ranking's (``files_rank_inputs``, tagged with the store state it was read at,
with each file's number of co-change partners besides), so a fresh ``pr`` decodes one blob
instead of folding the whole adjacency onto files and counting the history's pairs.

A copy is a few named arrays in the layout of ``store/arrays.py`` (a CRC-32 catches flipped
bytes); a copy written by an earlier release (an ``.npz`` archive, whose own checksums catch them)
still decodes."""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from knowing_pr.history.fileinputs import FileGraph, Sketches
from knowing_pr.parse.sketch import sketch_from_bytes
from knowing_pr.store.arrays import pack_arrays, unpack_arrays
from knowing_pr.store.sketches import all_sketches

if TYPE_CHECKING:
    from knowing_pr.graph.adjacency import Adjacency
    from knowing_pr.store import Store

__all__ = [
    "INPUTS_BLOB",
    "MODEL_META",
    "RANK_INPUTS_BLOB",
    "FileInputs",
    "cache_file_inputs",
    "cached_file_inputs",
    "file_graph",
    "inputs_tag",
    "known_paths",
    "read_file_inputs",
    "sketches",
]

#: meta key of the file model the index fitted (``index/filefit.py`` writes it, ranking reads it)
MODEL_META = "files_model"
#: the file model's training copy of the inputs (``index/fileinputs.py``: may be a few runs old)
INPUTS_BLOB = "files_inputs"
#: the ranking's copy, tagged with the store state it was read at (``inputs_tag``)
RANK_INPUTS_BLOB = "files_rank_inputs"
#: the blob's layout (paths are NUL-separated: a git path can hold a newline, never a NUL);
#: 2 was an ``.npz`` archive, 4 the raw arrays (``store/arrays.py``) with the partner counts (3, a
#: draft of 4 whose CRC left the header out, reads as no copy; its tag makes the index replace it)
INPUTS_FORMAT = 4
_RAW_MAGIC = b"KPFI"


@dataclass(frozen=True)
class FileInputs:
    """What no change alters: the file graph, the content sketches, every known path."""

    graph: FileGraph
    sketches: Sketches
    paths: list[str]
    #: each file's number of co-change partners (the pairs naming it); None: not read
    partner_counts: Mapping[str, int] | None = None


def read_file_inputs(store: Store, adjacency: Adjacency, *, with_partners: bool = False) -> FileInputs:
    """The inputs read from the rows (and ``adjacency``), with the partner counts when asked."""
    from knowing_pr.store.history import partner_counts

    partners = partner_counts(store.conn) if with_partners else None
    return FileInputs(file_graph(store, adjacency), sketches(store), known_paths(store), partners)


def inputs_tag(graph_root: str | None, commit: str | None) -> str:
    """The store state a copy of the inputs was read at: the graph root covers the indexed files'
    symbols and edges, the commit the rest (skipped files, the mined history's paths), and the
    layout the copy is in (a copy in an older one is replaced once)."""
    return f"{graph_root or ''}@{commit or ''}/{INPUTS_FORMAT}"


def cached_file_inputs(store: Store, blob: str, tag: str | None = None) -> FileInputs | None:
    """The inputs ``blob`` keeps; with ``tag``, only when they were read at that state
    (``inputs_tag``). ``None`` when there is no usable copy."""
    found = store.get_blob(blob)
    if found is None or (tag is not None and found[0] != tag):
        return None
    try:
        return _decode_inputs(found[1])
    except (
        ValueError,  # UnicodeDecodeError is one
        KeyError,
        OSError,
        IndexError,
        EOFError,
        TypeError,
        struct.error,
        zlib.error,
    ):
        return None  # a damaged copy (the checksums catch flipped bytes): read the rows


def cache_file_inputs(store: Store, blob: str, tag: str, inputs: FileInputs) -> None:
    store.put_blob(blob, tag, _encode_inputs(inputs))


def file_graph(store: Store, adjacency: Adjacency) -> FileGraph:
    """The adjacency folded onto files (``FileGraph.build``)."""
    if adjacency.node_count == 0:
        return FileGraph.empty()
    # unordered: SQLite's ORDER BY id walks the id index and looks every row up (3× slower)
    by_id = {str(nid): str(path) for nid, path in store.conn.execute("SELECT id, path FROM nodes")}
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


def _text_array(items: Sequence[str]) -> npt.NDArray[np.uint8]:
    return np.frombuffer("\0".join(items).encode("utf-8", "surrogateescape"), dtype=np.uint8)


def _text_list(array: npt.NDArray[Any]) -> list[str]:
    text = array.tobytes().decode("utf-8", "surrogateescape")
    return text.split("\0") if text else []


def _encode_inputs(inputs: FileInputs) -> bytes:
    graph, content = inputs.graph, inputs.sketches
    links, tests = graph.links, graph.tests
    arrays: dict[str, npt.NDArray[Any]] = {
        "graph_paths": _text_array(graph.paths),
        "links": np.stack([links.rows, links.cols]).astype(np.int32),
        "link_counts": links.values.astype(np.float32),
        "tests": np.stack([tests.rows, tests.cols]).astype(np.int32),
        "sketch_paths": _text_array(content.paths),
        "sketches": content.matrix,
        "generated": _text_array(sorted(content.generated)),
        "paths": _text_array(inputs.paths),
    }
    if inputs.partner_counts is not None:
        partners = sorted(inputs.partner_counts.items())
        arrays["partner_paths"] = _text_array([path for path, _ in partners])
        arrays["partner_counts"] = np.array([count for _, count in partners], dtype=np.int64)
    return pack_arrays(arrays, magic=_RAW_MAGIC, version=INPUTS_FORMAT)


def _decode_npz(data: bytes) -> dict[str, npt.NDArray[Any]]:
    """An earlier release's copy: an ``.npz`` archive of format 2 (``zipfile`` loaded for it
    only; a damaged archive is a ``ValueError``)."""
    import zipfile

    try:
        archive = np.load(io.BytesIO(data), allow_pickle=False)
        if "format" not in archive.files or int(archive["format"][0]) != 2:
            raise ValueError("an older layout of the file ranking's inputs")
        return {name: archive[name] for name in archive.files}
    except zipfile.BadZipFile as exc:
        raise ValueError(f"a damaged archive: {exc}") from None


def _decode_inputs(data: bytes) -> FileInputs:
    if data[: len(_RAW_MAGIC)] == _RAW_MAGIC:
        arrays = unpack_arrays(data, magic=_RAW_MAGIC, version=INPUTS_FORMAT)
    else:
        arrays = _decode_npz(data)
    graph_paths = _text_list(arrays["graph_paths"])
    links, tests = arrays["links"], arrays["tests"]
    if max(int(links.max(initial=-1)), int(tests.max(initial=-1))) >= len(graph_paths):
        raise ValueError("links name a file the blob does not list")
    graph = FileGraph.from_pairs(
        graph_paths, links[0], links[1], arrays["link_counts"].astype(np.float64), tests[0], tests[1]
    )
    generated = set(_text_list(arrays["generated"]))
    content = Sketches.of_matrix(_text_list(arrays["sketch_paths"]), arrays["sketches"], generated)
    partners: dict[str, int] | None = None
    if "partner_paths" in arrays:
        partner_paths, counts = _text_list(arrays["partner_paths"]), arrays["partner_counts"]
        if len(partner_paths) != len(counts):
            raise ValueError("partner counts and their paths differ in number")
        partners = {path: int(count) for path, count in zip(partner_paths, counts.tolist(), strict=True)}
    return FileInputs(graph, content, _text_list(arrays["paths"]), partners)
