"""Parsed files → nodes; references + a symbol table → resolved, typed, confidence-rated edges.

``paths`` (module names, test files) → ``nodes`` (node ids, stored references) →
``symbols`` (the symbol table) → ``resolve`` (edges, ``rules`` naming how each was made) →
``merkle`` (file, directory and graph roots; the PackRoot digest) → ``adjacency`` (the CSR
blob the walk reads, and its per-edge origins).

Edges are grouped by *origin*: the file whose references produced them. An incremental
index re-resolves only the origins whose answers can change, which is what keeps it equal
to a full index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowing_pr import lazy_attributes
from knowing_pr.graph.nodes import (
    FileRefs,
    build_nodes,
    decode_refs,
    encode_refs,
    file_refs,
    ref_names,
    shared_refs,
)
from knowing_pr.graph.paths import file_stem, is_test_path, module_name, test_subject_stem

if TYPE_CHECKING:
    from knowing_pr.graph.resolve import resolve_file
    from knowing_pr.graph.symbols import SymbolSource, SymbolTable

#: the resolver and its symbol table, imported on first use: reading the graph (a ``pr``, the
#: server) never resolves, and the resolver brings the language rules and their parsers along
_HOMES = {"resolve_file": "resolve", "SymbolSource": "symbols", "SymbolTable": "symbols"}


__getattr__ = lazy_attributes(__name__, _HOMES)


__all__ = [
    "FileRefs",
    "SymbolSource",
    "SymbolTable",
    "build_nodes",
    "decode_refs",
    "shared_refs",
    "encode_refs",
    "file_refs",
    "file_stem",
    "is_test_path",
    "module_name",
    "ref_names",
    "resolve_file",
    "test_subject_stem",
]
