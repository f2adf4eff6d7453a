"""The store package's public surface: ``knowing_pr.store`` exports exactly the names other
modules import, ``Store`` keeps every public method it had as one module, and every module of
the package has an ``__all__`` whose names exist."""

from __future__ import annotations

import importlib
import pkgutil

import knowing_pr.store as store_package

PUBLIC = {"SCHEMA_VERSION", "FileRow", "Store", "fts_tokens", "is_damage", "move_aside"}


def test_store_exports_the_names_other_modules_import() -> None:
    assert set(store_package.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(store_package, name) is not None


#: the Store's public methods and properties as they were before the package split
STORE_METHODS = [
    "keys_reading",
    "all_edges",
    "all_nodes",
    "check_integrity",
    "close",
    "counts",
    "delete_edges_from",
    "delete_edges_from_sources",
    "delete_files",
    "dir_roots",
    "dir_roots_of",
    "dirs_named",
    "edge_arrays",
    "edges_touching",
    "file_ids",
    "file_paths",
    "file_roots_in_dirs",
    "files",
    "first_symbol_rows_named",
    "get_blob",
    "get_meta",
    "graph_root",
    "history_files",
    "history_pairs",
    "indexed_among",
    "indexed_commit",
    "indexed_file_count",
    "indexed_paths",
    "indexed_paths_in_dir",
    "indexed_paths_with_module_suffix",
    "indexed_paths_with_stem",
    "insert_edges",
    "integrity_problems",
    "load_pack",
    "node_ids",
    "node_paths",
    "nodes_by_ids",
    "nodes_in_paths",
    "nodes_named",
    "nodes_where_name_like",
    "nodes_where_path_like",
    "nodes_where_qualified_like",
    "open",
    "origin_ids",
    "paths_referencing",
    "put_blob",
    "put_refs",
    "refs_for",
    "replace_dir_roots",
    "replace_history",
    "replace_nodes",
    "save_pack",
    "search_fts",
    "set_file_roots",
    "set_meta",
    "skip_reasons",
    "subdir_roots",
    "symbol_rows",
    "symbol_rows_in",
    "symbol_rows_named",
    "symbol_rows_with_ids",
    "transaction",
    "unchanged_since_own_write",
    "update_history_rows",
    "upsert_files",
]


def test_store_keeps_its_methods() -> None:
    public = {name for name in vars(store_package.Store) if not name.startswith("_")}
    assert public == set(STORE_METHODS)


def test_every_module_has_an_all_of_existing_names() -> None:
    modules = [info.name for info in pkgutil.iter_modules(store_package.__path__)]
    assert {"schema", "recovery", "fts", "history", "files", "nodes", "edges"} <= set(modules)
    for name in modules:
        module = importlib.import_module(f"knowing_pr.store.{name}")
        exported = getattr(module, "__all__", None)
        assert exported, f"knowing_pr.store.{name} has no __all__"
        assert all(hasattr(module, n) for n in exported), name
