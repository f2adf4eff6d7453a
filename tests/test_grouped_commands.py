"""Several chosen tests of one framework → one paste-able line (``rank.runners.group_commands``),
every word shell-quoted: a hostile test title stays one argument; Karma's command says it runs the
whole suite (``scope``)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from test_testcases import files_of

from knowing_pr.parse.testcases import find_test_cases
from knowing_pr.rank.runners import TestRun, group_commands, run_command, run_file_command


def runs_of(path: str, language: str, source: str, tree: dict[str, str]) -> list[TestRun]:
    found, _ = find_test_cases(path, language, source.encode())
    files = files_of(tree)
    return [run_command(case, path, files) for case in found]


def grouped(runs: list[TestRun]) -> list[tuple[str, str]]:
    lines = group_commands([(r.framework, r.command) for r in runs])
    assert all(count >= 2 for _, _, count in lines)  # a line runs two or more of them
    return [(framework, line) for framework, line, _ in lines]


@pytest.mark.parametrize(
    ("path", "language", "source", "tree", "expected"),
    [
        (
            "crates/core/tests/cli.rs", "rust", "#[test]\nfn parses() {}\n#[test]\nfn prints() {}\n",
            {"crates/core/Cargo.toml": '[package]\nname = "core"\n'},
            ("cargo test", "cargo test -p core --test cli -- parses prints"),
        ),
        (
            "packages/server/src/a.test.ts", "typescript",
            "describe('a', () => { it('b (c)', () => {}); it('d', () => {}) })\n",
            {"package.json": json.dumps({"scripts": {"test": "vitest"}})},
            ("vitest", "npx vitest run packages/server/src/a.test.ts -t 'a b \\(c\\)|a d'"),
        ),
        (
            "test/a.test.js", "javascript", "it('works', () => {})\nit('fails', () => {})\n",
            {"package.json": json.dumps({"devDependencies": {"jest": "1"}})},
            ("jest", "npx jest test/a.test.js -t 'works|fails'"),
        ),
        (
            "test/unit/a.js", "javascript", "it('works', () => {})\nit('fails', () => {})\n",
            {"package.json": json.dumps({"scripts": {"test": "mocha test/unit/**/*.js"}})},
            ("mocha", "npx mocha test/unit/a.js --grep 'works|fails'"),
        ),
        (
            "gson/src/test/java/a/FooTest.java", "java",
            "package a;\nclass FooTest { @Test void x() {}\n @Test void y() {} }\n", {"gson/pom.xml": "<project/>"},
            ("junit (maven)", "mvn test -pl gson -Dtest='FooTest#x+y'"),
        ),
        (
            "lib/src/test/java/a/FooTest.java", "java",
            "package a;\nclass FooTest { @Test void x() {}\n @Test void y() {} }\n", {"lib/build.gradle": ""},
            ("junit (gradle)", "./gradlew :lib:test --tests a.FooTest.x --tests a.FooTest.y"),
        ),
        (
            "test/A.Tests/ATests.cs", "csharp", "namespace A;\nclass ATests { [Fact] void X() {}\n [Fact] void Y() {} }\n",
            {"test/A.Tests/A.Tests.csproj": "<Project/>"},
            (
                "dotnet test",
                "dotnet test test/A.Tests/A.Tests.csproj"
                " --filter 'FullyQualifiedName~ATests.X|FullyQualifiedName~ATests.Y'",
            ),
        ),
        (
            "spec/a_spec.rb", "ruby", "describe A do\n  it 'a' do\n  end\n  it 'b' do\n  end\nend\n", {"Gemfile": ""},
            ("rspec", "bundle exec rspec spec/a_spec.rb:2 spec/a_spec.rb:4"),
        ),
    ],
)  # fmt: skip
def test_two_tests_of_a_framework_run_in_one_line(
    path: str, language: str, source: str, tree: dict[str, str], expected: tuple[str, str]
) -> None:
    runs = runs_of(path, language, source, tree)
    assert len(runs) == 2
    assert grouped(runs) == [expected]


def test_a_whole_file_in_the_group_runs_its_files_without_a_title_filter() -> None:
    tree = {"package.json": json.dumps({"devDependencies": {"jest": "1"}})}
    runs = runs_of("test/a.test.js", "javascript", "it('works', () => {})\n", tree)
    runs.append(run_file_command("test/b.test.js", files_of(tree)))
    assert grouped(runs) == [("jest", "npx jest test/a.test.js test/b.test.js")]


def test_one_line_per_place_and_none_for_a_single_test() -> None:
    tree = {
        "a/Cargo.toml": '[package]\nname = "a"\n',
        "b/Cargo.toml": '[package]\nname = "b"\n',
    }
    runs = runs_of("a/tests/t.rs", "rust", "#[test]\nfn one() {}\n#[test]\nfn two() {}\n", tree)
    runs += runs_of("b/tests/t.rs", "rust", "#[test]\nfn three() {}\n", tree)
    assert grouped(runs) == [("cargo test", "cargo test -p a --test t -- one two")]


def test_a_hostile_title_stays_one_argument_of_the_grouped_line(tmp_path: Path) -> None:
    """A title holding a quote, ``$(...)`` and backticks is passed to the runner as written (regex
    escaped) and runs nothing: a stand-in ``npx`` records the arguments it was given."""
    titles = ["it's $(touch pwned)", "x`touch pwned2`|y; touch pwned3"]
    source = "".join(f"it({json.dumps(t)}, () => {{}})\n" for t in titles)
    tree = {"package.json": json.dumps({"devDependencies": {"jest": "1"}})}
    runs = runs_of("test/a.test.js", "javascript", source, tree)
    [(framework, line)] = grouped(runs)
    assert framework == "jest"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npx = bin_dir / "npx"
    npx.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > args.txt\n')
    npx.chmod(npx.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["sh", "-c", line], cwd=tmp_path, env=env, check=True)
    args = (tmp_path / "args.txt").read_text().splitlines()
    assert args == [
        "jest",
        "test/a.test.js",
        "-t",
        "it's \\$\\(touch pwned\\)|x`touch pwned2`\\|y; touch pwned3",
    ]
    assert not any((tmp_path / name).exists() for name in ("pwned", "pwned2", "pwned3"))


def test_karma_says_its_command_runs_the_whole_suite() -> None:
    tree = {"package.json": json.dumps({"devDependencies": {"karma": "1"}}), "karma.conf.cjs": ""}
    runs = runs_of("test/a.spec.js", "javascript", "it('a', () => {})\nit('b', () => {})\n", tree)
    assert {r.scope for r in runs} == {"suite"}
    assert grouped(runs) == []  # one command already runs both
    assert run_file_command("test/a.spec.js", files_of(tree)).scope == "suite"
    jest = {"package.json": json.dumps({"devDependencies": {"jest": "1"}})}
    assert run_file_command("test/a.test.js", files_of(jest)).scope == "file"
    assert {r.scope for r in runs_of("test/a.test.js", "javascript", "it('a', () => {})\n", jest)} == {"test"}


def test_go_tests_grouped_with_a_benchmark_run_the_packages_whole() -> None:
    """A ``-run '^Test…$'`` pattern never selects a benchmark: a go group holding one runs its
    packages whole instead of leaving the benchmark out (the pattern took ``Test`` names only)."""
    from knowing_pr.model import TestToRun
    from knowing_pr.render.summary import grouped_commands

    tests = [
        TestToRun("TestParse", "pkg/a_test.go", 3, "go test", "go test ./pkg -run '^TestParse$'"),
        TestToRun(
            "BenchmarkParse",
            "pkg/a_test.go",
            9,
            "go test",
            "go test ./pkg -run '^$' -bench '^BenchmarkParse$'",
        ),
    ]
    assert grouped_commands(tests) == [("go test", "go test ./pkg", 2)]
    only_tests = [
        tests[0],
        TestToRun("TestLex", "pkg/b_test.go", 3, "go test", "go test ./pkg -run '^TestLex$'"),
    ]
    assert grouped_commands(only_tests) == [("go test", "go test ./pkg -run '^(TestParse|TestLex)$'", 2)]


def test_the_markdown_line_says_how_many_it_runs_and_is_left_out_when_too_long_to_run() -> None:
    """Two projects' dotnet tests: the one line (the project with two tests) runs 2 of the 3, and
    said "all"; a line longer than the render limit was cut inside its backticks (not runnable)."""
    from knowing_pr.model import TestToRun
    from knowing_pr.render.frame import RenderLimits
    from knowing_pr.render.markdown import _grouped_lines

    def dotnet(project: str, name: str) -> TestToRun:
        return TestToRun(
            name, f"{project}/T.cs", 1, "dotnet test", f"dotnet test {project}/P.csproj --filter {name}"
        )

    tests = [dotnet("a", "A.One"), dotnet("a", "A.Two"), dotnet("b", "B.One")]
    assert _grouped_lines(tests, RenderLimits()) == (
        "- 2 of the dotnet test tests above at once: `dotnet test a/P.csproj --filter 'A.One|A.Two'`\n"
    )
    assert _grouped_lines(tests[:2], RenderLimits()).startswith("- all dotnet test tests above at once: ")
    long = [dotnet("a", "A." + "x" * 300 + str(i)) for i in range(2)]
    assert _grouped_lines(long, RenderLimits()) == ""
    assert "A.xxx" in _grouped_lines(long, RenderLimits(text_bytes=900))
