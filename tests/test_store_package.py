"""The store package's public surface: ``knowing_pr.store`` exports exactly the names other
modules import, and every module of the package exports only names it defines."""

from __future__ import annotations

import importlib
import pkgutil

import knowing_pr.store as store_package

PUBLIC = {"SCHEMA_VERSION", "FileRow", "Store", "fts_tokens", "is_damage", "move_aside"}


def test_store_exports_the_names_other_modules_import() -> None:
    assert set(store_package.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(store_package, name) is not None


def test_store_methods_keep_their_names() -> None:
    # callers across the package use these; the functions behind them moved into modules
    for method in (
        "transaction",
        "upsert_files",
        "delete_files",
        "replace_nodes",
        "insert_edges",
        "edge_arrays",
        "put_refs",
        "replace_dir_roots",
        "replace_history",
        "update_history_rows",
        "history_files",
        "history_pairs",
        "search_fts",
        "counts",
    ):
        assert callable(getattr(store_package.Store, method))


def test_every_module_exports_what_it_has() -> None:
    modules = [info.name for info in pkgutil.iter_modules(store_package.__path__)]
    assert {"schema", "recovery", "fts", "history", "files", "nodes", "edges"} <= set(modules)
    for name in modules:
        module = importlib.import_module(f"knowing_pr.store.{name}")
        exported = getattr(module, "__all__", None)
        assert exported, f"knowing_pr.store.{name} has no __all__"
        assert all(hasattr(module, n) for n in exported), name
