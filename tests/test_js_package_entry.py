"""A JS/TS import of a directory, of the package root or of the package's own name binds the
package's entry: ``package.json`` ``main`` (or ``exports["."]``), else the directory's ``index``
file (koa's tests ``require('../..')``: without it they import nothing of the repository)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import RepoBuilder
from test_index import _symbol_table_mode, snapshot

from knowing_pr import pipeline
from knowing_pr.config import default_db_path
from knowing_pr.git import GitRepo
from knowing_pr.index import index_commit
from knowing_pr.model import EdgeKind

APP = "module.exports = class Application {\n  listen() {\n    return 1;\n  }\n};\n"


def imports_of(b: RepoBuilder, source: str) -> set[str]:
    """The files ``source``'s ``imports`` edges reach, after indexing the repository's head."""
    pipeline.update_index(str(b.path))
    return imports_in(default_db_path(str(b.path / ".git")), source)


def imports_in(db: Path, source: str) -> set[str]:
    """The files ``source``'s ``imports`` edges reach in the store ``db``."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT t.path FROM edges e JOIN nodes s ON s.rowid = e.source"
            " JOIN nodes t ON t.rowid = e.target WHERE e.kind = ? AND s.path = ?",
            (int(EdgeKind.IMPORTS), source),
        ).fetchall()
    finally:
        conn.close()
    return {path for (path,) in rows}


def koa_like(make_repo, manifest: str) -> RepoBuilder:  # type: ignore[no-untyped-def]
    b: RepoBuilder = make_repo()
    b.write("package.json", manifest)
    b.write("lib/application.js", APP)
    b.write("lib/context.js", "module.exports = { inspect() { return 2; } };\n")
    b.write("test/application/listen.test.js", "const Koa = require('../..');\n\nnew Koa().listen();\n")
    b.write("test/context.test.js", "const Koa = require('..');\n\nnew Koa().listen();\n")
    b.write("test/own-name.test.js", "const Koa = require('koa');\n\nnew Koa().listen();\n")
    b.write("test/subpath.test.js", "const ctx = require('koa/lib/context');\n\nctx.inspect();\n")
    b.commit("init")
    return b


@pytest.mark.parametrize(
    "manifest",
    [
        '{"name": "koa", "main": "lib/application.js"}',
        '{"name": "koa", "main": "./lib/application"}',
        '{"name": "koa", "exports": {".": {"require": "./lib/application.js", "import": "./dist/koa.mjs"}}}',
    ],
)
def test_the_package_root_and_its_own_name_bind_the_manifest_entry(make_repo, manifest) -> None:
    b = koa_like(make_repo, manifest)
    assert imports_of(b, "test/application/listen.test.js") == {"lib/application.js"}
    assert imports_of(b, "test/context.test.js") == {"lib/application.js"}
    assert imports_of(b, "test/own-name.test.js") == {"lib/application.js"}
    assert imports_of(b, "test/subpath.test.js") == {"lib/context.js"}


def test_a_directory_without_a_manifest_binds_its_index_file(make_repo) -> None:
    b: RepoBuilder = make_repo()
    b.write("index.ts", "export function start(): number {\n  return 1;\n}\n")
    b.write("util.ts", "import { start } from '.';\n\nexport const s = start();\n")
    b.write("test/app.test.ts", "import { start } from '..';\n\nstart();\n")
    b.commit("init")
    assert imports_of(b, "util.ts") == {"index.ts"}
    assert imports_of(b, "test/app.test.ts") == {"index.ts"}


def test_an_unreadable_manifest_falls_back_to_the_index_file(make_repo) -> None:
    b: RepoBuilder = make_repo()
    b.write("package.json", '{"name": "koa", "main": ')
    b.write("lib/application.js", APP)
    b.write("index.js", "module.exports = require('./lib/application');\n")
    b.write("test/app.test.js", "const Koa = require('..');\nconst other = require('express');\n")
    b.commit("init")
    assert imports_of(b, "test/app.test.js") == {"index.js"}


@pytest.mark.parametrize("eager", [False, True])
def test_a_changed_manifest_re_resolves_its_importers_incrementally(make_repo, eager) -> None:
    b = koa_like(make_repo, '{"name": "koa", "main": "lib/application.js"}')
    repo = GitRepo.open(str(b.path))
    settings = _symbol_table_mode(eager)
    incremental_db = b.path.parent / "inc.sqlite"
    index_commit(repo, settings, db_path=incremental_db)
    b.write("package.json", '{"name": "koa2", "main": "lib/context.js"}')
    b.commit("entry moves")
    index_commit(repo, settings, db_path=incremental_db)
    full_db = b.path.parent / "full.sqlite"
    index_commit(repo, settings, db_path=full_db, full=True)
    assert snapshot(incremental_db) == snapshot(full_db)


@pytest.mark.parametrize("test_file", ["test/header.test.js", "test/header.test.ts"])
def test_a_member_of_a_required_module_imports_that_module(make_repo, test_file) -> None:
    """koa's ``const request = require('../../test-helpers/context').request``."""
    b: RepoBuilder = make_repo()
    b.write("helpers/context.js", "module.exports = () => 1;\nmodule.exports.request = () => 2;\n")
    b.write(test_file, "const request = require('../helpers/context').request;\n\nrequest();\n")
    b.commit("init")
    assert imports_of(b, test_file) == {"helpers/context.js"}
