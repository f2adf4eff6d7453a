"""A test file whose path starts with ``-`` (``-evil/test_x.py``, ``--rootdir=x/test_a.py``) or whose
title does never becomes an option of the command a reviewer copies from "Tests to run", for every
runner ``rank.runners`` writes commands for, and a path of shell syntax stays one word.

Each command (one test, the whole file, and the line that runs several at once) runs through
``sh -c`` with stand-ins for the runners on ``PATH`` that record the directory they run in and the
words they were given: every word starting with ``-`` must be one of the runner's own options.
pytest's command also runs for real."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from test_testcases import files_of

from knowing_pr.model import TestToRun
from knowing_pr.parse.testcases import find_test_cases
from knowing_pr.rank.runners import run_command, run_file_command
from knowing_pr.render.summary import grouped_commands

#: a directory read as pytest's ``-e``…, one read as an option with a value, one a shell would run
HOSTILE_DIRS = ["-evil", "--rootdir=x", "-e $(touch pwned) x"]
#: the programs the commands start (``./gradlew`` is a file of the repository)
RUNNERS = ["pytest", "go", "cargo", "npx", "node", "mvn", "dotnet", "rspec", "ruby", "bundle"]
#: the options the commands are written with; any other word starting with ``-`` came from the
#: repository and would be read as an option
OWN_OPTIONS = {
    "-t", "--grep", "-run", "-bench", "-p", "--test", "--config", "--filter", "-n", "-Ilib",
    "-Itest", "--single-run", "-pl", "--tests", "--match",
}  # fmt: skip
OWN_OPTION_PREFIXES = ("--test-name-pattern=", "--filter=", "-Dtest=", "--match=", "--test=", "--package=")

JS_TWO = "it('-dash', () => {})\nit('b', () => {})\n"
NODE_TWO = "test('-dash', () => {})\ntest('b', () => {})\n"
JAVA_TWO = "package a;\nclass FooTest { @Test void x() {}\n @Test void y() {} }\n"


def manifest(**sections: dict[str, str]) -> str:
    return json.dumps(sections)


# (runner, test file, language, source with two tests, other files); D is the hostile directory
CASES = [
    ("pytest", "D/test_x.py", "python", "def test_a():\n    pass\n\ndef test_b():\n    pass\n", {}),
    ("go, module inside", "D/pkg/x_test.go", "go", "package pkg\nfunc TestA(t *testing.T) {}\nfunc TestB(t *testing.T) {}\n",
     {"D/go.mod": "module m"}),
    ("go, module above", "D/x_test.go", "go", "package pkg\nfunc TestA(t *testing.T) {}\nfunc TestB(t *testing.T) {}\n",
     {"go.mod": "module m"}),
    ("cargo, integration test", "D/tests/-cli.rs", "rust", "#[test]\nfn a() {}\n#[test]\nfn b() {}\n",
     {"D/Cargo.toml": '[package]\nname = "core"\n'}),
    ("cargo, unit tests", "D/src/-walk/mod.rs", "rust", "#[test]\nfn a() {}\n#[test]\nfn b() {}\n",
     {"D/Cargo.toml": '[package]\nname = "-core"\n'}),
    ("vitest", "D/a.test.ts", "typescript", JS_TWO, {"package.json": manifest(scripts={"test": "vitest"})}),
    ("jest", "D/a.test.js", "javascript", JS_TWO, {"package.json": manifest(devDependencies={"jest": "1"})}),
    ("jest, package inside", "D/a.test.js", "javascript", JS_TWO,
     {"D/package.json": manifest(devDependencies={"jest": "1"})}),
    ("mocha", "D/a.test.js", "javascript", JS_TWO, {"package.json": manifest(devDependencies={"mocha": "1"})}),
    ("node:test", "D/a.test.js", "javascript", NODE_TWO, {"package.json": manifest(scripts={"test": "node --test"})}),
    ("ava", "D/a.test.js", "javascript", NODE_TWO, {"package.json": manifest(devDependencies={"ava": "1"})}),
    ("jasmine", "D/a.spec.js", "javascript", JS_TWO, {"package.json": manifest(devDependencies={"jasmine": "1"})}),
    ("karma", "D/a.spec.js", "javascript", JS_TWO,
     {"D/package.json": manifest(devDependencies={"karma": "1"}), "D/karma.conf.js": ""}),
    ("maven", "D/src/test/java/a/FooTest.java", "java", JAVA_TWO, {"D/pom.xml": "<project/>"}),
    ("gradle", "D/src/test/java/a/FooTest.java", "java", JAVA_TWO, {"D/build.gradle": ""}),
    ("dotnet", "D/A.Tests/ATests.cs", "csharp", "namespace A;\nclass ATests { [Fact] void X() {}\n [Fact] void Y() {} }\n",
     {"D/A.Tests/A.Tests.csproj": "<Project/>"}),
    ("rspec", "D/a_spec.rb", "ruby", "describe A do\n  it 'a' do\n  end\n  it 'b' do\n  end\nend\n", {}),
    ("minitest", "D/a_test.rb", "ruby", "class ATest < Minitest::Test\n  def test_a\n  end\n  def test_b\n  end\nend\n",
     {"Gemfile": ""}),
]  # fmt: skip


def commands_for(path: str, language: str, source: str, tree: dict[str, str]) -> list[str]:
    """Each test's command, the whole file's, and the lines that run several tests at once."""
    found, _ = find_test_cases(path, language, source.encode())
    assert len(found) == 2, path
    files = files_of(tree)
    runs = [run_command(case, path, files) for case in found]
    tests = [TestToRun(r.name, path, 1, r.framework, r.command) for r in runs]
    return (
        [r.command for r in runs]
        + [run_file_command(path, files).command]
        + [line for _, line, _ in grouped_commands(tests)]
    )


def stand_ins(tmp_path: Path) -> dict[str, str]:
    """An environment whose runners record their directory and words in ``record.txt``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = '#!/bin/sh\n{ pwd; printf "%s\\n" "$(basename "$0")"; for a in "$@"; do printf "%s\\n" "$a"; done; } > "$RECORD"\n'
    for name in RUNNERS:
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "RECORD": str(tmp_path / "record.txt"),
    }


