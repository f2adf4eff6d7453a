"""The store → the training inputs of the file model's fit (the file graph, the content
sketches, the known paths): read fresh for a full extraction, or the copy an incremental run
cached in the blob ``files_inputs`` (rebuilt after ``INPUTS_REFRESH`` runs used it), so the hook
path does not fold the whole adjacency onto files for every commit."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from knowing_pr.graph.adjacency import ADJACENCY_BLOB, Adjacency
from knowing_pr.graph.paths import is_test_path
from knowing_pr.history.fileinputs import FileGraph, FileUniverse, Sketches
from knowing_pr.store import Store
from knowing_pr.store.filedata import file_graph, known_paths, sketches

__all__ = ["INPUTS_BLOB", "INPUTS_REFRESH", "TrainingInputs", "training_inputs"]

INPUTS_BLOB = "files_inputs"
#: an incremental run rebuilds the cached training inputs after this many runs used them
INPUTS_REFRESH = 32


@dataclass(frozen=True)
class TrainingInputs:
    """What the rows are computed from besides the history: the file graph, the content
    sketches and the known paths."""

    graph: FileGraph
    sketches: Sketches
    universe: FileUniverse


def training_inputs(store: Store, *, fresh: bool) -> TrainingInputs:
    """The training inputs: read from the store (``fresh``: a full extraction, so a full index
    is a function of its commit only), or the copy an earlier run cached, refreshed after
    ``INPUTS_REFRESH`` runs (a training row may see a file graph a few commits old)."""
    age = int(store.get_meta(INPUTS_BLOB + "_age") or 0)
    cached = None if fresh or age >= INPUTS_REFRESH else store.get_blob(INPUTS_BLOB)
    if cached is not None:
        try:
            graph, content, paths = _decode_inputs(cached[1])
            store.set_meta(INPUTS_BLOB + "_age", str(age + 1))
            return TrainingInputs(graph, content, FileUniverse.build(paths, is_test_path))
        except (ValueError, KeyError, OSError):
            pass
    found = store.get_blob(ADJACENCY_BLOB)
    graph = file_graph(store, Adjacency.from_bytes(found[1])) if found is not None else FileGraph.empty()
    content = sketches(store)
    paths = known_paths(store)
    store.put_blob(INPUTS_BLOB, store.graph_root or "", _encode_inputs(graph, content, paths))
    store.set_meta(INPUTS_BLOB + "_age", "0")
    return TrainingInputs(graph, content, FileUniverse.build(paths, is_test_path))


def _text_array(items: Sequence[str]) -> npt.NDArray[np.uint8]:
    return np.frombuffer("\n".join(items).encode("utf-8", "surrogateescape"), dtype=np.uint8)


def _text_list(array: npt.NDArray[np.uint8]) -> list[str]:
    text = array.tobytes().decode("utf-8", "surrogateescape")
    return text.split("\n") if text else []


def _encode_inputs(graph: FileGraph, content: Sketches, paths: Sequence[str]) -> bytes:
    links, tests = graph.links, graph.tests
    buffer = io.BytesIO()
    np.savez(
        buffer,
        graph_paths=_text_array(graph.paths),
        links=np.stack([links.rows, links.cols]).astype(np.int32),
        link_counts=links.values.astype(np.float32),
        tests=np.stack([tests.rows, tests.cols]).astype(np.int32),
        sketch_paths=_text_array(content.paths),
        sketches=content.matrix,
        generated=_text_array(sorted(content.generated)),
        paths=_text_array(paths),
    )
    return buffer.getvalue()


def _decode_inputs(data: bytes) -> tuple[FileGraph, Sketches, list[str]]:
    arrays = np.load(io.BytesIO(data))
    graph_paths = _text_list(arrays["graph_paths"])
    links, tests = arrays["links"], arrays["tests"]
    graph = FileGraph.from_pairs(
        graph_paths, links[0], links[1], arrays["link_counts"].astype(np.float64), tests[0], tests[1]
    )
    generated = set(_text_list(arrays["generated"]))
    sketch_paths = _text_list(arrays["sketch_paths"])
    matrix = arrays["sketches"]
    content = Sketches.build((path, matrix[i], path in generated) for i, path in enumerate(sketch_paths))
    return graph, content, _text_list(arrays["paths"])
