"""The store → the inputs of the file model's fit and of the ranking (the file graph, the content
sketches, the known paths), kept in the store (``store/filedata.py``):

- ``training_inputs``: read fresh for a full extraction, or the copy an incremental run cached in
  the blob ``files_inputs`` (rebuilt after ``INPUTS_REFRESH`` runs used it), so the hook path does
  not fold the whole adjacency onto files for every commit;
- ``refresh_file_inputs``: the ranking's copy (``files_rank_inputs``, with each file's number of
  co-change partners) brought to the state an index run ended at, so a fresh ``pr`` decodes it
  instead of reading the rows. A copy of its
  own: refreshing it leaves the training copy, and so the fitted weights, as they were.
"""

from __future__ import annotations

from dataclasses import dataclass

from knowing_pr.graph.adjacency import ADJACENCY_BLOB, Adjacency
from knowing_pr.graph.paths import is_test_path
from knowing_pr.history.fileinputs import FileGraph, FileUniverse, Sketches
from knowing_pr.store import Store
from knowing_pr.store.filedata import (
    INPUTS_BLOB,
    RANK_INPUTS_BLOB,
    FileInputs,
    cache_file_inputs,
    cached_file_inputs,
    known_paths,
    read_file_inputs,
    sketches,
)
from knowing_pr.store.history import partner_counts

__all__ = ["INPUTS_BLOB", "INPUTS_REFRESH", "TrainingInputs", "refresh_file_inputs", "training_inputs"]

#: an incremental run rebuilds the cached training inputs after this many runs used them
INPUTS_REFRESH = 32
_AGE_META = INPUTS_BLOB + "_age"


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
    age = int(store.get_meta(_AGE_META) or 0)
    cached = None if fresh or age >= INPUTS_REFRESH else cached_file_inputs(store, INPUTS_BLOB)
    if cached is not None:
        store.set_meta(_AGE_META, str(age + 1))
    else:
        cached = _read(store)
        cache_file_inputs(store, INPUTS_BLOB, store.graph_root or "", cached)
        store.set_meta(_AGE_META, "0")
    return TrainingInputs(cached.graph, cached.sketches, FileUniverse.build(cached.paths, is_test_path))


def refresh_file_inputs(store: Store, tag: str, *, rewrite: bool = False) -> None:
    """Make the ranking's copy the inputs of the state ``tag`` names (``store.filedata.inputs_tag``;
    the run's adjacency is written), unless it is already. ``rewrite``: an index run that did
    work writes it whatever its tag says (a full run with other history settings keeps the
    commit and the graph root but not the partner counts)."""
    if rewrite or store.blob_tag(RANK_INPUTS_BLOB) != tag:
        cache_file_inputs(store, RANK_INPUTS_BLOB, tag, _read(store, with_partners=True))


def _read(store: Store, *, with_partners: bool = False) -> FileInputs:
    """The inputs from the rows; the ranking's copy counts each file's co-change partners too."""
    found = store.get_blob(ADJACENCY_BLOB)
    if found is None:
        partners = partner_counts(store.conn) if with_partners else None
        return FileInputs(FileGraph.empty(), sketches(store), known_paths(store), partners)
    return read_file_inputs(store, Adjacency.from_bytes(found[1]), with_partners=with_partners)
