"""A pack reads and parses each Vitest/Jest config at most once (``rank.testfiles`` looks for
the setups that reach the change, ``rank.runners`` for the config a test runs under: both take
the one parse), and none at all for a change no runner config can bind (Python only), with the
same tests to run, commands and PackRoot as before."""

from __future__ import annotations

import importlib
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from conftest import RepoBuilder

from knowing_pr.model import Pack
from knowing_pr.pipeline import PrRequest, build_pr_pack, open_workspace
from knowing_pr.rank.runnerconfig import is_runner_config
from knowing_pr.rank.runners import RepoFiles
from knowing_pr.render import render_pack


def case(name: str, imported: str = "") -> str:
    """A Vitest file of one test that calls ``greet`` when it imports it from ``imported``."""
    head = "import { it, expect } from 'vitest'\n"
    if imported:
        head += f"import {{ greet }} from '{imported}'\n"
    body = "expect(greet()).toBe('hi')" if imported else "expect(1).toBe(1)"
    return f"{head}\nit('{name}', () => {{\n  {body}\n}})\n"


def vitest_and_python(make_repo: Callable[..., RepoBuilder]) -> RepoBuilder:
    """A Vitest package (a default config for the unit tests whose setup imports ``greet``, an
    end-to-end config whose setup imports the package by name) beside a Python package; its
    first commit only."""
    b = make_repo()
    b.write("package.json", json.dumps({"name": "app", "scripts": {"test": "vitest"}}))
    b.write(
        "vitest.config.ts",
        "export default { test: { include: ['src/**/*.test.ts'], setupFiles: ['./test/setup.ts'] } }\n",
    )
    b.write(
        "vitest.config.e2e.ts",
        "export default { test: { include: ['e2e/**/*.spec.ts'], setupFiles: ['./e2e/setup.ts'] } }\n",
    )
    b.write("test/setup.ts", "import { greet } from '../src/greet'\n\nexport const warm = greet()\n")
    b.write("e2e/setup.ts", "import { greet } from 'app'\n\nexport const server = greet()\n")
    b.write("src/greet.ts", "export function greet(): string {\n  return 'hi'\n}\n")
    b.write("src/greet.test.ts", case("greets", "./greet"))
    b.write("src/other.test.ts", case("others"))
    b.write("e2e/greet.spec.ts", case("serves", "../src/greet"))
    b.write("e2e/page.spec.ts", case("renders"))
    b.write("app/__init__.py", "")
    b.write("app/core.py", "def core():\n    return 1\n")
    b.write("tests/test_core.py", "from app.core import core\n\n\ndef test_core():\n    assert core() == 1\n")
    b.commit("base")
    return b


def change_ts(b: RepoBuilder) -> None:
    b.write("src/greet.ts", "export function greet(): string {\n  return 'hi!'\n}\n")
    b.commit("change the greeting")


def change_py(b: RepoBuilder) -> None:
    b.write("app/core.py", "def core():\n    return 2\n")
    b.commit("change the core")


def json_pack(b: RepoBuilder, db: str) -> tuple[Pack, dict[str, Any]]:
    ws = open_workspace(str(b.path), db=db)
    pack = build_pr_pack(ws, PrRequest(base="HEAD~1", fmt="json"))
    return pack, json.loads(render_pack(pack, "json"))


