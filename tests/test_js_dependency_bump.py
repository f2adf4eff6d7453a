"""A change that bumps a dependency's version in a ``package.json`` lists the JS/TS test files
of that package that import the dependency (``dependency`` evidence, ``rank.jsdeps``): trpc's
zod 3 → 4 bump changed no code a test imports, and broke the tests that build zod schemas."""

from __future__ import annotations

import json

from conftest import RepoBuilder
from test_js_runner_setup import case
from test_tests_to_run import by_path, listed_tests

from knowing_pr.pipeline import PrRequest, build_pr_pack, open_workspace
from knowing_pr.render import render_comment, render_pack

TESTS_MANIFEST = (
    '{\n  "name": "@x/tests",\n  "scripts": {\n    "zod": "echo ^3.0.0"\n  },\n'
    '  "devDependencies": {\n    "@x/server": "workspace:*",\n    "zod": "^3.0.0"\n  }\n}\n'
)


def dependency_repo(make_repo) -> RepoBuilder:  # type: ignore[no-untyped-def]
    """trpc's zod bump: ``packages/tests`` depends on zod; one of its tests imports it."""
    b: RepoBuilder = make_repo()
    b.write("package.json", '{"name": "root", "private": true}')
    b.write("packages/tests/package.json", TESTS_MANIFEST)
    b.write("packages/tests/server/input.test.ts", "import { z } from 'zod'\n" + case("input"))
    b.write("packages/tests/server/plain.test.ts", case("plain"))
    b.write(
        "packages/server/package.json",
        '{\n  "name": "@x/server",\n  "dependencies": {\n    "zod": "^3.0.0"\n  }\n}\n',
    )
    b.write("packages/server/test/schema.test.ts", "import * as z from 'zod/v4'\n" + case("schema"))
    b.write("examples/form.ts", "export const form = 1\n")
    b.commit("init")
    return b


def test_a_test_importing_a_dependency_its_package_bumps_is_listed(make_repo, tmp_path) -> None:
    b = dependency_repo(make_repo)
    b.write("packages/tests/package.json", TESTS_MANIFEST.replace('"zod": "^3.0.0"', '"zod": "^4.0.0"'))
    b.write("examples/form.ts", "export const form = 2\n")
    b.commit("bump zod")
    found = by_path(listed_tests(b, tmp_path))
    test = found["packages/tests/server/input.test.ts"]
    assert test.reason == "dependency"
    assert "`zod`" in test.evidence and "packages/tests/package.json" in test.evidence
    assert "packages/tests/server/plain.test.ts" not in found  # does not import zod
    assert "packages/server/test/schema.test.ts" not in found  # its package's manifest is unchanged


def test_a_change_that_only_bumps_a_dependency_lists_the_tests_that_import_it(make_repo, tmp_path) -> None:
    """Dependabot's pull request: one ``package.json`` line and no code. No code changed, and the
    tests importing the bumped dependency are still to run, in every format."""
    b = dependency_repo(make_repo)
    b.write("packages/tests/package.json", TESTS_MANIFEST.replace('"zod": "^3.0.0"', '"zod": "^4.0.0"'))
    b.commit("bump zod, nothing else")
    ws = open_workspace(str(b.path), db=str(tmp_path / "store.sqlite"))
    pack = build_pr_pack(ws, PrRequest(base="HEAD~1", fmt="markdown"))
    assert pack.summary is not None and pack.summary.no_code and pack.symbols == []
    found = by_path(pack.summary.tests)
    assert list(found) == ["packages/tests/server/input.test.ts"]
    assert found["packages/tests/server/input.test.ts"].reason == "dependency"
    assert pack.summary.tests_total == 1
    run = found["packages/tests/server/input.test.ts"].run
    for text in (render_pack(pack, "markdown"), render_comment(pack)):
        lines = [line for line in text.splitlines() if line and not line.startswith("<!--")]
        assert lines[0] == "### knowing-pr · no code changed, 1 test to run"
        assert lines[1].startswith("No code changed: the change touches no source file")
        assert "**Tests to run** (1)" in lines
        assert any("packages/tests/server/input.test.ts" in line and run in line for line in lines)
    data = json.loads(render_pack(pack, "json"))
    assert data["no_code_change"] is True
    assert [t["file"] for t in data["tests_to_run"]] == ["packages/tests/server/input.test.ts"]


def test_a_manifest_line_outside_the_dependencies_bumps_nothing(make_repo, tmp_path) -> None:
    b = dependency_repo(make_repo)
    b.write("packages/tests/package.json", TESTS_MANIFEST.replace('"echo ^3.0.0"', '"echo ^4.0.0"'))
    b.write("examples/form.ts", "export const form = 2\n")
    b.commit("change a script named like the dependency")
    assert not [t for t in listed_tests(b, tmp_path) if t.reason == "dependency"]


ROOT_MANIFEST = (
    '{\n  "name": "root",\n  "private": true,\n  "devDependencies": {\n    "zod": "^3.0.0"\n  }\n}\n'
)


def test_a_root_bump_reaches_the_tests_whose_package_does_not_declare_the_dependency(
    make_repo, tmp_path
) -> None:
    """trpc: ``packages/tests`` declares no zod, its tests import the root's; ``packages/server``
    declares its own, which the change leaves alone."""
    b = dependency_repo(make_repo)
    b.write("package.json", ROOT_MANIFEST)
    b.write("packages/tests/package.json", TESTS_MANIFEST.replace(',\n    "zod": "^3.0.0"', ""))
    b.commit("zod from the root")
    b.write("package.json", ROOT_MANIFEST.replace("^3.0.0", "^4.0.0"))
    b.write("examples/form.ts", "export const form = 2\n")
    b.commit("bump zod at the root")
    found = by_path(listed_tests(b, tmp_path))
    test = found["packages/tests/server/input.test.ts"]
    assert (test.reason, test.evidence) == (
        "dependency",
        "imports `zod`, whose version `package.json` changes",
    )
    assert "packages/server/test/schema.test.ts" not in found


def test_a_manifest_nested_past_the_parsers_depth_reads_as_declaring_nothing(make_repo, tmp_path) -> None:
    """A pull request's ``package.json`` is its author's text: one nested deeper than the JSON
    parser recurses (``RecursionError``) must not stop the pack."""
    b = dependency_repo(make_repo)
    b.write("packages/tests/package.json", '{"devDependencies": ' + "[" * 50_000 + "]" * 50_000 + "}\n")
    b.write("examples/form.ts", "export const form = 3\n")
    b.commit("a manifest nested deep")
    found = by_path(listed_tests(b, tmp_path))
    assert not any(t.reason == "dependency" for t in found.values())
