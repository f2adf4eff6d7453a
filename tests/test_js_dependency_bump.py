"""A change that bumps a dependency's version in a ``package.json`` lists the JS/TS test files
of that package that import the dependency (``dependency`` evidence, ``rank.jsdeps``): trpc's
zod 3 → 4 bump changed no code a test imports, and broke the tests that build zod schemas."""

from __future__ import annotations

from conftest import RepoBuilder
from test_js_runner_setup import case
from test_tests_to_run import by_path, listed_tests

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
