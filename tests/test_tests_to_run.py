"""The one list of tests to run (``rank.runnable`` + ``rank.testfiles``): the tests that drive a
program's entry point (a Rust ``tests/`` file running the binary, a Click app through
``CliRunner``, a Go ``package main``), the test files that import the change, each with its
evidence and a command; every one of them in the JSON pack whatever the budget."""

from __future__ import annotations

import json

from conftest import RepoBuilder

from knowing_pr.model import TestToRun
from knowing_pr.pipeline import PrRequest, build_pr_pack, open_workspace
from knowing_pr.render import render_pack


def listed_tests(
    b: RepoBuilder, tmp_path, *, budget: int | None = None, fmt: str = "json"
) -> list[TestToRun]:
    ws = open_workspace(str(b.path), db=str(tmp_path / "store.sqlite"), budget=budget)
    pack = build_pr_pack(ws, PrRequest(base="HEAD~1", fmt=fmt))
    assert pack.summary is not None
    return list(pack.summary.tests)


def by_path(tests: list[TestToRun]) -> dict[str, TestToRun]:
    return {t.path: t for t in tests}


def test_a_rust_integration_test_running_the_binary_is_to_run(make_repo, tmp_path) -> None:
    b = make_repo()
    b.write("Cargo.toml", '[package]\nname = "finder"\nversion = "0.1.0"\n')
    b.write("src/main.rs", "mod walk;\n\nfn main() {\n    walk::scan();\n}\n")
    b.write("src/walk.rs", 'pub fn scan() {\n    println!("a");\n}\n')
    b.write(
        "tests/cli.rs",
        "use assert_cmd::Command;\n\n#[test]\nfn exact_flag() {\n"
        '    Command::cargo_bin("finder").unwrap().arg("--exact").assert().success();\n}\n',
    )
    b.write("tests/other.rs", "#[test]\nfn unrelated() {\n    assert_eq!(1, 1);\n}\n")
    b.commit("base")
    b.write("src/walk.rs", 'pub fn scan() {\n    println!("b");\n}\n')
    b.commit("change the walk")
    listed = listed_tests(b, tmp_path)
    found = by_path(listed)
    cli = found["tests/cli.rs"]
    assert (cli.reason, cli.evidence) == ("program", "runs the crate's binary")
    assert cli.run == "cargo test -p finder --test cli"
    # the crate's other integration tests reach it through its public names: listed after
    other = found["tests/other.rs"]
    assert (other.reason, other.evidence) == ("imports", "tests crate `finder`")
    assert listed.index(cli) < listed.index(other)


CLI_APP = """\
import click

from app.core import render


def build(name):
    return render(name)


def output(name):
    return build(name)


@click.command()
@click.argument("name")
def main(name):
    click.echo(output(name))
"""


def test_a_click_app_tested_through_clirunner_is_to_run(make_repo, tmp_path) -> None:
    b = make_repo()
    b.write("app/__init__.py", "")
    b.write("app/core.py", "def render(name):\n    return name.upper()\n")
    b.write("app/cli.py", CLI_APP)
    b.write(
        "tests/test_cli.py",
        "from click.testing import CliRunner\n\nfrom app.cli import main\n\n\n"
        "def test_greets():\n    result = CliRunner().invoke(main, ['x'])\n    assert result.output == 'X\\n'\n",
    )
    b.write("tests/test_plain.py", "from app.cli import build\n\n\ndef test_build():\n    assert build\n")
    b.commit("base")
    b.write("app/core.py", "def render(name):\n    return name.title()\n")
    b.commit("title case")
    found = by_path(listed_tests(b, tmp_path))
    assert found["tests/test_cli.py"].reason == "program"
    assert found["tests/test_cli.py"].run == "pytest tests/test_cli.py"
    assert found["tests/test_plain.py"].reason in ("calls", "imports-via")


