"""Karma runs the whole suite from its package's directory with the config the package uses:
``cd PACKAGE && npx karma start CONFIG --single-run``. The config is the nearest ``karma.conf*``
at or above the package, and CONFIG is its path from the package's directory (``../karma.conf.js``
when it sits above), so the command names a file that exists where it runs."""

from __future__ import annotations

import json
import shlex

import pytest
from conftest import RepoBuilder
from test_tests_to_run import by_path, listed_tests

SPEC = (
    "import { greet } from '../src/greet';\n\n"
    "describe('greet', () => {\n  it('says hi', () => {\n    expect(greet()).toBe('hi');\n  });\n});\n"
)


def karma_package(b: RepoBuilder, config: str) -> None:
    """A Karma package at ``packages/web`` whose spec imports the changed file, with its
    config at ``config``; the change edits ``src/greet.js``."""
    b.write("package.json", json.dumps({"name": "root", "private": True, "workspaces": ["packages/*"]}))
    b.write("packages/web/package.json", json.dumps({"name": "web", "devDependencies": {"karma": "6"}}))
    b.write("packages/web/src/greet.js", "export function greet() {\n  return 'hi';\n}\n")
    b.write("packages/web/test/greet.spec.js", SPEC)
    b.write(config, "module.exports = (config) => config.set({ frameworks: ['jasmine'] });\n")
    b.commit("base")
    b.write("packages/web/src/greet.js", "export function greet() {\n  return 'hi!';\n}\n")
    b.commit("change the greeting")


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ("karma.conf.js", "../../karma.conf.js"),  # at the repository's root, above the package
        ("packages/karma.conf.js", "../karma.conf.js"),  # beside the package's directory
        ("packages/web/karma.conf.js", "karma.conf.js"),  # in the package
    ],
)
def test_karmas_command_names_its_config_from_the_package_directory(
    make_repo, tmp_path, config: str, named: str
) -> None:
    b = make_repo()
    karma_package(b, config)
    spec = by_path(listed_tests(b, tmp_path))["packages/web/test/greet.spec.js"]
    assert (spec.framework, spec.scope) == ("karma", "suite")
    assert spec.run == f"cd packages/web && npx karma start {named} --single-run"
    words = shlex.split(spec.run)
    assert words[:3] == ["cd", "packages/web", "&&"]
    assert (b.path / words[1] / words[words.index("start") + 1]).resolve() == (b.path / config).resolve()
