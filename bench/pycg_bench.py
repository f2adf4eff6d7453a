"""PyCG micro-benchmark checkout → knowing-pr's call edges scored against its hand-made call graphs.

Usage::

    python bench/pycg_bench.py --pycg PATH [--case CATEGORY/NAME ...] [--json OUT] [--strict-decorators]

PyCG (github.com/vitsalis/PyCG, Apache-2.0) ships ``micro-benchmark/snippets/<category>/<case>/``
directories, each with a few Python files and a ``callgraph.json``: a JSON object mapping a caller's
qualified name to the qualified names of its callees. ``--pycg`` is a checkout of that repository;
nothing of it is copied into this one. For each case the script copies the case's ``.py`` files
(keeping their layout) into a temporary git repository with one commit, runs
``python -m knowing_pr export --repo TMP --db TMP/store.sqlite --format jsonl`` with this checkout
on ``PYTHONPATH``, translates the ``calls`` edges into PyCG's naming and compares edge sets.

Naming. Both sides name a symbol ``<module>.<Class>.<function>``, the module being the file's path
without ``.py`` with ``/`` turned into ``.`` (``pkg/__init__.py`` is ``pkg``); module-level code is
the module's name (``main``), a class body is the class's name. A caller is the source node's
qualified name, a callee the target's.

What is scored. Only ``calls`` edges; ``extends`` and ``inherits`` serve to find an inherited
constructor (below) and ``imports``, ``contains``, ``member_of`` are not calls. Expected callees that
are not in the repository are dropped from the expected graph, since knowing-pr links only symbols
it indexed: a callee is in the repository when its name is one of the case's module names or starts
with one followed by a dot. That drops ``<builtin>.*`` (builtins such as ``print``, ``super``),
``ext.*`` (the ``external`` category's imaginary module) and PyCG's literal pseudo-callees
``<**PyStr**>.*`` / ``<**PyDict**>.*``: 21 of the 264 expected edges. The summary also states
recall against all 264. Expected edges to or from a lambda (PyCG's ``main.<lambda1>``; knowing-pr
has no lambda nodes) stay in the expected graph and are counted apart in the summary.

Constructor convention (PyCG's, checked against ``classes/imported_call_without_init`` and the
``mro`` cases). PyCG records ``A()`` (and ``raise A(...)``) as a call to the first ``__init__``
along ``A``'s method resolution order and records nothing when no class there defines one; a class
itself is never a callee. knowing-pr records a ``calls`` edge to the class node, so the script maps
it to the class's own ``__init__`` member, else to the ``__init__`` of the nearest ancestors along
knowing-pr's ``extends`` edges (breadth first; every ancestor at the nearest depth that defines one,
since the export does not keep the order of the bases), else drops it.

Decorator convention. PyCG lists a decorator as called by the scope that holds the decorated
definition (``@dec`` on ``def func`` at module level: ``main -> main.dec``; ``@f()``: ``main ->
main.f`` and whatever ``f`` returns). knowing-pr records the decorator as a call from the decorated
definition (``main.func -> main.dec``). The export carries no line numbers, so the script reads the
copied files with ``ast``: an edge from a decorated definition to a callee whose name appears in
one of its decorator expressions (a ``Name`` or an ``Attribute``'s last part), or that no call in
its body names (a decorator bound to another name, ``@a`` after ``a = dec``, or what a decorator
factory returns, ``@f()``), is scored as coming from the enclosing scope (a call in the decorated
body to a function of the same name as a decorator would be moved too; no case has one).
``--strict-decorators`` turns this off and scores the edges as exported.

Scores: a case is exact when the translated edge set equals the expected in-repository edge set;
precision and recall are micro-averaged over all edges of all (selected) cases, and per category.
``--json OUT`` writes per-case expected, produced, missing and extra edges.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = Path("micro-benchmark") / "snippets"

Edge = tuple[str, str]


@dataclass(frozen=True)
class Case:
    """One snippet directory: ``category/name``."""

    category: str
    name: str
    directory: Path

    @property
    def key(self) -> str:
        return f"{self.category}/{self.name}"


@dataclass
class Graph:
    """The exported nodes by id and the edges by kind."""

    nodes: dict[str, dict[str, object]]
    edges: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))


@dataclass
class CaseResult:
    case: Case
    expected: set[Edge]
    external: set[Edge]
    produced: set[Edge]
    error: str = ""

    @property
    def missing(self) -> set[Edge]:
        return self.expected - self.produced

    @property
    def extra(self) -> set[Edge]:
        return self.produced - self.expected

    @property
    def exact(self) -> bool:
        return not self.error and self.expected == self.produced


def discover_cases(pycg: Path) -> list[Case]:
    root = pycg / SNIPPETS
    if not root.is_dir():
        raise SystemExit(f"no {SNIPPETS} under {pycg}")
    return [
        Case(cg.parent.parent.name, cg.parent.name, cg.parent)
        for cg in sorted(root.glob("*/*/callgraph.json"))
    ]


def python_files(directory: Path) -> list[Path]:
    return sorted(p.relative_to(directory) for p in directory.rglob("*.py"))


def module_name(relative: Path) -> str:
    parts = list(relative.with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def copy_into_repository(case: Case, repo: Path) -> None:
    for relative in python_files(case.directory):
        (repo / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(case.directory / relative, repo / relative)
    identity = ["-c", "user.name=pycg-bench", "-c", "user.email=pycg-bench@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], [*identity, "commit", "-q", "-m", case.key]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def export_graph(repo: Path) -> Graph:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
    command = [sys.executable, "-m", "knowing_pr", "export", "--repo", str(repo)]
    command += ["--db", str(repo / "store.sqlite"), "--format", "jsonl"]
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"export exited {result.returncode}")
    graph = Graph(nodes={})
    for line in result.stdout.splitlines():
        item = json.loads(line)
        if item["type"] == "node":
            graph.nodes[item["id"]] = item
        else:
            graph.edges[item["kind"]].append((item["source"], item["target"]))
    return graph


def in_repository(callee: str, modules: set[str]) -> bool:
    return any(callee == module or callee.startswith(module + ".") for module in modules)


def expected_edges(case: Case, modules: set[str]) -> tuple[set[Edge], set[Edge]]:
    """(in-repository edges, dropped external edges) of the case's ``callgraph.json``."""
    graph = json.loads((case.directory / "callgraph.json").read_text())
    edges = {(caller, callee) for caller, callees in graph.items() for callee in callees}
    inside = {edge for edge in edges if in_repository(edge[1], modules)}
    return inside, edges - inside


