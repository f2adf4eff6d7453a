"""A JS/TS test runner's config (``vitest.config*.ts``, ``jest.config.js``) whose setup file
(``setupFiles``, ``globalSetup``) imports the change makes every test file it includes reach the
change (``setup`` evidence, ranked last): vite's end-to-end specs import nothing of vite, the dev
server their ``playground/vitestSetup.ts`` starts does. Read statically; a config this reader
does not follow binds nothing."""

from __future__ import annotations

import pytest
from conftest import RepoBuilder
from test_tests_to_run import by_path, listed_tests

from knowing_pr.rank.runnerconfig import glob_regex, read_runner_config

CASE = "import { test, expect } from 'vitest'\n\ntest('NAME', async () => {\n  expect(1).toBe(1)\n})\n"
SERVER = "export function createServer(): number {\n  return 1\n}\n"
E2E_CONFIG = (
    "import { defineConfig } from 'vitest/config'\n\n"
    "export default defineConfig({\n  test: {\n"
    "    include: ['./playground/**/*.spec.[tj]s'],\n"
    "    exclude: ['./playground/skipped/**'],\n"
    "    setupFiles: ['./playground/vitestSetup.ts'],\n"
    "  },\n})\n"
)


def case(name: str) -> str:
    return CASE.replace("NAME", name)


def vite_like(make_repo, config: str = E2E_CONFIG) -> RepoBuilder:  # type: ignore[no-untyped-def]
    """A workspace package ``app`` and end-to-end specs that import none of it; the setup file
    of their config imports ``app`` by name."""
    b: RepoBuilder = make_repo()
    b.write("package.json", '{"name": "root", "private": true, "workspaces": ["packages/*"]}')
    b.write("packages/app/package.json", '{"name": "app", "exports": {".": "./dist/index.js"}}')
    b.write("packages/app/src/index.ts", "export { createServer } from './server'\n")
    b.write("packages/app/src/server.ts", SERVER)
    b.write(
        "packages/app/src/__tests__/server.spec.ts",
        "import { createServer } from '../server'\n" + case("unit"),
    )
    b.write("vitest.config.e2e.ts", config)
    b.write(
        "playground/vitestSetup.ts",
        "import { createServer } from 'app'\n\nexport const server = createServer()\n",
    )
    b.write("playground/css/__tests__/css.spec.ts", case("css"))
    b.write("playground/hmr/__tests__/hmr.spec.ts", case("hmr"))
    b.write("playground/skipped/__tests__/skipped.spec.ts", case("skipped"))
    b.write("playground/hmr/__tests__/hmr.test.ts", case("not included"))
    b.commit("init")
    b.write("packages/app/src/server.ts", SERVER.replace("return 1", "return 2"))
    b.commit("change the server")
    return b


def test_specs_run_after_a_setup_file_importing_the_change_are_listed_after_its_importers(
    make_repo, tmp_path
) -> None:
    listed = listed_tests(vite_like(make_repo), tmp_path)
    found = by_path(listed)
    css = found["playground/css/__tests__/css.spec.ts"]
    assert css.reason == "setup"
    assert "playground/vitestSetup.ts" in css.evidence
    assert found["playground/hmr/__tests__/hmr.spec.ts"].reason == "setup"
    assert "playground/skipped/__tests__/skipped.spec.ts" not in found  # excluded
    assert "playground/hmr/__tests__/hmr.test.ts" not in found  # not included
    order = [t.path for t in listed]
    assert order.index("packages/app/src/__tests__/server.spec.ts") < order.index(css.path)


def test_a_spec_run_after_the_setup_and_named_after_the_changed_file_is_named(make_repo, tmp_path) -> None:
    b = vite_like(make_repo)
    b.write("playground/server/__tests__/server.spec.ts", case("server"))
    b.commit("a spec named after the server")
    b.write("packages/app/src/server.ts", SERVER.replace("return 1", "return 3"))
    b.commit("change the server again")
    found = by_path(listed_tests(b, tmp_path))
    assert found["playground/server/__tests__/server.spec.ts"].reason == "named"
    assert found["playground/css/__tests__/css.spec.ts"].reason == "setup"


