"""A Python repository + a list of its files → one JSON line per call site, with jedi's answer.

Usage (run by ``bench/edge_oracle.py`` with the bench's own interpreter, which has jedi)::

    python bench/oracle/py_sites.py --repo CLONE --files FILES.txt [--out SITES.jsonl]

``FILES.txt`` holds repository-relative paths, one a line. Call sites are found with the
``ast`` module (an independent parser, not knowing-pr's tree-sitter one):

- every ``ast.Call`` whose callee is a name or an attribute (``f()``, ``self.m()``,
  ``obj.m()``, ``obj.attr.m()``, ``super().m()``, ``expr.m()`` for any other receiver);
- every bare decorator (``@name`` / ``@obj.name``), form ``@decorator``: the decorator is
  called on the definition, and knowing-pr counts decorators as calls.

Each site records the chain of named definitions (classes and functions, innermost first) whose
line range holds it; a definition's range starts at its first decorator, as knowing-pr's does.
Lambdas and comprehensions are not named, so their calls belong to the enclosing definition.

The oracle is jedi (its bundled third-party stubs are dropped for the repository's own
top-level packages, or ``jinja2.x`` would resolve to jedi's ``jinja2`` stub instead of the
clone's source): ``Script.goto(follow_imports=True)`` on the callee's name; when that lands
on a variable, a parameter or an instance (or on nothing), ``Script.infer`` is asked too.
A target is ``repo`` (a function or class in a file of the repository, with its definition's
name line; ``abstract`` when it is in a ``.pyi`` stub), ``external`` (builtins, the standard library, an installed package) or the site is
``unresolved``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jedi

CALLABLE_TYPES = frozenset({"function", "class", "property"})
SELF_NAMES = frozenset({"self", "cls"})


@dataclass
class Site:
    line: int
    col_bytes: int
    callee: str
    form: str
    receiver: str = ""
    scope: list[list[Any]] = field(default_factory=list)


def _scope_entry(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[Any]:
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return [node.name, node.lineno, start, node.end_lineno or node.lineno]


def _attribute_form(value: ast.expr) -> str:
    if isinstance(value, ast.Name):
        return "self.m()" if value.id in SELF_NAMES else "obj.m()"
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super":
        return "super().m()"
    root = value
    while isinstance(root, ast.Attribute):
        root = root.value
    if isinstance(value, ast.Attribute) and isinstance(root, ast.Name):
        return "obj.attr.m()"
    return "expr.m()"


def _callee_site(func: ast.expr, form_of_name: str) -> Site | None:
    if isinstance(func, ast.Name):
        return Site(func.lineno, func.col_offset, func.id, form_of_name)
    if isinstance(func, ast.Attribute) and func.end_lineno is not None and func.end_col_offset is not None:
        col = func.end_col_offset - len(func.attr.encode("utf-8"))
        receiver = ast.unparse(func.value)[:60]
        return Site(func.end_lineno, col, func.attr, _attribute_form(func.value), receiver)
    return None


def call_sites(tree: ast.Module) -> Iterator[Site]:
    """Every call site of the module with its enclosing named definitions (innermost first)."""
    stack: list[tuple[ast.AST, list[list[Any]]]] = [(tree, [])]
    while stack:
        node, scope = stack.pop()
        inner = scope
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = [_scope_entry(node), *scope]
            for decorator in node.decorator_list:
                site = None if isinstance(decorator, ast.Call) else _callee_site(decorator, "@decorator")
                if site is not None:
                    site.form, site.scope = "@decorator", inner
                    yield site
        elif isinstance(node, ast.Call):
            site = _callee_site(node.func, "f()")
            if site is not None:
                site.scope = inner
                yield site
        for child in ast.iter_child_nodes(node):
            stack.append((child, inner))


def _char_column(line_text: bytes, col_bytes: int) -> int:
    return len(line_text[:col_bytes].decode("utf-8", errors="replace"))


def _target(name: Any, repo: Path) -> dict[str, Any] | None:
    if name.type not in CALLABLE_TYPES:
        return None
    path = name.module_path
    record: dict[str, Any] = {
        "name": name.name,
        "type": name.type,
        "module": name.module_name,
        "abstract": False,
    }
    if path is None or name.in_builtin_module():
        return {**record, "external": True, "file": None, "line": None}
    try:
        rel = Path(path).resolve().relative_to(repo)
    except ValueError:
        return {**record, "external": True, "file": None, "line": name.line}
    stub = rel.suffix == ".pyi"  # a stub of the repository names no code: abstract
    return {**record, "external": False, "abstract": stub, "file": rel.as_posix(), "line": name.line}


class ImportLines:
    """Lines of a repository file that belong to an ``import`` statement (parsed once)."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.cache: dict[str, frozenset[int]] = {}

    def __contains__(self, place: tuple[str, int]) -> bool:
        rel, line = place
        if rel not in self.cache:
            lines: set[int] = set()
            try:
                tree = ast.parse((self.repo / rel).read_bytes())
            except (OSError, SyntaxError, ValueError):
                tree = ast.Module(body=[], type_ignores=[])
            for node in ast.walk(tree):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
            self.cache[rel] = frozenset(lines)
        return line in self.cache[rel]