def test_go_tests_of_package_main_are_to_run(make_repo, tmp_path) -> None:
    b = make_repo()
    b.write("go.mod", "module example.com/tool\n\ngo 1.21\n")
    b.write("cmd/tool/main.go", 'package main\n\nfunc banner() string {\n\treturn "a"\n}\n\nfunc main() {}\n')
    b.write(
        "cmd/tool/main_test.go",
        'package main\n\nimport (\n\t"os/exec"\n\t"testing"\n)\n\n'
        'func TestRuns(t *testing.T) {\n\tif err := exec.Command("go", "run", ".").Run(); err != nil {\n'
        "\t\tt.Fatal(err)\n\t}\n}\n",
    )
    b.commit("base")
    b.write("cmd/tool/main.go", 'package main\n\nfunc banner() string {\n\treturn "b"\n}\n\nfunc main() {}\n')
    b.commit("new banner")
    found = by_path(listed_tests(b, tmp_path))
    test = found["cmd/tool/main_test.go"]
    assert (test.reason, test.evidence) == ("program", "tests package main, the program")
    assert test.run == "go test ./cmd/tool"


def test_every_test_to_run_is_in_the_json_pack_whatever_the_budget(make_repo, tmp_path) -> None:
    b = make_repo()
    b.write("pkg/__init__.py", "")
    b.write("pkg/calc.py", "def add(a, b):\n    return a + b\n")
    for i in range(30):
        b.write(
            f"tests/test_calc_{i:02}.py",
            f"from pkg.calc import add\n\n\ndef test_add_{i}():\n    assert add({i}, 1) == {i + 1}\n",
        )
    b.commit("base")
    b.write("pkg/calc.py", "def add(a, b):\n    return b + a\n")
    b.commit("swap")
    ws = open_workspace(str(b.path), db=str(tmp_path / "store.sqlite"), budget=600)
    pack = build_pr_pack(ws, PrRequest(base="HEAD~1", fmt="json"))
    data = json.loads(render_pack(pack, "json"))
    assert data["tests_to_run_total"] == len(data["tests_to_run"]) == 30
    assert {t["evidence"] for t in data["tests_to_run"]} == {"calls the changed code"}
    assert {t["scope"] for t in data["tests_to_run"]} == {"test"}  # each command runs just its test
    markdown = render_pack(build_pr_pack(ws, PrRequest(base="HEAD~1", fmt="markdown")), "markdown")
    shown = markdown.count("— calls the changed code")
    assert (
        f"- … and {30 - shown} more tests, each with its evidence and command, in the JSON pack" in markdown
    )


def test_a_python_helper_module_beside_the_tests_is_not_a_test_to_run(make_repo, tmp_path) -> None:
    """``tests/support.py`` imports the change and runs the program, but pytest collects no test
    from it (its name is not ``test_*.py``): it is never listed, while ``tests/test_core.py`` is."""
    b = make_repo()
    b.write("app/__init__.py", "")
    b.write("app/core.py", "def render(name):\n    return name.upper()\n")
    b.write(
        "tests/support.py",
        "import subprocess\n\nfrom app.core import render\n\n\n"
        "def run_cli(*args):\n    return subprocess.run(['app', *args], check=True)\n\n\n"
        "def expected(name):\n    return render(name)\n",
    )
    b.write(
        "tests/test_core.py",
        "from app.core import render\n\n\ndef test_render():\n    assert render('a') == 'A'\n",
    )
    b.commit("base")
    b.write("app/core.py", "def render(name):\n    return name.upper() + '!'\n")
    b.commit("change render")
    found = by_path(listed_tests(b, tmp_path))
    assert "tests/test_core.py" in found
    assert "tests/support.py" not in found