def test_a_global_setup_of_a_nested_config_binds_that_packages_tests_only(make_repo, tmp_path) -> None:
    """trpc's openapi package: its ``globalSetup`` generates the clients its tests read; a test
    of another package under the root config is not run after it."""
    b: RepoBuilder = make_repo()
    b.write("package.json", '{"name": "root", "private": true}')
    b.write("vitest.config.ts", "export default { test: { setupFiles: [__dirname + '/setup/quiet.ts'] } }\n")
    b.write("setup/quiet.ts", "export const quiet = true\n")
    b.write(
        "packages/openapi/vitest.config.ts",
        "import { defineConfig } from 'vitest/config'\n\n"
        "export default defineConfig({ test: { globalSetup: ['./test/scripts/globalSetup'] } })\n",
    )
    b.write("packages/openapi/src/generate.ts", "export function generate(): string {\n  return 'a'\n}\n")
    b.write(
        "packages/openapi/test/scripts/globalSetup.ts",
        "import { generate } from '../../src/generate'\n\nexport const setup = generate\n",
    )
    b.write("packages/openapi/test/heyapi.test.ts", case("reads the generated client"))
    b.write("packages/server/test/router.test.ts", case("router"))
    b.commit("init")
    b.write("packages/openapi/src/generate.ts", "export function generate(): string {\n  return 'b'\n}\n")
    b.commit("change the generator")
    found = by_path(listed_tests(b, tmp_path))
    heyapi = found["packages/openapi/test/heyapi.test.ts"]
    assert heyapi.reason == "setup"
    assert "packages/openapi/test/scripts/globalSetup.ts" in heyapi.evidence
    assert "packages/server/test/router.test.ts" not in found


@pytest.mark.parametrize(
    "config",
    [
        # two ``test`` objects (inline projects): which one runs which file is not read
        E2E_CONFIG.replace("  test: {", "  projects: [{ test: { include: ['a/**'] } }],\n  test: {"),
        # a computed root
        E2E_CONFIG.replace("  test: {", "  test: {\n    root: process.cwd(),"),
        # an include with no literal entry
        E2E_CONFIG.replace("['./playground/**/*.spec.[tj]s']", "[...specs]"),
        # a setup file that is not written out
        E2E_CONFIG.replace("['./playground/vitestSetup.ts']", "[setupPath]"),
        # a setup path outside the repository
        E2E_CONFIG.replace("'./playground/vitestSetup.ts'", "'../../playground/vitestSetup.ts'"),
        "export default defineConfig({ test: { setupFiles: ['./playground/vitestSetup.ts'",  # cut short
    ],
)
def test_a_config_this_reader_does_not_follow_binds_nothing(make_repo, tmp_path, config) -> None:
    found = by_path(listed_tests(vite_like(make_repo, config), tmp_path))
    assert "packages/app/src/__tests__/server.spec.ts" in found
    assert not [t for t in found.values() if t.reason == "setup"]


def test_a_jest_config_reads_root_dir_and_test_match() -> None:
    config = read_runner_config(
        "web/jest.config.js",
        b"module.exports = {\n  rootDir: '.',\n  testMatch: ['<rootDir>/e2e/**/*.e2e.js'],\n"
        b"  setupFilesAfterEnv: ['<rootDir>/e2e/setup.js', 'jest-extended/all'],\n}\n",
    )
    assert config is not None
    assert config.setups == ("web/e2e/setup.js",)  # the package name binds nothing
    assert config.includes("web/e2e/login/flow.e2e.js")
    assert not config.includes("web/src/flow.test.js")
    assert not config.includes("other/e2e/flow.e2e.js")