class _DecoratorScopes(ast.NodeVisitor):
    """decorated definition's qualified name → (enclosing scope's name, names in its decorators,
    names its own body calls)."""

    def __init__(self, module: str) -> None:
        self.scope = [module]
        self.found: dict[str, tuple[str, set[str], set[str]]] = {}

    def _definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        enclosing = ".".join(self.scope)
        if node.decorator_list:
            names = {
                part.id if isinstance(part, ast.Name) else part.attr
                for decorator in node.decorator_list
                for part in ast.walk(decorator)
                if isinstance(part, (ast.Name, ast.Attribute))
            }
            called = {
                part.func.id if isinstance(part.func, ast.Name) else part.func.attr
                for statement in node.body
                for part in ast.walk(statement)
                if isinstance(part, ast.Call) and isinstance(part.func, (ast.Name, ast.Attribute))
            }
            self.found[f"{enclosing}.{node.name}"] = (enclosing, names, called)
        self.scope.append(node.name)
        for statement in node.body:
            self.visit(statement)
        self.scope.pop()

    visit_FunctionDef = _definition
    visit_AsyncFunctionDef = _definition
    visit_ClassDef = _definition


def decorator_scopes(repo: Path, files: list[Path]) -> dict[str, tuple[str, set[str], set[str]]]:
    found: dict[str, tuple[str, set[str], set[str]]] = {}
    for relative in files:
        visitor = _DecoratorScopes(module_name(relative))
        try:
            visitor.visit(ast.parse((repo / relative).read_text()))
        except SyntaxError:
            continue
        found.update(visitor.found)
    return found


def adjacency(edges: list[tuple[str, str]]) -> dict[str, list[str]]:
    following: dict[str, list[str]] = defaultdict(list)
    for source, target in edges:
        following[source].append(target)
    return following


def constructors(graph: Graph, class_id: str) -> list[str]:
    """Qualified names of the ``__init__`` a call to this class runs (see the module docstring)."""
    members = adjacency(graph.edges["contains"])
    bases = adjacency(graph.edges["extends"])
    level, seen = [class_id], {class_id}
    while level:
        found = [
            str(graph.nodes[member]["qualified_name"])
            for cls in level
            for member in members[cls]
            if graph.nodes[member]["name"] == "__init__"
        ]
        if found:
            return sorted(set(found))
        level = [base for cls in level for base in bases[cls] if base not in seen]
        seen.update(level)
    return []


