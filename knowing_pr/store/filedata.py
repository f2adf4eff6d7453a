"""The store → what the file ranking reads, as plain data (``history.filesignals``): the file
graph folded from the adjacency, the content sketches, and every known path. The index run keeps
two copies of all three: the file model's training copy (``files_inputs``, which may be a few
runs old) and the ranking's (``files_rank_inputs``, tagged with the store state it was read at),
so a fresh ``pr`` decodes one blob instead of folding the whole adjacency onto files."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from knowing_pr.history.fileinputs import FileGraph, Sketches
from knowing_pr.parse.sketch import sketch_from_bytes
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
#: the blob's layout (paths are NUL-separated: a git path can hold a newline, never a NUL)
INPUTS_FORMAT = 2


@dataclass(frozen=True)
class FileInputs:
    """What no change alters: the file graph, the content sketches, every known path."""

    graph: FileGraph
    sketches: Sketches
    paths: list[str]


def read_file_inputs(store: Store, adjacency: Adjacency) -> FileInputs:
    """The inputs read from the rows (and ``adjacency``)."""
    return FileInputs(file_graph(store, adjacency), sketches(store), known_paths(store))


def inputs_tag(graph_root: str | None, commit: str | None) -> str:
    """The store state a copy of the inputs was read at: the graph root covers the indexed files'
    symbols and edges, the commit the rest (skipped files, the mined history's paths)."""
    return f"{graph_root or ''}@{commit or ''}"


def cached_file_inputs(store: Store, blob: str, tag: str | None = None) -> FileInputs | None:
    """The inputs ``blob`` keeps; with ``tag``, only when they were read at that state
    (``inputs_tag``). ``None`` when there is no usable copy."""
    found = store.get_blob(blob)
    if found is None or (tag is not None and found[0] != tag):
        return None
    import zipfile
    import zlib

    try:
        return _decode_inputs(found[1])
    except (ValueError, KeyError, OSError, IndexError, EOFError, zipfile.BadZipFile, zlib.error):
        return None  # a damaged copy (the archive's checksums catch flipped bytes): read the rows


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


def _text_list(array: npt.NDArray[np.uint8]) -> list[str]:
    text = array.tobytes().decode("utf-8", "surrogateescape")
    return text.split("\0") if text else []


def _encode_inputs(inputs: FileInputs) -> bytes:
    graph, content = inputs.graph, inputs.sketches
    links, tests = graph.links, graph.tests
    buffer = io.BytesIO()
    np.savez(
        buffer,
        format=np.array([INPUTS_FORMAT], dtype=np.int32),
        graph_paths=_text_array(graph.paths),
        links=np.stack([links.rows, links.cols]).astype(np.int32),
        link_counts=links.values.astype(np.float32),
        tests=np.stack([tests.rows, tests.cols]).astype(np.int32),
        sketch_paths=_text_array(content.paths),
        sketches=content.matrix,
        generated=_text_array(sorted(content.generated)),
        paths=_text_array(inputs.paths),
    )
    return buffer.getvalue()


def _decode_inputs(data: bytes) -> FileInputs:
    arrays = np.load(io.BytesIO(data), allow_pickle=False)
    if "format" not in arrays.files or int(arrays["format"][0]) != INPUTS_FORMAT:
        raise ValueError("an older layout of the file ranking's inputs")
    graph_paths = _text_list(arrays["graph_paths"])
    links, tests = arrays["links"], arrays["tests"]
    if max(int(links.max(initial=-1)), int(tests.max(initial=-1))) >= len(graph_paths):
        raise ValueError("links name a file the blob does not list")
    graph = FileGraph.from_pairs(
        graph_paths, links[0], links[1], arrays["link_counts"].astype(np.float64), tests[0], tests[1]
    )
    generated = set(_text_list(arrays["generated"]))
    sketch_paths = _text_list(arrays["sketch_paths"])
    matrix = arrays["sketches"]
    if len(matrix) != len(sketch_paths):
        raise ValueError("sketches and their paths differ in number")
    content = Sketches.build((path, matrix[i], path in generated) for i, path in enumerate(sketch_paths))
    return FileInputs(graph, content, _text_list(arrays["paths"]))