@pytest.mark.parametrize(
    ("glob", "matches", "misses"),
    [
        (
            "**/*.{test,spec}.?(c|m)[jt]s?(x)",
            ["a/b/x.test.ts", "x.spec.mjs", "a/x.test.tsx"],
            ["x.ts", "a/x.test.py"],
        ),
        (
            "playground/**/*.spec.[tj]s",
            ["playground/a/__tests__/a.spec.ts"],
            ["playground/a.spec.tsx", "src/a.spec.ts"],
        ),
        ("**/__tests__/**/*.[jt]s?(x)", ["__tests__/a.js", "b/__tests__/c/d.tsx"], ["b/tests/a.js"]),
        ("test/*.spec.ts", ["test/a.spec.ts"], ["test/a/b.spec.ts"]),
    ],
)
def test_runner_globs(glob, matches, misses) -> None:
    pattern = glob_regex(glob)
    assert pattern is not None
    assert all(pattern.match(p) for p in matches)
    assert not any(pattern.match(p) for p in misses)


@pytest.mark.parametrize("glob", ["!**/*.ts", "**/!(x).ts", "a/{b,c", "a/[b", "a/b)", "", "*a" * 20])
def test_a_negated_or_malformed_glob_is_not_read(glob) -> None:
    assert glob_regex(glob) is None


def test_a_setup_importing_the_changed_files_package_by_name_binds_a_file_no_import_reaches(
    make_repo, tmp_path
) -> None:
    """vite's browser client (``src/client/*.ts``) is imported by no module of the package's
    entry: the server serves it; the setup imports the package ``app`` it belongs to."""
    b = vite_like(make_repo)
    b.write("packages/app/src/client/hmr.ts", "export const hot = 1\n")
    b.commit("a client file")
    b.write("packages/app/src/client/hmr.ts", "export const hot = 2\n")
    b.commit("change the client")
    found = by_path(listed_tests(b, tmp_path))
    assert found["playground/hmr/__tests__/hmr.spec.ts"].reason == "named"  # after `hmr.ts`
    css = found["playground/css/__tests__/css.spec.ts"]
    assert (css.reason, css.evidence) == (
        "setup",
        "its runner's setup `playground/vitestSetup.ts` imports `app`, the package of "
        "`packages/app/src/client/hmr.ts`",
    )
    assert "packages/app/src/__tests__/server.spec.ts" not in found


def test_a_changed_config_binds_its_tests_and_names_the_one_on_its_changed_line(make_repo, tmp_path) -> None:
    b = vite_like(make_repo)
    b.write(
        "vitest.config.e2e.ts",
        E2E_CONFIG.replace(
            "    exclude: ['./playground/skipped/**'],",
            "    exclude: [\n      './playground/skipped/**',\n      './playground/css/__tests__/css.spec.ts',\n    ],",
        ),
    )
    b.commit("leave the css spec out")
    listed = listed_tests(b, tmp_path)
    found = by_path(listed)
    css = found["playground/css/__tests__/css.spec.ts"]
    assert (css.reason, css.evidence) == ("named", "named on a changed line of `vitest.config.e2e.ts`")
    hmr = found["playground/hmr/__tests__/hmr.spec.ts"]
    assert (hmr.reason, hmr.evidence) == ("setup", "its runner's config `vitest.config.e2e.ts` changes")
    assert listed[0].path == css.path


ROOT_CONFIG = (
    "import { defineConfig } from 'vitest/config'\n\n"
    "export default defineConfig({\n  test: {\n    projects: ['./packages/*'],\n"
    "    setupFiles: [__dirname + '/setup/quiet.ts'],\n  },\n})\n"
)