def produced_edges(graph: Graph, decorators: dict[str, tuple[str, set[str], set[str]]] | None) -> set[Edge]:
    edges: set[Edge] = set()
    for source, target in graph.edges["calls"]:
        caller = str(graph.nodes[source]["qualified_name"])
        node = graph.nodes[target]
        callees = constructors(graph, target) if node["kind"] == "class" else [str(node["qualified_name"])]
        if decorators and caller in decorators:
            enclosing, in_decorators, in_body = decorators[caller]
            name = str(node["name"])
            if name in in_decorators or name not in in_body:
                caller = enclosing
        edges.update((caller, callee) for callee in callees)
    return edges


def run_case(case: Case, strict_decorators: bool) -> CaseResult:
    files = python_files(case.directory)
    expected, external = expected_edges(case, {module_name(f) for f in files})
    with tempfile.TemporaryDirectory(prefix="pycg-bench-") as tmp:
        repo = Path(tmp)
        copy_into_repository(case, repo)
        try:
            graph = export_graph(repo)
        except RuntimeError as error:
            return CaseResult(case, expected, external, set(), error=str(error))
        decorators = None if strict_decorators else decorator_scopes(repo, files)
        return CaseResult(case, expected, external, produced_edges(graph, decorators))


def ratio(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def tally(results: list[CaseResult]) -> dict[str, int]:
    return {
        "cases": len(results),
        "exact": sum(r.exact for r in results),
        "expected": sum(len(r.expected) for r in results),
        "external": sum(len(r.external) for r in results),
        "produced": sum(len(r.produced) for r in results),
        "hits": sum(len(r.expected & r.produced) for r in results),
        "lambda": sum(1 for r in results for edge in r.expected if "<lambda" in "".join(edge)),
    }


def print_report(results: list[CaseResult]) -> None:
    by_category: dict[str, list[CaseResult]] = defaultdict(list)
    for result in results:
        by_category[result.case.category].append(result)
    header = f"{'category':<14}{'exact':>9}{'expected':>10}{'produced':>10}{'hits':>6}{'precision':>11}{'recall':>8}"
    print(header)
    print("-" * len(header))
    for category, group in [*sorted(by_category.items()), ("TOTAL", results)]:
        t = tally(group)
        if category == "TOTAL":
            print("-" * len(header))
        print(
            f"{category:<14}{t['exact']:>4} / {t['cases']:<3}{t['expected']:>9}{t['produced']:>10}{t['hits']:>6}"
            f"{ratio(t['hits'], t['produced']):>11}{ratio(t['hits'], t['expected']):>8}"
        )
    t = tally(results)
    print()
    print(f"cases exact: {t['exact']} of {t['cases']}")
    print(f"edge precision: {ratio(t['hits'], t['produced'])} ({t['hits']} of {t['produced']} produced)")
    print(f"edge recall (in-repository): {ratio(t['hits'], t['expected'])} ({t['hits']} of {t['expected']})")
    total = t["expected"] + t["external"]
    print(f"edge recall (all expected, external counted as missed): {ratio(t['hits'], total)} of {total}")
    print(f"dropped external expected edges: {t['external']}; expected edges naming a lambda: {t['lambda']}")
    errors = [r for r in results if r.error]
    for result in errors:
        print(f"error {result.case.key}: {result.error}")


def case_details(result: CaseResult) -> dict[str, object]:
    def listed(edges: set[Edge]) -> list[list[str]]:
        return [list(edge) for edge in sorted(edges)]

    return {
        "case": result.case.key,
        "exact": result.exact,
        "error": result.error,
        "expected": listed(result.expected),
        "produced": listed(result.produced),
        "missing": listed(result.missing),
        "extra": listed(result.extra),
        "dropped_external": listed(result.external),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pycg", type=Path, required=True, help="a checkout of PyCG")
    parser.add_argument("--case", action="append", default=[], help="CATEGORY/NAME (repeatable)")
    parser.add_argument("--json", type=Path, help="write per-case details here")
    parser.add_argument("--strict-decorators", action="store_true", help="score decorator edges as exported")
    args = parser.parse_args(argv)
    cases = discover_cases(args.pycg)
    if args.case:
        known = {case.key: case for case in cases}
        unknown = [key for key in args.case if key not in known]
        if unknown:
            parser.error(f"unknown case(s): {', '.join(unknown)}")
        cases = [known[key] for key in args.case]
    results = [run_case(case, args.strict_decorators) for case in cases]
    print_report(results)
    if args.json:
        summary = tally(results)
        convention = "strict" if args.strict_decorators else "enclosing scope"
        report = {"decorators": convention, "summary": summary, "cases": [case_details(r) for r in results]}
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