def resolve(
    script: jedi.Script, line: int, column: int, repo: Path, imports: ImportLines
) -> tuple[str, list[dict[str, Any]]]:
    """jedi's kind of binding of the name at (line, column) (``param``, ``statement``,
    ``function``, …) and its definitions: goto, then infer for variables."""

    def kept(names: list[Any]) -> list[dict[str, Any]]:
        # jedi sometimes stops at a re-export (``from x import f`` in a package's __init__.py,
        # next to a .pyi stub): that names no definition, so it is no answer
        found = [t for t in (_target(n, repo) for n in names) if t is not None]
        return [t for t in found if t["external"] or (t["file"], t["line"]) not in imports]

    binding = ""
    try:
        names = script.goto(line, column, follow_imports=True)
        binding = names[0].type if names else ""
        found = kept(names) or kept(script.infer(line, column))
    except Exception as error:  # jedi raises on odd code; such a site is simply unresolved
        print(f"jedi: {error!r} at {script.path}:{line}:{column}", file=sys.stderr)
        return binding, []
    unique = {(t["file"], t["line"], t["name"]): t for t in found}
    return binding, list(unique.values())


def file_sites(repo: Path, project: jedi.Project, imports: ImportLines, rel: str) -> Iterator[dict[str, Any]]:
    path = repo / rel
    source = path.read_bytes()
    try:
        tree = ast.parse(source, filename=rel)
    except (SyntaxError, ValueError):
        return
    lines = source.splitlines()
    text = source.decode("utf-8", errors="replace")
    script = jedi.Script(code=text, path=str(path), project=project)
    for site in call_sites(tree):
        column = _char_column(lines[site.line - 1], site.col_bytes) if site.line <= len(lines) else 0
        binding, targets = resolve(script, site.line, column, repo, imports)
        status = "unresolved"
        if any(not t["external"] and not t["abstract"] for t in targets):
            status = "repo"
        elif targets:
            status = "abstract" if any(t["abstract"] for t in targets) else "external"
        yield {
            "file": rel,
            "line": site.line,
            "col": column,
            "callee": site.callee,
            "form": site.form,
            "receiver": site.receiver,
            "binding": binding,
            "scope": site.scope,
            "status": status,
            "targets": targets,
        }


def own_top_level_names(repo: Path) -> set[str]:
    """Packages and modules importable from the repository root or its ``src/``."""
    names = set()
    for root in (repo, repo / "src"):
        if root.is_dir():
            for entry in root.iterdir():
                if entry.suffix == ".py" or (entry / "__init__.py").is_file():
                    names.add(entry.stem if entry.suffix == ".py" else entry.name)
    return names


def drop_own_stubs(names: set[str]) -> None:
    """Keep jedi from answering with its bundled third-party stub of one of ``names``."""
    from jedi.inference.gradual import typeshed

    original = typeshed._create_stub_map

    def without_own(info: Any) -> dict[str, Any]:
        found = original(info)
        return {k: v for k, v in found.items() if not (info.is_third_party and k in names)}

    typeshed._create_stub_map = without_own


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--files", required=True, help="repository-relative paths, one a line")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    repo = Path(args.repo).resolve()
    drop_own_stubs(own_top_level_names(repo))
    extra = [repo / "src"] if (repo / "src").is_dir() else []
    project = jedi.Project(repo, added_sys_path=[str(p) for p in extra], smart_sys_path=True)
    imports = ImportLines(repo)
    files = [f for f in Path(args.files).read_text(encoding="utf-8").splitlines() if f]
    with open(args.out or os.devnull, "w", encoding="utf-8") as sink:
        out = sink if args.out else sys.stdout
        for index, rel in enumerate(files, 1):
            for record in file_sites(repo, project, imports, rel):
                out.write(json.dumps(record) + "\n")
            if index % 20 == 0:
                print(f"py_sites: {index}/{len(files)} files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
