"""Every command block of README.md and docs/ marked runnable (a fence whose info string is
``sh runnable``) runs as written, in a fresh clone of this repository, and exits 0.

The blocks name this repository's own files and commits (README's first command packs commit
``3913ef0``), so they run in a clone of it; a checkout without that history (a tarball, a
shallow clone) cannot run them and the test says so."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```\s*$", re.MULTILINE | re.DOTALL)
#: a commit the documented commands name; its presence says the clone has the history they need
NAMED_COMMIT = "3913ef0"


def runnable_blocks() -> list[tuple[str, str]]:
    """(where, the block's text) for each fenced block whose info string says ``runnable``."""
    blocks = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            if "runnable" in match.group("info").split():
                line = text.count("\n", 0, match.start()) + 1
                blocks.append((f"{document.relative_to(ROOT)}:{line}", match.group("body")))
    return blocks


def test_the_readme_and_docs_mark_their_command_blocks_runnable() -> None:
    where = {name.split(":")[0] for name, _ in runnable_blocks()}
    assert {"README.md", "docs/hooks.md", "docs/action.md"} <= where


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A fresh clone of this repository and an environment whose ``knowing-pr`` is this code."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout of knowing-pr: the documented commands need its history")
    have = subprocess.run(
        ["git", "-C", str(ROOT), "cat-file", "-e", f"{NAMED_COMMIT}^{{commit}}"], capture_output=True
    )
    if have.returncode != 0:
        pytest.skip(f"commit {NAMED_COMMIT} is not in this checkout (a shallow clone): fetch the history")
    base = tmp_path_factory.mktemp("documented")
    path = base / "knowing-pr"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(path)], check=True)
    bin_dir = base / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "knowing-pr"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m knowing_pr "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
    }
    return {"path": str(path), **{f"env:{k}": v for k, v in env.items()}}


@pytest.mark.parametrize(("where", "block"), runnable_blocks(), ids=[name for name, _ in runnable_blocks()])
def test_a_runnable_block_runs_as_written(clone: dict[str, str], where: str, block: str) -> None:
    env = {k.removeprefix("env:"): v for k, v in clone.items() if k.startswith("env:")}
    ran = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=clone["path"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert ran.returncode == 0, (
        f"{where}\n{block}\nstdout:\n{ran.stdout[-3000:]}\nstderr:\n{ran.stderr[-3000:]}"
    )
    assert "Traceback" not in ran.stderr, ran.stderr


def test_no_message_sends_the_reader_to_a_file_pip_does_not_install() -> None:
    """docs/ and README.md stay in the source tree: an error, hint or warning that names one
    leaves a user of the installed package with nothing to open."""
    import ast

    named = []
    for source in sorted((ROOT / "knowing_pr").rglob("*.py")):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
            if id(node) not in docstrings and re.search(r"\bdocs/|README\.md|BENCHMARKS\.md", text):
                named.append(f"{source.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}: {text[:80]}")
    assert named == []
