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
    "blob_tag",
    "paths_of_nodes",
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
    "put_test_cases",
    "test_cases_for",
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


#: the tables' DDL each schema version stands for: a DDL change that keeps the version would let
#: a store of the old layout be read as the new one (the file ranking's ``hist_pairs.sized`` once
#: made every older store fail with "no such column")
SCHEMA_FINGERPRINTS = {
    4: "e02ea8f10d270846b2d8e9e0c4e9b737eb8bdec3fb8196c34aabd3eee253d1da",
    5: "6d862364c095215109ee9c38384353d410878fa87aa13ae5b9ccfeadf0f19d06",
    6: "c7f144042ef63341fdc9ac3cf9511844a2da4ba0880b7b0b3175c128f0425360",
    7: "a31331cfc73e3e2e4a552b1d69c2cbd7f896dec69a9f645eff3e48d9b08850ff",
}


def test_a_change_of_the_tables_comes_with_a_new_schema_version() -> None:
    import hashlib

    from knowing_pr.store.schema import SCHEMA, SCHEMA_VERSION

    ddl = "\n".join(" ".join(statement.split()) for statement in SCHEMA)
    assert SCHEMA_FINGERPRINTS.get(SCHEMA_VERSION) == hashlib.sha256(ddl.encode()).hexdigest(), (
        "the DDL changed: raise SCHEMA_VERSION and record the new fingerprint here"
    )


def test_a_store_of_the_previous_layout_is_rebuilt_not_misread(make_repo, tmp_path) -> None:
    """A store written before the file ranking (schema 3: ``hist_pairs`` without ``sized``, no
    ``file_sketches``) is dropped and indexed again on the next run."""
    import sqlite3

    from knowing_pr.pipeline import PrRequest, build_pr_pack, open_workspace
    from knowing_pr.store.schema import SCHEMA_VERSION

    b = make_repo()
    b.write("a.py", "def f():\n    return 1\n")
    b.commit("one")
    b.write("b.py", "from a import f\n\n\ndef g():\n    return f()\n")
    b.commit("two")
    db = tmp_path / "store.sqlite"
    ws = open_workspace(str(b.path), db=str(db))
    build_pr_pack(ws, PrRequest(fmt="json"))
    with sqlite3.connect(db) as conn:  # what a schema-3 store holds
        conn.execute("DROP TABLE hist_pairs")
        conn.execute(
            "CREATE TABLE hist_pairs(a TEXT NOT NULL, b TEXT NOT NULL, count INTEGER NOT NULL,"
            " weight REAL NOT NULL, PRIMARY KEY(a, b))"
        )
        conn.execute("DROP TABLE file_sketches")
        conn.execute("PRAGMA user_version=3")
    b.write("b.py", "from a import f\n\n\ndef g():\n    return f() + 1\n")
    b.commit("three")
    pack = build_pr_pack(open_workspace(str(b.path), db=str(db)), PrRequest(fmt="json"))
    assert [s.node.name for s in pack.symbols if s.reason == "changed"] == ["g"]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        columns = {row[1] for row in conn.execute("PRAGMA table_info(hist_pairs)")}
    assert "sized" in columns
