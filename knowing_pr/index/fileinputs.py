"""The store → the inputs of the file model's fit and of the ranking (the file graph, the content
sketches, the known paths), kept in the store (``store/filedata.py``):

- ``training_inputs``: read from the store's rows for the fit at its head (a fit is a function
  of the head's tree and history, so its inputs are never an earlier state's copy);
- ``refresh_file_inputs``: the ranking's copy (``files_rank_inputs``, with each file's number of
  co-change partners) brought to the state an index run ended at, so a fresh ``pr`` decodes it
  instead of reading the rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from knowing_pr.graph.adjacency import ADJACENCY_BLOB, Adjacency
from knowing_pr.graph.paths import is_test_path
from knowing_pr.history.fileinputs import FileGraph, FileUniverse, Sketches
from knowing_pr.store import Store
from knowing_pr.store.filedata import (
    RANK_INPUTS_BLOB,
    FileInputs,
    cache_file_inputs,
    known_paths,
    read_file_inputs,
    sketches,
)
from knowing_pr.store.history import partner_counts

__all__ = ["TrainingInputs", "refresh_file_inputs", "training_inputs"]


@dataclass(frozen=True)
class TrainingInputs:
    """What the rows are computed from besides the history: the file graph, the content
    sketches and the known paths."""

    graph: FileGraph
    sketches: Sketches
    universe: FileUniverse


def training_inputs(store: Store) -> TrainingInputs:
    """The training inputs of the store's state, read from its rows."""
    inputs = _read(store)
    return TrainingInputs(inputs.graph, inputs.sketches, FileUniverse.build(inputs.paths, is_test_path))


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