def test_a_file_holds_tests_when_a_test_case_is_found_in_it() -> None:
    """The bench's ground truth (``bench/test_recall.py``) counts a test file only when it holds
    tests: a router fixture or a generated client under a test folder holds none."""
    from knowing_pr.rank.testfiles import holds_tests

    spec = b"import { it } from 'vitest';\nit('adds', () => {\n  expect(1 + 1).toBe(2);\n});\n"
    fixture = b"export const router = t.router({ ping: t.procedure.query(() => 'pong') });\n"
    assert holds_tests("packages/openapi/test/basic.test.ts", spec)
    assert not holds_tests("packages/openapi/test/routers/basic.ts", fixture)
    assert not holds_tests("packages/openapi/test/routers/client/sdk.gen.ts", fixture)
    assert not holds_tests("src/basic.ts", spec)  # not a test file
    assert holds_tests("tests/test_api.py", b"def test_api():\n    assert True\n")
    assert not holds_tests("tests/test_api.py", b"API = 1\n")
    assert not holds_tests("tests/conftest.py", b"def test_like():\n    pass\n")


def test_a_js_test_running_a_program_file_by_its_path_is_to_run(make_repo, tmp_path) -> None:
    """A test that starts a process on a file it names from its own directory drives the
    program: listed when that file is changed or imports the change, with no import of it."""
    b = make_repo()
    b.write("packages/gen/package.json", '{"name": "gen", "main": "src/index.ts"}\n')
    b.write("packages/gen/src/generate.ts", "export function generate(x: string) {\n  return x;\n}\n")
    b.write(
        "packages/gen/src/cli.ts",
        "import { generate } from './generate';\n\nconsole.log(generate(process.argv[2]));\n",
    )
    b.write("packages/gen/src/other.ts", "export const other = 1;\n")
    b.write(
        "packages/gen/test/cli.test.ts",
        "import { execFileSync } from 'node:child_process';\nimport * as path from 'node:path';\n"
        "import { it, expect } from 'vitest';\n\n"
        "const cliPath = path.resolve(__dirname, '../src/cli.ts');\n\n"
        "it('prints', () => {\n  expect(execFileSync('tsx', [cliPath, 'a']).toString()).toBe('a\\n');\n});\n",
    )
    b.write(
        "packages/gen/test/bin.test.ts",
        "import { execFileSync } from 'node:child_process';\nimport { it } from 'vitest';\n\n"
        "const script = new URL('../src/other', import.meta.url);\n\n"
        "it('runs', () => {\n  execFileSync('tsx', [script.pathname]);\n});\n",
    )
    b.commit("base")
    b.write("packages/gen/src/generate.ts", "export function generate(x: string) {\n  return x + x;\n}\n")
    b.commit("change the generator")
    found = by_path(listed_tests(b, tmp_path))
    cli = found["packages/gen/test/cli.test.ts"]
    assert (cli.reason, cli.evidence) == ("program", "runs `packages/gen/src/cli.ts` by its path")
    # it runs a file of the package that does not use the change
    assert "packages/gen/test/bin.test.ts" not in found


def test_a_file_under_a_test_folder_that_holds_no_test_is_not_to_run(make_repo, tmp_path) -> None:
    """A router fixture and a client generated from it import the change from a test folder, but
    hold no test: nothing of them runs, so they are not listed; the spec beside them is."""
    b = make_repo()
    b.write("src/router.ts", "export function route(x: string) {\n  return x;\n}\n")
    b.write(
        "test/routers/app.ts", "import { route } from '../../src/router';\n\nexport const app = route('a');\n"
    )
    b.write("test/routers/client.gen.ts", "import { app } from './app';\n\nexport const client = app;\n")
    b.write(
        "test/app.test.ts",
        "import { it, expect } from 'vitest';\nimport { client } from './routers/client.gen';\n\n"
        "it('routes', () => {\n  expect(client).toBe('a');\n});\n",
    )
    b.commit("base")
    b.write("src/router.ts", "export function route(x: string) {\n  return x + x;\n}\n")
    b.commit("change the router")
    found = by_path(listed_tests(b, tmp_path))
    assert "test/app.test.ts" in found
    assert "test/routers/app.ts" not in found
    assert "test/routers/client.gen.ts" not in found
