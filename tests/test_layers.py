"""The package's file list reads as the data flow: a stage imports only stages below it, and no
module of ``knowing_pr`` is part of an import circle (read from the source with ``ast``; imports
under ``if TYPE_CHECKING:`` are type hints only and do not count)."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parent.parent / "knowing_pr"

#: lowest first; a stage may import any stage of a lower layer, never one of its own layer or above
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"__init__", "errors", "gitenv", "globs", "model", "visible", "writing"}),
    frozenset({"config"}),
    frozenset({"git", "parse"}),
    frozenset({"graph", "history"}),
    frozenset({"store"}),
    frozenset({"index", "rank"}),
    frozenset({"task"}),
    frozenset({"diffing"}),
    frozenset({"render"}),
    frozenset({"pack"}),
    frozenset({"replay", "github"}),
    frozenset({"pipeline"}),
    frozenset({"hooks", "action", "mcp"}),
    frozenset({"cli"}),
    frozenset({"__main__"}),
)
LAYER_OF = {stage: level for level, stages in enumerate(LAYERS) for stage in stages}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def stage_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _type_checking_blocks(tree: ast.Module) -> set[int]:
    """Line numbers inside ``if TYPE_CHECKING:`` bodies."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def imported_modules(module: str) -> set[str]:
    """The ``knowing_pr`` modules ``module`` imports at run time (deferred imports included)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    hints_only = _type_checking_blocks(tree)
    found: set[str] = set()
    package = module if MODULES[module].name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in hints_only:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("knowing_pr"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            if not base.startswith("knowing_pr"):
                continue
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in MODULES else base)
    return {m for m in found if m in MODULES and m != module}


GRAPH = nx.DiGraph((module, target) for module in MODULES for target in imported_modules(module))


def upward_imports(graph: nx.DiGraph) -> list[str]:
    """Imports from a stage to a stage of its own layer or a higher one."""
    return sorted(
        f"{source} imports {target}"
        for source, target in graph.edges
        if stage_of(source) != stage_of(target) and LAYER_OF[stage_of(target)] >= LAYER_OF[stage_of(source)]
    )


def import_circles(graph: nx.DiGraph) -> list[list[str]]:
    """Groups of modules that import one another, directly or through others."""
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def test_every_stage_has_a_layer() -> None:
    assert {stage_of(m) for m in MODULES} <= set(LAYER_OF)


def test_no_stage_imports_its_own_layer_or_one_above() -> None:
    assert upward_imports(GRAPH) == []


def test_no_import_circle_inside_the_package() -> None:
    assert import_circles(GRAPH) == []


def test_the_checks_catch_an_upward_import_a_same_layer_import_and_a_circle() -> None:
    planted = GRAPH.copy()
    planted.add_edge("knowing_pr.store.nodes", "knowing_pr.rank.candidates")  # store → rank: upward
    planted.add_edge("knowing_pr.index.commit", "knowing_pr.rank.signals")  # index ↔ rank: one layer
    planted.add_edge("knowing_pr.graph.paths", "knowing_pr.graph.resolve")  # resolve imports paths
    assert upward_imports(planted) == [
        "knowing_pr.index.commit imports knowing_pr.rank.signals",
        "knowing_pr.store.nodes imports knowing_pr.rank.candidates",
    ]
    assert any(
        {"knowing_pr.graph.paths", "knowing_pr.graph.resolve"} <= set(c) for c in import_circles(planted)
    )


def test_the_reader_sees_deferred_imports_and_ignores_type_hints() -> None:
    """``pack`` imports ``render`` inside a function; ``store.history`` names ``Store`` only as a
    type hint."""
    assert "knowing_pr.render" in imported_modules("knowing_pr.pack")
    assert "knowing_pr.store" not in imported_modules("knowing_pr.store.history")