def foreign_options(words: list[str]) -> list[str]:
    """The words a runner would read as options that are not its command's own (after ``-- --``,
    libtest's filters, every word is a name)."""
    found: list[str] = []
    ends = 0
    for word in words:
        if word == "--":
            ends += 1
            continue
        if ends >= 2:
            break
        if word.startswith("-") and word not in OWN_OPTIONS and not word.startswith(OWN_OPTION_PREFIXES):
            found.append(word)
    return found


@pytest.mark.parametrize("directory", HOSTILE_DIRS)
@pytest.mark.parametrize(("runner", "path", "language", "source", "tree"), CASES, ids=[c[0] for c in CASES])
def test_no_path_or_title_of_the_repository_becomes_a_runner_option(
    tmp_path: Path, directory: str, runner: str, path: str, language: str, source: str, tree: dict[str, str]
) -> None:
    path = path.replace("D/", f"{directory}/")
    tree = {name.replace("D/", f"{directory}/"): text for name, text in tree.items()}
    work = tmp_path / "work"
    for name in [path, *tree]:  # the directories a command may enter
        (work / name).parent.mkdir(parents=True, exist_ok=True)
    env = stand_ins(tmp_path)
    gradlew = work / "gradlew"
    gradlew.write_text((tmp_path / "bin" / "mvn").read_text())
    gradlew.chmod(gradlew.stat().st_mode | stat.S_IXUSR)
    commands = commands_for(path, language, source, tree)
    for command in commands:
        record = tmp_path / "record.txt"
        record.unlink(missing_ok=True)
        subprocess.run(["sh", "-c", command], cwd=work, env=env, check=True, stdin=subprocess.DEVNULL)
        where, program, *words = record.read_text().splitlines()
        assert not foreign_options(words), (command, words)
        # the test is named: by the directory the command enters, or by a word of it
        named = [directory] if program != "cargo" else ["-cli", "-walk"]
        assert any(n in where or any(n in w for w in words) for n in named), command
    assert not list(tmp_path.rglob("pwned")), commands


@pytest.mark.parametrize("directory", HOSTILE_DIRS)
def test_pytest_runs_the_test_of_a_path_that_starts_with_a_dash(tmp_path: Path, directory: str) -> None:
    """pytest reads ``./-evil/test_x.py::test_a`` as that test: the command runs it, for real."""
    path = f"{directory}/test_x.py"
    source = "def test_a():\n    pass\n\ndef test_b():\n    pass\n"
    (tmp_path / directory).mkdir()
    (tmp_path / path).write_text(source)
    one, _, whole, *_ = commands_for(path, "python", source, {})
    for command, passed in ((one, "1 passed"), (whole, "2 passed")):
        assert command.startswith("pytest ")
        line = f"{sys.executable} -m pytest -q -p no:cacheprovider {command.removeprefix('pytest ')}"
        done = subprocess.run(
            ["sh", "-c", line], cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL
        )
        assert done.returncode == 0 and passed in done.stdout, (command, done.stdout, done.stderr)
    assert not list(tmp_path.rglob("pwned"))