def test_a_config_extending_a_changed_config_binds_its_tests_and_one_with_projects_none(
    make_repo, tmp_path
) -> None:
    """trpc: the root config splits the tests into projects; a package's config re-exports it
    or merges it with its own options. A change to the root config reaches the packages' tests,
    not the examples' the root config's projects leave out."""
    b: RepoBuilder = make_repo()
    b.write("package.json", '{"name": "root", "private": true}')
    b.write("vitest.config.ts", ROOT_CONFIG)
    b.write("setup/quiet.ts", "export const quiet = true\n")
    b.write("packages/server/vitest.config.ts", "export { default } from '../../vitest.config'\n")
    b.write("packages/server/test/router.test.ts", case("router"))
    b.write(
        "packages/upgrade/vitest.config.ts",
        "import { mergeConfig } from 'vitest/config'\nimport base from '../../vitest.config'\n\n"
        "export default mergeConfig(base, { test: { setupFiles: ['./test/setupTests.ts'] } })\n",
    )
    b.write("packages/upgrade/test/setupTests.ts", "export const ready = true\n")
    b.write("packages/upgrade/test/transforms.test.ts", case("transforms"))
    b.write("examples/app/test/smoke.test.ts", case("smoke"))
    b.commit("init")
    b.write("vitest.config.ts", ROOT_CONFIG.replace("  },\n})", "    retry: 1,\n  },\n})"))
    b.commit("retry")
    found = by_path(listed_tests(b, tmp_path))
    transforms = found["packages/upgrade/test/transforms.test.ts"]
    assert transforms.reason == "setup"
    assert "`packages/upgrade/vitest.config.ts` imports `vitest.config.ts`" in transforms.evidence
    assert found["packages/server/test/router.test.ts"].reason == "setup"
    assert "examples/app/test/smoke.test.ts" not in found


DEFAULT_CONFIG = (
    "import { defineConfig } from 'vitest/config'\n\n"
    "export default defineConfig({\n  test: {\n"
    "    include: ['**/__tests__/**/*.spec.[tj]s'],\n"
    "    exclude: ['**/node_modules/**', './playground/**/*.*'],\n"
    "  },\n})\n"
)


def _with_default_config(make_repo, *configs: tuple[str, str]) -> RepoBuilder:  # type: ignore[no-untyped-def]
    b = vite_like(make_repo)
    b.write(
        "package.json",
        '{"name": "root", "private": true, "workspaces": ["packages/*"],'
        ' "devDependencies": {"vitest": "^3.0.0"}}',
    )
    b.write("vitest.config.ts", DEFAULT_CONFIG)
    for path, text in configs:
        b.write(path, text)
    b.commit("a default config that leaves the playground out")
    b.write("packages/app/src/server.ts", SERVER.replace("return 1", "return 4"))
    b.commit("change the server again")
    return b


def test_a_spec_only_another_config_runs_is_run_with_that_config(make_repo, tmp_path) -> None:
    from knowing_pr.render.summary import grouped_commands

    listed = listed_tests(_with_default_config(make_repo), tmp_path)
    found = by_path(listed)
    css = found["playground/css/__tests__/css.spec.ts"]
    assert css.run.startswith(
        "npx vitest run --config vitest.config.e2e.ts playground/css/__tests__/css.spec.ts"
    )
    unit = found["packages/app/src/__tests__/server.spec.ts"]
    assert unit.run.startswith("npx vitest run packages/app/src/__tests__/server.spec.ts")  # the default's
    lines = [command for framework, command, _ in grouped_commands(listed) if framework == "vitest"]
    e2e = [line for line in lines if "--config" in line]
    assert len(e2e) == 1 and e2e[0].startswith("npx vitest run --config vitest.config.e2e.ts playground/")
    assert "packages/app" not in e2e[0]  # one line per config: the unit spec is not run by the e2e one


def test_a_spec_two_configs_run_gets_no_config_it_cannot_tell(make_repo, tmp_path) -> None:
    listed = listed_tests(_with_default_config(make_repo, ("vitest.config.ci.ts", E2E_CONFIG)), tmp_path)
    css = by_path(listed)["playground/css/__tests__/css.spec.ts"]
    assert "--config" not in css.run
