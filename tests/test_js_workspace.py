"""A JS/TS import of a monorepo's own package by its name (``@x/b``, ``@x/b/sub``) binds that
package's entry: its ``exports`` map, else ``types``/``module``/``main``; a target that is a
build output (``dist/…``) binds its source under ``src``. trpc's tests import ``@trpc/server``:
without this they import nothing of the repository and no change lists them."""

from __future__ import annotations

import pytest
from conftest import RepoBuilder
from test_index import _symbol_table_mode, snapshot
from test_js_package_entry import imports_in, imports_of
from test_tests_to_run import by_path, listed_tests

from knowing_pr.git import GitRepo
from knowing_pr.index import index_commit

INDEX = "export { helper } from './sub';\n\nexport function run(): number {\n  return 1;\n}\n"
SUB = "export function helper(): number {\n  return 2;\n}\n\nexport function other(): number {\n  return 3;\n}\n"
TEST = (
    "import { run } from '@x/b';\nimport { helper } from '@x/b/sub';\n\n"
    "test('uses b', () => {\n  run();\n  helper();\n});\n"
)
B_FILES = {"packages/b/src/index.ts", "packages/b/src/sub.ts"}

TRPC_LIKE = (
    '{"name": "@x/b", "main": "./dist/index.cjs", "exports": {'
    '".": {"import": {"types": "./dist/index.d.mts", "default": "./dist/index.mjs"},'
    ' "require": {"types": "./dist/index.d.cts", "default": "./dist/index.cjs"}},'
    ' "./sub": {"import": "./dist/sub.mjs", "require": "./dist/sub.cjs"}}}'
)


C_TEST = "import { c } from '@x/c';\n\ntest('uses c', () => {\n  c();\n});\n"


def workspace(make_repo, b_manifest: str) -> RepoBuilder:  # type: ignore[no-untyped-def]
    """Packages ``@x/a`` (its tests import ``@x/b`` and ``@x/c``), ``@x/b`` with
    ``b_manifest`` and a plain ``@x/c``."""
    b: RepoBuilder = make_repo()
    b.write("package.json", '{"name": "root", "private": true, "workspaces": ["packages/*"]}')
    b.write("packages/a/test/c.test.ts", C_TEST)
    b.write("packages/c/package.json", '{"name": "@x/c", "main": "./dist/index.js"}')
    b.write("packages/c/src/index.ts", "export function c(): number {\n  return 5;\n}\n")
    b.write("packages/a/package.json", '{"name": "@x/a", "dependencies": {"@x/b": "1.0.0"}}')
    b.write("packages/a/test/b.test.ts", TEST)
    b.write("packages/b/package.json", b_manifest)
    b.write("packages/b/src/index.ts", INDEX)
    b.write("packages/b/src/sub.ts", SUB)
    b.commit("init")
    return b


@pytest.mark.parametrize(
    "manifest",
    [
        TRPC_LIKE,
        '{"name": "@x/b", "main": "./dist/index.js", "types": "./dist/index.d.ts"}',
        '{"name": "@x/b", "exports": {".": "./dist/esm/index.js", "./*": {"types": "./dist/*.d.ts",'
        ' "import": "./dist/esm/*.js"}}}',
        '{"name": "@x/b"}',
        '{"name": "@x/b", "exports": {".": "./src/index.ts", "./sub": "./src/sub.ts"}}',
    ],
)
def test_a_workspace_package_binds_its_entry_and_subpath_by_name(make_repo, manifest) -> None:
    b = workspace(make_repo, manifest)
    assert imports_of(b, "packages/a/test/b.test.ts") == B_FILES


def test_a_change_to_a_workspace_package_lists_the_test_importing_it(make_repo, tmp_path) -> None:
    b = workspace(make_repo, TRPC_LIKE)
    b.write("packages/b/src/sub.ts", SUB.replace("return 3", "return 4"))
    b.commit("change other")
    test = by_path(listed_tests(b, tmp_path))["packages/a/test/b.test.ts"]
    assert test.reason == "imports"
    assert "packages/b/src/sub.ts" in test.evidence


def test_a_name_two_manifests_claim_goes_to_the_shallower_package(make_repo) -> None:
    b = workspace(make_repo, TRPC_LIKE)
    b.write("packages/b/fixtures/copy/package.json", '{"name": "@x/b", "main": "index.js"}')
    b.write("packages/b/fixtures/copy/index.js", "module.exports = 1;\n")
    b.commit("a fixture claims the name")
    assert imports_of(b, "packages/a/test/b.test.ts") == B_FILES