class ConfigSpy:
    """Counts the blob reads of runner configs (the head's reader under ``RepoFiles``) and their
    tree-sitter parses (``read_runner_config`` calls that parse), each by path; the real
    functions run."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reads: Counter[str] = Counter()
        self.parses: Counter[str] = Counter()
        self._parsers = 0
        runnerconfig = importlib.import_module("knowing_pr.rank.runnerconfig")
        real_get_parser = runnerconfig.get_parser

        def get_parser(language: str) -> Any:
            self._parsers += 1
            return real_get_parser(language)

        monkeypatch.setattr(runnerconfig, "get_parser", get_parser)
        real_read = runnerconfig.read_runner_config

        def read_runner_config(path: str, source: bytes, **options: Any) -> Any:
            before = self._parsers
            try:
                return real_read(path, source, **options)
            finally:
                self.parses[path] += self._parsers - before

        for name in ("knowing_pr.rank.runnerconfig", "knowing_pr.rank.testfiles", "knowing_pr.rank.runners"):
            module = importlib.import_module(name)
            if hasattr(module, "read_runner_config"):
                monkeypatch.setattr(module, "read_runner_config", read_runner_config)
        real_head_files = importlib.import_module("knowing_pr.pipeline.answer").head_files

        def head_files(*args: Any) -> RepoFiles:
            files = real_head_files(*args)
            reader = files.reader

            def read(path: str) -> bytes | None:
                if is_runner_config(path):
                    self.reads[path] += 1
                return reader(path)

            files.reader = read
            return files

        for name in ("knowing_pr.pipeline.answer", "knowing_pr.pipeline.pr"):
            monkeypatch.setattr(importlib.import_module(name), "head_files", head_files)


def runs(pack_json: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {t["file"]: (t["reason"], t["run"]) for t in pack_json["tests_to_run"]}


def test_a_ts_pack_parses_each_runner_config_once(make_repo, tmp_path, monkeypatch) -> None:
    b = vitest_and_python(make_repo)
    change_ts(b)
    spy = ConfigSpy(monkeypatch)
    _, pack = json_pack(b, str(tmp_path / "store.sqlite"))
    assert runs(pack) == {
        "src/greet.test.ts": ("calls", "npx vitest run src/greet.test.ts -t greets"),
        "src/other.test.ts": ("setup", "npx vitest run src/other.test.ts"),
        "e2e/greet.spec.ts": (
            "calls",
            "npx vitest run --config vitest.config.e2e.ts e2e/greet.spec.ts -t serves",
        ),
        "e2e/page.spec.ts": ("setup", "npx vitest run --config vitest.config.e2e.ts e2e/page.spec.ts"),
    }
    # the setups are read for the evidence, the same parse tells the config each test runs under
    assert spy.parses == {"vitest.config.ts": 1, "vitest.config.e2e.ts": 1}
    assert spy.reads == {"vitest.config.ts": 1, "vitest.config.e2e.ts": 1}


def test_a_python_only_pack_reads_no_runner_config(make_repo, tmp_path, monkeypatch) -> None:
    b = vitest_and_python(make_repo)
    change_py(b)
    spy = ConfigSpy(monkeypatch)
    _, pack = json_pack(b, str(tmp_path / "store.sqlite"))
    assert runs(pack) == {"tests/test_core.py": ("calls", "pytest tests/test_core.py::test_core")}
    assert not spy.parses
    assert not spy.reads


class Forgetful(dict[str, Any]):
    """A memo that keeps nothing: every reader parses the config again."""

    def __setitem__(self, key: str, value: Any) -> None:
        pass


@pytest.mark.parametrize("change", [change_ts, change_py])
def test_one_parse_and_no_read_leave_the_pack_as_it_was(make_repo, tmp_path, monkeypatch, change) -> None:
    """The pack made with one parse per config (none for a Python change) is the pack made as
    before: each reader parsing the configs on its own, a Python change reading them too."""
    b = vitest_and_python(make_repo)
    change(b)
    once, _ = json_pack(b, str(tmp_path / "once.sqlite"))
    monkeypatch.setattr(importlib.import_module("knowing_pr.rank.testfiles"), "_holds_js", lambda _: True)
    spy = ConfigSpy(monkeypatch)
    pr = importlib.import_module("knowing_pr.pipeline.pr")
    spied_head_files = pr.head_files

    def head_files(*args: Any) -> RepoFiles:
        files = spied_head_files(*args)
        files.parsed_configs = Forgetful()
        return files

    monkeypatch.setattr(pr, "head_files", head_files)
    before, _ = json_pack(b, str(tmp_path / "before.sqlite"))
    # the way it was: twice for a TS change (the evidence, then the commands), once for Python
    twice = 2 if change is change_ts else 1
    assert spy.parses == {"vitest.config.ts": twice, "vitest.config.e2e.ts": twice}
    assert once.pack_root == before.pack_root
    for fmt in ("json", "markdown", "xml"):
        assert render_pack(once, fmt) == render_pack(before, fmt)


@pytest.mark.parametrize("also_ts", [False, True])
def test_a_setup_file_of_another_language_binds_nothing(make_repo, tmp_path, also_ts) -> None:
    """Vitest loads a setup file as a module: a config naming ``./tools/setup.py`` runs none of
    its tests after a change to that Python file, whether or not the change holds TypeScript
    too (a Python-only change reads no config at all)."""
    b = vitest_and_python(make_repo)
    b.write(
        "vitest.config.ts",
        "export default { test: { include: ['src/**/*.test.ts'], setupFiles: ['./tools/setup.py'] } }\n",
    )
    b.write("tools/setup.py", "QUIET = True\n")
    b.commit("a setup file of Python")
    b.write("tools/setup.py", "QUIET = False\n")
    if also_ts:
        b.write("src/unused.ts", "export const unused = 1\n")
    b.commit("change the Python setup")
    _, pack = json_pack(b, str(tmp_path / "store.sqlite"))
    assert not [t["file"] for t in pack["tests_to_run"] if "tools/setup.py" in t["evidence"]]
