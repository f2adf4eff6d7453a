"""Code whose evaluation loops (recursive generators, re-exports that import each other, a class
hierarchy with a cycle) is indexed to the end; a reference whose analysis fails costs that
reference's edges, is counted in ``stats``, and never fails the index."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import RepoBuilder

from knowing_pr import pipeline
from knowing_pr.config import default_db_path
from knowing_pr.graph.values import Evaluator
from knowing_pr.model import EdgeKind

CYCLES = {
    # a recursive generator, and two generators that yield each other's elements
    "tree/walk.py": (
        "def walk(node):\n"
        "    for child in node.children:\n"
        "        for x in walk(child):\n"
        "            yield x\n"
        "    yield node\n"
        "\n\n"
        "def ping(n):\n"
        "    for x in pong(n):\n"
        "        yield x\n"
        "\n\n"
        "def pong(n):\n"
        "    for x in ping(n):\n"
        "        yield x.parent\n"
        "\n\n"
        "def visit(tree):\n"
        "    for n in walk(tree):\n"
        "        n.show()\n"
        "    for p in ping(tree):\n"
        "        p.show()\n"
    ),
    # two modules that re-export each other's names, by name and by ``*``
    "pkg/__init__.py": "",
    "pkg/left.py": "from pkg.right import thing, other\nfrom pkg.right import *\n\n\ndef real():\n    return 1\n",
    "pkg/right.py": "from pkg.left import thing, other\nfrom pkg.left import *\n",
    "pkg/use.py": "from pkg.left import thing, real\nfrom pkg.right import other\n\n\ndef go():\n"
    "    thing()\n    other().x()\n    real()\n",
    # a class hierarchy with a cycle (through an import), and functions that return each other
    "shapes/base.py": "from shapes.square import Square\n\n\nclass Shape(Square):\n    def area(self):\n"
    "        return self.side()\n",
    "shapes/square.py": "from shapes.base import Shape\n\n\nclass Square(Shape):\n    def side(self):\n"
    "        return self.missing().more()\n\n\nclass Loop(Loop):\n    pass\n\n\n"
    "def f():\n    return g()\n\n\ndef g():\n    return f()\n\n\n"
    "def use():\n    Square().area()\n    Loop().nothing()\n    f().anything()\n",
}


def _calls(builder: RepoBuilder) -> set[tuple[str, str]]:
    conn = sqlite3.connect(default_db_path(str(builder.path / ".git")))
    try:
        rows = conn.execute(
            "SELECT s.qualified_name, t.qualified_name FROM edges e JOIN nodes s ON s.rowid = e.source"
            " JOIN nodes t ON t.rowid = e.target WHERE e.kind = ?",
            (EdgeKind.CALLS.value,),
        ).fetchall()
    finally:
        conn.close()
    return set(rows)


def test_cyclic_code_is_indexed_to_the_end(make_repo) -> None:
    builder = make_repo()
    for path, text in CYCLES.items():
        builder.write(path, text)
    builder.commit("cycles")
    report = pipeline.update_index(str(builder.path))
    assert report.files_parsed == len(CYCLES)
    assert report.analysis_failures == {}  # the guards stop every loop: nothing failed
    calls = _calls(builder)
    assert {
        ("tree.walk.visit", "tree.walk.walk"),
        ("pkg.use.go", "pkg.left.real"),
        ("shapes.square.use", "shapes.square.f"),
        ("shapes.square.use", "shapes.base.Shape.area"),
    } <= calls
    stats = pipeline.store_stats(str(builder.path))
    assert stats["analysis_failures"] == {"files": 0, "references": 0, "paths": []}


def test_a_failed_analysis_degrades_the_file_and_is_in_stats(make_repo, monkeypatch) -> None:
    builder = make_repo()
    builder.write("a.py", "def helper():\n    return 1\n\n\ndef main():\n    helper()\n    broken()\n")
    builder.write("b.py", "from a import helper\n\n\ndef other():\n    helper()\n")
    builder.commit("two files")
    evaluate = Evaluator.evaluate

    def fails_on_broken(self: Evaluator, path: str, text: str) -> object:
        if "broken" in text:  # a fault injected in one reference's analysis
            raise RecursionError("maximum recursion depth exceeded")
        return evaluate(self, path, text)

    monkeypatch.setattr(Evaluator, "evaluate", fails_on_broken)
    report = pipeline.update_index(str(builder.path))
    assert report.analysis_failures == {"a.py": 1}
    assert {("a.main", "a.helper"), ("b.other", "a.helper")} <= _calls(builder)  # the rest of a.py kept
    stats = pipeline.store_stats(str(builder.path))
    assert stats["analysis_failures"] == {"files": 1, "references": 1, "paths": ["a.py"]}
    assert "degraded    1 files" in pipeline.describe_stats(stats)

    monkeypatch.setattr(Evaluator, "evaluate", evaluate)
    builder.write("a.py", "def helper():\n    return 2\n\n\ndef main():\n    helper()\n    broken()\n")
    builder.commit("a.py again")
    assert pipeline.update_index(str(builder.path)).analysis_failures == {}
    assert pipeline.store_stats(str(builder.path))["analysis_failures"]["files"] == 0


@pytest.mark.parametrize("depth", [400])
def test_a_very_long_chain_of_assignments_is_bounded(make_repo, depth: int) -> None:
    builder = make_repo()
    lines = ["class Root:\n    def ping(self):\n        return 1\n\n", "x0 = Root()\n"]
    lines += [f"x{i} = x{i - 1}\n" for i in range(1, depth)]
    lines.append(f"\n\ndef use():\n    x{depth - 1}.ping()\n    x3.ping()\n")
    builder.write("chain.py", "".join(lines))
    builder.commit("chain")
    report = pipeline.update_index(str(builder.path))
    assert report.analysis_failures == {}
    assert ("chain.use", "chain.Root.ping") in _calls(builder)