def test_an_excluded_or_vendored_manifest_is_no_workspace_package(make_repo) -> None:
    b: RepoBuilder = make_repo()
    b.write("node_modules/@x/b/package.json", '{"name": "@x/b", "main": "index.js"}')
    b.write("node_modules/@x/b/index.js", "module.exports = 1;\n")
    b.write("dist/b/package.json", '{"name": "@x/b", "main": "index.js"}')
    b.write("dist/b/index.js", "module.exports = 1;\n")
    b.write("test/b.test.ts", TEST)
    b.write("packages/c/package.json", '{"name": "@x/c", "main": "./dist/index.js"}')
    b.write("packages/c/src/index.ts", "export function c(): number {\n  return 5;\n}\n")
    b.write("test/c.test.ts", C_TEST)
    b.commit("init")
    assert imports_of(b, "test/b.test.ts") == set()
    assert imports_of(b, "test/c.test.ts") == {"packages/c/src/index.ts"}


DEEP = "[" * 100_000 + "]" * 100_000
NESTED = '{"import": ' * 300 + '"./dist/index.js"' + "}" * 300
WIDE = "{" + ", ".join(f'"./k{i}/*": "./dist/k{i}/*.js"' for i in range(20_000)) + "}"


@pytest.mark.parametrize(
    ("manifest", "expected"),
    [
        ("[1, 2, 3]", set()),  # not an object: no name
        ('{"name": {"@x/b": 1}}', set()),
        ('{"name": "@x/b/../../c"}', set()),
        (DEEP, set()),  # deeper than the JSON reader goes
        ('{"name": "@x/b", "exports": ' + "x" * (1 << 20) + "}", set()),  # over the size limit
        # too deep a condition object, a huge pattern map, targets leaving the package, keys with
        # two wildcards: no target from ``exports``, the package's src/ (what tsconfig paths give)
        ('{"name": "@x/b", "exports": ' + NESTED + "}", B_FILES),
        ('{"name": "@x/b", "exports": ' + WIDE + "}", B_FILES),
        ('{"name": "@x/b", "exports": {".": "../../secret.js", "./sub": "/etc/passwd"}}', B_FILES),
        ('{"name": "@x/b", "exports": {"./*/*": "./secret.js", "./*": ["../*", {"x": 1}]}}', B_FILES),
        ('{"name": "@x/b", "main": 3, "types": [], "exports": null}', B_FILES),
    ],
)
def test_a_hostile_manifest_binds_nothing_outside_its_package(make_repo, manifest, expected) -> None:
    b = workspace(make_repo, manifest)
    b.write("secret.js", "module.exports = 1;\n")
    b.commit("a file the manifest points at")
    assert imports_of(b, "packages/a/test/b.test.ts") == expected
    # the other packages of the workspace still bind
    assert imports_of(b, "packages/a/test/c.test.ts") == {"packages/c/src/index.ts"}


def test_a_manifest_linked_from_outside_the_repository_is_not_read(make_repo, tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "package.json").write_text('{"name": "@x/b", "main": "src/index.ts"}')
    b = workspace(make_repo, '{"name": "@x/other"}')
    b.delete("packages/b/package.json")
    b.symlink("packages/b/package.json", str(outside / "package.json"))
    b.commit("the manifest is a link")
    assert imports_of(b, "packages/a/test/b.test.ts") == set()
    assert imports_of(b, "packages/a/test/c.test.ts") == {"packages/c/src/index.ts"}


@pytest.mark.parametrize("eager", [False, True])
def test_a_renamed_workspace_package_re_resolves_its_importers_incrementally(make_repo, eager) -> None:
    b = workspace(make_repo, TRPC_LIKE)
    repo = GitRepo.open(str(b.path))
    settings = _symbol_table_mode(eager)
    incremental_db = b.path.parent / "inc.sqlite"
    index_commit(repo, settings, db_path=incremental_db)
    b.write("packages/b/package.json", TRPC_LIKE.replace("@x/b", "@x/renamed"))
    b.commit("the package is renamed")
    index_commit(repo, settings, db_path=incremental_db)
    full_db = b.path.parent / "full.sqlite"
    index_commit(repo, settings, db_path=full_db, full=True)
    assert snapshot(incremental_db) == snapshot(full_db)
    assert imports_in(incremental_db, "packages/a/test/b.test.ts") == set()
    b.write("packages/b/package.json", TRPC_LIKE)
    b.commit("the name comes back")
    index_commit(repo, settings, db_path=incremental_db)
    index_commit(repo, settings, db_path=full_db, full=True)
    assert snapshot(incremental_db) == snapshot(full_db)
    assert imports_in(incremental_db, "packages/a/test/b.test.ts") == B_FILES
